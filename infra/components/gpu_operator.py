"""The NVIDIA GPU Operator and in-cluster GPU setup (issue 4). Stub written by the foundation."""

from __future__ import annotations

from typing import Any

from infra.components.handles import ClusterHandle
from infra.core.plan import Plan


def build_operator(plan: Plan, cluster: ClusterHandle) -> dict[str, Any]:
    """Install the operator and workload helpers; returns extra stack outputs."""
    del plan, cluster
    return {}
