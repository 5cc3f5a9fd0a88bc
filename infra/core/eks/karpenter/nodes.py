"""The nodes a Karpenter NodePool may launch, as the scheduling proof judges pods against them."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

from infra.core.eks.groups import EksGroupPlan
from infra.core.eks.node_model import (
    EVICTION_HARD_MIB,
    arm64,
    eni_limited_pods,
    kube_reserved_mib,
    vm_memory_mib,
)
from infra.core.nodes import Node, base_allocatable
from infra.core.pools import GPU_RESOURCE


def karpenter_memory_mib(
    instance_type: str, memory_gib: float, arm64: bool = False, efa_only_enis: int = 0
) -> int:
    """Allocatable memory (MiB) Karpenter's scheduling simulation gives an instance type
    (aws/karpenter-provider-aws @ 1d927085 pkg/providers/instancetype/types.go NewInstanceType):
    memory() (less 7.5 % VM overhead), less kubeReservedResources for the ENI-limited pods (AL2023:
    amifamily/resolver.go DefaultFamily UsesENILimitedMemoryOverhead, whatever maxPods says;
    Bottlerocket: pods(), ENI-limited as SupportsENILimitedPodDensity while the EC2NodeClass sets
    no maxPods, which gpu-infra never does), less the 100Mi evictionThreshold. nodeadm on the
    AL2023 node reserves the same (its withDefaultReservedResources sizes kube-reserved from its
    ENI-limited maxPods), so Karpenter's node is the one that runs, without a kubeReserved of ours.
    """
    pods = eni_limited_pods(instance_type, efa_only_enis)
    return vm_memory_mib(memory_gib, arm64) - kube_reserved_mib(pods) - EVICTION_HARD_MIB


def karpenter_nodes(g: EksGroupPlan, memory_gib: Mapping[str, float]) -> list[Node]:
    """One node per instance type a Karpenter NodePool may launch: the NodePool's template labels,
    a value of each ``In`` requirement as a label (Karpenter labels a node with the well-known
    labels of its NodeClaim's requirements), its taints, and the type's resources."""
    assert g.karpenter is not None
    spec = g.karpenter.node_pool["spec"]["template"]
    labels = {**spec["metadata"]["labels"]}
    for r in spec["spec"]["requirements"]:
        if r["operator"] == "In":
            labels[r["key"]] = r["values"][0]
    out = []
    for t in g.instance_types:
        mib = karpenter_memory_mib(t, memory_gib.get(t, g.hints.memory_gib), arm64(g.ami_type))
        alloc = base_allocatable(g.hints, mib)
        alloc[GPU_RESOURCE] = Fraction(g.hints.gpus_per_node)
        node_labels = {**labels, "node.kubernetes.io/instance-type": t}
        out.append(
            Node(f"karpenter/{g.name}/{t}", node_labels, tuple(spec["spec"]["taints"]), alloc)
        )
    return out
