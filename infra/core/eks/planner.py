"""EKS planning: the cluster, its access, add-ons, the cluster-autoscaler and the GPU groups.

Pure code. ``plan_eks`` turns the parsed stack into an ``EksPlan`` that ``infra.components.eks``
maps 1:1 onto pulumi-eks / pulumi-aws resources. The network lives in ``infra.core.eks.network``,
the GPU node groups in ``infra.core.eks.groups`` (re-exported here), the device plugin for
operator-less stacks in ``infra.core.eks.device_plugin``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from infra.core.catalog.vendored import Catalog
from infra.core.config.eks import EksClusterSpec
from infra.core.config.stack import StackConfig
from infra.core.eks import autoscaler, versions
from infra.core.eks.ami import AL2_LAST_MINOR, choose_ami_type, kubernetes_minor
from infra.core.eks.device_plugin import (
    DevicePluginPlan,
    plan_device_plugin,
    plan_efa_device_plugin,
)
from infra.core.eks.groups import (
    EKS_TAINT_EFFECT,
    UPDATE_MAX_UNAVAILABLE,
    EksGroupPlan,
    EksNodeGroup,
    plan_group,
)
from infra.core.eks.karpenter import controller as karpenter_ctl
from infra.core.eks.karpenter.plan import as_karpenter_pool
from infra.core.eks.karpenter.pools import karpenter_problems, spot_role_notes
from infra.core.eks.lifecycle import (
    FrozenAzs,
    desired_size,
    live_name,
    node_group_name,
    predecessor,
    split_sizes,
)
from infra.core.eks.live import apply_observed
from infra.core.eks.names import IAM_ROLE_NAME_MAX, fit_autonamed
from infra.core.eks.network import (
    CONTROL_PLANE_AVOID_AZ_IDS,
    EksNetworkPlan,
    keep_live_nat,
    kept_control_plane_azs,
    nats_where_nodes_run,
    plan_network,
    subnet_cidrs,
)
from infra.core.eks.observed import EksClusterObserved, EksObserved
from infra.core.eks.placement import offered_az_ids, region_az_ids
from infra.core.eks.storage import ephemeral_storage_gi
from infra.core.eks.template import GPU_TAINT, RESERVED_LABELS, gpu_labels
from infra.core.errors import Issues, join_path
from infra.core.kubeconfig import exec_kubeconfig
from infra.core.labels import POOL_LABEL
from infra.core.system_pool import aws_architecture, aws_system_type_problem

SYSTEM_GROUP = "system"
# The system (CPU) group's AMI per CPU architecture; AL2023 is the EKS default OS from Kubernetes
# 1.30 (botocore data eks/2017-11-01/service-2.json AMITypes).
SYSTEM_AMI_TYPES: Mapping[str, str] = {
    "x86_64": "AL2023_x86_64_STANDARD",
    "arm64": "AL2023_ARM_64_STANDARD",
}
SYSTEM_AMI_TYPE = SYSTEM_AMI_TYPES["x86_64"]

# Access policies (https://docs.aws.amazon.com/eks/latest/userguide/access-policy-permissions.html).
_ACCESS_POLICY = {
    "cluster-admin": "AmazonEKSClusterAdminPolicy",
    "admin": "AmazonEKSAdminPolicy",
    "edit": "AmazonEKSEditPolicy",
    "view": "AmazonEKSViewPolicy",
}

# The EBS CSI driver add-on's controller service account and managed policy
# (https://docs.aws.amazon.com/eks/latest/userguide/ebs-csi.html).
EBS_CSI_SERVICE_ACCOUNT = "ebs-csi-controller-sa"
# Pod Identity needs aws-sdk-go >= 1.47.11 (https://docs.aws.amazon.com/eks/latest/userguide/
# pod-id-minimum-sdk.html); cluster-autoscaler 1.29.0's vendored SDK was older
# (kubernetes/autoscaler#6392, #6461). 1.30 is the first minor released after the SDK update.
POD_IDENTITY_CA_MINOR = 30
EBS_CSI_POLICY = "service-role/AmazonEBSCSIDriverPolicy"


@dataclass(frozen=True, slots=True, kw_only=True)
class EksSystemGroupPlan:
    """The CPU node group for system pods (cluster-autoscaler, CoreDNS, the operator)."""

    name: str
    node_group_name: str
    instance_types: tuple[str, ...]
    ami_type: str
    min_size: int
    max_size: int
    disk_size_gib: int
    labels: Mapping[str, str]
    az_ids: tuple[str, ...] = ()
    update_max_unavailable: int = UPDATE_MAX_UNAVAILABLE
    # A created VPC's AZs come from the catalog: a refresh must not widen (replace) a live group.
    frozen: FrozenAzs | None = None
    desired_size: int = 0  # the size sent (live.live_desired_size)


@dataclass(frozen=True, slots=True, kw_only=True)
class EksAccessEntryPlan:
    """One EKS access entry with its access-policy association."""

    principal_arn: str
    policy_arn: str
    namespaces: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class EksAddonPlan:
    """One EKS managed add-on.

    Attributes:
        name: the add-on name (``aws eks describe-addon-versions``).
        service_account: the add-on's service account that gets an IAM role (or ``None``).
        policy_arn: the managed policy of that role.
        version: the version pinned for the cluster's Kubernetes minor
            (``eks_addon_versions.csv``); ``""``: EKS's default for it, read at deploy time.
    """

    name: str
    service_account: str | None = None
    policy_arn: str | None = None
    version: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class EksAutoscalerPlan:
    """The cluster-autoscaler Helm release and its IAM role (IRSA or Pod Identity)."""

    chart: str
    version: str
    repo: str
    namespace: str
    service_account: str
    release: str = autoscaler.CHART_NAME
    create_namespace: bool = False
    namespace_labels: Mapping[str, str] = field(default_factory=dict)
    values: Mapping[str, Any]
    iam_policy: Mapping[str, Any]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class EksPlan:
    """The EKS cluster and its GPU node groups.

    Attributes:
        stack_tag: ASG tag key (value ``owned``) on every node group of this stack; CA discovers
            and may scale only ASGs carrying it.
        identity: how pods get AWS roles (``irsa``: OIDC provider, created when missing;
            ``pod-identity``: the eks-pod-identity-agent add-on).
        addons: managed add-ons, created after the system group (CoreDNS needs nodes).
        device_plugin: the NVIDIA device plugin chart when the GPU Operator is off.
        efa_device_plugin: AWS's EFA device plugin chart when a pool has EFA (hpc).
        existing_cluster / declare_oidc_provider / oidc_provider_arn: an existing cluster as
            observed, and its IAM OIDC provider: declared here, or the one found (``live``).
    """

    cluster_name: str = ""
    stack: str = ""
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
    karpenter: karpenter_ctl.KarpenterControllerPlan | None = None
    stack_tag: str = ""
    identity: Literal["irsa", "pod-identity"] = "irsa"
    addons: tuple[EksAddonPlan, ...] = field(default_factory=tuple)
    device_plugin: DevicePluginPlan | None = None
    efa_device_plugin: DevicePluginPlan | None = None
    existing_cluster: EksClusterObserved | None = None
    declare_oidc_provider: bool = False
    oidc_provider_arn: str = ""

    @property
    def notes(self) -> tuple[str, ...]:
        """What a person should know before deploying (the Spot service-linked role)."""
        return spot_role_notes(self.groups)

    @property
    def iam_role_names(self) -> tuple[str, ...]:
        """Logical names of the IAM roles the EKS components register for Pulumi to auto-name:
        the nodes', each add-on's with a service account, the autoscaler's; each fitted so the
        auto-name stays within IAM's 64 characters (``names.fit_autonamed``)."""
        c = self.cluster_name
        names = [f"{c}-nodes"]
        names += [
            f"{c}-addons-{a.name}-role"
            for a in self.addons
            if a.service_account is not None and a.policy_arn is not None
        ]
        if self.autoscaler is not None:
            names.append(f"{c}-ca-role")
        if self.karpenter is not None:
            names.append(f"{c}-karpenter-role")
        return tuple(fit_autonamed(n, IAM_ROLE_NAME_MAX) for n in names)

    @property
    def efa_security_group(self) -> bool:
        """One security group with self ingress and egress for every EFA interface of the stack
        (EC2 "Prepare an EFA-enabled security group"), made when a group has EFA interfaces."""
        return any(g.network_interfaces for g in self.groups)


