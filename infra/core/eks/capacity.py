"""What each EKS node group can grow to, in the units EC2 quotas count (pure): the EKS side of
``Platform.quota_sizings``; the quota preflight (``quota``) vets and counts them."""

from __future__ import annotations

from infra.core.catalog.vendored import Catalog
from infra.core.config.stack import StackConfig
from infra.core.eks.groups import EksGroupPlan
from infra.core.eks.planner import EksPlan
from infra.core.errors import Issues, join_path
from infra.core.platform import NodeMarks
from infra.core.pools import idle_nodes, warm_of
from infra.core.sizing import NodeGroupSizing
from infra.core.system_pool import aws_vcpus_from_name

# EKS tags every instance of a managed node group with its cluster and node group: the tags it
# adds to the group's Auto Scaling group and propagates at launch ("Managed node groups" resource
# tagging, https://docs.aws.amazon.com/eks/latest/userguide/managed-node-groups.html; on the
# instances: "eks:cluster-name: <cluster_name>, eks:nodegroup-name: <worker_name>",
# eksctl-io/eksctl#2607; cluster-autoscaler reads the same keys, cloudprovider/aws/aws_manager.go).
EKS_CLUSTER_TAG = "eks:cluster-name"
EKS_NODEGROUP_TAG = "eks:nodegroup-name"
# Karpenter tags every instance it launches kubernetes.io/cluster/<cluster>=owned and
# karpenter.sh/nodepool=<NodePool> (aws/karpenter-provider-aws pkg/utils/utils.go GetTags,
# staticTags, @1d927085d).
KARPENTER_CLUSTER_TAG = "kubernetes.io/cluster/{}"
KARPENTER_NODEPOOL_TAG = "karpenter.sh/nodepool"

# A Karpenter NodePool replaces a drifted node by launching its replacement first ("Pre-spin any
# replacement nodes needed ... and wait for them to become ready", aws/karpenter-provider-aws
# v1.14.1 website/content/en/docs/concepts/disruption.md "Disruption Controller"), as many at once
# as its Drifted budget allows (infra.core.eks.karpenter.pools.DRIFT_BUDGET_NODES); a pulumi up
# that changes every EC2NodeClass drifts every NodePool at once.
KARPENTER_SURGE_RULE = (
    "Karpenter drift: each NodePool launches a replacement before draining a drifted node, "
    "as many at once as its Drifted disruption budget allows"
)


def eks_sizings(
    config: StackConfig, eks: EksPlan, catalog: Catalog, issues: Issues
) -> list[NodeGroupSizing]:
    """Every planned EKS GPU node group and the CPU system group, each with its update surge
    (a Karpenter pool: its drift replacement). Types no quota class maps are the quota
    preflight's to report (``quota.sizing``)."""
    index = {pool.name: i for i, pool in enumerate(config.pools)}
    warm = warm_of(config)
    out: list[NodeGroupSizing] = []
    for g in eks.groups:
        path = join_path("gpuPools", index.get(g.name))
        declared = g.name in index and config.pools[index[g.name]].shape is not None
        out.append(
            NodeGroupSizing(
                path=path,
                name=g.name,
                machine_types=g.instance_types,
                gpu_type=None,
                gpus_per_node=g.hints.gpus_per_node,
                # Same-shape types (one vCPU count), or a Karpenter pool's sizes: the largest.
                vcpus=max(
                    [g.hints.vcpus]
                    + [x.vcpus for t in g.instance_types if (x := catalog.aws_instance(t))]
                ),
                model="spot" if g.hints.spot else "standard",
                # A Karpenter pool: maxNodes, and its drift surge below; together the nodes
                # its NodePool limits admit (KarpenterPoolPlan.limit_nodes), as cost counts.
                max_nodes=g.karpenter.max_nodes if g.karpenter is not None else g.max_size,
                surge=_surge(g),
                surge_rule=KARPENTER_SURGE_RULE if g.karpenter is not None else "",
                declared=declared,
                reservation_id=g.capacity_reservation_id,
                zones=g.az_ids,
                node_groups=max(1, len(g.node_groups)),
                node_group_names=tuple(ng.name for ng in g.node_groups),
                min_nodes=idle_nodes(g.min_size, warm.get(g.name, 0)),
                warm=warm.get(g.name, 0),
                spot_or_on_demand=g.capacity_type == "SPOT_OR_ON_DEMAND",
            )
        )
    system = eks.system
    if system is not None:
        vcpus = [
            v
            for t in system.instance_types
            if (
                v := getattr(catalog.aws_instance(t), "vcpus", None)
                or aws_vcpus_from_name(t, catalog.data_dir)
            )
        ]
        if len(vcpus) != len(system.instance_types):
            issues.add(
                "cluster.systemPool.machineType",
                f"vCPUs of {', '.join(system.instance_types)} unknown",
            )
        net = eks.network
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


def eks_node_marks(eks: EksPlan) -> tuple[NodeMarks, ...]:
    """The tags on the instances of every node group and Karpenter NodePool the stack plans."""
    cluster = eks.cluster_name
    out: list[NodeMarks] = []
    for g in eks.groups:
        if g.karpenter is not None:
            owned = (KARPENTER_CLUSTER_TAG.format(cluster), "owned")
            tags = (owned, (KARPENTER_NODEPOOL_TAG, g.karpenter.name))
            out.append(NodeMarks(g.name, g.karpenter.name, tags))
        for ng in g.node_groups:
            tags = ((EKS_CLUSTER_TAG, cluster), (EKS_NODEGROUP_TAG, ng.name))
            out.append(NodeMarks(g.name, ng.name, tags))
    system = eks.system
    if system is not None:
        tags = ((EKS_CLUSTER_TAG, cluster), (EKS_NODEGROUP_TAG, system.node_group_name))
        out.append(NodeMarks(system.name, system.node_group_name, tags))
    return tuple(out)


def _surge(g: EksGroupPlan) -> int:
    """Nodes an update of the group may add: a Karpenter pool's drift replacements; MINIMAL
    terminates before it launches, so none; groupPerZone: one node group per AZ, each surging by
    its own AZ count."""
    if g.karpenter is not None:
        return g.karpenter.drift_surge
    if g.update_strategy == "MINIMAL":
        return 0
    per_group = sum(eks_surge(len(ng.az_ids), g.update_max_unavailable) for ng in g.node_groups)
    return per_group or eks_surge(len(g.az_ids), g.update_max_unavailable)


def eks_surge(az_count: int, max_unavailable: int) -> int:
    """Nodes an EKS managed node group update may add: max(2 x AZs, maxUnavailable).

    EKS raises the ASG by up to twice the group's AZ count, or by maxUnavailable if larger
    (https://docs.aws.amazon.com/eks/latest/userguide/managed-node-update-behavior.html).
    """
    return max(2 * az_count, max_unavailable)
