"""EKS GPU node groups: instance types, AMI, AZs, labels/taints and the CA node-template tags.

Pure code. ``plan_group`` checks one ``gpuPools[]`` entry against the vendored catalog and returns
an ``EksGroupPlan`` (one pool: one node group, or one per AZ with ``groupPerZone``).
Naming and sizing across replacements live in ``infra.core.eks.lifecycle``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from infra.core.catalog.vendored import AwsGpuFamily, AwsInstance, Catalog, GpuModel
from infra.core.config.eks import EksClusterSpec, EksPoolSpec
from infra.core.eks import autoscaler
from infra.core.eks.instance_types import check_types, choose_capacity_type
from infra.core.eks.lifecycle import FrozenAzs, node_group_name, split_sizes, subnet_hash_inputs
from infra.core.eks.network import EksNetworkPlan
from infra.core.errors import Issues, join_path
from infra.core.labels import EKS_ACCELERATOR_LABEL, GPU_PRESENT_LABEL, POOL_LABEL
from infra.core.pools import PoolHints, Taint
from infra.core.sharing import advertised_gpu_resources, mig_gpu, operator_node_labels

if TYPE_CHECKING:
    from infra.core.eks.karpenter.pools import KarpenterPoolPlan

# The device-plugin convention: key nvidia.com/gpu, effect NoSchedule, and a value - CA drops a
# managed node group taint without a value when it reads DescribeNodegroup (kubernetes/autoscaler
# cluster-autoscaler/cloudprovider/aws/aws_manager.go getManagedNodegroupInfo, taints need a value).
GPU_TAINT = Taint("nvidia.com/gpu", "true", "NoSchedule")
# Labels the planner owns on every GPU group; users may not redefine them.
RESERVED_LABELS = (GPU_PRESENT_LABEL, EKS_ACCELERATOR_LABEL, POOL_LABEL)

# "Maximum of 50 taints per node group" (aws.eks.NodeGroup taints, pulumi-aws schema,
# https://www.pulumi.com/registry/packages/aws/api-docs/eks/nodegroup/#taints_python).
MAX_TAINTS = 50

# EKS taint effects (aws.eks.NodeGroupTaintArgs.effect) for the Kubernetes spelling.
EKS_TAINT_EFFECT: Mapping[str, str] = {
    "NoSchedule": "NO_SCHEDULE",
    "NoExecute": "NO_EXECUTE",
    "PreferNoSchedule": "PREFER_NO_SCHEDULE",
}

# "Kubernetes version 1.32 is the last version for which Amazon EKS will release AL2 AMIs"
# (https://docs.aws.amazon.com/eks/latest/userguide/eks-ami-deprecation-faqs.html).
AL2_LAST_MINOR = 32

# AMI type per (family, CPU architecture); botocore data eks/2017-11-01/service-2.json AMITypes.
_AMI_BY_FAMILY: Mapping[tuple[str, str], str] = {
    ("al2023", "x86_64"): "AL2023_x86_64_NVIDIA",
    ("al2023", "arm64"): "AL2023_ARM_64_NVIDIA",
    ("bottlerocket", "x86_64"): "BOTTLEROCKET_x86_64_NVIDIA",
    ("bottlerocket", "arm64"): "BOTTLEROCKET_ARM_64_NVIDIA",
}
_AMI_ARCH: Mapping[str, str] = {
    "AL2023_x86_64_NVIDIA": "x86_64",
    "AL2023_ARM_64_NVIDIA": "arm64",
    "BOTTLEROCKET_x86_64_NVIDIA": "x86_64",
    "BOTTLEROCKET_ARM_64_NVIDIA": "arm64",
    "AL2_x86_64_GPU": "x86_64",
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

# EFA nodes: "EC2 instances with EFA pre-allocate 5128 2MiB huge pages" and pods request them as
# hugepages-2Mi (https://docs.aws.amazon.com/eks/latest/userguide/node-efa.html); the node
# template advertises those 5128 x 2Mi, or CA never scales from zero for such a pod.
EFA_HUGEPAGES_2MI = f"{5128 * 2}Mi"
# Extended resource of AWS's EFA device plugin (aws-efa-k8s-device-plugin): one per EFA device.
EFA_RESOURCE = "vpc.amazonaws.com/efa"


def data_volume_device(ami_type: str) -> str:
    """The volume a launch template sizes for images and pods: Bottlerocket's second (data)
    volume /dev/xvdb, else the root volume /dev/xvda (Bottlerocket "Default Volumes",
    https://github.com/bottlerocket-os/bottlerocket#default-volumes)."""
    return "/dev/xvdb" if ami_type.startswith("BOTTLEROCKET") else "/dev/xvda"


@dataclass(frozen=True, slots=True)
class NetworkInterface:
    """One launch-template network interface (EC2 LaunchTemplateInstanceNetworkInterfaceSpecification)."""

    card: int
    device: int
    interface_type: Literal["interface", "efa", "efa-only"]


def efa_interfaces(efa_cards: tuple[int, ...], max_efa: int) -> tuple[NetworkInterface, ...]:
    """The EFA layout: card 0 device 0 is the primary interface (``efa`` where card 0 takes an
    EFA, plain ``interface`` where it does not, e.g. p6-b300), every other EFA card one
    ``efa-only`` interface at device 0 ("Maximize network bandwidth ... with multiple network
    cards", https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa-acc-inst-types.html: the
    primary interface can't be EFA-only; further cards take EFA-only at device index 0).
    """
    cards = list(efa_cards)[:max_efa]
    out = [NetworkInterface(0, 0, "efa" if 0 in cards else "interface")]
    out += [NetworkInterface(c, 0, "efa-only") for c in cards if c != 0]
    return tuple(out)


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
    """

    name: str
    az_ids: tuple[str, ...]
    min_size: int
    max_size: int
    frozen: FrozenAzs | None = None
    desired_size: int = 0  # the size sent: a live group's own, clamped (live.live_desired_size)


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
        capacity_type: ``ON_DEMAND``, ``SPOT`` or ``CAPACITY_BLOCK``.
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
    capacity_type: Literal["ON_DEMAND", "SPOT", "CAPACITY_BLOCK"]
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


def choose_ami_type(
    architecture: str, family: str, explicit: str | None, kubernetes_version: str
) -> tuple[str | None, str | None]:
    """Pick the group's AMI type: (ami_type, None) or (None, reason the explicit one fails)."""
    if explicit is None:
        return _AMI_BY_FAMILY[(family, architecture)], None
    if explicit == "AL2_x86_64_GPU" and kubernetes_minor(kubernetes_version) > AL2_LAST_MINOR:
        return None, (
            f"AL2_x86_64_GPU has no AMIs for Kubernetes {kubernetes_version} (AL2 ends at 1."
            f"{AL2_LAST_MINOR}, end of support 2025-11-26); use AL2023_x86_64_NVIDIA or "
            "BOTTLEROCKET_x86_64_NVIDIA"
        )
    if _AMI_ARCH[explicit] != architecture:
        return None, (
            f"{explicit} is for {_AMI_ARCH[explicit]} but the instance types are {architecture}; "
            f"use {_AMI_BY_FAMILY[(family, architecture)]}"
        )
    return explicit, None


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


def offered_az_ids(instances: list[AwsInstance], region: str) -> set[str]:
    """AZ IDs of ``region`` offering every one of ``instances``."""
    sets = [set(i.az_ids.get(region, ())) for i in instances]
    return set.intersection(*sets) if sets else set()


def region_az_ids(catalog: Catalog, region: str) -> set[str]:
    """Every AZ ID of ``region`` the catalog knows (any GPU type offered there)."""
    out: set[str] = set()
    for t in catalog.aws_instances():
        inst = catalog.aws_instance(t)
        if inst is not None:
            out |= inst.az_ids.get(region, frozenset())
    return out


def gpu_labels(pool_name: str, accelerator_label: str, user: Mapping[str, str]) -> dict[str, str]:
    """Labels of a GPU group's nodes: the user's plus the GPU, accelerator and pool labels."""
    return {
        **user,
        GPU_PRESENT_LABEL: "true",
        EKS_ACCELERATOR_LABEL: accelerator_label,
        POOL_LABEL: pool_name,
    }


# What the kubelet's nodefs capacity (the filesystem's statfs f_blocks, cAdvisor) lacks against
# the disk, at most. XFS leaves its internal log out of f_blocks (linux fs/xfs/xfs_super.c
# xfs_fs_statfs: "f_blocks = sb_dblocks - lsize"), and a log never exceeds XFS_MAX_LOG_BYTES,
# 2 GiB - 10 MiB (fs/xfs/libxfs/xfs_fs.h); AL2023's root filesystem is made at the AMI's few GiB
# (a log of MiB) and grown at boot, so the same 2 GiB also covers its GPT and boot partitions.
XFS_OVERHEAD_GIB = 2
# ext4 leaves its metadata out of f_blocks (fs/ext4/super.c ext4_statfs, s_overhead_clusters):
# inode tables of 256 bytes per 16 KiB (e2fsprogs misc/mke2fs.conf.in inode_size, inode_ratio)
# and a journal of at most 1 GiB (lib/ext2fs/mkjournal.c ext2fs_default_journal_size).
EXT4_INODE_TABLE_SHARE = 256 / 16384
EXT4_JOURNAL_MAX_GIB = 1
# mdadm v1.2 superblocks reserve up to 128 MiB ahead of the data on each member (mdadm super1.c
# headroom); the NVIDIA types with EFA have at most 8 instance-store NVMe disks.
MD_RAID_OVERHEAD_GIB = 8 * 128 / 1024
# AL2023 nodeadm's kubelet config: kubeReserved ephemeral-storage 1Gi and evictionHard
# nodefs.available 10% (awslabs/amazon-eks-ami nodeadm/internal/kubelet/config.go
# withDefaultReservedResources, defaultKubeletSubConfig). Bottlerocket: the kubelet's default hard
# eviction nodefs.available<10% (https://kubernetes.io/docs/concepts/scheduling-eviction/
# node-pressure-eviction/#hard-eviction-thresholds) and settings.kubernetes.kube-reserved's
# ephemeral-storage default 1Gi (https://bottlerocket.dev/en/os/latest/api/settings/kubernetes/).
KUBE_RESERVED_EPHEMERAL_GIB = 1
EVICTION_NODEFS_AVAILABLE = 0.10


def nodefs_capacity_gib(disk_gib: float, ami_type: str, raid0: bool = False) -> float:
    """The least nodefs capacity (GiB) a node reports for a ``disk_gib`` disk: XFS on AL2023
    (root volume, or the RAID0 of the instance store made by ``setup-local-disks`` with
    ``mkfs.xfs``); ext4 or XFS on Bottlerocket's data volume (a variant picks the filesystem of
    its data partition), so the larger of both losses."""
    if ami_type.startswith("BOTTLEROCKET"):
        ext4 = disk_gib * EXT4_INODE_TABLE_SHARE + EXT4_JOURNAL_MAX_GIB
        return max(0.0, disk_gib - max(ext4, XFS_OVERHEAD_GIB))
    return max(0.0, disk_gib - XFS_OVERHEAD_GIB - (MD_RAID_OVERHEAD_GIB if raid0 else 0))


def allocatable_ephemeral_gib(capacity_gib: float) -> float:
    """The kubelet's allocatable ephemeral storage for a nodefs of ``capacity_gib``: capacity
    minus kubeReserved minus the hard eviction threshold (https://kubernetes.io/docs/tasks/
    administer-cluster/reserve-compute-resources/#node-allocatable)."""
    reserved = KUBE_RESERVED_EPHEMERAL_GIB + capacity_gib * EVICTION_NODEFS_AVAILABLE
    return max(0.0, capacity_gib - reserved)


def ephemeral_storage_gi(disk_gib: float, ami_type: str = "AL2023", raid0: bool = False) -> int:
    """The CA template's ephemeral storage (whole GiB, rounded down): never more than a node of
    this disk has allocatable, so a pod the template admits fits the node it scales up."""
    return math.floor(allocatable_ephemeral_gib(nodefs_capacity_gib(disk_gib, ami_type, raid0)))


# releaseVersion per AMI family (see release_version_problem for the sources).
RELEASE_FORMATS = {
    "al": re.compile(r"1\.\d+\.\d+-\d{8}"),
    "bottlerocket": re.compile(r"\d+\.\d+\.\d+-[0-9a-f]{8}"),
}
RELEASE_SHAPES = {
    "al": "<kubernetes version>-<YYYYMMDD> (e.g. 1.34.2-20260714)",
    "bottlerocket": "<bottlerocket version>-<8 hex commit> (e.g. 1.47.0-6154605b)",
}


def release_version_problem(
    release: str | None, ami_type: str | None, cluster: EksClusterSpec
) -> str | None:
    """Why a pinned AMI release cannot serve the cluster's Kubernetes version, or ``None``.

    An Amazon Linux release is built per Kubernetes minor and named after it:
    ``<kubernetes version>-<build date>``, e.g. ``1.36.2-20260714`` (awslabs/amazon-eks-ami
    CHANGELOG.md, "Release version"); EKS refuses one of another minor. Bottlerocket's releases
    carry its own version and an 8-hex commit, not Kubernetes': ``1.47.0-6154605b`` on a
    BOTTLEROCKET_x86_64 node group (aws-controllers-k8s/community#2644).
    """
    if release is None or ami_type is None:
        return None
    family = next((f for f in RELEASE_FORMATS if ami_type.upper().startswith(f.upper())), None)
    if family is None:
        return None
    if not RELEASE_FORMATS[family].fullmatch(release):
        return (
            f"{release!r} is not an {ami_type} release version: "
            f"{RELEASE_SHAPES[family]} expected; leave releaseVersion unset for EKS's latest"
        )
    if family != "al":
        return None
    minor = ".".join(release.split(".")[:2])
    if minor == cluster.kubernetes_version:
        return None
    return (
        f"{release!r} is an EKS-optimized Amazon Linux release for Kubernetes {minor}, but "
        f"cluster.kubernetesVersion is {cluster.kubernetes_version}: pin a "
        f"{cluster.kubernetes_version}.x-<date> release or leave releaseVersion unset (EKS's "
        "latest for the version)"
    )


def kubernetes_minor(version: str) -> int:
    """The minor of a ``1.<minor>`` Kubernetes version."""
    return int(version.split(".")[1])


@dataclass(frozen=True, slots=True, kw_only=True)
class _Shape:
    """Step 1 (instance types and capacity): what every node of the pool is."""

    names: tuple[str, ...]
    instances: tuple[AwsInstance, ...]
    family: AwsGpuFamily
    ami: str | None
    capacity_type: Literal["ON_DEMAND", "SPOT", "CAPACITY_BLOCK"] | None

    @property
    def first(self) -> AwsInstance:
        """The type CA sizes the node template from."""
        return self.instances[0]


@dataclass(frozen=True, slots=True, kw_only=True)
class _Placement:
    """Step 2 (AZs and subnets): where the pool's nodes go."""

    az_ids: tuple[str, ...]
    offered: tuple[str, ...]  # every usable AZ, before hpc/reservations keep one
    reservation_id: str | None
    single_az: bool
    zones_n: int


@dataclass(frozen=True, slots=True, kw_only=True)
class _Efa:
    """Step 3 (EFA): the launch template's interfaces and the EFA devices a node advertises."""

    count: int = 0
    nics: tuple[NetworkInterface, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class _NodeLabels:
    """Step 4 (labels and taints) and what the GPU resources look like to a pod."""

    labels: dict[str, str]
    taints: tuple[Taint, ...]
    gpu_count: int
    extra: Mapping[str, int | str]
    model: GpuModel


@dataclass(frozen=True, slots=True, kw_only=True)
class _Template:
    """Step 5 (autoscaler template): the CA node-template tags and the storage behind them."""

    tags: Mapping[str, str]
    local_nvme: bool
    nodefs_gib: float


def plan_group(
    i: int,
    pool: EksPoolSpec,
    cluster: EksClusterSpec,
    region: str,
    network: EksNetworkPlan | None,
    catalog: Catalog,
    issues: Issues,
) -> EksGroupPlan | None:
    """Decide one GPU pool's node group(s); ``None`` (with issues) when it cannot be built.

    A pipeline of pure steps: instance types and capacity -> AZs and subnets -> EFA -> labels
    and taints -> autoscaler template -> lifecycle (names, sizes, notes).
    """
    start = issues.count()
    shape = _plan_shape(i, pool, cluster, catalog, issues)
    if shape is None:
        return None
    placement = _plan_placement(i, pool, region, network, shape, issues)
    if placement is None:
        return None
    efa = _plan_efa(i, pool, shape.first, issues)
    _check_group_per_zone(i, pool, placement, issues)
    node = _plan_labels(i, pool, shape, catalog, issues)
    template = _plan_template(i, pool, shape, efa, node, issues)
    if problem := release_version_problem(pool.release_version, shape.ami, cluster):
        issues.add(join_path("gpuPools", i, "releaseVersion"), problem)
    if issues.count() != start or shape.ami is None or shape.capacity_type is None:
        return None
    return _assemble(i, pool, network, shape, placement, efa, node, template)


def _plan_shape(
    i: int, pool: EksPoolSpec, cluster: EksClusterSpec, catalog: Catalog, issues: Issues
) -> _Shape | None:
    """Instance types (checked against the catalog), the gpu block, AMI type and capacity type."""
    checked = check_types(
        i, pool, catalog, issues, karpenter=cluster.autoscaler.kind == "karpenter"
    )
    if checked is None:
        return None
    names, instances = checked
    first = instances[0]
    fam = catalog.aws_family(first.family)
    assert fam is not None  # checked above
    if pool.gpu is not None:
        if pool.gpu.type is not None and pool.gpu.type not in (
            first.gpu_model,
            fam.accelerator_label,
        ):
            issues.add(
                join_path("gpuPools", i, "gpu", "type"),
                f"{pool.gpu.type!r} does not match {first.name} ({first.gpu_model}, "
                f"{fam.accelerator_label}); gpu is optional on EKS",
            )
        if pool.gpu.count is not None and pool.gpu.count != first.gpus:
            issues.add(
                join_path("gpuPools", i, "gpu", "count"),
                f"{pool.gpu.count} but {first.name} has {first.gpus} GPU(s)",
            )
    ami, why = choose_ami_type(
        fam.architecture, pool.ami_family, pool.ami_type, cluster.kubernetes_version
    )
    if why is not None:
        issues.add(join_path("gpuPools", i, "amiType"), why)
    capacity_type = choose_capacity_type(i, pool, first, issues)
    return _Shape(
        names=tuple(names),
        instances=tuple(instances),
        family=fam,
        ami=ami,
        capacity_type=capacity_type,
    )


def _plan_placement(
    i: int,
    pool: EksPoolSpec,
    region: str,
    network: EksNetworkPlan | None,
    shape: _Shape,
    issues: Issues,
) -> _Placement | None:
    """AZs: every type offered there (catalog), restricted to zones/subnets if given; one AZ
    for hpc and reservations."""
    offered = offered_az_ids(list(shape.instances), region)
    if not offered:
        _not_offered(i, shape, region, issues)
        return None
    usable = _given_zones(i, pool, region, offered, shape.names, issues)
    if network is not None:
        with_subnet = usable & set(network.az_ids)
        if not with_subnet and usable:
            issues.add(
                join_path("gpuPools", i, "machineType"),
                f"{', '.join(shape.names)} is offered in {region} only in "
                f"{', '.join(sorted(usable))}, but the private subnets are in "
                f"{', '.join(network.az_ids)}",
            )
        usable = with_subnet
    az_ids = sorted(usable)
    offered_azs = tuple(az_ids)
    reservation_id = pool.capacity_reservation.id if pool.capacity_reservation else None
    single_az = pool.hpc or reservation_id is not None
    if reservation_id is not None and (pool.zones is None or len(pool.zones) != 1):
        # A reservation lives in one AZ that only the account can see; instances launched into
        # another AZ miss it (aws-ia/terraform-aws-eks-blueprints ml-capacity-block pattern:
        # restrict the node group's subnets to the reservation's AZ).
        issues.add(
            join_path("gpuPools", i, "zones"),
            f"capacityReservation.id {reservation_id}: give zones: [<AZ ID of the reservation>] "
            "(aws ec2 describe-capacity-reservations shows its AvailabilityZoneId)",
        )
    if single_az and len(az_ids) > 1:
        if pool.zones is not None and len(pool.zones) > 1:
            why_one = (
                "hpc (a cluster placement group is in one AZ)"
                if pool.hpc
                else "a capacity reservation (it is in one AZ)"
            )
            issues.add(
                join_path("gpuPools", i, "zones"),
                f"{why_one} needs exactly one AZ ID; got {', '.join(pool.zones)}",
            )
        az_ids = az_ids[:1]  # the first AZ offering the type (when no zone was given)
    return _Placement(
        az_ids=tuple(az_ids),
        offered=offered_azs,
        reservation_id=reservation_id,
        single_az=single_az,
        zones_n=len(az_ids) if pool.group_per_zone else 1,
    )


def _not_offered(i: int, shape: _Shape, region: str, issues: Issues) -> None:
    where = {x.name: sorted(x.az_ids) for x in shape.instances if region not in x.az_ids}
    detail = "; ".join(
        f"{t} is offered in: {', '.join(r) or 'no region'}" for t, r in where.items()
    )
    issues.add(
        join_path("gpuPools", i, "machineType"),
        f"{' and '.join(shape.names)} is not offered in {region}: no AZ there offers it "
        f"({detail or 'each is offered somewhere, but no AZ offers all of them'})",
    )


def _given_zones(
    i: int,
    pool: EksPoolSpec,
    region: str,
    offered: set[str],
    names: tuple[str, ...],
    issues: Issues,
) -> set[str]:
    """The offered AZ IDs narrowed to ``zones`` (each checked: listed once, offering the types)."""
    usable = set(offered)
    if pool.zones is None:
        return usable
    for k, az in enumerate(pool.zones):
        if az in pool.zones[:k]:
            issues.add(join_path("gpuPools", i, "zones", k), f"{az!r} is listed twice")
        elif az not in offered:
            issues.add(
                join_path("gpuPools", i, "zones", k),
                f"{az!r} does not offer {', '.join(names)} in {region} (AZ IDs offering "
                f"it: {', '.join(sorted(offered))})",
            )
    return usable & set(pool.zones)


def _plan_efa(i: int, pool: EksPoolSpec, first: AwsInstance, issues: Issues) -> _Efa:
    """EFA interfaces of an hpc pool (none otherwise)."""
    if not pool.hpc:
        return _Efa()
    if first.efa_interfaces == 0:
        issues.add(
            join_path("gpuPools", i, "hpc"),
            f"{first.name} supports no EFA interface (EC2 DescribeInstanceTypes "
            "NetworkInfo.EfaSupported); hpc is for EFA types such as p4d.24xlarge, "
            "p5.48xlarge, p6-b200.48xlarge",
        )
        return _Efa()
    if first.efa_cards:
        nics = efa_interfaces(first.efa_cards, first.efa_interfaces)
        return _Efa(count=sum(n.interface_type != "interface" for n in nics), nics=nics)
    # A catalog without per-card data: one EFA per card from card 0.
    nics = efa_interfaces(tuple(range(first.efa_interfaces)), first.efa_interfaces)
    return _Efa(count=first.efa_interfaces, nics=nics)


def _check_group_per_zone(i: int, pool: EksPoolSpec, placement: _Placement, issues: Issues) -> None:
    if pool.group_per_zone and placement.single_az:
        issues.add(
            join_path("gpuPools", i, "groupPerZone"),
            "a one-AZ pool (hpc or capacityReservation) has one node group already",
        )
    zones_n = placement.zones_n
    if pool.group_per_zone and placement.az_ids and pool.max_nodes < zones_n:
        issues.add(
            join_path("gpuPools", i, "maxNodes"),
            f"{pool.max_nodes} is below the {zones_n} AZs of groupPerZone (every node group "
            "needs maxSize >= 1)",
        )


def _plan_labels(
    i: int, pool: EksPoolSpec, shape: _Shape, catalog: Catalog, issues: Issues
) -> _NodeLabels:
    """Node labels and taints, and the GPU resources the nodes advertise."""
    for key in pool.labels:
        if key in RESERVED_LABELS:
            issues.add(
                join_path("gpuPools", i, "labels", key), "set by gpu-infra on every GPU node group"
            )
    labels = gpu_labels(pool.name, shape.family.accelerator_label, pool.labels)
    # Per-pool device-plugin (time-slicing) and MIG-manager configs are picked by node label.
    labels.update(operator_node_labels(pool))
    if len(pool.taints) + 1 > MAX_TAINTS:
        issues.add(
            join_path("gpuPools", i, "taints"),
            f"{len(pool.taints)} taints plus gpu-infra's {GPU_TAINT.key} exceed EKS's "
            f"{MAX_TAINTS} per node group",
        )
    taints = [GPU_TAINT]
    for k, t in enumerate(pool.taints):
        if t.key == GPU_TAINT.key:
            issues.add(
                join_path("gpuPools", i, "taints", k, "key"),
                f"{t.key!r} is already tainted {GPU_TAINT.value}:{GPU_TAINT.effect} "
                "on every GPU group",
            )
            continue
        taints.append(Taint(t.key, t.value, t.effect))
    model = catalog.gcp_model(shape.family.accelerator_label)
    # NVIDIA's MIG table (mig-parted), not GKE's shorter list: the one MIG source for templates.
    mig_facts = mig_gpu(shape.first.gpu_model) or mig_gpu(shape.family.accelerator_label)
    gpu_count, extra = advertised_gpu_resources(shape.first.gpus, pool.sharing, pool.mig, mig_facts)
    if gpu_count == 0:
        # MIG mixed or renamed time-slicing: nodes advertise nvidia.com/mig-* or
        # nvidia.com/gpu.shared and zero nvidia.com/gpu. CA treats a node
        # carrying the GPU label without allocatable nvidia.com/gpu as not ready yet and keeps
        # scaling up for it (kubernetes/autoscaler cluster-autoscaler/processors/customresources/
        # gpu_processor.go FilterOutNodesWithUnreadyResources); without the label CA judges the
        # node by CPU/memory and its MIG resources like any extended resource.
        labels.pop(EKS_ACCELERATOR_LABEL, None)
    return _NodeLabels(
        labels=labels, taints=tuple(taints), gpu_count=gpu_count, extra=extra, model=model
    )


def _plan_template(
    i: int, pool: EksPoolSpec, shape: _Shape, efa: _Efa, node: _NodeLabels, issues: Issues
) -> _Template:
    """The CA node-template tags (labels, taints, resources), each checked against ASG limits."""
    first, ami = shape.first, shape.ami
    # hpc on AL2023: kubelet and containerd on a RAID0 of the instance-store NVMe (nodeadm
    # NodeConfig spec.instance.localStorage.strategy RAID0, https://awslabs.github.io/
    # amazon-eks-ami/nodeadm/doc/api/#localstoragestrategy); Bottlerocket mounts no instance store.
    local_nvme = (
        pool.hpc and first.local_storage_gb > 0 and ami is not None and ami.startswith("AL2023")
    )
    storage_gib = first.local_storage_gb * 1e9 / 2**30 if local_nvme else pool.disk_size_gb
    resources: dict[str, int | str] = {
        **node.extra,
        "ephemeral-storage": f"{ephemeral_storage_gi(storage_gib, ami or '', local_nvme)}Gi",
    }
    if efa.count:
        # What an EFA pod requests (node-efa.html example: vpc.amazonaws.com/efa and
        # hugepages-2Mi); at zero nodes CA knows them only from node-template/resources/<name>
        # tags (kubernetes/autoscaler cluster-autoscaler/cloudprovider/aws/README.md;
        # aws_manager.go buildNodeFromTemplate).
        resources[EFA_RESOURCE] = efa.count
        resources["hugepages-2Mi"] = EFA_HUGEPAGES_2MI
    tags = autoscaler.node_template_tags(node.labels, list(node.taints), node.gpu_count, resources)
    for key, value in tags.items():
        bad = autoscaler.check_tag(key, value)
        if bad is not None:
            issues.add(join_path("gpuPools", i, "labels"), bad)
    if len(tags) > autoscaler.TEMPLATE_TAG_BUDGET:
        issues.add(
            join_path("gpuPools", i, "labels"),
            f"{len(tags)} cluster-autoscaler node-template tags (labels + taints + resources) "
            f"exceed {autoscaler.TEMPLATE_TAG_BUDGET}: an ASG holds {autoscaler.ASG_TAG_LIMIT} "
            f"tags, EKS and gpu-infra set {autoscaler.MANAGED_ASG_TAGS} themselves and a few "
            "are left for yours; drop labels",
        )
    return _Template(tags=tags, local_nvme=local_nvme, nodefs_gib=storage_gib)


def _node_groups(
    pool: EksPoolSpec, network: EksNetworkPlan | None, shape: _Shape, placement: _Placement
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


def _hints(pool: EksPoolSpec, shape: _Shape, ami: str, node: _NodeLabels) -> PoolHints:
    first, model = shape.first, node.model
    return PoolHints(
        name=pool.name,
        gpu_type=first.gpu_model,
        # A fractional type (g6f: 1/8 L4) shows one logical GPU to the node; say which share.
        gpu_model=(
            f"{first.gpu_model} ({first.gpu_fraction:g} GPU share)"
            if first.gpu_fraction < 1
            else model.model
            if model.memory_mib
            else first.gpu_model
        ),
        gpus_per_node=first.gpus,
        vcpus=first.vcpus,
        memory_gib=first.memory_gib,
        node_image=ami,
        driver="preinstalled",
        node_selector={POOL_LABEL: pool.name},
        labels=node.labels,
        taints=node.taints,
        spot=pool.spot,
        min_nodes=pool.min_nodes,
        max_nodes=pool.max_nodes,
        mig_profiles=model.mig_profiles,
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
    shape: _Shape,
    placement: _Placement,
    efa: _Efa,
    node: _NodeLabels,
    template: _Template,
) -> EksGroupPlan:
    """Step 6 (lifecycle and name): the node groups and the pool's plan."""
    assert shape.ami is not None and shape.capacity_type is not None
    cr = pool.capacity_reservation
    return EksGroupPlan(
        hints=_hints(pool, shape, shape.ami, node),
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