def managed_policy_arn(partition: str, name: str) -> str:
    """The ARN of an AWS managed IAM policy in ``partition`` (aws, aws-cn, aws-us-gov)."""
    return f"arn:{partition}:iam::aws:policy/{name}"


def plan_addons(
    partition: str, existing: bool, identity: str, kubernetes_version: str = ""
) -> tuple[EksAddonPlan, ...]:
    """Managed add-ons a new cluster needs; an existing cluster keeps its own.

    VPC CNI, kube-proxy and CoreDNS are what every cluster runs ("Amazon EKS add-ons",
    https://docs.aws.amazon.com/eks/latest/userguide/eks-add-ons.html); the EBS CSI driver makes
    gp3 PersistentVolumes; eks-node-monitoring-agent sets the AcceleratedHardwareReady condition
    (NVIDIA XID errors) that node auto repair acts on ("Detect node health issues and enable
    automatic node repair", https://docs.aws.amazon.com/eks/latest/userguide/node-health.html;
    its DaemonSet tolerates every taint, so it reaches tainted GPU nodes: aws/eks-node-monitoring-agent
    charts/eks-node-monitoring-agent/values.yaml ``tolerations: [{operator: Exists}]``);
    eks-pod-identity-agent serves Pod Identity associations.
    """
    if existing:  # its add-ons are its owner's (Pod Identity's agent: live.attached_cluster)
        return ()
    addons = [
        EksAddonPlan(name="vpc-cni"),
        EksAddonPlan(name="kube-proxy"),
        EksAddonPlan(name="coredns"),
        EksAddonPlan(name="eks-node-monitoring-agent"),
        EksAddonPlan(
            name="aws-ebs-csi-driver",
            service_account=EBS_CSI_SERVICE_ACCOUNT,
            policy_arn=managed_policy_arn(partition, EBS_CSI_POLICY),
        ),
    ]
    if identity == "pod-identity":
        addons.insert(0, EksAddonPlan(name="eks-pod-identity-agent"))
    return tuple(
        replace(a, version=versions.addon_version(a.name, kubernetes_version)) for a in addons
    )


