"""EKS node groups: launch templates, managed node groups and their CA tags.

Thin: every value comes from ``infra.core.eks.groups`` and, for what a running stack keeps
(live names and AZs, the autoscaler's desired sizes, instance offerings), ``infra.core.eks.live``.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws

from infra.components.lifecycle import with_lifecycle
from infra.core import lifecycle
from infra.core.eks import autoscaler as ca
from infra.core.eks.bootstrap import node_user_data
from infra.core.eks.groups import EksGroupPlan, EksNodeGroup
from infra.core.eks.names import LAUNCH_TEMPLATE_NAME_MAX, fit_autonamed
from infra.core.eks.storage import data_volume_device


def launch_template(
    parent: pulumi.Resource,
    name: str,
    node_name: str,
    *,
    ami_type: str,
    disk_gib: int,
    group: EksGroupPlan | None = None,
    security_group_ids: Sequence[pulumi.Input[str]] = (),
    placement_group: pulumi.Input[str] | None = None,
) -> aws.ec2.LaunchTemplate:
    """A node launch template: IMDSv2 only, pods cut off from IMDS, encrypted gp3 volumes.

    For hpc groups also EFA interfaces, the placement group and local NVMe; for a capacity
    reservation or Capacity Block its target.
    """
    extra = _group_extras(group, security_group_ids) if group is not None else {}
    if placement_group is not None:
        extra["placement"] = aws.ec2.LaunchTemplatePlacementArgs(group_name=placement_group)
    user_data = node_user_data(ami_type, local_nvme=group is not None and group.local_nvme)
    if user_data is not None:
        extra["user_data"] = base64.b64encode(user_data.encode()).decode()
    return aws.ec2.LaunchTemplate(
        fit_autonamed(name, LAUNCH_TEMPLATE_NAME_MAX),
        aws.ec2.LaunchTemplateArgs(
            description=f"gpu-infra {node_name}: IMDSv2, encrypted gp3",
            update_default_version=True,
            metadata_options=aws.ec2.LaunchTemplateMetadataOptionsArgs(
                http_endpoint="enabled",
                http_tokens="required",  # IMDSv2 only
                # 1 hop: pods (one hop further) cannot read the node role's credentials; they
                # use IRSA / Pod Identity. hostNetwork agents (VPC CNI, kube-proxy) still reach IMDS.
                http_put_response_hop_limit=1,
            ),
            block_device_mappings=_volumes(ami_type, disk_gib),
            tag_specifications=[
                aws.ec2.LaunchTemplateTagSpecificationArgs(
                    resource_type="instance", tags={"Name": node_name}
                )
            ],
            **extra,
        ),
        opts=pulumi.ResourceOptions(parent=parent),
    )


def _volumes(ami_type: str, disk_gib: int) -> list[aws.ec2.LaunchTemplateBlockDeviceMappingArgs]:
    """The sized data (or root) volume, plus Bottlerocket's OS volume; all encrypted gp3."""
    data_device = data_volume_device(ami_type)
    volumes = [
        aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
            device_name=data_device,
            ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
                volume_size=disk_gib,
                volume_type="gp3",
                encrypted="true",
                delete_on_termination="true",
            ),
        )
    ]
    if data_device != "/dev/xvda":
        # Bottlerocket's OS volume (/dev/xvda) keeps the AMI's size but is encrypted too: an EBS
        # volume is encrypted only if asked (or by the account default).
        volumes.insert(
            0,
            aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
                device_name="/dev/xvda",
                ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
                    volume_type="gp3", encrypted="true", delete_on_termination="true"
                ),
            ),
        )
    return volumes


