"""EKS components: map an ``EksPlan`` onto a network, cluster, node groups, add-ons and releases.

Thin by design: every value comes from ``infra.core.eks.planner`` (and ``network`` /
``groups`` / ``autoscaler`` / ``device_plugin``); nothing here decides. Node groups and their
launch templates are in ``infra.components.eks_nodes``, add-ons and releases in
``infra.components.eks_addons``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_eks as eks
import pulumi_kubernetes as k8s

from infra.components.eks_addons import ClusterAutoscaler, DevicePlugin, EksAddons
from infra.components.eks_network import EksNetwork
from infra.components.eks_nodes import (
    EksGpuNodeGroup,
    desired_size_ignored,
    efa_security_group,
    first_asg_name,
    launch_template,
    tag_asg,
)
from infra.components.handles import ClusterHandle
from infra.components.karpenter_pools import KarpenterGpuPool
from infra.components.lifecycle import deletion_owner, with_lifecycle
from infra.core import lifecycle
from infra.core.eks import autoscaler as ca
from infra.core.eks import planner as core
from infra.core.eks.access import kubeconfig, managed_policy_arn
from infra.core.eks.groups import EksGroupPlan
from infra.core.eks.names import (
    IAM_ROLE_NAME_MAX,
    OWNER_TAG,
    eks_component_name,
    fit_autonamed,
    owner_value,
)
from infra.core.eks.observed import EksClusterObserved
from infra.core.eks.platform import eks_plan
from infra.core.plan import Plan

# Managed policies for EKS worker nodes (https://docs.aws.amazon.com/eks/latest/userguide/
# create-node-role.html); ECR *PullOnly* is the least-privilege successor of ReadOnly (2024-10).
_NODE_POLICIES = (
    "AmazonEKSWorkerNodePolicy",
    "AmazonEC2ContainerRegistryPullOnly",
    "AmazonEKS_CNI_Policy",
)
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
_OLD_DEVICE_PLUGIN = "gpu-infra:aws:NvidiaDevicePlugin"


class EksCluster(pulumi.ComponentResource):
    """The EKS cluster (pulumi-eks), its node role, and the small CPU system node group.

    With ``existing`` the observed cluster is used instead; the node role is still made for the
    GPU groups this stack adds, and the IAM OIDC provider the plan declares is created (IRSA).
    """

    name: pulumi.Output[str]
    endpoint: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]
    oidc_provider_arn: pulumi.Output[str]
    oidc_issuer: pulumi.Output[str]
    security_group_id: pulumi.Output[str]

    def __init__(
        self, name: str, plan: core.EksPlan, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpu-infra:aws:Cluster", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        assert plan.network is not None
        self.network = EksNetwork(
            f"{name}-net",
            plan.network,
            plan.cluster_name,
            opts=child,
            # The observe step finds this stack's VPC by it before the cluster exists.
            vpc_tags={OWNER_TAG: owner_value(plan.cluster_name, plan.stack)},
            # Karpenter's EC2NodeClass selects the subnets by this tag.
            private_tags=dict([plan.karpenter.discovery_tag]) if plan.karpenter else None,
        )
        subnets = self.network.subnets
        self.ready: list[pulumi.Resource] = []
        self.created: pulumi.Resource | None = None  # deletedWith target: created, unprotected
        self.node_role = aws.iam.Role(
            fit_autonamed(f"{name}-nodes", IAM_ROLE_NAME_MAX),
            aws.iam.RoleArgs(
                description=f"EKS nodes of {plan.cluster_name} (gpu-infra)",
                assume_role_policy=json.dumps(
                    {
                        "Version": "2012-10-17",
                        "Statement": [
                            {
                                "Effect": "Allow",
                                "Principal": {"Service": "ec2.amazonaws.com"},
                                "Action": "sts:AssumeRole",
                            }
                        ],
                    }
                ),
            ),
            opts=child,
        )
        attachments = [
            aws.iam.RolePolicyAttachment(
                f"{name}-nodes-{policy}",
                aws.iam.RolePolicyAttachmentArgs(
                    role=self.node_role.name,
                    policy_arn=managed_policy_arn(plan.partition, policy),
                ),
                opts=child,
            )
            for policy in _NODE_POLICIES
        ]
        self.node_dependencies: list[pulumi.Resource] = list(attachments)
        if plan.existing_cluster is not None:
            self._attach(name, plan, plan.existing_cluster)
        else:
            self._create(name, plan, subnets)
        if plan.system is not None:
            self._system_group(name, plan, subnets)
        self.register_outputs(
            {
                "name": self.name,
                "endpoint": self.endpoint,
                "kubeconfig": self.kubeconfig,
                "oidcProviderArn": self.oidc_provider_arn,
                "nodeRoleArn": self.node_role.arn,
            }
        )

    def _attach(self, name: str, plan: core.EksPlan, found: EksClusterObserved) -> None:
        """The existing cluster as observed: its name, endpoint, OIDC issuer, security group and
        VPC, and the IAM OIDC provider its IRSA roles trust (the one found, or one declared)."""
        self.name = pulumi.Output.from_input(found.name)
        self.endpoint = pulumi.Output.from_input(found.endpoint)
        self.oidc_issuer = pulumi.Output.from_input(found.oidc_issuer)
        # The cluster security group EKS made (EFA interfaces must name it explicitly) and the
        # cluster's VPC, also where the stack gives no cluster.vpc.id.
        self.security_group_id = pulumi.Output.from_input(found.security_group_id)
        self.vpc_id = pulumi.Output.from_input(found.vpc_id)
        self.oidc_provider_arn = pulumi.Output.from_input(plan.oidc_provider_arn)
        if plan.declare_oidc_provider:
            self.oidc_provider_arn = self._oidc_provider(name, plan, found.oidc_issuer)
        self.kubeconfig = pulumi.Output.secret(
            kubeconfig(
                found.name,
                found.endpoint,
                found.certificate_authority,
                plan.region,
                plan.credentials,
            )
        )

    def _oidc_provider(self, name: str, plan: core.EksPlan, issuer: str) -> pulumi.Output[str]:
        """The cluster's IAM OIDC provider, created (and kept) because the account has none for
        its issuer (EKS "Create an IAM OIDC provider"), or the one this stack created before (its
        owner tag), imported by ARN (``live.apply_observed``): IAM takes one provider per URL per
        account ("EntityAlreadyExists", CreateOpenIDConnectProvider), so declaring it again
        after a destroy (which kept it) would fail. Someone else's is used, never declared.
        """
        provider = aws.iam.OpenIdConnectProvider(
            f"{name}-oidc",
            aws.iam.OpenIdConnectProviderArgs(
                url=f"https://{issuer}",
                client_id_lists=["sts.amazonaws.com"],
                tags={OWNER_TAG: owner_value(plan.cluster_name, plan.stack)},
            ),
            # Kept on destroy: other stacks' IRSA roles on this cluster trust it too, and the
            # next run of this stack finds it again: its own (by the tag) is imported, which is
            # a no-op while it is in the state (live.apply_observed oidc_provider_import).
            opts=pulumi.ResourceOptions(
                parent=self,
                retain_on_delete=True,
                import_=plan.oidc_provider_import or None,
            ),
        )
        return provider.arn

    def _create(self, name: str, plan: core.EksPlan, subnets: dict[str, Any]) -> None:
        net = plan.network
        assert net is not None
        cluster = eks.Cluster(
            eks_component_name(name),
            eks.ClusterArgs(
                name=plan.cluster_name,  # fixed, so tags and ARNs need no outputs
                # Whose cluster it is: the observe step of a later run tells this stack's cluster
                # from another's of the same name by it (live.created_cluster_problems).
                cluster_tags={OWNER_TAG: owner_value(plan.cluster_name, plan.stack)},
                version=plan.kubernetes_version,
                vpc_id=self.network.vpc_id,
                # The control-plane AZs, or those the running cluster has (live.apply_observed).
                private_subnet_ids=[subnets[az] for az in net.cluster_az_ids],
                skip_default_node_group=True,  # GPU and system groups are explicit below
                create_oidc_provider=plan.identity == "irsa",
                # Add-ons are aws.eks.Addon resources after the system group (CoreDNS stays
                # degraded without nodes), not pulumi-eks's own.
                coredns_addon_options=eks.CoreDnsAddonOptionsArgs(enabled=False),
                kube_proxy_addon_options=eks.KubeProxyAddonOptionsArgs(enabled=False),
                use_default_vpc_cni=True,
                authentication_mode=eks.AuthenticationMode.API,
                access_entries={
                    e.key: eks.AccessEntryArgs(
                        principal_arn=e.principal_arn,
                        access_policies={
                            "policy": eks.AccessPolicyAssociationArgs(
                                policy_arn=e.policy_arn,
                                access_scope=aws.eks.AccessPolicyAssociationAccessScopeArgs(
                                    type="namespace" if e.namespaces else "cluster",
                                    namespaces=list(e.namespaces) or None,
                                ),
                            )
                        },
                    )
                    for e in plan.access_entries
                }
                or None,
                endpoint_private_access=True,
                endpoint_public_access=plan.endpoint_public_access,
                public_access_cidrs=list(plan.public_access_cidrs) or None,
                enabled_cluster_log_types=["api", "audit", "authenticator"],
                # EKS refuses DeleteCluster while set (pulumi-eks ClusterArgs.deletion_protection);
                # the engine's protect (lifecycle.csv) stops a destroy before it deletes anything.
                deletion_protection=True,
                # The kubeconfig signs as the AWS provider does (pulumi-eks reads aws:profile
                # itself, never aws:assumeRoles: nodejs/eks/cluster/cluster.ts createCluster).
                provider_credential_opts=eks.KubeconfigOptionsArgs(
                    profile_name=plan.credentials.profile, role_arn=plan.credentials.role_arn
                )
                if plan.credentials.profile or plan.credentials.role_arn
                else None,
            ),
            opts=with_lifecycle(
                pulumi.ResourceOptions(parent=self, transforms=[_eks_children(name, plan)]),
                "eks:index:Cluster",
            ),
        )
        # Protected through its aws.eks.Cluster child (lifecycle.PROTECTED_CHILD): None.
        self.created = deletion_owner(cluster, "aws:eks/cluster:Cluster")
        # Known only once the cluster exists, so look-ups by name wait for it.
        self.name = cluster.core.apply(lambda _: plan.cluster_name)
        self.endpoint = cluster.core.apply(lambda c: str(c.endpoint))
        self.kubeconfig = pulumi.Output.secret(cluster.kubeconfig_json)
        self.oidc_provider_arn = cluster.oidc_provider_arn.apply(lambda a: a or "")
        self.oidc_issuer = cluster.oidc_issuer.apply(lambda i: i or "")
        self.node_dependencies.append(cluster)
        # The cluster security group EKS made (EFA interfaces must name it explicitly) and the
        # VPC, from the aws.eks.Cluster pulumi-eks creates (its ``eksCluster`` output): the
        # component's own ``clusterSecurityGroupId`` is the group pulumi-eks makes itself, EKS's
        # only where skipDefaultSecurityGroups is set (pulumi/pulumi-eks nodejs/eks/cluster/
        # cluster.ts: ``core.clusterSecurityGroup?.id ?? core.cluster.vpcConfig
        # .clusterSecurityGroupId``).
        vpc = cluster.eks_cluster.apply(lambda c: c.vpc_config)
        self.security_group_id = vpc.apply(lambda v: str(v.cluster_security_group_id or ""))
        self.vpc_id = vpc.apply(lambda v: str(v.vpc_id or ""))

    def _system_group(self, name: str, plan: core.EksPlan, subnets: dict[str, Any]) -> None:
        s = plan.system
        assert s is not None
        lt = launch_template(
            self,
            f"{name}-system-lt",
            f"{plan.cluster_name}-{s.name}",
            ami_type=s.ami_type,
            disk_gib=s.disk_size_gib,
        )
        # Its planned name and AZs, or a live group's that only the catalog's AZs changed, and its
        # live desired size (live.live_system).
        system = aws.eks.NodeGroup(
            f"{name}-system",
            aws.eks.NodeGroupArgs(
                cluster_name=self.name,
                node_group_name=s.node_group_name,
                node_role_arn=self.node_role.arn,
                subnet_ids=[subnets[az] for az in s.az_ids],
                instance_types=list(s.instance_types),
                ami_type=s.ami_type,
                capacity_type="ON_DEMAND",
                version=plan.kubernetes_version,  # follows the control plane, as the GPU groups
                launch_template=aws.eks.NodeGroupLaunchTemplateArgs(
                    id=lt.id, version=lt.latest_version.apply(str)
                ),
                scaling_config=aws.eks.NodeGroupScalingConfigArgs(
                    min_size=s.min_size,
                    max_size=s.max_size,
                    desired_size=s.desired_size,
                ),
                labels=dict(s.labels),
                update_config=aws.eks.NodeGroupUpdateConfigArgs(
                    max_unavailable=s.update_max_unavailable
                ),
                tags={"Name": s.node_group_name, plan.stack_tag: ca.STACK_TAG_VALUE},
            ),
            opts=with_lifecycle(
                pulumi.ResourceOptions(
                    parent=self,
                    depends_on=self.node_dependencies,
                    ignore_changes=desired_size_ignored(s.send_desired),
                ),
                NODE_GROUP,
                timeout_minutes=lifecycle.rolling_timeout_minutes(
                    NODE_GROUP, s.max_size, s.update_max_unavailable
                ),
            ),
        )
        tag_asg(
            self,
            f"{name}-system",
            system.resources.apply(first_asg_name),
            {plan.stack_tag: ca.STACK_TAG_VALUE},
        )
        self.ready.append(system)


def _eks_children(name: str, plan: core.EksPlan) -> pulumi.ResourceTransform:
    """The options pulumi-eks's children get: ``protect`` on its aws.eks.Cluster only, not on the
    access entries, IAM roles and OIDC provider an ordinary edit replaces or removes (a component's
    ``protect`` would reach them all: lifecycle.PROTECTED_CHILD); and, for access entries keyed by
    list position before (``entry<j>``), an alias from that name to the principal's key, so a
    stack made then keeps its entries (EKS refuses a second entry for a principal)."""
    component = f"{name}-eks"
    child = lifecycle.PROTECTED_CHILD["eks:index:Cluster"]
    row = lifecycle.lookup(child)
    renames: dict[str, str] = {}
    for j, e in enumerate(plan.access_entries):
        renames[f"{component}-{e.key}"] = f"{component}-entry{j}"
        renames[f"{component}-{e.key}-policy"] = f"{component}-entry{j}-policy"

    def transform(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult | None:
        if args.type_ == child:
            extra = pulumi.ResourceOptions(protect=bool(row and row.protect))
        elif args.name in renames:
            extra = pulumi.ResourceOptions(aliases=[pulumi.Alias(name=renames[args.name])])
        else:
            return None
        return pulumi.ResourceTransformResult(
            args.props, pulumi.ResourceOptions.merge(args.opts, extra)
        )

    return transform


def build_eks(plan: Plan) -> ClusterHandle:
    """Build (or attach to) the EKS cluster, its GPU node groups, add-ons and releases."""
    p = eks_plan(plan.platform)
    name = p.cluster_name
    cluster = EksCluster(name, p)
    addons = EksAddons(f"{name}-addons", p, cluster)
    # Releases wait for the add-ons their pods use, never for storage or node monitoring.
    ready = [*cluster.ready, *_addons(addons, lifecycle.RELEASE_ADDONS)]
    provider = k8s.Provider(
        f"{name}-k8s",
        k8s.ProviderArgs(
            kubeconfig=cluster.kubeconfig,
            cluster_identifier=lifecycle.cluster_identifier("eks", p.region, name),
        ),
        opts=pulumi.ResourceOptions(depends_on=cluster.ready),
    )
    groups: dict[str, pulumi.Resource] = {}
    node_groups = [g for g in p.groups if g.karpenter is None]
    agent = _addons(addons, {lifecycle.POD_IDENTITY_ADDON})
    # The pools wait for the CRD release (their kinds), the controller's release and the
    # discovery tags their EC2NodeClasses select by, and are deleted before them, so Karpenter is
    # still running to terminate the nodes it launched.
    controller: list[pulumi.Resource] = []
    if p.karpenter is not None:
        from infra.components.karpenter import KarpenterController  # Karpenter stacks only

        k = KarpenterController(
            f"{name}-karpenter", p, cluster, provider=provider, depends_on=[*ready, *agent]
        )
        controller = [k.crd_release, k.release, *k.discovery_tags]
    # ... and outlive every add-on their nodes need: a draining node waits for its volumes to
    # detach, which needs the EBS CSI driver (karpenter_pools.KarpenterGpuPool).
    nodes_need = [*cluster.ready, *addons.ready]
    groups.update(_karpenter_pools(p, cluster, provider, nodes_need, controller))
    groups.update(_node_groups(p, cluster, node_groups))
    if p.autoscaler is not None:
        ClusterAutoscaler(f"{name}-ca", p, cluster, provider=provider, depends_on=[*ready, *agent])
    for suffix, dp in (("nvidia", p.device_plugin), ("efa", p.efa_device_plugin)):
        if dp is not None:
            DevicePlugin(
                f"{name}-{suffix}",
                dp,
                provider=provider,
                depends_on=[*ready, *(groups[g] for g in dp.after_pools if g in groups)],
                owner=cluster.created,
                # Its type was NvidiaDevicePlugin: without the alias every stack made then would
                # install the chart again under a new URN before deleting the old release.
                opts=pulumi.ResourceOptions(aliases=[pulumi.Alias(type_=_OLD_DEVICE_PLUGIN)])
                if suffix == "nvidia"
                else None,
            )
    return ClusterHandle(
        name=cluster.name,
        endpoint=cluster.endpoint,
        kubeconfig=cluster.kubeconfig,
        provider=provider,
        ready=ready,
        owner=cluster.created,
        pools=groups,
    )


def _node_groups(
    p: core.EksPlan, cluster: EksCluster, node_groups: Sequence[EksGroupPlan]
) -> dict[str, pulumi.Resource]:
    """Every managed GPU node group, and the EFA security group when a group has EFA interfaces."""
    if not node_groups:
        return {}
    name = p.cluster_name
    efa_sg = (
        efa_security_group(cluster, f"{name}-efa", cluster.vpc_id, name)
        if p.efa_security_group
        else None
    )
    groups: dict[str, pulumi.Resource] = {}
    for g in node_groups:
        groups[g.name] = EksGpuNodeGroup(
            f"{name}-{g.name}",
            g,
            cluster_name=cluster.name,
            stack_tag=p.stack_tag,
            kubernetes_version=p.kubernetes_version,
            subnets=cluster.network.subnets,
            node_role_arn=cluster.node_role.arn,
            security_group_ids=(
                [cluster.security_group_id, efa_sg.id]
                if g.network_interfaces and efa_sg is not None
                else []
            ),
            depends_on=cluster.node_dependencies,
        )
    return groups


def _karpenter_pools(
    p: core.EksPlan,
    cluster: EksCluster,
    provider: k8s.Provider,
    ready: Sequence[pulumi.Resource],
    controller: Sequence[pulumi.Resource],
) -> dict[str, pulumi.Resource]:
    """Every Karpenter GPU pool (``cluster.autoscaler.kind: karpenter``): its EC2NodeClass and
    NodePool, with the cluster's node role, after the controller release when there is one."""
    pools: dict[str, pulumi.Resource] = {}
    for g in p.groups:
        if g.karpenter is not None:
            pools[g.name] = KarpenterGpuPool(
                f"{p.cluster_name}-{g.name}",
                g.karpenter,
                node_role_name=cluster.node_role.name,
                provider=provider,
                depends_on=ready,
                controller=controller,
            )
    return pools


def _addons(addons: EksAddons, names: AbstractSet[str]) -> list[pulumi.Resource]:
    return [a for n, a in addons.by_name.items() if n in names]