def plan_eks(
    config: StackConfig, catalog: Catalog, issues: Issues, observed: EksObserved | None = None
) -> EksPlan:
    """Decide the EKS cluster and node groups over what was observed (``None``: offline);
    problems go to ``issues``."""
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
    network = plan_network(cluster, region, region_azs, issues)
    version = cluster.kubernetes_version
    if problem := versions.support_problem(version):
        issues.add("cluster.kubernetesVersion", problem)
    ca_image_tag = autoscaler.image_tag(version)
    uses_ca = cluster.autoscaler.enabled and cluster.autoscaler.kind == "cluster-autoscaler"
    if uses_ca and ca_image_tag is None:
        issues.add(
            "cluster.kubernetesVersion",
            f"{version!r} has no pinned cluster-autoscaler image (CA must match the cluster's "
            f"minor version); supported: {', '.join(autoscaler.IMAGE_TAGS)}",
        )
    partition = autoscaler.aws_partition(region)
    tag = autoscaler.stack_tag(cluster.name, config.stack)
    groups = _plan_groups(config, region, network, catalog, issues)
    system = _plan_system(cluster, network, catalog, issues)
    if network is not None:
        used = {az for g in groups for az in g.az_ids} | set(system.az_ids if system else ())
        if cluster.autoscaler.enabled and cluster.autoscaler.kind == "karpenter":
            # Every private subnet carries the discovery tag an EC2NodeClass selects subnets by,
            # so any NodePool on it (the stack's or a user's) may launch nodes in any of them.
            used |= set(network.az_ids)
        network = nats_where_nodes_run(network, used)
    access = _plan_access(cluster, partition, region, issues)
    if cluster.public_access_cidrs and not cluster.endpoint_public_access:
        issues.add(
            "cluster.publicAccessCidrs", "set, but endpointPublicAccess is false (no public API)"
        )
    _check_pod_identity(cluster, issues)
    ca = None
    if uses_ca and ca_image_tag is not None:
        target = _AutoscalerTarget(
            region=region, partition=partition, stack_tag=tag, image_tag=ca_image_tag
        )
        ca = _plan_autoscaler(config, target, groups, system, issues)
    a = cluster.autoscaler
    plan = EksPlan(
        cluster_name=cluster.name,
        stack=config.stack,
        region=region,
        partition=partition,
        kubernetes_version=version,
        existing=cluster.existing,
        network=network,
        endpoint_public_access=cluster.endpoint_public_access,
        public_access_cidrs=tuple(cluster.public_access_cidrs or ()),
        access_entries=tuple(access),
        system=system,
        groups=groups,
        autoscaler=ca,
        karpenter=_plan_karpenter(config, region, partition, system, network, issues),
        stack_tag=tag,
        identity=a.identity,
        addons=plan_addons(partition, cluster.existing, a.identity, version),
        device_plugin=_plan_device_plugin(config, groups),
        efa_device_plugin=_plan_efa_device_plugin(groups),
    )
    return apply_observed(config, plan, observed, issues)


