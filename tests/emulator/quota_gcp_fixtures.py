"""What the quota_gcp emulator modules share: the GCP fakes stocked for gke-t4 (``env``), the
project and region they plan in, and the fixture stack files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.fakes import gcp as g

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures" / "quota"
P = "demo-project"
R = "us-central1"


@pytest.fixture
def env(gcp_env: dict[str, Any]) -> dict[str, Any]:
    """The shared GCP fakes (tests/emulator/conftest.py), with gke-t4's region well stocked."""
    compute = gcp_env["compute"]
    assert isinstance(compute, g.FakeCompute)
    # gke-t4 peak: 21 T4 GPUs, 168 CPUS (n1 pool), 16 E2_CPUS (system pool), 24 VMs with external
    # IPs and 100 GB pd-balanced each; globally 21 GPUs and 180 vCPUs.
    compute.set_region(P, R, **AMPLE)
    compute.set_project(P, GPUS_ALL_REGIONS=(32, 0), CPUS_ALL_REGIONS=(1000, 10))
    return gcp_env


AMPLE: dict[str, tuple[float, float]] = {
    "NVIDIA_T4_GPUS": (32, 0),
    "CPUS": (400, 10),
    "E2_CPUS": (100, 0),
    "PREEMPTIBLE_CPUS": (200, 0),
    "INSTANCES": (500, 3),
    "IN_USE_ADDRESSES": (100, 2),
    "SSD_TOTAL_GB": (10000, 500),
    "LOCAL_SSD_TOTAL_GB": (30000, 0),  # a3-highgpu-8g bundles 16 x 375 GB
}


def spot_region(compute: g.FakeCompute, preemptible_gpus: float) -> None:
    compute.set_region(
        P,
        R,
        NVIDIA_L4_GPUS=(32, 0),
        PREEMPTIBLE_NVIDIA_L4_GPUS=(preemptible_gpus, 0),
        NVIDIA_T4_GPUS=(8, 0),
        PREEMPTIBLE_CPUS=(0, 0),
    )
