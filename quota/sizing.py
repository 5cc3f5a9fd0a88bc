"""Plan -> what each node group can grow to, in the units quotas count (pure).

This is the one place that reads ``infra.core`` plans for the quota check: when a plan gains or
renames a field (boot-disk type, local SSDs, private nodes, a group's AZs), adapt it here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from infra.core.catalog.vendored import Catalog
from infra.core.cost import GKE_REGIONAL_DEFAULT_ZONES
from infra.core.errors import Issues, join_path
from infra.core.gke.names import fallback_pool_name
from infra.core.plan import Plan
from infra.core.system_pool import aws_vcpus_from_name, gcp_vcpus_of
from infra.core.warm import idle_nodes, warm_of
from quota.rules import (
    Provisioning,
    aws_quota_code,
    gcp_accelerator_quotas,
    gcp_cpu_rules,
    gcp_disk_metrics,
    gcp_machine_family,
)

if TYPE_CHECKING:
    from infra.core.gke.model import GkePoolPlan

# GKE surge upgrades add up to maxSurge nodes to a pool while it is upgraded ("the maximum number
# of nodes that can be created beyond the current size of the node pool during the upgrade
# process", https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/NodePool#upgradesettings);
# the default is maxSurge=1 (https://cloud.google.com/kubernetes-engine/docs/concepts/node-pool-upgrade-strategies).
GKE_DEFAULT_MAX_SURGE = 1
# Boot disk of nodes whose pool sets none (the system pool, the bootstrap pool): 100 GB
# pd-balanced. https://cloud.google.com/kubernetes-engine/docs/how-to/custom-boot-disks
GKE_DEFAULT_DISK_TYPE = "pd-balanced"
GKE_DEFAULT_DISK_GB = 100
# A new cluster first runs its default node pool (initial_node_count=1 per zone, machine type
# e2-medium, 2 vCPUs) until remove_default_node_pool deletes it; a regional cluster spreads it
# over GKE_REGIONAL_DEFAULT_ZONES zones. https://cloud.google.com/kubernetes-engine/docs/concepts/regional-clusters
# (three zones by default) and https://cloud.google.com/sdk/gcloud/reference/container/clusters/create
# (--machine-type default e2-medium).
GKE_BOOTSTRAP_MACHINE_TYPE = "e2-medium"
GKE_BOOTSTRAP_VCPUS = 2


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeGroupSizing:
    """What one pool / node group can grow to.

    Attributes:
        path: config key path of the pool (``gpuPools[0]``, ``cluster.systemPool``).
        name: pool / node-group name.
        machine_types: GCP machine type or AWS instance type(s).
        gpu_type: GCP accelerator type; ``None`` for CPU pools and on AWS.
        gpus_per_node: GPUs per node.
        vcpus: vCPUs per node.
        model: provisioning model (``rules.PROVISIONING_RULES``).
        max_nodes: pool total maximum.
        surge: extra nodes an upgrade of this pool may add on top of ``max_nodes``.
        disk_type / disk_gb: boot disk of each node (GCP).
        local_ssds: local SSDs per node (GCP).
        external_ip: nodes get an external IPv4 address (GCP, no private nodes).
        bootstrap: the cluster's default pool, which exists only before the others.
        declared: the machine type is the pool's declared ``gpuPools[].shape``: a GPU or family
            the quota tables lack is an unknown row, not a config error.
        reservation_id: the EC2 Capacity Reservation the group launches into (AWS).
        node_groups: EKS managed node groups the pool makes (one, or one per AZ).
        zones: the zones (GKE) or AZ IDs (EKS) the pool is planned in.
        node_group_names: the EKS node group names the pool makes (AWS).
        replaced_groups: node groups of the deployed stack this entry stands for while they
            run beside their replacements (``with_replacements``); 0 for planned pools.
        karpenter: a Karpenter NodePool (EKS ``cluster.autoscaler.kind: karpenter``): its
            surge is the drift replacement, not a node group update.
        auto_created: GKE auto-creates the pool from a ComputeClass, so it may put every node
            in one zone.
    """

    path: str
    name: str
    machine_types: tuple[str, ...]
    gpu_type: str | None
    gpus_per_node: int
    vcpus: int
    model: Provisioning = "standard"
    max_nodes: int
    surge: int = 0
    disk_type: str = GKE_DEFAULT_DISK_TYPE
    disk_gb: int = GKE_DEFAULT_DISK_GB
    local_ssds: int = 0
    external_ip: bool = True
    bootstrap: bool = False
    declared: bool = False
    reservation_id: str | None = None
    node_groups: int = 1
    zones: tuple[str, ...] = ()
    replaced_groups: int = 0
    node_group_names: tuple[str, ...] = ()
    karpenter: bool = False
    auto_created: bool = False
    # Nodes running at minimum scale: minNodes, or the warm placeholders' nodes if more.
    min_nodes: int = 0
    warm: int = 0

    @property
    def spot(self) -> bool:
        """Spot capacity."""
        return self.model == "spot"


def _gke_model(gp: GkePoolPlan) -> Provisioning:
    if gp.flex_start:
        return "flex-start"
    if gp.queued_provisioning:
        return "queued"
    if gp.spot:
        return "spot"
    if gp.reservation_type == "SPECIFIC_RESERVATION":  # ANY_RESERVATION may not be consumed
        return "reservation"
    return "standard"


def gke_sizings(config: Any, plan: Plan, catalog: Catalog, issues: Issues) -> list[NodeGroupSizing]:
    """Every planned GKE node pool (fallback pools included), the system and bootstrap pools."""
    assert plan.gke is not None
    paths = _gke_paths(config)
    # Planned pools on a declared machine type (fallbacks too: the planner accepts only catalog
    # types and the declared ones).
    declared = {p.machine_type for p in config.pools if p.shape is not None}
    external = not plan.gke.cluster.private_nodes
    warm = warm_of(config)
    out = [
        NodeGroupSizing(
            path=paths.get(gp.name, gp.name),
            name=gp.name,
            machine_types=(gp.machine_type,),
            gpu_type=gp.accelerator,
            gpus_per_node=gp.accelerator_count,
            vcpus=gp.vcpus,
            model=_gke_model(gp),
            max_nodes=gke_created(gp.total_max, gp.initial_node_count, len(gp.node_locations)),
            surge=gp.max_surge or 0,  # None: flex/queued pools (SHORT_LIVED, no surge)
            disk_type=gp.disk_type,
            disk_gb=gp.disk_size_gb,
            local_ssds=gp.local_ssd_count,
            external_ip=external,
            declared=gp.machine_type in declared,
            zones=gp.node_locations,
            auto_created=gp.auto_create,
            min_nodes=idle_nodes(gp.nodes_at_min, warm.get(gp.name, 0)),
            warm=warm.get(gp.name, 0),
        )
        for gp in plan.gke.pools
    ]
    cluster = plan.gke.cluster
    regional = cluster.location.count("-") == 1  # us-central1 vs us-central1-a
    if not cluster.existing:
        vcpus = gcp_vcpus_of(cluster.system_machine_type, catalog)
        if vcpus is None:
            issues.add(
                "cluster.systemPool.machineType",
                f"{cluster.system_machine_type!r} is not a predefined GCP machine type "
                "(vCPUs unknown)",
            )
        else:
            out.append(
                NodeGroupSizing(
                    path="cluster.systemPool",
                    name="system",
                    machine_types=(cluster.system_machine_type,),
                    gpu_type=None,
                    gpus_per_node=0,
                    vcpus=vcpus,
                    # initialNodeCount=1 per zone (infra/components/gke.py), GKE's default zones
                    max_nodes=gke_created(
                        cluster.system_max, 1, GKE_REGIONAL_DEFAULT_ZONES if regional else 1
                    ),
                    surge=GKE_DEFAULT_MAX_SURGE,
                    disk_type=cluster.system_disk_type,
                    external_ip=external,
                    # initialNodeCount 1 per zone, as the cost estimate counts it at minimum
                    min_nodes=max(
                        cluster.system_min, GKE_REGIONAL_DEFAULT_ZONES if regional else 1
                    ),
                )
            )
        out.append(
            NodeGroupSizing(
                path="cluster",
                name="default-pool (bootstrap)",
                machine_types=(GKE_BOOTSTRAP_MACHINE_TYPE,),
                gpu_type=None,
                gpus_per_node=0,
                vcpus=GKE_BOOTSTRAP_VCPUS,
                max_nodes=GKE_REGIONAL_DEFAULT_ZONES if regional else 1,
                external_ip=external,
                bootstrap=True,
            )
        )
    return _vetted(out, issues)


def gke_created(total_max: int, initial_per_zone: int, zones: int) -> int:
    """Nodes a GKE pool may hold: max(total max, zones x initialNodeCount).

    ``initialNodeCount`` is per zone: "The initial node count for the pool ... must be at least 1
    ... in each of the node pool's zones" (https://cloud.google.com/kubernetes-engine/docs/
    reference/rest/v1/projects.locations.clusters.nodePools#NodePool.FIELDS.initial_node_count:
    "The initial node count for the pool"; https://cloud.google.com/sdk/gcloud/reference/container/
    node-pools/create: "--num-nodes ... The number of nodes in the node pool in each of the
    cluster's zones"), so creation can start above ``totalMaxNodeCount``.
    """
    return max(total_max, initial_per_zone * zones)


def _vetted(out: list[NodeGroupSizing], issues: Issues) -> list[NodeGroupSizing]:
    """Sizings whose GPU, family and disk type have quota rows; the rest become config issues.

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