def _plan_groups(
    config: StackConfig,
    region: str,
    network: EksNetworkPlan | None,
    catalog: Catalog,
    issues: Issues,
) -> tuple[EksGroupPlan, ...]:
    """Every GPU pool's plan (pools that cannot be built leave issues and no plan)."""
    cluster: EksClusterSpec = config.cluster
    karpenter = cluster.autoscaler.kind == "karpenter"
    groups: list[EksGroupPlan] = []
    for i, pool in enumerate(config.pools):
        if karpenter:
            karpenter_problems(i, pool, issues)
        g = plan_group(i, pool, cluster, region, network, catalog, issues)
        if g is not None and karpenter:
            g = as_karpenter_pool(i, g, config, catalog, issues)
        if g is not None:
            groups.append(g)
        if pool.name == SYSTEM_GROUP and not cluster.existing:
            issues.add(join_path("gpuPools", i, "name"), "'system' is the CPU node group's name")
    return tuple(groups)


def _check_pod_identity(cluster: EksClusterSpec, issues: Issues) -> None:
    a, version = cluster.autoscaler, cluster.kubernetes_version
    if (
        a.enabled
        and a.kind == "cluster-autoscaler"
        and a.identity == "pod-identity"
        and kubernetes_minor(version) < POD_IDENTITY_CA_MINOR
    ):
        issues.add(
            "cluster.autoscaler.identity",
            f"pod-identity with Kubernetes {version}: cluster-autoscaler before 1."
            f"{POD_IDENTITY_CA_MINOR} ships an AWS SDK without the Pod Identity credential provider "
            "(kubernetes/autoscaler#6461: NoCredentialProviders); use irsa or Kubernetes >= 1."
            f"{POD_IDENTITY_CA_MINOR}",
        )


KARPENTER_DISABLED_REASON = (
    "false with cluster.autoscaler.kind: karpenter: Karpenter's GPU pools (NodePools) need the "
    "Karpenter controller and its CRDs, which enabled: false would not install, and nothing else "
    "launches their nodes; remove enabled: false, or use kind: cluster-autoscaler (GPU node groups "
    "that keep minNodes without an autoscaler)"
)


