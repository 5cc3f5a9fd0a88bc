"""What the warm-GPU modules share: the sample stacks planned with and without warm nodes, and
one-pool GKE and EKS stacks.
"""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

from infra.core.config.stack import load_stack_file, parse
from infra.core.plan import Plan, build_plan
from tests.unit.operator_fixtures import CLUSTERS

STACKS = sorted(Path(__file__).resolve().parents[2].joinpath("stacks").glob("Pulumi.*.yaml"))


def _raw(path: Path, warm: int | None = 1) -> tuple[str, dict[str, Any]]:
    name, raw = load_stack_file(path)
    raw = copy.deepcopy(raw)
    if warm is not None:
        for p in raw["gpu-infra:gpuPools"]:
            # A Capacity Block pool refuses warm (EKS scales it to 0 before the block ends).
            if p.get("capacityType") != "CAPACITY_BLOCK":
                p["warm"] = min(warm, p["maxNodes"])
    return name, raw


@functools.cache
def warm_sample(stem: str) -> Plan:
    """A sample stack with warm 1 on every pool."""
    name, raw = _raw(Path(__file__).resolve().parents[2] / "stacks" / f"Pulumi.{stem}.yaml")
    return build_plan(parse(raw, name))


@functools.cache
def sample(stem: str) -> Plan:
    name, raw = load_stack_file(
        Path(__file__).resolve().parents[2] / "stacks" / f"Pulumi.{stem}.yaml"
    )
    return build_plan(parse(raw, name))


def _gke(pool: dict[str, Any]) -> dict[str, Any]:
    return {
        "gcp:project": "demo-project",
        "gcp:region": "us-central1",
        "gpu-infra:platform": "gke",
        "gpu-infra:cluster": CLUSTERS["gke"],
        "gpu-infra:gpuPools": [
            {"name": "p", "machineType": "n1-highmem-8", "gpu": {"type": "nvidia-tesla-t4"}} | pool
        ],
        "gpu-infra:gpuOperator": {},
    }


def _eks(pool: dict[str, Any]) -> dict[str, Any]:
    return {
        "aws:region": "us-west-2",
        "gpu-infra:platform": "eks",
        "gpu-infra:cluster": CLUSTERS["eks"],
        "gpu-infra:gpuPools": [{"name": "p", "maxNodes": 2, "warm": 1, **pool}],
        "gpu-infra:gpuOperator": {},
    }
