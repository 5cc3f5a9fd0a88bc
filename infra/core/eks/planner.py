"""EKS planning: the cluster and everything on it, decided into one ``EksPlan``.

Pure code. ``plan_eks`` turns the parsed stack into an ``EksPlan`` that ``infra.components.eks``
maps 1:1 onto pulumi-eks / pulumi-aws resources, each part from its own module: the network
(``network``), access entries and IAM trust (``access``), the system group (``system``), the
managed add-ons (``addons``), the cluster-autoscaler release (``autoscaler_plan``) or the
Karpenter controller (``karpenter``), the GPU node groups (``groups``), the device plugin for
operator-less stacks (``device_plugin``), and what the observe step read (``live``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from infra.core.catalog.vendored import Catalog
from infra.core.config.eks import EksClusterSpec
from infra.core.config.stack import StackConfig
from infra.core.eks import autoscaler, versions
from infra.core.eks.access import (
    AwsCredentials,
    EksAccessEntryPlan,
    plan_access,
    provider_credentials,
)
from infra.core.eks.addons import EksAddonPlan, plan_addons
from infra.core.eks.ami import kubernetes_minor
from infra.core.eks.autoscaler_plan import (
    AutoscalerTarget,
    EksAutoscalerPlan,
    check_pod_identity,
    plan_autoscaler,
)
from infra.core.eks.device_plugin import CHART_NAME as DEVICE_PLUGIN_CHART
from infra.core.eks.device_plugin import (
    EFA_CHART_NAME,
    DevicePluginPlan,
    plan_device_plugin,
    plan_efa_device_plugin,
)
from infra.core.eks.groups import EksGroupPlan, plan_group
from infra.core.eks.karpenter import controller as karpenter_ctl
from infra.core.eks.karpenter.plan import as_karpenter_pool
from infra.core.eks.karpenter.pools import karpenter_problems, spot_role_notes
from infra.core.eks.lifecycle import owned_name
from infra.core.eks.live import apply_observed
from infra.core.eks.names import HELM_RELEASE_MAX, IAM_ROLE_NAME_MAX, fit_autonamed, stack_scoped
from infra.core.eks.network import EksNetworkPlan, nats_where_nodes_run, plan_network
from infra.core.eks.observed import EksClusterObserved, EksObserved
from infra.core.eks.placement import region_az_ids
from infra.core.eks.system import SYSTEM_GROUP, EksSystemGroupPlan, plan_system
from infra.core.eks.template import node_group_problems
from infra.core.errors import Issues, join_path
from infra.core.labels import POOL_LABEL
from infra.core.neighbours import stack_node_labels


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
            observed, and its IAM OIDC provider: declared here, or the one found (``live``);
            ``oidc_provider_import``: the ARN of this stack's own provider, declared again and
            imported.
        credentials: the AWS provider's profile and assumed role, which the kubeconfig signs
            its EKS tokens with (``access.provider_credentials``).
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
    oidc_provider_import: str = ""
    credentials: AwsCredentials = field(default_factory=AwsCredentials)
    version_notes: tuple[str, ...] = ()

    @property
    def notes(self) -> tuple[str, ...]:
        """What a person should know before deploying (the Spot service-linked role, a defaulted
        version or a new cluster in extended support)."""
        return (*self.version_notes, *spot_role_notes(self.groups))

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


def plan_eks(
    config: StackConfig, catalog: Catalog, issues: Issues, observed: EksObserved | None = None
) -> EksPlan:
    """Decide the EKS cluster and node groups over what was observed (``None``: offline);
    problems go to ``issues``."""
    config, version, given = _with_version(config, catalog)
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
    uses_ca = cluster.autoscaler.enabled and cluster.autoscaler.kind == "cluster-autoscaler"
    ca_image_tag = _check_version(version, uses_ca, issues, catalog)
    partition = autoscaler.aws_partition(region)
    tag = autoscaler.stack_tag(cluster.name, config.stack)
    stack = stack_node_labels(config, catalog)
    groups = _plan_groups(config, region, network, catalog, issues, stack)
    if cluster.existing:
        groups = tuple(_owned_by_stack(g, config.stack) for g in groups)
    system = plan_system(cluster, network, catalog, issues)
    if network is not None:
        used = {az for g in groups for az in g.az_ids} | set(system.az_ids if system else ())
        if cluster.autoscaler.enabled and cluster.autoscaler.kind == "karpenter":
            # Every private subnet carries the discovery tag an EC2NodeClass selects subnets by,
            # so any NodePool on it (the stack's or a user's) may launch nodes in any of them.
            used |= set(network.az_ids)
        network = nats_where_nodes_run(network, used)
    access = plan_access(cluster, partition, region, issues)
    if cluster.public_access_cidrs and not cluster.endpoint_public_access:
        issues.add(
            "cluster.publicAccessCidrs", "set, but endpointPublicAccess is false (no public API)"
        )
    check_pod_identity(cluster, issues)
    ca = None
    if uses_ca and ca_image_tag is not None:
        target = AutoscalerTarget(
            region=region,
            partition=partition,
            stack_tag=tag,
            image_tag=ca_image_tag,
            data_dir=catalog.data_dir,
        )
        ca = plan_autoscaler(config, target, groups, system, issues)
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
        karpenter=_plan_karpenter(config, region, partition, system, issues, catalog),
        stack_tag=tag,
        identity=a.identity,
        addons=plan_addons(partition, cluster.existing, a.identity, version, catalog.data_dir),
        device_plugin=_plan_device_plugin(config, groups, stack, catalog),
        efa_device_plugin=_plan_efa_device_plugin(config, groups, stack, catalog),
        credentials=provider_credentials(config.provider_config, issues),
        version_notes=tuple(
            versions.support_notes(version, given, not cluster.existing, catalog.data_dir)
        ),
    )
    return apply_observed(config, plan, observed, issues)


def _with_version(config: StackConfig, catalog: Catalog) -> tuple[StackConfig, str, bool]:
    """``config`` with the Kubernetes version the cluster is planned at (the stack's, or the
    default of ``catalog``'s calendar: ``versions.with_planned_version``), that version, and
    whether the stack gave it; every rule below judges the version planned."""
    given: EksClusterSpec = config.cluster
    cluster = versions.with_planned_version(given, catalog.data_dir)
    planned = dataclasses.replace(config, cluster=cluster) if cluster is not given else config
    return planned, cluster.planned_version, given.kubernetes_version is not None


def _check_version(version: str, uses_ca: bool, issues: Issues, catalog: Catalog) -> str | None:
    """Report an unsupported Kubernetes version, and (when the stack runs cluster-autoscaler) one
    with no pinned CA image; return that image's tag (``None``: none pinned)."""
    if problem := versions.support_problem(version, catalog.data_dir):
        issues.add("cluster.kubernetesVersion", problem)
    ca_image_tag = autoscaler.image_tag(version, catalog.data_dir)
    if uses_ca and ca_image_tag is None:
        issues.add(
            "cluster.kubernetesVersion",
            f"{version!r} has no pinned cluster-autoscaler image (CA must match the cluster's "
            f"minor version); supported: {', '.join(autoscaler.image_tags(catalog.data_dir))}",
        )
    return ca_image_tag


def _plan_groups(
    config: StackConfig,
    region: str,
    network: EksNetworkPlan | None,
    catalog: Catalog,
    issues: Issues,
    stack: Mapping[str, str],
) -> tuple[EksGroupPlan, ...]:
    """Every GPU pool's plan (pools that cannot be built leave issues and no plan); ``stack``:
    the stack label of a shared cluster (``neighbours.stack_node_labels``)."""
    cluster: EksClusterSpec = config.cluster
    karpenter = cluster.autoscaler.kind == "karpenter"
    groups: list[EksGroupPlan] = []
    for i, pool in enumerate(config.pools):
        if karpenter:
            karpenter_problems(i, pool, issues)
        else:
            node_group_problems(i, pool, issues)
        g = plan_group(i, pool, cluster, region, network, catalog, issues, stack)
        if g is not None and karpenter:
            g = as_karpenter_pool(i, g, config, catalog, issues)
        if g is not None:
            groups.append(g)
        if pool.name == SYSTEM_GROUP and not cluster.existing:
            issues.add(join_path("gpuPools", i, "name"), "'system' is the CPU node group's name")
    return tuple(groups)


def _owned_by_stack(group: EksGroupPlan, stack: str) -> EksGroupPlan:
    """A pool's node groups on a cluster the stack does not own, named with the stack in the hash
    (``lifecycle.owned_name``); each keeps the earlier name for a running group (``live``)."""
    return dataclasses.replace(
        group,
        node_groups=tuple(
            dataclasses.replace(
                ng,
                name=owned_name(ng.name, stack),
                legacy_name=ng.name,
                frozen=dataclasses.replace(ng.frozen, stack=stack) if ng.frozen else None,
            )
            for ng in group.node_groups
        ),
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
    issues: Issues,
    catalog: Catalog,
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
        data_dir=catalog.data_dir,
    )
    found = karpenter_ctl.problems(
        existing=cluster.existing,
        kubernetes_minor=kubernetes_minor(cluster.planned_version),
        plan=plan,
        data_dir=catalog.data_dir,
    )
    for key, reason in found:
        issues.add(key, reason)
    return plan


def _plan_device_plugin(
    config: StackConfig,
    groups: tuple[EksGroupPlan, ...],
    stack: Mapping[str, str],
    catalog: Catalog,
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
        release=_release_name(config, DEVICE_PLUGIN_CHART),
        stack=stack,
        data_dir=catalog.data_dir,
    )


def _plan_efa_device_plugin(
    config: StackConfig,
    groups: tuple[EksGroupPlan, ...],
    stack: Mapping[str, str],
    catalog: Catalog,
) -> DevicePluginPlan | None:
    efa = [g for g in groups if g.efa_interfaces]
    return plan_efa_device_plugin(
        POOL_LABEL,
        [g.name for g in efa],
        [t for g in efa for t in g.taints],
        release=_release_name(config, EFA_CHART_NAME),
        stack=stack,
        data_dir=catalog.data_dir,
    )


def _release_name(config: StackConfig, chart: str) -> str:
    """A chart's release name: the chart's on a cluster the stack creates (a running stack keeps
    its release: renaming one is a delete and a create), the stack's own on an existing one,
    within Helm's 53 characters (``names.HELM_RELEASE_MAX``)."""
    if not config.cluster.existing:
        return chart
    return stack_scoped(chart, config.stack, HELM_RELEASE_MAX)