def _group_extras(
    group: EksGroupPlan, security_group_ids: Sequence[pulumi.Input[str]]
) -> dict[str, Any]:
    """Launch-template arguments a GPU group adds: EFA interfaces, its capacity reservation or
    Capacity Block (the user data is the node bootstrap's, for every group)."""
    extra: dict[str, Any] = {}
    if group.network_interfaces:
        assert security_group_ids
        # The layout is decided in core (infra.core.eks.efa.efa_interfaces: card 0 device 0 primary,
        # efa-only on the other EFA cards). With interfaces in the template EKS adds no
        # security group itself, so they are named here: the cluster security group (node and
        # control-plane traffic, "Amazon EKS security group requirements",
        # https://docs.aws.amazon.com/eks/latest/userguide/sec-group-reqs.html) and the EFA group
        # with its self rules (efa_security_group).
        extra["network_interfaces"] = [
            aws.ec2.LaunchTemplateNetworkInterfaceArgs(
                network_card_index=n.card,
                device_index=n.device,
                interface_type=n.interface_type,
                security_groups=list(security_group_ids),
                delete_on_termination="true",
            )
            for n in group.network_interfaces
        ]
    if group.capacity_reservation_id is not None:
        # A target or a preference, never both (https://docs.aws.amazon.com/AWSEC2/latest/
        # APIReference/API_CapacityReservationSpecification.html; checked in infra.core.eks.instance_types).
        target = (
            aws.ec2.LaunchTemplateCapacityReservationSpecificationCapacityReservationTargetArgs(
                capacity_reservation_id=group.capacity_reservation_id
            )
        )
        extra["capacity_reservation_specification"] = (
            aws.ec2.LaunchTemplateCapacityReservationSpecificationArgs(
                capacity_reservation_target=target
            )
        )
    elif group.capacity_reservation_preference is not None:
        extra["capacity_reservation_specification"] = (
            aws.ec2.LaunchTemplateCapacityReservationSpecificationArgs(
                capacity_reservation_preference=group.capacity_reservation_preference
            )
        )
    if group.capacity_type == "CAPACITY_BLOCK":
        # EKS: the launch template names the block's market type and instance type
        # (https://docs.aws.amazon.com/eks/latest/userguide/capacity-blocks-mng.html).
        extra["instance_market_options"] = aws.ec2.LaunchTemplateInstanceMarketOptionsArgs(
            market_type="capacity-block"
        )
        extra["instance_type"] = group.instance_types[0]
    return extra