def _plan_karpenter(
    config: StackConfig,
    region: str,
    partition: str,
    system: EksSystemGroupPlan | None,
    network: EksNetworkPlan | None,
    issues: Issues,
) -> karpenter_ctl.KarpenterControllerPlan | None:
    """The Karpenter controller when ``cluster.autoscaler.kind`` is karpenter (and enabled)."""
    cluster: EksClusterSpec = config.cluster
    if cluster.autoscaler.kind != "karpenter":
        return None
    if not cluster.autoscaler.enabled:
        # NodePools and EC2NodeClasses are custom resources of the controller's CRDs: without the
        # controller the API server has no such kind ("no matches for kind EC2NodeClass in
        # version karpenter.k8s.aws/v1"), and nothing would launch the pools' nodes.
        issues.add("cluster.autoscaler.enabled", KARPENTER_DISABLED_REASON)
        return None
    plan = karpenter_ctl.plan_controller(
        cluster_name=cluster.name,
        stack=config.stack,
        region=region,
        partition=partition,
        system_labels=system.labels if system is not None else {},
        system_min_nodes=system.min_size if system is not None else None,
        given_subnets=network.private_subnets if network and not network.create else None,
    )
    found = karpenter_ctl.problems(
        existing=cluster.existing,
        kubernetes_minor=kubernetes_minor(cluster.kubernetes_version),
        plan=plan,
    )
    for key, reason in found:
        issues.add(key, reason)
    return plan


@dataclass(frozen=True, slots=True, kw_only=True)
class _AutoscalerTarget:
    """Where the autoscaler runs and what it discovers."""

    region: str
    partition: str
    stack_tag: str
    image_tag: str


def _plan_autoscaler(
    config: StackConfig,
    target: _AutoscalerTarget,
    groups: tuple[EksGroupPlan, ...],
    system: EksSystemGroupPlan | None,
    issues: Issues,
) -> EksAutoscalerPlan:
    """The cluster-autoscaler release: its values, names and IAM policy."""
    cluster: EksClusterSpec = config.cluster
    a = cluster.autoscaler
    spot = [ng.name for g in groups if g.capacity_type == "SPOT" for ng in g.node_groups]
    rest = [ng.name for g in groups if g.capacity_type != "SPOT" for ng in g.node_groups]
    if a.expander == "priority" and not (spot and rest):
        issues.add(
            "cluster.autoscaler.expander",
            "priority orders spot groups before on-demand ones; this stack has "
            f"{len(spot)} spot and {len(rest)} other GPU node groups (needs both)",
        )
    # On an existing cluster another autoscaler may already hold the default names; this
    # stack's gets its own (autoscaler.stack_release_name).
    own = autoscaler.stack_release_name(config.stack) if cluster.existing else None
    plan = EksAutoscalerPlan(
        chart=autoscaler.CHART_NAME,
        version=autoscaler.CHART_VERSION,
        repo=autoscaler.CHART_REPO,
        namespace=own or autoscaler.NAMESPACE,
        service_account=own or autoscaler.SERVICE_ACCOUNT,
        release=own or autoscaler.CHART_NAME,
        create_namespace=own is not None,
        namespace_labels=autoscaler.NAMESPACE_LABELS if own is not None else {},
        values=autoscaler.helm_values(
            cluster_name=cluster.name,
            region=target.region,
            image_tag=target.image_tag,
            expander=a.expander,
            gpu_threshold=a.scale_down_gpu_utilization_threshold,
            unneeded_time=a.scale_down_unneeded_time,
            node_selector=system.labels if system is not None else {},
            discovery_tag=target.stack_tag,
            balance_similar=any(g.group_per_zone for g in groups),
            priorities=(
                autoscaler.priority_config(spot, rest) if a.expander == "priority" else None
            ),
            service_account=own or autoscaler.SERVICE_ACCOUNT,
            fullname=own,
        ),
        iam_policy=autoscaler.iam_policy(
            cluster.name, target.region, target.partition, target.stack_tag
        ),
        notes=(_shared_cluster_note(cluster.name, target.stack_tag),) if own else (),
    )
    if problem := autoscaler.lease_problem(plan.values, autoscaler.chart_rbac()):
        issues.add("cluster.autoscaler", problem)
    return plan


