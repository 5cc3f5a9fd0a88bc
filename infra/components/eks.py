"""EKS components: map an ``EksPlan`` onto a cluster, GPU node groups and the cluster-autoscaler.

Thin by design: every value comes from ``infra.core.eks`` / ``infra.core.autoscaler``; nothing
here decides. The one deploy-time look-up is the AZ offering of each group's instance types
(``aws.ec2.get_instance_type_offerings`` by AZ ID), which narrows the planned subnets if AWS has
withdrawn a type from an AZ since the catalog snapshot; it never widens them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_eks as eks
import pulumi_kubernetes as k8s

from infra.components.handles import ClusterHandle
from infra.components.helm import helm_release
from infra.core import autoscaler as ca
from infra.core import eks as core
from infra.core.plan import Plan

# Managed policies for EKS worker nodes (https://docs.aws.amazon.com/eks/latest/userguide/
# create-node-role.html); ECR *PullOnly* is the least-privilege successor of ReadOnly (2024-10).
_NODE_POLICIES = (
    "AmazonEKSWorkerNodePolicy",
    "AmazonEC2ContainerRegistryPullOnly",
    "AmazonEKS_CNI_Policy",
)


def _policy_arn(partition: str, name: str) -> str:
    return f"arn:{partition}:iam::aws:policy/{name}"


class EksNetwork(pulumi.ComponentResource):
    """A VPC with one private subnet per AZ ID and a single NAT gateway, or the given subnets.

    Subnets are created by AZ *ID* (not name) because the plan filtered AZs by ID.
    """

    subnets: dict[str, pulumi.Input[str]]

    def __init__(
        self,
        name: str,
        plan: core.EksNetworkPlan,
        cluster_name: str,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpu-infra:aws:Network", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.subnets = {}
        vpc_id: pulumi.Input[str] | None = plan.vpc_id
        if plan.create:
            assert plan.cidr is not None and plan.public_cidr is not None
            owned = {f"kubernetes.io/cluster/{cluster_name}": "shared"}
            vpc = aws.ec2.Vpc(
                f"{name}-vpc",
                aws.ec2.VpcArgs(
                    cidr_block=plan.cidr,
                    enable_dns_hostnames=True,  # EKS private endpoint and nodes need DNS names
                    enable_dns_support=True,
                    tags={"Name": f"{cluster_name}-vpc"},
                ),
                opts=child,
            )
            vpc_id = vpc.id
            igw = aws.ec2.InternetGateway(
                f"{name}-igw", aws.ec2.InternetGatewayArgs(vpc_id=vpc.id), opts=child
            )
            public = aws.ec2.Subnet(
                f"{name}-public",
                aws.ec2.SubnetArgs(
                    vpc_id=vpc.id,
                    cidr_block=plan.public_cidr,
                    availability_zone_id=plan.control_plane_az_ids[0],
                    tags={"Name": f"{cluster_name}-public", "kubernetes.io/role/elb": "1", **owned},
                ),
                opts=child,
            )
            public_rt = aws.ec2.RouteTable(
                f"{name}-public",
                aws.ec2.RouteTableArgs(
                    vpc_id=vpc.id,
                    routes=[aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", gateway_id=igw.id)],
                ),
                opts=child,
            )
            aws.ec2.RouteTableAssociation(
                f"{name}-public",
                aws.ec2.RouteTableAssociationArgs(subnet_id=public.id, route_table_id=public_rt.id),
                opts=child,
            )
            eip = aws.ec2.Eip(f"{name}-nat", aws.ec2.EipArgs(domain="vpc"), opts=child)
            # One NAT gateway: nodes only pull images and call AWS APIs; per-AZ NAT is a cost
            # decision the user can make with their own VPC (cluster.vpc.id).
            nat = aws.ec2.NatGateway(
                f"{name}-nat",
                aws.ec2.NatGatewayArgs(allocation_id=eip.id, subnet_id=public.id),
                opts=child,
            )
            private_rt = aws.ec2.RouteTable(
                f"{name}-private",
                aws.ec2.RouteTableArgs(
                    vpc_id=vpc.id,
                    routes=[
                        aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", nat_gateway_id=nat.id)
                    ],
                ),
                opts=child,
            )
            for az, cidr in plan.subnet_cidrs.items():
                subnet = aws.ec2.Subnet(
                    f"{name}-{az}",
                    aws.ec2.SubnetArgs(
                        vpc_id=vpc.id,
                        cidr_block=cidr,
                        availability_zone_id=az,
                        tags={
                            "Name": f"{cluster_name}-private-{az}",
                            "kubernetes.io/role/internal-elb": "1",
                            **owned,
                        },
                    ),
                    opts=child,
                )
                aws.ec2.RouteTableAssociation(
                    f"{name}-{az}",
                    aws.ec2.RouteTableAssociationArgs(
                        subnet_id=subnet.id, route_table_id=private_rt.id
                    ),
                    opts=child,
                )
                self.subnets[az] = subnet.id
        else:
            self.subnets = dict(plan.private_subnets)
        self.vpc_id = vpc_id
        self.register_outputs({"vpcId": vpc_id, "subnets": self.subnets})


class EksGpuNodeGroup(pulumi.ComponentResource):
    """One managed GPU node group plus the cluster-autoscaler tags on its Auto Scaling group.

    Built on ``aws.eks.NodeGroup`` rather than pulumi-eks ``ManagedNodeGroup``: the latter is a
    remote component whose ``aws.eks.NodeGroup`` child (and so the ASG name) is invisible to this
    program and to the mock engine (eks.md §1.4), while the ASG name is exactly what the
    ``aws.autoscaling.Tag`` resources need. EKS resolves the AMI from ``ami_type`` itself, so little
    of pulumi-eks is lost (eks.md §1.5).
    """

    node_group: aws.eks.NodeGroup
    asg_name: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        group: core.EksGroupPlan,
        *,
        cluster_name: str,
        region: str,
        subnets: Mapping[str, pulumi.Input[str]],
        node_role_arn: pulumi.Input[str],
        depends_on: Sequence[pulumi.Resource],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpu-infra:aws:GpuNodeGroup", name, None, opts)
        lt = _launch_template(
            self,
            f"{name}-lt",
            f"{cluster_name}-{group.name}",
            group.root_device_name,
            group.disk_size_gib,
        )
        subnet_ids = _offered_subnets(self, group, region, subnets)
        self.node_group = aws.eks.NodeGroup(
            f"{name}-ng",
            aws.eks.NodeGroupArgs(
                cluster_name=cluster_name,
                node_group_name=group.name,
                node_role_arn=node_role_arn,
                subnet_ids=subnet_ids,
                instance_types=list(group.instance_types),
                ami_type=group.ami_type,  # explicit: gpu=True alone picks no GPU AMI (eks.md §1.1)
                capacity_type=group.capacity_type,
                scaling_config=aws.eks.NodeGroupScalingConfigArgs(
                    min_size=group.min_size,
                    max_size=group.max_size,
                    desired_size=group.min_size,  # initial only: drift is ignored below
                ),
                labels=dict(group.labels),
                taints=[
                    aws.eks.NodeGroupTaintArgs(key=t["key"], value=t["value"], effect=t["effect"])
                    for t in group.eks_taints
                ],
                launch_template=aws.eks.NodeGroupLaunchTemplateArgs(
                    id=lt.id, version=lt.latest_version.apply(str)
                ),
                update_config=aws.eks.NodeGroupUpdateConfigArgs(max_unavailable=1),
                tags={"Name": f"{cluster_name}-{group.name}", **group.node_group_tags},
            ),
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=list(depends_on),
                # The cluster-autoscaler owns the size from here on (eks.md §5 pain point 5).
                ignore_changes=["scalingConfig.desiredSize"],
            ),
        )
        # A managed node group has exactly one ASG; index it rather than creating resources in
        # an apply, so every Tag shows up in previews (eks.md §2.3).
        self.asg_name = self.node_group.resources.apply(_first_asg_name)
        for key, value in group.asg_tags.items():
            aws.autoscaling.Tag(
                f"{name}-{_tag_suffix(key)}",
                aws.autoscaling.TagArgs(
                    autoscaling_group_name=self.asg_name,
                    tag=aws.autoscaling.TagTagArgs(
                        key=key,
                        value=value,
                        # Template hints for CA, not instance tags (and instances are tagged by
                        # the launch template already).
                        propagate_at_launch=False,
                    ),
                ),
                opts=pulumi.ResourceOptions(parent=self),
            )
        self.register_outputs(
            {"nodeGroupName": self.node_group.node_group_name, "asgName": self.asg_name}
        )


def _launch_template(
    parent: pulumi.Resource, name: str, node_name: str, device: str, disk_gib: int
) -> aws.ec2.LaunchTemplate:
    """A node launch template: IMDSv2 only, pods cut off from IMDS, encrypted gp3 volume."""
    return aws.ec2.LaunchTemplate(
        name,
        aws.ec2.LaunchTemplateArgs(
            description=f"gpu-infra {node_name}: IMDSv2, encrypted gp3",
            update_default_version=True,
            metadata_options=aws.ec2.LaunchTemplateMetadataOptionsArgs(
                http_endpoint="enabled",
                http_tokens="required",  # IMDSv2 only
                # 1 hop: pods (one hop further) cannot read the node role's credentials; they
                # use IRSA. hostNetwork agents (VPC CNI, kube-proxy) still reach IMDS.
                http_put_response_hop_limit=1,
            ),
            # With a launch template EKS rejects the node group's disk_size; size it here.
            block_device_mappings=[
                aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
                    device_name=device,
                    ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
                        volume_size=disk_gib,
                        volume_type="gp3",
                        encrypted="true",
                        delete_on_termination="true",
                    ),
                )
            ],
            tag_specifications=[
                aws.ec2.LaunchTemplateTagSpecificationArgs(
                    resource_type="instance", tags={"Name": node_name}
                )
            ],
        ),
        opts=pulumi.ResourceOptions(parent=parent),
    )


def _first_asg_name(resources: Sequence[Any] | None) -> str:
    if not resources or not resources[0].autoscaling_groups:
        raise ValueError("EKS reported no Auto Scaling group for the node group")
    return str(resources[0].autoscaling_groups[0].name)


def _tag_suffix(key: str) -> str:
    """The child-name suffix for a node-template tag key: the key itself, minus the prefix.

    Kept verbatim (Pulumi names may contain ``/``) so distinct keys never share a name: mapping
    ``/`` to ``-`` would make ``label/example.com/x`` and ``label/example.com-x`` one URN.
    """
    return key.removeprefix(ca.TEMPLATE_PREFIX + "/")


def _offered_subnets(
    parent: pulumi.Resource,
    group: core.EksGroupPlan,
    region: str,
    subnets: Mapping[str, pulumi.Input[str]],
) -> pulumi.Output[list[str]]:
    """The planned subnets whose AZ (by ID) offers every instance type of the group right now."""
    offers = aws.ec2.get_instance_type_offerings_output(
        location_type="availability-zone-id",
        filters=[
            aws.ec2.GetInstanceTypeOfferingsFilterArgs(
                name="instance-type", values=list(group.instance_types)
            ),
            aws.ec2.GetInstanceTypeOfferingsFilterArgs(name="location", values=list(group.az_ids)),
        ],
        region=region,
        opts=pulumi.InvokeOutputOptions(parent=parent),
    )
    planned = [(az, subnets[az]) for az in group.az_ids]

    def pick(args: list[Any]) -> list[str]:
        result, ids = args[0], args[1:]
        pairs = set(zip(result.instance_types, result.locations, strict=True))
        keep = [
            str(sid)
            for (az, _), sid in zip(planned, ids, strict=True)
            if all((t, az) in pairs for t in group.instance_types)
        ]
        if not keep:
            raise ValueError(
                f"gpuPools {group.name}: no AZ of {region} among {', '.join(group.az_ids)} offers "
                f"{', '.join(group.instance_types)} any more (AWS DescribeInstanceTypeOfferings)"
            )
        return keep

    return pulumi.Output.all(offers, *[sid for _, sid in planned]).apply(pick)


class EksCluster(pulumi.ComponentResource):
    """The EKS cluster (pulumi-eks), its node role, and the small CPU system node group.

    With ``existing`` the cluster is looked up instead; the node role is still made for the GPU
    groups this stack adds.
    """

    name: pulumi.Output[str]
    endpoint: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]
    oidc_provider_arn: pulumi.Output[str]
    oidc_issuer: pulumi.Output[str]

    def __init__(
        self, name: str, plan: core.EksPlan, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpu-infra:aws:Cluster", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        assert plan.network is not None
        self.network = EksNetwork(f"{name}-net", plan.network, plan.cluster_name, opts=child)
        subnets = self.network.subnets
        self.ready: list[pulumi.Resource] = []
        self.node_role = aws.iam.Role(
            f"{name}-nodes",
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
                    role=self.node_role.name, policy_arn=_policy_arn(plan.partition, policy)
                ),
                opts=child,
            )
            for policy in _NODE_POLICIES
        ]
        self.node_dependencies: list[pulumi.Resource] = list(attachments)
        if plan.existing:
            found = aws.eks.get_cluster_output(
                name=plan.cluster_name,
                region=plan.region,
                opts=pulumi.InvokeOutputOptions(parent=self),
            )
            self.name = found.name
            self.endpoint = found.endpoint
            ca_data = found.certificate_authorities.apply(lambda c: c[0].data or "")
            self.oidc_issuer = found.identities.apply(
                lambda i: (i[0].oidcs[0].issuer or "").removeprefix("https://")
            )
            provider = aws.iam.get_open_id_connect_provider_output(
                url=self.oidc_issuer.apply(lambda u: f"https://{u}"),
                opts=pulumi.InvokeOutputOptions(parent=self),
            )
            self.oidc_provider_arn = provider.arn
            self.kubeconfig = pulumi.Output.secret(
                pulumi.Output.all(self.name, self.endpoint, ca_data).apply(
                    lambda a: core.kubeconfig(str(a[0]), str(a[1]), str(a[2]), plan.region)
                )
            )
        else:
            net = plan.network
            cluster = eks.Cluster(
                f"{name}-eks",
                eks.ClusterArgs(
                    name=plan.cluster_name,  # fixed, so tags and ARNs need no outputs
                    version=plan.kubernetes_version,
                    vpc_id=self.network.vpc_id,
                    private_subnet_ids=[subnets[az] for az in net.control_plane_az_ids],
                    skip_default_node_group=True,  # GPU and system groups are explicit below
                    create_oidc_provider=True,  # IRSA for the cluster-autoscaler
                    authentication_mode=eks.AuthenticationMode.API,
                    access_entries={
                        f"entry{j}": eks.AccessEntryArgs(
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
                        for j, e in enumerate(plan.access_entries)
                    }
                    or None,
                    endpoint_private_access=True,
                    endpoint_public_access=plan.endpoint_public_access,
                    public_access_cidrs=list(plan.public_access_cidrs) or None,
                    enabled_cluster_log_types=["api", "audit", "authenticator"],
                ),
                opts=child,
            )
            self.name = pulumi.Output.from_input(plan.cluster_name)
            self.endpoint = cluster.core.apply(lambda c: str(c.endpoint))
            self.kubeconfig = pulumi.Output.secret(cluster.kubeconfig_json)
            self.oidc_provider_arn = cluster.oidc_provider_arn
            self.oidc_issuer = cluster.oidc_issuer
            self.node_dependencies.append(cluster)
            assert plan.system is not None
            s = plan.system
            lt = _launch_template(
                self,
                f"{name}-system-lt",
                f"{plan.cluster_name}-{s.name}",
                "/dev/xvda",
                s.disk_size_gib,
            )
            system = aws.eks.NodeGroup(
                f"{name}-system",
                aws.eks.NodeGroupArgs(
                    cluster_name=plan.cluster_name,
                    node_group_name=s.name,
                    node_role_arn=self.node_role.arn,
                    subnet_ids=[subnets[az] for az in net.control_plane_az_ids],
                    instance_types=list(s.instance_types),
                    ami_type=s.ami_type,
                    capacity_type="ON_DEMAND",
                    launch_template=aws.eks.NodeGroupLaunchTemplateArgs(
                        id=lt.id, version=lt.latest_version.apply(str)
                    ),
                    scaling_config=aws.eks.NodeGroupScalingConfigArgs(
                        min_size=s.min_size, max_size=s.max_size, desired_size=s.min_size
                    ),
                    labels=dict(s.labels),
                    update_config=aws.eks.NodeGroupUpdateConfigArgs(max_unavailable=1),
                    tags={"Name": f"{plan.cluster_name}-{s.name}"},
                ),
                opts=pulumi.ResourceOptions(
                    parent=self,
                    depends_on=self.node_dependencies,
                    ignore_changes=["scalingConfig.desiredSize"],
                ),
            )
            self.ready.append(system)
        self.register_outputs(
            {
                "name": self.name,
                "endpoint": self.endpoint,
                "kubeconfig": self.kubeconfig,
                "oidcProviderArn": self.oidc_provider_arn,
                "nodeRoleArn": self.node_role.arn,
            }
        )


class ClusterAutoscaler(pulumi.ComponentResource):
    """cluster-autoscaler by Helm, with an IRSA role limited to this cluster's ASGs."""

    def __init__(
        self,
        name: str,
        plan: core.EksAutoscalerPlan,
        *,
        oidc_provider_arn: pulumi.Input[str],
        oidc_issuer: pulumi.Input[str],
        provider: k8s.Provider,
        depends_on: Sequence[pulumi.Resource],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpu-infra:aws:ClusterAutoscaler", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        subject = f"system:serviceaccount:{plan.namespace}:{plan.service_account}"
        trust = pulumi.Output.all(oidc_provider_arn, oidc_issuer).apply(
            lambda a: json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Principal": {"Federated": a[0]},
                            "Action": "sts:AssumeRoleWithWebIdentity",
                            "Condition": {
                                "StringEquals": {
                                    f"{a[1]}:sub": subject,
                                    f"{a[1]}:aud": "sts.amazonaws.com",
                                }
                            },
                        }
                    ],
                }
            )
        )
        role = aws.iam.Role(
            f"{name}-irsa",
            aws.iam.RoleArgs(
                description="cluster-autoscaler (IRSA), scoped to this cluster's ASGs",
                assume_role_policy=trust,
            ),
            opts=child,
        )
        aws.iam.RolePolicy(
            f"{name}-irsa",
            aws.iam.RolePolicyArgs(role=role.id, policy=json.dumps(plan.iam_policy)),
            opts=child,
        )
        values = dict(plan.values)
        values["rbac"] = {
            "serviceAccount": {
                **plan.values["rbac"]["serviceAccount"],
                "annotations": {"eks.amazonaws.com/role-arn": role.arn},
            }
        }
        self.release = helm_release(
            f"{name}-release",
            release=plan.chart,
            chart=plan.chart,
            version=plan.version,
            repo=plan.repo,
            namespace=plan.namespace,
            values=values,
            atomic=True,
            opts=pulumi.ResourceOptions(
                parent=self, provider=provider, depends_on=[role, *depends_on]
            ),
        )
        self.register_outputs({"roleArn": role.arn, "release": self.release.name})


