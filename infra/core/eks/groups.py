"""EKS GPU node groups: one ``gpuPools[]`` entry decided as one or more managed node groups.

Pure code. ``plan_group`` checks one ``gpuPools[]`` entry against the vendored catalog and returns
an ``EksGroupPlan`` (one pool: one node group, or one per AZ with ``groupPerZone``), through the
steps of its own modules: instance types and capacity (``instance_types``, with the AMI from
``ami``), AZs (``placement``), EFA (``efa``), labels, taints and the CA node template
(``template``, storage from ``storage``). Naming and sizing across replacements live in
``infra.core.eks.lifecycle``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from infra.core.catalog.vendored import Catalog
from infra.core.config.eks import EksClusterSpec, EksPoolSpec
from infra.core.eks import autoscaler
from infra.core.eks.ami import release_version_problem
from infra.core.eks.efa import EfaLayout, NetworkInterface, plan_efa
from infra.core.eks.instance_types import CapacityType, GroupShape, plan_shape
from infra.core.eks.lifecycle import FrozenAzs, node_group_name, split_sizes, subnet_hash_inputs
from infra.core.eks.network import EksNetworkPlan
from infra.core.eks.placement import Placement, check_group_per_zone, plan_placement
from infra.core.eks.storage import (
    allocatable_ephemeral_gib,
    data_volume_device,
    nodefs_capacity_gib,
)
from infra.core.eks.template import NodeLabels, NodeTemplate, plan_labels, plan_template
from infra.core.errors import Issues, join_path
from infra.core.labels import POOL_LABEL
from infra.core.pools import PoolHints, Taint
from infra.core.sharing import pool_mig

if TYPE_CHECKING:
    from infra.core.eks.karpenter.pools import KarpenterPoolPlan


# EKS taint effects (aws.eks.NodeGroupTaintArgs.effect) for the Kubernetes spelling.
EKS_TAINT_EFFECT: Mapping[str, str] = {
    "NoSchedule": "NO_SCHEDULE",
    "NoExecute": "NO_EXECUTE",
    "PreferNoSchedule": "PREFER_NO_SCHEDULE",
}

# Managed node group rolling updates: nodes replaced at once (UpdateConfig.maxUnavailable, 1-100;
# https://docs.aws.amazon.com/eks/latest/APIReference/API_NodegroupUpdateConfig.html). EKS also
# surges up to twice the group's AZ count during an update ("Managed node update behavior",
# https://docs.aws.amazon.com/eks/latest/userguide/managed-node-update-behavior.html).
UPDATE_MAX_UNAVAILABLE = 1
# Update strategy (NodegroupUpdateConfig.updateStrategy, same page): DEFAULT launches new
# instances before terminating old ones; MINIMAL "terminates the old instances before launching
# the new instances ... useful in scenarios where you are constrained to resources ... (for
# example, with hardware accelerators such as GPUs)". A fully used reservation, Capacity Block or
# placement group has no room for DEFAULT's extra nodes: every update fails NodeCreationFailure.
UpdateStrategy = Literal["DEFAULT", "MINIMAL"]


@dataclass(frozen=True, slots=True, kw_only=True)
class EksNodeGroup:
    """One EKS managed node group of a pool (a pool has one, or one per AZ with groupPerZone).

    Attributes:
        name: the EKS node group name: ``<pool>[-<az id>]-<hash>``, the hash over every
            property EKS cannot change in place, so such a change makes a new group (created
            before the old one is deleted) instead of a name clash.
        az_ids: the AZ IDs its subnets are in.
        min_size / max_size: minimum and maximum nodes.
        frozen: for AZs the catalog chose (no ``zones``), what lets a deploy keep a live group
            named over fewer AZs instead of replacing it (``lifecycle.live_name``).
        legacy_name: on a cluster the stack does not own, the name without the stack in its
            hash (``lifecycle.owned_name``), which a running group of this stack keeps.
    """

    name: str
    az_ids: tuple[str, ...]
    min_size: int
    max_size: int
    frozen: FrozenAzs | None = None
    legacy_name: str | None = None
    desired_size: int = 0  # the size sent: a live group's own, clamped (live.live_desired_size)
    # False: a live group whose min and max stay: its desired size is the autoscaler's, never
    # sent (ignoreChanges; live.sends_desired_size).
    send_desired: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class EksGroupPlan:
    """One ``gpuPools[]`` entry on EKS, fully decided.

    Field names follow ``aws.eks.NodeGroup`` arguments.

    Attributes:
        hints: platform-neutral facts (read by the operator plan, outputs and quota demand).
        name: the pool name (the Pulumi child suffix).
        node_groups: the EKS node groups (one, or one per AZ).
        instance_types: one type, or same-shape spot types (CA sizes from the first).
        ami_type: the EKS AMI type, always explicit (``gpu=True`` alone picks no GPU AMI).
        capacity_type: ``ON_DEMAND``, ``SPOT`` or ``CAPACITY_BLOCK``; a Karpenter pool also
            ``SPOT_OR_ON_DEMAND`` (its NodePool allows both).
        min_size / max_size: pool totals (split over ``node_groups``).
        disk_size_gib: root (AL2023) or data (Bottlerocket) volume size.
        labels / taints: node labels and taints (Kubernetes spelling; ``eks_taints`` for EKS).
        az_ids: AZ IDs the pool uses (all node groups together).
        asg_tags: CA node-template tags for every ASG of the pool.
        update_max_unavailable: UpdateConfig.maxUnavailable of every node group.
        update_strategy: UpdateConfig.updateStrategy (``update_strategy_for``).
        node_repair: EKS node auto repair (NodeRepairConfig.enabled).
        group_per_zone: one node group per AZ.
        efa_interfaces: EFA devices each node gets (0: none; the ``vpc.amazonaws.com/efa``
            it advertises).
        network_interfaces: the launch template's interfaces (empty: EKS's default one).
        placement_group: a cluster placement group for the pool (hpc without a reservation id).
        local_nvme: RAID0 of the instance-store NVMe for kubelet/containerd (hpc, AL2023).
        nodefs_disk_gib: the disk behind the kubelet's nodefs (that RAID0, else the volume).
        release_version: the pinned EKS-optimized AMI release (``None``: EKS's latest).
        capacity_reservation_id / capacity_reservation_preference: ODCR or Capacity Block.
        notes: what the operator must do by hand (logged as warnings at deploy and plan time).
        karpenter: with ``cluster.autoscaler.kind: karpenter``, the pool's EC2NodeClass and
            NodePool; the pool then has no node group (``node_groups`` empty, no ASG tags).
    """

    hints: PoolHints
    name: str
    node_groups: tuple[EksNodeGroup, ...]
    instance_types: tuple[str, ...]
    ami_type: str
    capacity_type: CapacityType
    min_size: int
    max_size: int
    disk_size_gib: int
    labels: Mapping[str, str]
    taints: tuple[Taint, ...]
    az_ids: tuple[str, ...]
    asg_tags: Mapping[str, str]
    update_max_unavailable: int = UPDATE_MAX_UNAVAILABLE
    update_strategy: UpdateStrategy = "DEFAULT"
    node_repair: bool = True
    group_per_zone: bool = False
    efa_interfaces: int = 0
    network_interfaces: tuple[NetworkInterface, ...] = ()
    placement_group: bool = False
    local_nvme: bool = False
    nodefs_disk_gib: float = 0.0
    release_version: str | None = None
    capacity_reservation_id: str | None = None
    capacity_reservation_preference: str | None = None
    notes: tuple[str, ...] = ()
    karpenter: KarpenterPoolPlan | None = None

    @property
    def group_may_be_empty(self) -> bool:
        """Some node group may sit at zero, where the cluster-autoscaler builds its node from the
        ASG's template (kubernetes/autoscaler FAQ.md: "creates template nodes for each of the
        node groups"; cloudprovider/aws aws_manager.go buildNodeFromTemplate): the pool's
        minimum is split over its per-AZ groups (``split_sizes``), so one may get 0."""
        return any(ng.min_size == 0 for ng in self.node_groups)

    @property
    def seeds_from_predecessor(self) -> bool:
        """Whether a replacement group starts at its predecessor's size: not for MINIMAL groups,
        whose capacity (reservation, Capacity Block, placement group) the predecessor still holds
        until it is deleted, so the replacement starts at its minimum."""
        return self.update_strategy == "DEFAULT"

    @property
    def allocatable_ephemeral_gib(self) -> float:
        """What a running node has allocatable of ``ephemeral-storage`` at least (GiB); the CA
        template's value is this rounded down."""
        capacity = nodefs_capacity_gib(self.nodefs_disk_gib, self.ami_type, self.local_nvme)
        return allocatable_ephemeral_gib(capacity)

    @property
    def root_device_name(self) -> str:
        """The volume the launch template sizes (``data_volume_device`` of the AMI type)."""
        return data_volume_device(self.ami_type)

    @property
    def node_group_tags(self) -> dict[str, str]:
        """Tags on the EKS node group itself: CA >= 1.28 reads ``resources/*`` from here too."""
        prefix = f"{autoscaler.TEMPLATE_PREFIX}/resources/"
        return {k: v for k, v in self.asg_tags.items() if k.startswith(prefix)}

    @property
    def eks_taints(self) -> list[dict[str, str]]:
        """Taints in the EKS API spelling (``NO_SCHEDULE``)."""
        return [
            {"key": t.key, "value": t.value, "effect": EKS_TAINT_EFFECT[t.effect]}
            for t in self.taints
        ]


# --- pure decisions (unit-tested directly) -------------------------------------------------


def update_strategy_for(pool: EksPoolSpec, capacity_type: str) -> UpdateStrategy:
    """MINIMAL for groups whose capacity is fixed: hpc (one placement group), a Capacity Block,
    a reservation by id or ``capacity-reservations-only``; DEFAULT (surge first) otherwise."""
    cr = pool.capacity_reservation
    fixed = (
        pool.hpc
        or capacity_type == "CAPACITY_BLOCK"
        or (cr is not None and (cr.id is not None or cr.preference == "capacity-reservations-only"))
    )
    return "MINIMAL" if fixed else "DEFAULT"


def plan_group(
    i: int,
    pool: EksPoolSpec,
    cluster: EksClusterSpec,
    region: str,
    network: EksNetworkPlan | None,
    catalog: Catalog,
    issues: Issues,
    stack: Mapping[str, str] | None = None,
) -> EksGroupPlan | None:
    """Decide one GPU pool's node group(s); ``None`` (with issues) when it cannot be built.

    A pipeline of pure steps: instance types and capacity -> AZs and subnets -> EFA -> labels
    and taints -> autoscaler template -> lifecycle (names, sizes, notes). ``stack``: the stack
    label of a cluster the stack does not own (``neighbours.stack_node_labels``), on every node,
    in the CA template and in the pool's node selector.
    """
    start = issues.count()
    shape = plan_shape(i, pool, cluster, catalog, issues)
    if shape is None:
        return None
    placement = plan_placement(i, pool, region, network, shape, issues)
    if placement is None:
        return None
    efa = plan_efa(i, pool, shape.first, issues)
    check_group_per_zone(i, pool, placement, issues)
    node = plan_labels(i, pool, shape, catalog, issues, stack)
    template = plan_template(i, pool, shape, efa, node, issues)
    if problem := release_version_problem(pool.release_version, shape.ami, cluster):
        issues.add(join_path("gpuPools", i, "releaseVersion"), problem)
    if issues.count() != start or shape.ami is None or shape.capacity_type is None:
        return None
    return _assemble(
        i, pool, network, shape, placement, efa, node, template, stack or {}, catalog.data_dir
    )


def _node_groups(
    pool: EksPoolSpec, network: EksNetworkPlan | None, shape: GroupShape, placement: Placement
) -> tuple[EksNodeGroup, ...]:
    """The pool's node groups (one, or one per AZ), named by the hash of what forces a new one."""
    immutable: dict[str, object] = {
        "instanceTypes": list(shape.names),
        "amiType": shape.ami,
        "capacityType": shape.capacity_type,
    }

    given = dict(network.private_subnets) if network is not None else {}

    def subnets(azs: list[str]) -> dict[str, object]:
        return subnet_hash_inputs(azs, given)

    az_ids = list(placement.az_ids)
    if not pool.group_per_zone:
        frozen = None
        if pool.zones is None:  # the catalog chose the AZs: a refresh must not rename the group
            frozen = FrozenAzs(
                pool=pool.name,
                hash_base=immutable,
                candidates=placement.offered,
                max_azs=len(az_ids),
                given_subnets=given,
            )
        return (
            EksNodeGroup(
                name=node_group_name(pool.name, None, {**immutable, **subnets(az_ids)}),
                az_ids=tuple(az_ids),
                min_size=pool.min_nodes,
                max_size=pool.max_nodes,
                frozen=frozen,
            ),
        )
    sizes = split_sizes(pool.min_nodes, pool.max_nodes, placement.zones_n)
    return tuple(
        EksNodeGroup(
            name=node_group_name(pool.name, az, {**immutable, **subnets([az])}),
            az_ids=(az,),
            min_size=lo,
            max_size=hi,
        )
        for az, (lo, hi) in zip(az_ids, sizes, strict=True)
    )


def _hints(
    pool: EksPoolSpec,
    shape: GroupShape,
    ami: str,
    node: NodeLabels,
    stack: Mapping[str, str],
    data_dir: Path,
) -> PoolHints:
    first, model = shape.first, node.model
    # A fractional type (g6f: 1/8 L4) shows one logical GPU to the node; say which share.
    gpu_model = (
        f"{first.gpu_model} ({first.gpu_fraction:g} GPU share)"
        if first.gpu_fraction < 1
        else model.model
        if model.memory_mib
        else first.gpu_model
    )
    return PoolHints(
        name=pool.name,
        gpu_type=first.gpu_model,
        gpu_model=gpu_model,
        gpus_per_node=first.gpus,
        vcpus=first.vcpus,
        memory_gib=first.memory_gib,
        node_image=ami,
        driver="preinstalled",
        # The pool label names the pool within the stack; the stack label (a shared cluster) keeps
        # another stack's pool of the same name out.
        node_selector={POOL_LABEL: pool.name, **stack},
        labels=node.labels,
        taints=node.taints,
        spot=pool.spot,
        min_nodes=pool.min_nodes,
        max_nodes=pool.max_nodes,
        mig_profiles=model.mig_profiles,
        mig=pool_mig(gpu_model, first.gpu_model, data_dir),
    )


def _notes(i: int, pool: EksPoolSpec, capacity_type: str) -> tuple[str, ...]:
    if capacity_type != "CAPACITY_BLOCK":
        return ()
    # "When upgrading managed node groups with Capacity Blocks, make sure that the desired
    # size of the node group is set to 0" (https://docs.aws.amazon.com/eks/latest/userguide/
    # capacity-blocks-mng.html). Not done automatically: it would terminate running nodes.
    return (
        f"gpuPools[{i}] ({pool.name}): a Capacity Block node group upgrades (AMI release, "
        "Kubernetes version, launch template) only at desired size 0; drain it and scale it "
        "to 0 first (EKS capacity-blocks-mng)",
    )


def _assemble(
    i: int,
    pool: EksPoolSpec,
    network: EksNetworkPlan | None,
    shape: GroupShape,
    placement: Placement,
    efa: EfaLayout,
    node: NodeLabels,
    template: NodeTemplate,
    stack: Mapping[str, str],
    data_dir: Path,
) -> EksGroupPlan:
    """Step 6 (lifecycle and name): the node groups and the pool's plan."""
    assert shape.ami is not None and shape.capacity_type is not None
    cr = pool.capacity_reservation
    return EksGroupPlan(
        hints=_hints(pool, shape, shape.ami, node, stack, data_dir),
        name=pool.name,
        node_groups=_node_groups(pool, network, shape, placement),
        instance_types=shape.names,
        ami_type=shape.ami,
        capacity_type=shape.capacity_type,
        min_size=pool.min_nodes,
        max_size=pool.max_nodes,
        disk_size_gib=pool.disk_size_gb,
        labels=node.labels,
        taints=node.taints,
        az_ids=placement.az_ids,
        asg_tags=template.tags,
        update_strategy=update_strategy_for(pool, shape.capacity_type),
        group_per_zone=pool.group_per_zone,
        efa_interfaces=efa.count,
        network_interfaces=efa.nics,
        # Not with a reservation id: capacity reserved "in a specified cluster placement group"
        # (CreateCapacityReservation PlacementGroupArn) serves that group, never one made here,
        # and one made outside any group is used by matching instances anyway ("Placement group
        # rules and limitations", https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/
        # limitations-placement-groups.html).
        placement_group=pool.hpc and placement.reservation_id is None,
        local_nvme=template.local_nvme,
        nodefs_disk_gib=template.nodefs_gib,
        release_version=pool.release_version,
        capacity_reservation_id=cr.id if cr is not None else None,
        capacity_reservation_preference=cr.preference if cr is not None else None,
        notes=_notes(i, pool, shape.capacity_type),
    )
