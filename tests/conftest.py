"""Shared fixtures: the catalog, a minimal valid GKE stack config to vary per test, an EKS stack
with a declared shape, and a fresh interpreter to run code in."""

from __future__ import annotations

import copy
import gc
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from infra.core.catalog.vendored import Catalog

# The Kubernetes version support rule judges on max(table date, today): pin "today" so every run
# (and every CLI subprocess, which inherits it) judges the same day.
os.environ.setdefault("GPU_INFRA_TODAY", "2026-11-27")

GKE_BASE: dict[str, Any] = {
    "gcp:project": "demo-project",
    "gcp:region": "us-central1",
    "gpu-infra:platform": "gke",
    "gpu-infra:cluster": {"name": "ml", "location": "us-central1"},
    "gpu-infra:gpuPools": [
        {
            "name": "gpu-t4",
            "machineType": "n1-highmem-8",
            "gpu": {"type": "nvidia-tesla-t4", "count": 1},
            "minNodes": 0,
            "maxNodes": 20,
        },
    ],
}

# What tolerates the taint GKE puts on every GPU node: "GKE automatically adds the
# nvidia.com/gpu=present:NoSchedule taint" (https://cloud.google.com/kubernetes-engine/docs/how-to/gpus).
GKE_GPU_TOLERATION = {
    "key": "nvidia.com/gpu",
    "operator": "Equal",
    "value": "present",
    "effect": "NoSchedule",
}


@pytest.fixture
def gke_minors_supported(monkeypatch: pytest.MonkeyPatch) -> None:
    """GKE version gates that name 1.32-1.34 releases, judged on the day GKE's schedule was read
    (gke_standard_support.csv as_of), when those minors were supported, so the support rule
    (test_gke_versions.py) does not mask them."""
    monkeypatch.setenv("GPU_INFRA_TODAY", "2026-02-19")


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    """The vendored catalog, loaded once."""
    return Catalog.load()


def gke_config(pool: dict[str, Any] | None = None, **top: Any) -> dict[str, Any]:
    """A copy of ``GKE_BASE`` with pool 0 updated by ``pool`` and top-level keys by ``top``.

    A value of ``None`` removes the key.
    """
    cfg = copy.deepcopy(GKE_BASE)
    for k, v in (pool or {}).items():
        if v is None:
            cfg["gpu-infra:gpuPools"][0].pop(k, None)
        else:
            cfg["gpu-infra:gpuPools"][0][k] = v
    for k, v in top.items():
        key = k if ":" in k else f"gpu-infra:{k}"
        if v is None:
            cfg.pop(key, None)
        else:
            cfg[key] = v
    return cfg


def eks_shape_config(machine_type: str) -> dict[str, Any]:
    """An EKS stack (cluster ml in us-west-2) whose one pool runs ``machine_type``, a type the
    catalog lacks, declared by its shape: 1 RTX-PRO-6000, 8 vCPUs, 64 GB, in two AZ IDs."""
    return {
        "aws:region": "us-west-2",
        "gpu-infra:platform": "eks",
        "gpu-infra:cluster": {"name": "ml", "location": "us-west-2", "kubernetesVersion": "1.33"},
        "gpu-infra:gpuPools": [
            {
                "name": "gpu-new",
                "machineType": machine_type,
                "shape": {"gpuModel": "RTX-PRO-6000", "gpus": 1, "vcpus": 8, "memoryGb": 64},
                "zones": ["usw2-az1", "usw2-az2"],
                "maxNodes": 4,
            }
        ],
    }


def python_c(code: str) -> subprocess.CompletedProcess[str]:
    """``python -c code`` in a fresh interpreter (this one's) at the repository root: what a
    first import there loads, unaffected by what this test process imported already."""
    root = Path(__file__).resolve().parents[1]
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=root, check=False
    )


# --- garbage collector -------------------------------------------------------------------------
# The provider SDKs (pulumi_gcp, pulumi_aws, google-cloud-*, moto) import millions of long-lived
# objects, lazily, the first time a test needs them. Every full collection walks them all again
# (~0.5 s each, dozens per session): most of the suite's collector time. After a test that
# imported many modules, collect its garbage (so finalizers and their warnings run as before) and
# freeze what survives: later full collections skip it. Objects a test creates are collected as
# before.
_modules_at_freeze = 0


def _freeze_if_imported() -> None:
    global _modules_at_freeze
    if len(sys.modules) - _modules_at_freeze >= 100:
        gc.collect()
        gc.freeze()
        _modules_at_freeze = len(sys.modules)


def pytest_collection_finish(session: pytest.Session) -> None:
    _freeze_if_imported()


@pytest.hookimpl(trylast=True)  # after the test's fixtures are torn down
def pytest_runtest_teardown(item: pytest.Item) -> None:
    _freeze_if_imported()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        help="rewrite tests/golden/plans/*.json from the sample stacks instead of comparing",
    )