def build_eks(plan: Plan) -> ClusterHandle:
    """Build (or attach to) the EKS cluster, its GPU node groups and the cluster-autoscaler."""
    p = plan.eks
    assert p is not None
    name = p.cluster_name
    cluster = EksCluster(name, p)
    provider = k8s.Provider(
        f"{name}-k8s",
        k8s.ProviderArgs(kubeconfig=cluster.kubeconfig),
        opts=pulumi.ResourceOptions(depends_on=cluster.ready),
    )
    for g in p.groups:
        EksGpuNodeGroup(
            f"{name}-{g.name}",
            g,
            cluster_name=p.cluster_name,
            region=p.region,
            subnets=cluster.network.subnets,
            node_role_arn=cluster.node_role.arn,
            depends_on=cluster.node_dependencies,
        )
    if p.autoscaler is not None:
        ClusterAutoscaler(
            f"{name}-ca",
            p.autoscaler,
            oidc_provider_arn=cluster.oidc_provider_arn,
            oidc_issuer=cluster.oidc_issuer,
            provider=provider,
            depends_on=cluster.ready,
        )
    return ClusterHandle(
        name=cluster.name,
        endpoint=cluster.endpoint,
        kubeconfig=cluster.kubeconfig,
        provider=provider,
        ready=list(cluster.ready),
    )