def efa_security_group(
    parent: pulumi.Resource, name: str, vpc_id: pulumi.Input[str], cluster_name: str
) -> aws.ec2.SecurityGroup:
    """The security group every EFA interface carries: all traffic to and from itself.

    "The security group must allow all inbound and outbound traffic to and from the security
    group itself" (EC2 "Get started with EFA", step "Prepare an EFA-enabled security group",
    https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa-start.html); the cluster security
    group's egress to 0.0.0.0/0 does not cover EFA's SRD traffic (terraform-aws-modules/
    terraform-aws-eks node_group ``egress_all_self_efa`` adds the same self rule).
    """
    every = {"protocol": "-1", "from_port": 0, "to_port": 0, "self": True}
    return aws.ec2.SecurityGroup(
        name,
        aws.ec2.SecurityGroupArgs(
            vpc_id=vpc_id,
            description=f"EFA traffic among the EFA interfaces of {cluster_name} (gpu-infra)",
            ingress=[aws.ec2.SecurityGroupIngressArgs(**every)],
            egress=[aws.ec2.SecurityGroupEgressArgs(**every)],
            tags={"Name": name},
        ),
        opts=pulumi.ResourceOptions(parent=parent),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class _GroupContext:
    """What every node group of a pool is built with besides its plan."""

    cluster_name: pulumi.Input[str]
    stack_tag: str
    kubernetes_version: str
    node_role_arn: pulumi.Input[str]
    depends_on: Sequence[pulumi.Resource]


class EksGpuNodeGroup(pulumi.ComponentResource):
    """One GPU pool: its managed node group(s) plus the cluster-autoscaler tags on each ASG.

    Built on ``aws.eks.NodeGroup`` rather than pulumi-eks ``ManagedNodeGroup``: the latter is a
    remote component whose ``aws.eks.NodeGroup`` child (and so the ASG name) is invisible to this
    program, while the ASG name is exactly what the ``aws.autoscaling.Tag`` resources need. EKS
    resolves the AMI from ``ami_type`` itself.
    """

    def __init__(
        self,
        name: str,
        group: EksGroupPlan,
        *,
        cluster_name: pulumi.Input[str],
        stack_tag: str,
        kubernetes_version: str,
        subnets: Mapping[str, pulumi.Input[str]],
        node_role_arn: pulumi.Input[str],
        security_group_ids: Sequence[pulumi.Input[str]],
        depends_on: Sequence[pulumi.Resource],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpu-infra:aws:GpuNodeGroup", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        for note in group.notes:
            pulumi.log.warn(note, resource=self)
        pg = None
        if group.placement_group:
            pg = aws.ec2.PlacementGroup(
                f"{name}-pg",
                # Cluster strategy: one AZ, low-latency network for EFA collectives
                # (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/placement-strategies.html).
                aws.ec2.PlacementGroupArgs(strategy="cluster", tags={"gpu-infra/pool": group.name}),
                opts=child,
            )
        lt = launch_template(
            self,
            f"{name}-lt",
            group.name,
            ami_type=group.ami_type,
            disk_gib=group.disk_size_gib,
            group=group,
            security_group_ids=security_group_ids,
            placement_group=pg.name if pg is not None else None,
        )
        # The pool's subnets: every node group of the pool waits for all of them, and takes its
        # own AZs' (its live ones: live.live_group).
        pool_subnets = pulumi.Output.all(*[subnets[az] for az in group.az_ids])
        self.asg_names: list[pulumi.Output[str]] = []
        for ng in group.node_groups:
            self.asg_names.append(
                self._node_group(
                    name,
                    group,
                    ng,
                    pool_subnets.apply(
                        lambda ids, azs=ng.az_ids: [
                            str(sid) for az, sid in zip(group.az_ids, ids, strict=True) if az in azs
                        ]
                    ),
                    lt,
                    _GroupContext(
                        cluster_name=cluster_name,
                        stack_tag=stack_tag,
                        kubernetes_version=kubernetes_version,
                        node_role_arn=node_role_arn,
                        depends_on=depends_on,
                    ),
                )
            )
        self.register_outputs({"asgNames": self.asg_names})

    def _node_group(
        self,
        name: str,
        group: EksGroupPlan,
        ng: EksNodeGroup,
        subnet_ids: pulumi.Output[list[str]],
        lt: aws.ec2.LaunchTemplate,
        ctx: _GroupContext,
    ) -> pulumi.Output[str]:
        """One managed node group and the CA tags on its ASG; returns the ASG name."""
        key = ng.az_ids[0] if group.group_per_zone else "ng"
        node_group = aws.eks.NodeGroup(
            f"{name}-{key}",
            _node_group_args(
                group,
                ng,
                cluster_name=ctx.cluster_name,
                subnet_ids=subnet_ids,
                node_role_arn=ctx.node_role_arn,
                launch_template=lt,
                stack_tag=ctx.stack_tag,
                kubernetes_version=ctx.kubernetes_version,
            ),
            # Create-first although the bridge would delete first (lifecycle.csv): the name
            # hashes what forces a new group, so old and new never share one.
            opts=with_lifecycle(
                pulumi.ResourceOptions(
                    parent=self,
                    depends_on=list(ctx.depends_on),
                    ignore_changes=desired_size_ignored(ng.send_desired),
                ),
                _NODE_GROUP,
                timeout_minutes=lifecycle.rolling_timeout_minutes(
                    _NODE_GROUP, ng.max_size, group.update_max_unavailable
                ),
            ),
        )
        # A managed node group has exactly one ASG; index it rather than creating resources
        # in an apply, so every Tag shows up in previews.
        asg_name = node_group.resources.apply(first_asg_name)
        tag_asg(self, f"{name}-{key}", asg_name, {**group.asg_tags, ctx.stack_tag: "owned"})
        return asg_name


_NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"


def desired_size_ignored(send: bool) -> list[str] | None:
    """``ignoreChanges`` of a node group whose desired size the autoscaler owns (the plan sends
    it only on a resize: ``live.sends_desired_size``)."""
    return None if send else ["scalingConfig.desiredSize"]


def _node_group_args(
    group: EksGroupPlan,
    ng: EksNodeGroup,
    *,
    cluster_name: pulumi.Input[str],
    subnet_ids: pulumi.Input[list[str]],
    node_role_arn: pulumi.Input[str],
    launch_template: aws.ec2.LaunchTemplate,
    stack_tag: str,
    kubernetes_version: str,
) -> aws.eks.NodeGroupArgs:
    """One managed node group of ``group``: every value from the plan."""
    return aws.eks.NodeGroupArgs(
        cluster_name=cluster_name,
        node_group_name=ng.name,
        # Nodes follow cluster.kubernetesVersion (UpdateNodegroupVersion, in place, after the
        # control plane: the group depends on the cluster); EKS picks the latest AMI release.
        version=kubernetes_version,
        # A pinned AMI release (UpdateNodegroupVersion releaseVersion); None: EKS's latest.
        release_version=group.release_version,
        node_role_arn=node_role_arn,
        subnet_ids=subnet_ids,
        # A Capacity Block's launch template names the type (EKS rejects both).
        instance_types=(
            None if group.capacity_type == "CAPACITY_BLOCK" else list(group.instance_types)
        ),
        ami_type=group.ami_type,  # explicit: the GPU AMI is not chosen otherwise
        capacity_type=group.capacity_type,
        scaling_config=aws.eks.NodeGroupScalingConfigArgs(
            min_size=ng.min_size, max_size=ng.max_size, desired_size=ng.desired_size
        ),
        labels=dict(group.labels),
        taints=[
            aws.eks.NodeGroupTaintArgs(key=t["key"], value=t["value"], effect=t["effect"])
            for t in group.eks_taints
        ],
        launch_template=aws.eks.NodeGroupLaunchTemplateArgs(
            id=launch_template.id, version=launch_template.latest_version.apply(str)
        ),
        update_config=aws.eks.NodeGroupUpdateConfigArgs(
            max_unavailable=group.update_max_unavailable, update_strategy=group.update_strategy
        ),
        # Node auto repair reboots/replaces nodes whose GPU (AcceleratedHardwareReady,
        # from the node monitoring agent add-on) or kubelet health fails
        # (https://docs.aws.amazon.com/eks/latest/userguide/node-repair.html).
        node_repair_config=aws.eks.NodeGroupNodeRepairConfigArgs(enabled=group.node_repair),
        tags={
            "Name": ng.name,
            **group.node_group_tags,
            stack_tag: ca.STACK_TAG_VALUE,
        },
    )


def tag_asg(
    parent: pulumi.Resource, name: str, asg_name: pulumi.Input[str], tags: Mapping[str, str]
) -> None:
    """One ``aws.autoscaling.Tag`` per tag: EKS never copies node-group tags to its ASG
    (aws/containers-roadmap#608), and CA reads templates and discovery tags from the ASG."""
    for key, value in tags.items():
        aws.autoscaling.Tag(
            f"{name}-{_tag_suffix(key)}",
            aws.autoscaling.TagArgs(
                autoscaling_group_name=asg_name,
                tag=aws.autoscaling.TagTagArgs(
                    key=key,
                    value=value,
                    # Hints for CA, not instance tags (the launch template tags instances).
                    propagate_at_launch=False,
                ),
            ),
            opts=pulumi.ResourceOptions(parent=parent),
        )


def first_asg_name(resources: Sequence[Any] | None) -> str:
    if not resources or not resources[0].autoscaling_groups:
        raise ValueError("EKS reported no Auto Scaling group for the node group")
    return str(resources[0].autoscaling_groups[0].name)


def _tag_suffix(key: str) -> str:
    """The child-name suffix for a tag key: the key itself, minus the node-template prefix.

    Kept verbatim (Pulumi names may contain ``/``) so distinct keys never share a name: mapping
    ``/`` to ``-`` would make ``label/example.com/x`` and ``label/example.com-x`` one URN.
    """
    return key.removeprefix(ca.TEMPLATE_PREFIX + "/")
