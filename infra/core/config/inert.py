"""Keys that would not apply with the other keys as given: an error naming both, not a silent no-op.

One row per case, each citing the planner that never reads the keys in that case.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from infra.core.config.base import PLATFORMS
from infra.core.errors import Issues, join_path

# Keys that would not apply under another key's value: (platforms, block, condition key, value
# that makes them inert ("*" = any value given), the inert keys, why). Each row is what the planner
# named does: it never reads those keys in that case.
_INERT: tuple[tuple[tuple[str, ...], str, str, Any, tuple[str, ...], str], ...] = (
    # infra.core.operator.planner.plan_operator returns before reading them.
    (
        PLATFORMS,
        "gpuOperator",
        "enabled",
        False,
        ("version", "preset", "namespace", "toolkitEnv", "values", "timeout", "vgpu"),
        "the GPU Operator is not installed",
    ),
    # gke.planner / eks.system.plan_system: the system pool is planned for created clusters only.
    (
        ("gke", "eks"),
        "cluster",
        "existing",
        True,
        ("systemPool",),
        "an existing cluster keeps its own system nodes",
    ),
    # infra/components/gke.py _create/_cluster_args: gcp.container.Cluster arguments only. Not
    # releaseChannel: gke.rules.auto_upgrade reads it for pools added to an existing cluster.
    (
        ("gke",),
        "cluster",
        "existing",
        True,
        ("deletionProtection", "dataplaneV2", "dcgmMetrics", "maintenance"),
        "they are settings of a cluster this stack creates",
    ),
    # infra/components/eks.py: access entries and endpoint settings are eks.Cluster arguments.
    (
        ("eks",),
        "cluster",
        "existing",
        True,
        ("endpointPublicAccess", "publicAccessCidrs", "accessEntries"),
        "they are settings of a cluster this stack creates",
    ),
    # eks.network.plan_network: with a given VPC its subnets are used, the CIDR never read.
    (("eks",), "cluster.vpc", "id", "*", ("cidr",), "the given VPC keeps its own address range"),
    # eks.planner: the autoscaler's values are built only when it is enabled.
    (
        ("eks",),
        "cluster.autoscaler",
        "enabled",
        False,
        ("expander", "scaleDownGpuUtilizationThreshold", "scaleDownUnneededTime"),
        "no cluster-autoscaler is installed",
    ),
    # eks.planner: with karpenter no cluster-autoscaler is planned; these are its flags
    # (--expander, --scale-down-gpu-utilization-threshold). scaleDownUnneededTime stays: it is
    # each NodePool's disruption.consolidateAfter (eks.karpenter.plan).
    (
        ("eks",),
        "cluster.autoscaler",
        "kind",
        "karpenter",
        ("expander", "scaleDownGpuUtilizationThreshold"),
        "they are cluster-autoscaler flags (Karpenter scales down by its NodePools' disruption "
        "settings)",
    ),
    # eks.karpenter.pools: terminationGracePeriod is a NodePool field; node groups have none.
    (
        ("eks",),
        "cluster.autoscaler",
        "kind",
        "cluster-autoscaler",
        ("terminationGracePeriod",),
        "it is a Karpenter NodePool setting",
    ),
)


def check_inert(platform: str, own: Mapping[str, Any], issues: Issues) -> None:
    """A key that would not apply with the other keys as given is an error naming both."""
    for platforms, block, when, value, keys, why in _INERT:
        if platform not in platforms:
            continue
        node: Any = own
        for part in block.split("."):
            node = node.get(part) if isinstance(node, Mapping) else None
        if not isinstance(node, Mapping) or when not in node:
            continue
        if value != "*" and node[when] != value:
            continue
        for key in keys:
            if key in node:
                shown_when = "given" if value == "*" else f"{json.dumps(node[when])}"
                issues.add(
                    join_path(block, key),
                    f"would not apply: {block}.{when} is {shown_when} and {why}; remove it",
                )
