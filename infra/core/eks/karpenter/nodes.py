"""The nodes a Karpenter NodePool may launch, as the scheduling proof judges pods against them."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path

from infra.core.eks.groups import EksGroupPlan
from infra.core.eks.karpenter.pools import (
    GPU_COUNT_LABEL,
    GPU_NAME_LABEL,
    INSTANCE_TYPE_LABEL,
    gpu_name,
)
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
    instance_type: str,
    memory_gib: float,
    data_dir: Path,
    arm64: bool = False,
    efa_only_enis: int = 0,
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
    pods = eni_limited_pods(instance_type, data_dir, efa_only_enis)
    return vm_memory_mib(memory_gib, arm64) - kube_reserved_mib(pods) - EVICTION_HARD_MIB


def type_labels(t: str, gpu_model: str, gpus: int) -> dict[str, str]:
    """The labels Karpenter derives from the instance type itself (types.go computeRequirements:
    instance-type, and with one GpuInfo.Gpus entry instance-gpu-name and instance-gpu-count)."""
    return {
        INSTANCE_TYPE_LABEL: t,
        GPU_NAME_LABEL: gpu_name(gpu_model),
        GPU_COUNT_LABEL: str(gpus),
    }


def karpenter_nodes(
    g: EksGroupPlan, shapes: Mapping[str, tuple[float, str, int]], data_dir: Path
) -> tuple[list[Node], list[tuple[str, str]]]:
    """One node per instance type a Karpenter NodePool may launch, and why a type cannot be.

    ``shapes``: per type (memory GiB, GPU model, nvidia.com/gpu Karpenter counts). A node carries
    the NodePool's template labels, the labels Karpenter derives from the type, a value of each
    other ``In`` requirement (zone, capacity type: offerings), its taints and Karpenter's
    resources. A type whose own labels a requirement excludes is never launched.
    """
    assert g.karpenter is not None
    spec = g.karpenter.node_pool["spec"]["template"]
    reqs = [r for r in spec["spec"]["requirements"] if r["operator"] == "In"]
    out: list[Node] = []
    problems: list[tuple[str, str]] = []
    for t in g.instance_types:
        memory_gib, model, gpus = shapes.get(t, (g.hints.memory_gib, g.hints.gpu_type, 0))
        own = type_labels(t, model, gpus)
        labels = {r["key"]: r["values"][0] for r in reqs if r["key"] not in own}
        excluded = [r for r in reqs if r["key"] in own and own[r["key"]] not in r["values"]]
        if excluded:
            r = excluded[0]
            problems.append(
                (
                    "machineType",
                    f"{t}: Karpenter labels it {r['key']}={own[r['key']]} and counts {gpus} "
                    f"{GPU_RESOURCE} (EC2 GpuInfo; types.go computeRequirements, nvidiaGPUs), so "
                    f"the NodePool's requirement {r['key']} In {r['values']} never matches it",
                )
            )
            continue
        mib = karpenter_memory_mib(t, memory_gib, data_dir, arm64(g.ami_type))
        alloc = base_allocatable(g.hints, mib)
        alloc[GPU_RESOURCE] = Fraction(gpus)
        node_labels = {**labels, **spec["metadata"]["labels"], **own}
        out.append(
            Node(f"karpenter/{g.name}/{t}", node_labels, tuple(spec["spec"]["taints"]), alloc)
        )
    return out, problems
