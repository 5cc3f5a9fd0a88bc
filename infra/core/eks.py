"""EKS planning: the cluster, its network, GPU node groups, AMI choice, AZ filtering, CA tags.

Pure code. ``plan_eks`` turns the parsed stack into an ``EksPlan`` that ``infra.components.eks``
maps 1:1 onto pulumi-eks / pulumi-aws resources. Every rule of reference eks.md §1-§3 is checked
here, offline, against the vendored catalog: instance types and their shapes, the NVIDIA AMI per
CPU architecture and Kubernetes version, the AZs (by AZ ID) offering every type of a group, and the
cluster-autoscaler node-template tags the group's ASG must carry to scale from zero.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from infra.core import autoscaler
from infra.core.catalog import AwsInstance, Catalog
from infra.core.config import StackConfig
from infra.core.config_eks import EksClusterSpec, EksPoolSpec
from infra.core.errors import Issues, join_path
from infra.core.kubeconfig import exec_kubeconfig
from infra.core.pools import PoolHints, Taint
from infra.core.sharing import operator_node_labels

# The device-plugin convention: key nvidia.com/gpu, effect NoSchedule, and a value - CA drops a
# managed node group taint without a value when it reads DescribeNodegroup (eks.md §2.4 caveat 3).
GPU_TAINT = Taint("nvidia.com/gpu", "true", "NoSchedule")
# The NVIDIA device plugin chart's default affinity requires this label when NFD/GFD are absent;
# without it the plugin schedules nowhere on EKS (eks.md §4.2).
GPU_PRESENT_LABEL = "nvidia.com/gpu.present"
# Same key as GKE pools, so workloads select a pool the same way on both clouds.
POOL_LABEL = "gpu-infra/pool"
# Labels the planner owns on every GPU group; users may not redefine them.
RESERVED_LABELS = (GPU_PRESENT_LABEL, autoscaler.GPU_LABEL, POOL_LABEL)

SYSTEM_GROUP = "system"

# EKS taint effects (aws.eks.NodeGroupTaintArgs.effect) for the Kubernetes spelling.
EKS_TAINT_EFFECT: Mapping[str, str] = {
    "NoSchedule": "NO_SCHEDULE",
    "NoExecute": "NO_EXECUTE",
    "PreferNoSchedule": "PREFER_NO_SCHEDULE",
}

# "Kubernetes version 1.32 is the last version for which Amazon EKS will release AL2 AMIs"
# (https://docs.aws.amazon.com/eks/latest/userguide/eks-ami-deprecation-faqs.html).
AL2_LAST_MINOR = 32

# AMI type per (family, CPU architecture); botocore eks AMITypes, eks.md §1.2.
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
# The system (CPU) group's AMI; AL2023 is the EKS default OS from Kubernetes 1.30.
SYSTEM_AMI_TYPE = "AL2023_x86_64_STANDARD"

# EKS cannot place control-plane ENIs in these AZ IDs (EKS user guide "Cluster VPC and subnet
# requirements"; eksctl pkg/az/az.go zoneIDsToAvoid). Node groups may still use them.
CONTROL_PLANE_AVOID_AZ_IDS = frozenset({"use1-az3", "usw1-az2", "cac1-az3"})

# Access policies (https://docs.aws.amazon.com/eks/latest/userguide/access-policy-permissions.html).
_ACCESS_POLICY = {
    "cluster-admin": "AmazonEKSClusterAdminPolicy",
    "admin": "AmazonEKSAdminPolicy",
    "edit": "AmazonEKSEditPolicy",
    "view": "AmazonEKSViewPolicy",
}

_SUBNET_ID = re.compile(r"^subnet-[0-9a-f]{8,17}$")
_AZ_ID = re.compile(r"^([a-z]+[0-9]+)-az[0-9]+$")


@dataclass(frozen=True, slots=True, kw_only=True)
class EksGroupPlan:
    """One EKS managed GPU node group, fully decided.

    Field names follow ``aws.eks.NodeGroup`` arguments.

    Attributes:
        hints: platform-neutral facts (read by the operator plan, outputs and quota demand).
        name: the pool name (also the EKS node group name and the Pulumi child suffix).
        instance_types: one type, or same-shape spot types (CA sizes from the first).
        ami_type: the EKS AMI type, always explicit (``gpu=True`` alone picks no GPU AMI).
        capacity_type: ``ON_DEMAND`` or ``SPOT``.
        min_size: minimum nodes (may be 0); also the initial desired size, whose drift is
            ignored afterwards (the cluster-autoscaler owns it).
        max_size: maximum nodes.
        disk_size_gib: root volume size, set through the launch template.
        labels: node labels, as given to the node group.
        taints: node taints, Kubernetes spelling (``eks_taints`` for the EKS enum).
        az_ids: AZ IDs offering every instance type (and with a subnet, if subnets are given).
        asg_tags: CA node-template tags for the group's ASG, derived from labels/taints/GPUs.
        root_device_name: the volume the launch template sizes (Bottlerocket keeps images and
            pods on its second volume, /dev/xvdb; AL2023 on the root volume).
    """

    hints: PoolHints
    name: str
    instance_types: tuple[str, ...]
    ami_type: str
    capacity_type: Literal["ON_DEMAND", "SPOT"]
    min_size: int
    max_size: int
    disk_size_gib: int
    labels: Mapping[str, str]
    taints: tuple[Taint, ...]
    az_ids: tuple[str, ...]
    asg_tags: Mapping[str, str]
    root_device_name: str = "/dev/xvda"

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


@dataclass(frozen=True, slots=True, kw_only=True)
class EksSystemGroupPlan:
    """The CPU node group for system pods (cluster-autoscaler, CoreDNS, the operator)."""

    name: str
    instance_types: tuple[str, ...]
    ami_type: str
    min_size: int
    max_size: int
    disk_size_gib: int
    labels: Mapping[str, str]


@dataclass(frozen=True, slots=True, kw_only=True)
class EksNetworkPlan:
    """Where nodes live.

    Attributes:
        create: build a VPC (one private subnet per AZ ID, a public subnet and NAT gateway).
        cidr: the new VPC's CIDR (``create`` only).
        vpc_id: the given VPC (not ``create``).
        az_ids: AZ IDs with a private subnet, sorted.
        private_subnets: AZ ID -> subnet ID (given subnets only).
        subnet_cidrs: AZ ID -> private subnet CIDR (``create`` only).
        public_cidr: the NAT gateway's public subnet CIDR (``create`` only).
        control_plane_az_ids: AZ IDs whose subnets the control plane may use.
    """

    create: bool
    cidr: str | None
    vpc_id: str | None
    az_ids: tuple[str, ...]
    private_subnets: Mapping[str, str] = field(default_factory=dict)
    subnet_cidrs: Mapping[str, str] = field(default_factory=dict)
    public_cidr: str | None = None
    control_plane_az_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class EksAccessEntryPlan:
    """One EKS access entry with its access-policy association."""

    principal_arn: str
    policy_arn: str
    namespaces: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class EksAutoscalerPlan:
    """The cluster-autoscaler Helm release and its IRSA role."""

    chart: str
    version: str
    repo: str
    namespace: str
    service_account: str
    values: Mapping[str, Any]
    iam_policy: Mapping[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class EksPlan:
    """The EKS cluster and its GPU node groups."""

    cluster_name: str = ""
    region: str = ""
    partition: str = "aws"
    kubernetes_version: str = ""
    existing: bool = False
    network: EksNetworkPlan | None = None
    endpoint_public_access: bool = True
    public_access_cidrs: tuple[str, ...] = ()
    access_entries: tuple[EksAccessEntryPlan, ...] = ()
    system: EksSystemGroupPlan | None = None
    groups: tuple[EksGroupPlan, ...] = ()
    autoscaler: EksAutoscalerPlan | None = None


# --- pure decisions (unit-tested directly) -------------------------------------------------


def choose_ami_type(
    architecture: str, family: str, explicit: str | None, kubernetes_version: str
) -> tuple[str | None, str | None]:
    """Pick the group's AMI type.

    Args:
        architecture: ``x86_64`` or ``arm64`` (of the instance types).
        family: ``al2023`` or ``bottlerocket`` (``amiFamily``).
        explicit: ``amiType`` if the user set it.
        kubernetes_version: ``1.33`` ...

    Returns:
        (ami_type, None) or (None, reason) when the explicit type cannot work.
    """
    if explicit is None:
        return _AMI_BY_FAMILY[(family, architecture)], None
    if explicit == "AL2_x86_64_GPU" and _minor(kubernetes_version) > AL2_LAST_MINOR:
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
        autoscaler.GPU_LABEL: accelerator_label,
        POOL_LABEL: pool_name,
    }


def subnet_cidrs(vpc_cidr: str, az_ids: list[str]) -> tuple[dict[str, str], str]:
    """Private /20 per AZ (up to 8) from the start of a 10.x.0.0/16, and one public /24 after them.

    A /20 leaves ~4,000 pod IPs per AZ for the VPC CNI, which hands every pod a VPC address.
    """
    second = vpc_cidr.split(".")[1]
    private = {az: f"10.{second}.{16 * i}.0/20" for i, az in enumerate(sorted(az_ids))}
    return private, f"10.{second}.240.0/24"


def _minor(version: str) -> int:
    return int(version.split(".")[1])


# --- the planner -----------------------------------------------------------------------------


def plan_eks(config: StackConfig, catalog: Catalog, issues: Issues) -> EksPlan:
    """Decide the EKS cluster and node groups; problems go to ``issues``."""
    cluster: EksClusterSpec = config.cluster
    region = config.region
    if region is None:  # config already reported cluster.location
        return EksPlan()
    region_azs = region_az_ids(catalog, region)
    if not region_azs:
        issues.add(
            "cluster.location",
            f"the catalog lists no GPU instance type in region {region!r}; "
            "pick a region with NVIDIA GPU instances (e.g. us-east-1, us-west-2)",
        )
        return EksPlan()
    network = _plan_network(cluster, region, region_azs, issues)
    version = cluster.kubernetes_version
    ca_image_tag = autoscaler.image_tag(version)
    if cluster.autoscaler.enabled and ca_image_tag is None:
        issues.add(
            "cluster.kubernetesVersion",
            f"{version!r} has no pinned cluster-autoscaler image (CA must match the cluster's "
            f"minor version); supported: {', '.join(autoscaler.IMAGE_TAGS)}",
        )
    partition = autoscaler.aws_partition(region)

    groups: list[EksGroupPlan] = []
    for i, pool in enumerate(config.pools):
        g = _plan_group(i, pool, cluster, region, network, catalog, issues)
        if g is not None:
            groups.append(g)
        if pool.name == SYSTEM_GROUP and not cluster.existing:
            issues.add(join_path("gpuPools", i, "name"), "'system' is the CPU node group's name")

    system = None
    sp = cluster.system_pool
    if not cluster.existing:
        if sp.min_nodes > sp.max_nodes:
            issues.add(
                "cluster.systemPool.minNodes", f"{sp.min_nodes} is above maxNodes {sp.max_nodes}"
            )
        if catalog.aws_instance(sp.machine_type) is not None:
            issues.add(
                "cluster.systemPool.machineType",
                f"{sp.machine_type!r} is a GPU instance type; the system group should be CPU only",
            )
        system = EksSystemGroupPlan(
            name=SYSTEM_GROUP,
            instance_types=(sp.machine_type,),
            ami_type=SYSTEM_AMI_TYPE,
            min_size=sp.min_nodes,
            max_size=sp.max_nodes,
            disk_size_gib=sp.disk_size_gb,
            labels={POOL_LABEL: SYSTEM_GROUP},
        )

    access = []
    for j, entry in enumerate(cluster.access_entries):
        if not entry.principal_arn.startswith(f"arn:{partition}:"):
            issues.add(
                join_path("cluster.accessEntries", j, "principalArn"),
                f"{entry.principal_arn!r} is not in partition {partition!r} of region {region}",
            )
        access.append(
            EksAccessEntryPlan(
                principal_arn=entry.principal_arn,
                policy_arn=(
                    f"arn:{partition}:eks::aws:cluster-access-policy/{_ACCESS_POLICY[entry.policy]}"
                ),
                namespaces=tuple(entry.namespaces or ()),
            )
        )
    if cluster.public_access_cidrs and not cluster.endpoint_public_access:
        issues.add(
            "cluster.publicAccessCidrs", "set, but endpointPublicAccess is false (no public API)"
        )

    ca = None
    if cluster.autoscaler.enabled and ca_image_tag is not None:
        a = cluster.autoscaler
        ca = EksAutoscalerPlan(
            chart=autoscaler.CHART_NAME,
            version=autoscaler.CHART_VERSION,
            repo=autoscaler.CHART_REPO,
            namespace=autoscaler.NAMESPACE,
            service_account=autoscaler.SERVICE_ACCOUNT,
            values=autoscaler.helm_values(
                cluster_name=cluster.name,
                region=region,
                image_tag=ca_image_tag,
                expander=a.expander,
                gpu_threshold=a.scale_down_gpu_utilization_threshold,
                unneeded_time=a.scale_down_unneeded_time,
                node_selector=system.labels if system is not None else {},
            ),
            iam_policy=autoscaler.iam_policy(cluster.name, region, partition),
        )

    return EksPlan(
        cluster_name=cluster.name,
        region=region,
        partition=partition,
        kubernetes_version=version,
        existing=cluster.existing,
        network=network,
        endpoint_public_access=cluster.endpoint_public_access,
        public_access_cidrs=tuple(cluster.public_access_cidrs or ()),
        access_entries=tuple(access),
        system=system,
        groups=tuple(groups),
        autoscaler=ca,
    )


def _plan_network(
    cluster: EksClusterSpec, region: str, region_azs: set[str], issues: Issues
) -> EksNetworkPlan | None:
    vpc = cluster.vpc
    prefix = _AZ_ID.match(next(iter(region_azs)))
    region_code = prefix.group(1) if prefix else ""
    if vpc.private_subnets is None:
        if vpc.id is not None:
            issues.add(
                "cluster.vpc.privateSubnets", "required with cluster.vpc.id (AZ ID -> subnet ID)"
            )
            return None
        if cluster.existing:
            issues.add(
                "cluster.vpc.privateSubnets",
                "required with cluster.existing: true (AZ ID -> subnet ID for the GPU node groups)",
            )
            return None
        azs = sorted(region_azs)
        cidrs, public = subnet_cidrs(vpc.cidr, azs)
        return EksNetworkPlan(
            create=True,
            cidr=vpc.cidr,
            vpc_id=None,
            az_ids=tuple(azs),
            subnet_cidrs=cidrs,
            public_cidr=public,
            control_plane_az_ids=tuple(a for a in azs if a not in CONTROL_PLANE_AVOID_AZ_IDS),
        )
    if vpc.id is None and not cluster.existing:
        issues.add("cluster.vpc.id", "required with cluster.vpc.privateSubnets (the subnets' VPC)")
    ok = True
    for az, subnet in vpc.private_subnets.items():
        path = join_path("cluster.vpc.privateSubnets", az)
        if az not in region_azs:
            ok = False
            issues.add(
                path,
                f"{az!r} is not an AZ ID of {region} (AZ IDs there: "
                f"{', '.join(sorted(region_azs))}; names like {region}a differ per account, IDs "
                f"like {region_code}-az1 do not)",
            )
        if not _SUBNET_ID.match(subnet):
            ok = False
            issues.add(path, f"{subnet!r} is not a subnet ID (subnet-0123abcd...)")
    azs = sorted(vpc.private_subnets)
    control = tuple(a for a in azs if a not in CONTROL_PLANE_AVOID_AZ_IDS)
    if not cluster.existing and ok and len(control) < 2:
        issues.add(
            "cluster.vpc.privateSubnets",
            f"EKS needs subnets in at least two AZs its control plane supports; got "
            f"{', '.join(azs) or 'none'}",
        )
    return EksNetworkPlan(
        create=False,
        cidr=None,
        vpc_id=vpc.id,
        az_ids=tuple(azs),
        private_subnets=dict(sorted(vpc.private_subnets.items())),
        control_plane_az_ids=control,
    )


def _plan_group(
    i: int,
    pool: EksPoolSpec,
    cluster: EksClusterSpec,
    region: str,
    network: EksNetworkPlan | None,
    catalog: Catalog,
    issues: Issues,
) -> EksGroupPlan | None:
    start = issues.count()
    mt_path = join_path("gpuPools", i, "machineType")
    names = [pool.machine_type] if isinstance(pool.machine_type, str) else list(pool.machine_type)

    def type_path(j: int) -> str:
        return mt_path if isinstance(pool.machine_type, str) else join_path(mt_path, j)

    if not names:
        issues.add(mt_path, "an empty list; give one instance type or same-shape spot types")
        return None
    if len(names) > 1 and not pool.spot:
        issues.add(
            mt_path,
            f"{len(names)} instance types on an on-demand group; a list is for spot pools "
            "(spot: true) only",
        )
    if len(set(names)) != len(names):
        issues.add(mt_path, f"lists an instance type twice: {names}")

    instances: list[AwsInstance] = []
    architectures: list[str] = []
    for j, name in enumerate(names):
        inst = catalog.aws_instance(name)
        fam = catalog.aws_family(name.split(".", 1)[0])
        if inst is None:
            if fam is None:
                issues.add(
                    type_path(j),
                    f"{name!r} is not an NVIDIA GPU instance type (family "
                    f"{name.split('.', 1)[0]!r} has no GPU in the catalog; GPU families: "
                    f"{', '.join(catalog.aws_families())})",
                )
            else:
                issues.add(
                    type_path(j),
                    f"{name!r} is not a known {fam.family} size (known: "
                    f"{', '.join(catalog.aws_sizes(fam.family))})",
                )
            continue
        if fam is None or not fam.eks_nvidia_ami:
            issues.add(
                type_path(j),
                f"{name!r}: the EKS NVIDIA AMIs do not support the {inst.family} family",
            )
            continue
        instances.append(inst)
        architectures.append(fam.architecture)
    if len(instances) != len(names):
        return None

    first = instances[0]
    for j, inst in enumerate(instances[1:], start=1):
        diffs = [
            f"{what} {b} vs {a}"
            for what, a, b in (
                ("GPU model", first.gpu_model, inst.gpu_model),
                ("GPUs", first.gpus, inst.gpus),
                ("vCPUs", first.vcpus, inst.vcpus),
                ("architecture", architectures[0], architectures[j]),
            )
            if a != b
        ]
        if diffs:
            issues.add(
                type_path(j),
                f"{inst.name!r} differs from {first.name!r} ({'; '.join(diffs)}); the "
                "cluster-autoscaler sizes a group from its first type, so spot types must share "
                "GPU model, GPU count, vCPUs and CPU architecture",
            )
    fam = catalog.aws_family(first.family)
    assert fam is not None  # checked in the loop above

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

    # AZs: every type offered there (catalog), restricted to zones/subnets if given.
    offered = offered_az_ids(instances, region)
    if not offered:
        where = {inst.name: sorted(inst.az_ids) for inst in instances if region not in inst.az_ids}
        detail = "; ".join(
            f"{t} is offered in: {', '.join(r) or 'no region'}" for t, r in where.items()
        )
        issues.add(
            mt_path,
            f"no AZ of {region} offers {' and '.join(names)} "
            f"({detail or 'each is offered somewhere, but no AZ offers all of them'})",
        )
        return None
    usable = set(offered)
    if pool.zones is not None:
        for k, az in enumerate(pool.zones):
            if az in pool.zones[:k]:
                issues.add(join_path("gpuPools", i, "zones", k), f"{az!r} is listed twice")
            elif az not in offered:
                issues.add(
                    join_path("gpuPools", i, "zones", k),
                    f"{az!r} does not offer {', '.join(names)} in {region} (AZ IDs offering "
                    f"it: {', '.join(sorted(offered))})",
                )
        usable &= set(pool.zones)
    if network is not None:
        with_subnet = usable & set(network.az_ids)
        if not with_subnet and usable:
            issues.add(
                mt_path,
                f"{', '.join(names)} is offered in {region} only in {', '.join(sorted(usable))}, "
                f"but the private subnets are in {', '.join(network.az_ids)}",
            )
        usable = with_subnet

    # Labels and taints, then the CA tags derived from exactly those.
    for key in pool.labels:
        if key in RESERVED_LABELS:
            issues.add(
                join_path("gpuPools", i, "labels", key), "set by gpu-infra on every GPU node group"
            )
    labels = gpu_labels(pool.name, fam.accelerator_label, pool.labels)
    # Per-pool device-plugin (time-slicing) and MIG-manager configs are picked by node label.
    labels.update(operator_node_labels(pool))
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
    model = catalog.gcp_model(fam.accelerator_label)
    gpu_count, extra = autoscaler.advertised_gpu_resources(
        first.gpus,
        sharing_replicas=pool.sharing.replicas if pool.sharing is not None else None,
        mig_strategy=pool.mig.strategy if pool.mig is not None else None,
        mig_config=pool.mig.config if pool.mig is not None else None,
        mig_profiles=model.mig_profiles,
    )
    tags = autoscaler.node_template_tags(labels, taints, gpu_count, extra)
    for key, value in tags.items():
        why = autoscaler.check_tag(key, value)
        if why is not None:
            issues.add(join_path("gpuPools", i, "labels"), why)
    if len(tags) > autoscaler.TEMPLATE_TAG_BUDGET:
        issues.add(
            join_path("gpuPools", i, "labels"),
            f"{len(tags)} cluster-autoscaler node-template tags (labels + taints + GPU) exceed "
            f"{autoscaler.TEMPLATE_TAG_BUDGET}: an ASG holds {autoscaler.ASG_TAG_LIMIT} tags, EKS "
            f"sets {autoscaler.EKS_MANAGED_ASG_TAGS} itself and a few are left for yours; drop "
            "labels",
        )

    if issues.count() != start or ami is None:
        return None
    hints = PoolHints(
        name=pool.name,
        platform="eks",
        gpu_type=first.gpu_model,
        gpu_model=model.model if model.memory_mib else first.gpu_model,
        gpus_per_node=first.gpus,
        vcpus=first.vcpus,
        memory_gib=first.memory_gib,
        node_image=ami,
        driver="preinstalled",
        node_selector={POOL_LABEL: pool.name},
        labels=labels,
        taints=tuple(taints),
        spot=pool.spot,
        min_nodes=pool.min_nodes,
        max_nodes=pool.max_nodes,
        mig_profiles=model.mig_profiles,
    )
    return EksGroupPlan(
        hints=hints,
        name=pool.name,
        instance_types=tuple(names),
        ami_type=ami,
        capacity_type="SPOT" if pool.spot else "ON_DEMAND",
        min_size=pool.min_nodes,
        max_size=pool.max_nodes,
        disk_size_gib=pool.disk_size_gb,
        labels=labels,
        taints=tuple(taints),
        az_ids=tuple(sorted(usable)),
        asg_tags=tags,
        root_device_name="/dev/xvdb" if ami.startswith("BOTTLEROCKET") else "/dev/xvda",
    )


def kubeconfig(cluster_name: str, endpoint: str, ca_data: str, region: str) -> str:
    """A kubeconfig (JSON) for an EKS cluster that gets tokens from ``aws eks get-token``."""
    return exec_kubeconfig(
        cluster_name,
        endpoint,
        ca_data,
        {
            "command": "aws",
            "args": ["eks", "get-token", "--cluster-name", cluster_name, "--region", region],
        },
    )