def _shared_cluster_note(cluster_name: str, stack_tag: str) -> str:
    """What a cluster-autoscaler the cluster already runs does with this stack's groups.

    EKS tags every managed node group's ASG ``k8s.io/cluster-autoscaler/enabled`` and
    ``k8s.io/cluster-autoscaler/<cluster>`` ("Managed node groups" resource tagging), the default
    auto-discovery of the chart (``autoDiscovery.tags``, values.yaml of chart 9.52.1); an
    autoscaler discovering by them also scales these groups, racing this stack's.
    """
    return (
        f"cluster {cluster_name}: a cluster-autoscaler it already runs with the default "
        f"auto-discovery tags (k8s.io/cluster-autoscaler/enabled, k8s.io/cluster-autoscaler/"
        f"{cluster_name}) also scales this stack's node groups; narrow its "
        "--node-group-auto-discovery with a tag key only its own groups carry (this stack's carry "
        f"{stack_tag}), or set cluster.autoscaler.enabled: false here and let it manage them"
    )


def _plan_device_plugin(
    config: StackConfig, groups: tuple[EksGroupPlan, ...]
) -> DevicePluginPlan | None:
    """The NVIDIA device plugin for AL2023 groups when the GPU Operator is off."""
    if config.operator.enabled:
        return None
    al2023 = [g for g in groups if not g.ami_type.startswith("BOTTLEROCKET")]
    return plan_device_plugin(
        POOL_LABEL,
        [g.name for g in al2023],
        [t for g in al2023 for t in g.taints],
        [p.sharing for p in config.pools if p.sharing is not None],
    )


def _plan_efa_device_plugin(groups: tuple[EksGroupPlan, ...]) -> DevicePluginPlan | None:
    efa = [g for g in groups if g.efa_interfaces]
    return plan_efa_device_plugin(
        POOL_LABEL, [g.name for g in efa], [t for g in efa for t in g.taints]
    )


def _plan_system(
    cluster: EksClusterSpec, network: EksNetworkPlan | None, catalog: Catalog, issues: Issues
) -> EksSystemGroupPlan | None:
    if cluster.existing:
        return None
    sp = cluster.system_pool
    if sp.min_nodes > sp.max_nodes:
        issues.add(
            "cluster.systemPool.minNodes", f"{sp.min_nodes} is above maxNodes {sp.max_nodes}"
        )
    if problem := aws_system_type_problem(sp.machine_type, catalog):
        issues.add("cluster.systemPool.machineType", problem)
    max_size = _system_max(cluster, issues)
    azs = network.control_plane_az_ids if network is not None else ()
    ami_type = SYSTEM_AMI_TYPES[aws_architecture(sp.machine_type)]
    immutable = {
        "instanceTypes": [sp.machine_type],
        "amiType": ami_type,
        "capacityType": "ON_DEMAND",
        "subnets": list(azs),
    }
    return EksSystemGroupPlan(
        name=SYSTEM_GROUP,
        node_group_name=node_group_name(SYSTEM_GROUP, None, immutable),
        instance_types=(sp.machine_type,),
        ami_type=ami_type,
        min_size=sp.min_nodes,
        max_size=max_size,
        disk_size_gib=sp.disk_size_gb,
        labels={POOL_LABEL: SYSTEM_GROUP},
        az_ids=tuple(azs),
        frozen=(
            FrozenAzs(
                pool=SYSTEM_GROUP,
                hash_base={k: v for k, v in immutable.items() if k != "subnets"},
                candidates=tuple(azs),
                max_azs=len(azs),
            )
            if network is not None and network.create
            else None
        ),
    )