def _gke_paths(config: Any) -> dict[str, str]:
    """Planned pool name -> config key path (fallback pools are named by their shape)."""
    paths: dict[str, str] = {}
    for i, pool in enumerate(config.pools):
        paths[pool.name] = join_path("gpuPools", i)
        for j, fb in enumerate(pool.fallback or ()):
            paths[fallback_pool_name(pool.name, fb)] = join_path("gpuPools", i, "fallback", j)
    return paths


def eks_surge(az_count: int, max_unavailable: int) -> int:
    """Nodes an EKS managed node group update may add: max(2 x AZs, maxUnavailable).

    EKS raises the ASG by up to twice the group's AZ count, or by maxUnavailable if larger
    (https://docs.aws.amazon.com/eks/latest/userguide/managed-node-update-behavior.html).
    """
    return max(2 * az_count, max_unavailable)


def eks_sizings(config: Any, plan: Plan, catalog: Catalog, issues: Issues) -> list[NodeGroupSizing]:
    """Every planned EKS GPU node group and the CPU system group, each with its update surge."""
    assert plan.eks is not None
    index = {pool.name: i for i, pool in enumerate(config.pools)}
    warm = warm_of(config)
    out: list[NodeGroupSizing] = []
    for g in plan.eks.groups:
        path = join_path("gpuPools", index.get(g.name))
        declared = g.name in index and config.pools[index[g.name]].shape is not None
        # A declared type of no class is an unknown row (aws_vm_quotas), not a config error.
        unmapped = [
            t for t in g.instance_types if not declared and aws_quota_code(t, g.hints.spot) is None
        ]
        for t in unmapped:
            issues.add(join_path(path, "machineType"), f"{t!r} matches no EC2 vCPU quota class")
        if unmapped:
            continue
        out.append(
            NodeGroupSizing(
                path=path,
                name=g.name,
                machine_types=g.instance_types,
                gpu_type=None,
                gpus_per_node=g.hints.gpus_per_node,
                vcpus=g.hints.vcpus,  # same-shape types only, so one vCPU count
                model="spot" if g.hints.spot else "standard",
                # A Karpenter pool: maxNodes, and its drift surge below; together the nodes
                # its NodePool limits admit (KarpenterPoolPlan.limit_nodes), as cost counts.
                max_nodes=g.karpenter.max_nodes if g.karpenter is not None else g.max_size,
                # MINIMAL terminates before it launches: an update adds no node. groupPerZone:
                # one node group per AZ, each surging by its own AZ count.
                surge=(
                    g.karpenter.drift_surge
                    if g.karpenter is not None
                    else 0
                    if g.update_strategy == "MINIMAL"
                    else sum(
                        eks_surge(len(ng.az_ids), g.update_max_unavailable) for ng in g.node_groups
                    )
                    or eks_surge(len(g.az_ids), g.update_max_unavailable)
                ),
                declared=declared,
                reservation_id=g.capacity_reservation_id,
                zones=g.az_ids,
                node_groups=max(1, len(g.node_groups)),
                node_group_names=tuple(ng.name for ng in g.node_groups),
                karpenter=g.karpenter is not None,
                min_nodes=idle_nodes(g.min_size, warm.get(g.name, 0)),
                warm=warm.get(g.name, 0),
            )
        )
    system = plan.eks.system
    if system is not None:
        vcpus = [
            v
            for t in system.instance_types
            if (v := getattr(catalog.aws_instance(t), "vcpus", None) or aws_vcpus_from_name(t))
        ]
        if len(vcpus) != len(system.instance_types):
            issues.add(
                "cluster.systemPool.machineType",
                f"vCPUs of {', '.join(system.instance_types)} unknown",
            )
        net = plan.eks.network
        # The system group uses the control-plane subnets (infra/components/eks.py).
        azs = len(net.control_plane_az_ids or net.az_ids) if net is not None else 0
        out.append(
            NodeGroupSizing(
                path="cluster.systemPool",
                name=system.name,
                machine_types=system.instance_types,
                gpu_type=None,
                gpus_per_node=0,
                vcpus=max(vcpus, default=0),
                max_nodes=system.max_size,
                surge=eks_surge(azs, system.update_max_unavailable),
                min_nodes=system.min_size,
            )
        )
    return out


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
            label = f"{s.name} replaced ({names}, deleted after the new groups are up)"
            count = len(names.split(", "))
            out.append(replace(s, name=label, max_nodes=nodes, surge=0, replaced_groups=count))
    return out


