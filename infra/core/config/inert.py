"""Keys that would not apply with the other keys as given: an error naming both, not a silent no-op.

One row per case, each citing the planner that never reads the keys in that case.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

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


def check_inert(
    platform: str, own: Mapping[str, Any], models: Mapping[str, BaseModel], issues: Issues
) -> None:
    """A key that would not apply with the other keys as given is an error naming both.

    The condition is read on the validated model (``models``: block -> its model), so a
    condition key left at its default counts as its default value: ``terminationGracePeriod``
    without ``kind`` is a cluster-autoscaler setting. The inert keys are the ones written.
    """
    for platforms, block, when, value, keys, why in _INERT:
        if platform not in platforms:
            continue
        written: Any = own
        for part in block.split("."):
            written = written.get(part) if isinstance(written, Mapping) else None
        given = [k for k in keys if isinstance(written, Mapping) and k in written]
        model = _model_at(models, block)
        if not given or model is None:
            continue
        actual = _by_alias(model, when)
        if (actual is None) if value == "*" else actual != value:
            continue
        defaulted = not (isinstance(written, Mapping) and when in written)
        shown_when = "given" if value == "*" else json.dumps(actual)
        if defaulted:
            shown_when += " (its default)"
        for key in given:
            issues.add(
                join_path(block, key),
                f"would not apply: {block}.{when} is {shown_when} and {why}; remove it",
            )


def _model_at(models: Mapping[str, BaseModel], block: str) -> BaseModel | None:
    first, *rest = block.split(".")
    node: Any = models.get(first)
    for part in rest:
        node = _by_alias(node, part) if isinstance(node, BaseModel) else None
    return node if isinstance(node, BaseModel) else None


def _by_alias(model: BaseModel, alias: str) -> Any:
    """The value of the field spelt ``alias`` in the stack file (its camelCase name)."""
    for name, f in type(model).model_fields.items():
        if (f.alias or name) == alias:
            return getattr(model, name)
    raise KeyError(f"{type(model).__name__} has no field {alias!r}")
