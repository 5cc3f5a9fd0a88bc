"""The nodes a Karpenter NodePool may launch, as the scheduling proof judges pods against them."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

from infra.core.eks.groups import EksGroupPlan
from infra.core.nodes import Node, base_allocatable
from infra.core.pools import GPU_RESOURCE

# Karpenter's view of a node it may launch (aws/karpenter-provider-aws v1.14.1
# pkg/providers/instancetype/types.go): memory less the VM overhead estimate
# (--vm-memory-overhead-percent, default 0.075, pkg/operator/options/options.go), less
# kubeReserved memory 11 MiB x pods + 255 MiB (kubeReservedResources) and the 100Mi hard eviction
# threshold (evictionThreshold). Pods: ENI-limited on AL2023/Bottlerocket, not in the catalog;
# 110 (its count without ENI data, pods()) stands in.
KARPENTER_VM_OVERHEAD = Fraction(75, 1000)
KARPENTER_PODS = 110
KARPENTER_EVICTION_MIB = 100


def karpenter_memory_mib(memory_gib: float) -> int:
    """Allocatable memory (MiB) Karpenter's scheduling simulation gives an instance type."""
    mib = int(memory_gib * 1024)
    overhead = -(-mib * KARPENTER_VM_OVERHEAD.numerator // KARPENTER_VM_OVERHEAD.denominator)
    return mib - overhead - (11 * KARPENTER_PODS + 255) - KARPENTER_EVICTION_MIB


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
        alloc = base_allocatable(g.hints)
        alloc["memory"] = Fraction(karpenter_memory_mib(memory_gib.get(t, g.hints.memory_gib)))
        alloc["memory"] *= 2**20
        alloc[GPU_RESOURCE] = Fraction(g.hints.gpus_per_node)
        node_labels = {**labels, "node.kubernetes.io/instance-type": t}
        out.append(
            Node(f"karpenter/{g.name}/{t}", node_labels, tuple(spec["spec"]["taints"]), alloc)
        )
    return out