# Pulumi's type token of an EKS managed node group (pulumi-aws resource schema).
EKS_NODE_GROUP_TYPE = "aws:eks/nodeGroup:NodeGroup"


def eks_replacements(old_plan: Plan, gone: Iterable[tuple[str, int]]) -> dict[str, tuple[int, str]]:
    """Per pool of the deployed stack, the nodes of its node groups one ``pulumi up`` replaces or
    deletes, and which groups.

    ``gone``: (nodeGroupName, maxSize) of every ``aws:eks/nodeGroup:NodeGroup`` the diff engine
    (``infra.core.diff``, behind ``infra.plan --diff``) reports as replace or delete: that engine
    knows every property that forces a new group, renamed or not. Both kinds run beside the new
    groups: a replacement is create-before-delete (Pulumi's default), and "Pulumi performs
    deletes last" in an update (pulumi/pulumi#16589), so a removed pool's groups still run
    while the new ones come up, each bounded by its ``maxSize``.
    """
    if old_plan.eks is None:
        return {}
    pool_of = {ng.name: g.name for g in old_plan.eks.groups for ng in g.node_groups}
    system = old_plan.eks.system
    if system is not None:
        pool_of[system.node_group_name] = system.name
    acc: dict[str, list[tuple[str, int]]] = {}
    for name, max_size in gone:
        if name in pool_of:
            acc.setdefault(pool_of[name], []).append((name, max_size))
    return {
        pool: (sum(n for _, n in groups), ", ".join(g for g, _ in groups))
        for pool, groups in acc.items()
    }
