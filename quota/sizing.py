"""Plan -> what each node group can grow to, in the units quotas count (pure).

Each platform sizes its own pools (``Platform.quota_sizings``, ``infra.core.sizing``); this module
vets the sizings against the quota tables of their cloud, and adds the node groups a replacement
keeps running beside their successors.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from infra.core.catalog.vendored import Catalog
from infra.core.errors import Issues, join_path
from infra.core.plan import Plan
from infra.core.platform import NodeMarks
from infra.core.sizing import NodeGroupSizing
from quota.keys import Cloud
from quota.rules import (
    aws_quota_code,
    gcp_accelerator_quotas,
    gcp_cpu_rules,
    gcp_disk_metrics,
    gcp_machine_family,
)

__all__ = [
    "NodeGroupSizing",
    "plan_sizings",
    "replaced_label",
    "replaced_marks",
    "replacements",
    "vet_aws",
    "vet_gcp",
    "with_replacements",
]


def plan_sizings(config: Any, plan: Plan, catalog: Catalog) -> tuple[Cloud, list[NodeGroupSizing]]:
    """The cloud and the node groups of a planned stack, vetted against the cloud's quota tables.

    Raises:
        ConfigErrors: the stack cannot be sized (platform without cloud quotas, unknown types).
    """
    issues = Issues()
    cloud = plan.platform.features.cloud
    if cloud is None:
        issues.add("platform", f"{config.platform!r} has no cloud quotas to check (gke and eks do)")
        issues.raise_if_any()
        raise AssertionError("unreachable")
    sizings = plan.platform.quota_sizings(catalog, issues)
    from quota.clouds import QUOTA_CLOUDS

    sizings = QUOTA_CLOUDS[cloud].vet(sizings, issues)
    issues.raise_if_any()
    return cloud, sizings


def vet_gcp(out: list[NodeGroupSizing], issues: Issues) -> list[NodeGroupSizing]:
    """GCP sizings whose GPU, family and disk type have quota rows; the rest become config issues.

    A declared shape's GPU or family without a row is kept: it becomes an unknown row
    (``rules.gcp_vm_quotas``, ``declared``).
    """
    keep: list[NodeGroupSizing] = []
    for s in out:
        ok = True
        if not s.declared and s.gpu_type is not None and s.gpu_type not in gcp_accelerator_quotas():
            issues.add(
                join_path(s.path, "gpu", "type"),
                f"{s.gpu_type!r} has no known GPU quota metric; known: "
                f"{', '.join(sorted(gcp_accelerator_quotas()))}",
            )
            ok = False
        family = gcp_machine_family(s.machine_types[0])
        if not s.declared and family not in gcp_cpu_rules():  # unknown is not "no vCPU quota"
            issues.add(
                join_path(s.path, "machineType"),
                f"family {family!r} has no known vCPU quota; known: "
                f"{', '.join(sorted(gcp_cpu_rules()))}",
            )
            ok = False
        if s.disk_type not in gcp_disk_metrics():
            issues.add(
                join_path(s.path, "diskType"), f"{s.disk_type!r} has no known disk quota metric"
            )
            ok = False
        if ok:
            keep.append(s)
    return keep


def vet_aws(out: list[NodeGroupSizing], issues: Issues) -> list[NodeGroupSizing]:
    """AWS sizings whose GPU instance types each match an EC2 vCPU quota class; a group with one
    that matches none becomes a config issue. A declared type of no class is an unknown row
    (``rules.aws_vm_quotas``), not a config error."""
    keep: list[NodeGroupSizing] = []
    for s in out:
        gpu = s.gpus_per_node > 0
        unmapped = [
            t
            for t in s.machine_types
            if gpu and not s.declared and aws_quota_code(t, s.spot) is None
        ]
        for t in unmapped:
            issues.add(join_path(s.path, "machineType"), f"{t!r} matches no EC2 vCPU quota class")
        if not unmapped:
            keep.append(s)
    return keep


def with_replacements(
    new: list[NodeGroupSizing], old: list[NodeGroupSizing], replaced: dict[str, tuple[int, str]]
) -> list[NodeGroupSizing]:
    """The sizings of a ``pulumi up`` that replaces or deletes node groups: a replaced pool's new
    groups are created, not updated (no surge), and its old groups run beside them until deleted,
    as a pool of their own (their own type, so their own quota class and vCPUs)."""
    out = [replace(s, surge=0) if s.name in replaced else s for s in new]
    for s in old:
        if s.name in replaced:
            nodes, names = replaced[s.name]
            label = replaced_label(s.name, names)
            count = len(names.split(", "))
            out.append(replace(s, name=label, max_nodes=nodes, surge=0, replaced_groups=count))
    return out


def replaced_label(pool: str, names: str) -> str:
    """The name of the sizing that stands for a pool's replaced node groups (``names``)."""
    return f"{pool} replaced ({names}, deleted after the new groups are up)"


def replaced_marks(
    marks: Iterable[NodeMarks], replaced: dict[str, tuple[int, str]]
) -> list[NodeMarks]:
    """The deployed stack's node-group marks of the groups a ``pulumi up`` replaces or deletes,
    under their ``replaced_label`` sizing: their running instances are the stack's own, so such
    a group adds only what it may grow to beyond them."""
    out = []
    for m in marks:
        if m.pool in replaced:
            names = replaced[m.pool][1]
            if m.group in names.split(", "):
                out.append(NodeMarks(replaced_label(m.pool, names), m.group, m.marks))
    return out


def replacements(old_plan: Plan, gone: Iterable[tuple[str, int]]) -> dict[str, tuple[int, str]]:
    """Per pool of the deployed stack, the nodes of its node groups one ``pulumi up`` replaces or
    deletes, and which groups.

    ``gone``: (nodeGroupName, maxSize) of every ``aws:eks/nodeGroup:NodeGroup`` the diff engine
    (``infra.core.diff``, behind ``infra.plan --diff``) reports as replace or delete: that engine
    knows every property that forces a new group, renamed or not. Both kinds run beside the new
    groups: a replacement is create-before-delete (Pulumi's default), and "Pulumi performs
    deletes last" in an update (pulumi/pulumi#16589), so a removed pool's groups still run
    while the new ones come up, each bounded by its ``maxSize``.
    """
    pool_of = old_plan.platform.node_group_pools()
    acc: dict[str, list[tuple[str, int]]] = {}
    for name, max_size in gone:
        if name in pool_of:
            acc.setdefault(pool_of[name], []).append((name, max_size))
    return {
        pool: (sum(n for _, n in groups), ", ".join(g for g, _ in groups))
        for pool, groups in acc.items()
    }