def _system_max(cluster: EksClusterSpec, issues: Issues) -> int:
    """The system group's maxSize: its maxNodes, or minNodes with Karpenter, where nothing scales
    it (no cluster-autoscaler; the NodePools are GPU pools, and "Karpenter won't launch capacity
    to run itself", Karpenter troubleshooting), so plan, cost and quota show the fixed size."""
    sp = cluster.system_pool
    if cluster.autoscaler.kind != "karpenter":
        return sp.max_nodes
    if "max_nodes" in sp.model_fields_set and sp.max_nodes != sp.min_nodes:
        issues.add(
            "cluster.systemPool.maxNodes",
            f"{sp.max_nodes} with cluster.autoscaler.kind: karpenter: nothing scales the system "
            "node group (no cluster-autoscaler; Karpenter launches GPU nodes only), so it stays at "
            f"minNodes ({sp.min_nodes}); set minNodes to the size it needs, or drop maxNodes",
        )
    return sp.min_nodes


def _plan_access(
    cluster: EksClusterSpec, partition: str, region: str, issues: Issues
) -> list[EksAccessEntryPlan]:
    access = []
    seen: dict[str, int] = {}
    for j, entry in enumerate(cluster.access_entries):
        if entry.principal_arn in seen:
            # One access entry per principal and cluster: a second CreateAccessEntry fails
            # ResourceInUseException (https://docs.aws.amazon.com/eks/latest/APIReference/
            # API_CreateAccessEntry.html).
            issues.add(
                join_path("cluster.accessEntries", j, "principalArn"),
                f"{entry.principal_arn!r} already has accessEntries[{seen[entry.principal_arn]}]; "
                "EKS allows one access entry per principal",
            )
        seen.setdefault(entry.principal_arn, j)
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
    return access


def workload_trust_policy(
    identity: str, namespace: str, service_account: str, provider_arn: str = "", issuer: str = ""
) -> dict[str, Any]:
    """The trust policy of an IAM role a Kubernetes service account assumes.

    IRSA trusts the cluster's OIDC provider (``provider_arn``, ``issuer`` without https://) for
    exactly this service account
    (https://docs.aws.amazon.com/eks/latest/userguide/associate-service-account-role.html); Pod
    Identity trusts pods.eks.amazonaws.com with sts:AssumeRole + sts:TagSession
    (https://docs.aws.amazon.com/eks/latest/userguide/pod-id-role.html).
    """
    if identity == "pod-identity":
        statement: dict[str, Any] = {
            "Effect": "Allow",
            "Principal": {"Service": "pods.eks.amazonaws.com"},
            "Action": ["sts:AssumeRole", "sts:TagSession"],
        }
    else:
        statement = {
            "Effect": "Allow",
            "Principal": {"Federated": provider_arn},
            "Action": "sts:AssumeRoleWithWebIdentity",
            "Condition": {
                "StringEquals": {
                    f"{issuer}:sub": f"system:serviceaccount:{namespace}:{service_account}",
                    f"{issuer}:aud": "sts.amazonaws.com",
                }
            },
        }
    return {"Version": "2012-10-17", "Statement": [statement]}


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


__all__ = [
    "AL2_LAST_MINOR",
    "CONTROL_PLANE_AVOID_AZ_IDS",
    "EKS_TAINT_EFFECT",
    "GPU_TAINT",
    "RESERVED_LABELS",
    "EksGroupPlan",
    "EksNetworkPlan",
    "EksNodeGroup",
    "choose_ami_type",
    "desired_size",
    "ephemeral_storage_gi",
    "gpu_labels",
    "keep_live_nat",
    "kept_control_plane_azs",
    "live_name",
    "offered_az_ids",
    "predecessor",
    "split_sizes",
    "subnet_cidrs",
]
