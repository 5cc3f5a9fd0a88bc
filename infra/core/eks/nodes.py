"""An EKS node group's nodes as the scheduling proof judges pods against them: the node as it runs,
and the template node the AWS cloud provider of cluster-autoscaler builds at zero nodes.

AWS templates follow kubernetes/autoscaler cluster-autoscaler/cloudprovider/aws/aws_manager.go
buildNodeFromTemplate: capacity from the instance type (``nvidia.com/gpu`` = its GPUs), then the
ASG's ``k8s.io/cluster-autoscaler/node-template/`` label, taint and resources tags
(extractLabelsFromAsg, extractTaintsFromAsg, extractAllocatableResourcesFromAsg; a resources tag
overrides the instance type's value).
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path

from infra.core.config.base import PoolBase
from infra.core.eks.groups import EksGroupPlan
from infra.core.eks.node_model import (
    arm64,
    autoscaler_template_memory_mib,
    nodeadm_allocatable_mib,
)
from infra.core.nodes import (
    Node,
    base_allocatable,
    node_taints,
    quantity,
    running_allocatable,
    shared_resources,
)
from infra.core.pools import GPU_RESOURCE

# The strings the autoscaler reads, written out from upstream instead of imported from the code
# that emits them (infra.core.eks.autoscaler), so a wrong key there fails the proof (a unit test
# compares the two). ASG tags of a scale-from-zero template (kubernetes/autoscaler
# cluster-autoscaler/cloudprovider/aws/aws_manager.go extractLabelsFromAsg, extractTaintsFromAsg,
# extractAllocatableResourcesFromAsg; cloudprovider/aws/README.md "Auto-Discovery Setup").
CA_TEMPLATE_LABEL = "k8s.io/cluster-autoscaler/node-template/label/"
CA_TEMPLATE_TAINT = "k8s.io/cluster-autoscaler/node-template/taint/"
CA_TEMPLATE_RESOURCES = "k8s.io/cluster-autoscaler/node-template/resources/"
# GPULabel of its AWS provider (cloudprovider/aws/aws_cloud_provider.go).
AWS_GPU_LABEL = "k8s.amazonaws.com/accelerator"


def eks_template_node(g: EksGroupPlan, ec2_gpus: int) -> Node:
    """The AWS cloud provider's template node for a node group at zero: the instance type as its
    table has it (``ec2_gpus``: EC2's GPU count, ``infra.core.eks.node_model.ec2_gpu_count``;
    the nominal memory), then the ASG's node-template tags as it parses them."""
    h = g.hints
    alloc = base_allocatable(h, autoscaler_template_memory_mib(h.memory_gib))
    alloc[GPU_RESOURCE] = Fraction(ec2_gpus)
    labels: dict[str, str] = {}
    taints: list[dict[str, str]] = []
    for key, value in g.asg_tags.items():
        if key.startswith(CA_TEMPLATE_LABEL):
            labels[key.removeprefix(CA_TEMPLATE_LABEL)] = value
        elif key.startswith(CA_TEMPLATE_TAINT):
            v, _, effect = value.rpartition(":")
            taints.append(
                {"key": key.removeprefix(CA_TEMPLATE_TAINT), "value": v, "effect": effect}
            )
        elif key.startswith(CA_TEMPLATE_RESOURCES):
            alloc[key.removeprefix(CA_TEMPLATE_RESOURCES)] = quantity(value)
    return Node(f"template/{h.name}", labels, tuple(taints), alloc)


def running_memory_mib(g: EksGroupPlan, memory_gib: Mapping[str, float], data_dir: Path) -> int:
    """Allocatable memory (MiB) of a running node of the group: nodeadm's, the least over the
    group's instance types, each with its own memory (``memory_gib``: per type, as EC2 describes
    it; a type not in it has the group's shape). A Karpenter NodePool may hold several sizes of
    one GPU shape, and a type's reserve follows its own maxPods, so memory and reserve are taken
    per type: the least is the smallest type's node."""
    return min(
        nodeadm_allocatable_mib(
            t, memory_gib.get(t, g.hints.memory_gib), data_dir, arm64(g.ami_type)
        )
        for t in g.instance_types or (g.hints.name,)
    )


def eks_running_node(
    g: EksGroupPlan, pool: PoolBase, memory_gib: Mapping[str, float], data_dir: Path
) -> Node:
    """A running node of the group (``pool``: its gpuPools entry; ``memory_gib``: per instance
    type, as in ``running_memory_mib``; ``data_dir``: the plan's catalog, its ENI limits)."""
    h = g.hints
    alloc = running_allocatable(h, pool, running_memory_mib(g, memory_gib, data_dir))
    # The least the kubelet leaves allocatable on the group's nodefs (disk, filesystem, reserve).
    alloc["ephemeral-storage"] = Fraction(g.allocatable_ephemeral_gib) * 2**30
    return Node(h.name, dict(g.labels), node_taints(h), alloc, shared_resources(h, pool))
