"""The memory and pods of an EKS GPU node, as its receivers size them: nodeadm on the node (a
managed node group's AL2023 or Bottlerocket node), the cluster-autoscaler's AWS template at zero
nodes, and Karpenter's scheduling simulation (``infra.core.eks.karpenter.nodes``).

Each formula and constant is re-implemented from the receiver's source, cited at file@commit:
- nodeadm: awslabs/amazon-eks-ami @ 81fec2e8 nodeadm/internal/kubelet/config.go,
  eni_max_pods.go;
- cluster-autoscaler: kubernetes/autoscaler @ 55c37cd5 cluster-autoscaler/cloudprovider/aws/
  aws_manager.go buildNodeFromTemplate;
- Karpenter: aws/karpenter-provider-aws @ 1d927085 pkg/providers/instancetype/types.go.
"""

from __future__ import annotations

import math
from pathlib import Path

from infra.core.catalog.vendored import table

# nodeadm eni_max_pods.go calculateStandardMaxPods: "# of ENI on default network card * (# of
# IPv4 per ENI - 1) + 2"; Karpenter types.go ENILimitedPods is the same formula (its EFA-only
# interfaces on card 0 take an ENI each and carry no IP). Table: aws_eni_limits.csv.
ENI_POD_OFFSET = 2
# nodeadm config.go getMemoryMebibytesToReserve: 11 * maxPods + 255 (MiB); Karpenter types.go
# kubeReservedResources: fmt.Sprintf("%dMi", (11*pods.Value())+255).
KUBE_RESERVED_MIB_PER_POD = 11
KUBE_RESERVED_BASE_MIB = 255
# nodeadm config.go default evictionHard "memory.available": "100Mi"; Karpenter types.go
# evictionThreshold: resource.MustParse("100Mi").
EVICTION_HARD_MIB = 100
# Karpenter pkg/operator/options/options.go --vm-memory-overhead-percent default 0.075: what the
# hypervisor and the kernel keep of the nominal memory before the kubelet sees it. The real
# capacity of a running node is higher (2i2c-org/infrastructure @ 9ad7cd0f src/deployer/dev/
# commands/generate/resource_allocation/node-capacity-info.json: r5.xlarge 33,163,589,976 B of
# 32 GiB, 3.5 % less), so it is the conservative bound for a node group's running node too.
VM_MEMORY_OVERHEAD_PERCENT = 0.075
# Karpenter types.go memory(): "Gravitons have an extra 64 MiB of cma reserved memory".
ARM64_CMA_MIB = 64


def ec2_gpu_count(gpus: int, gpu_fraction: float) -> int:
    """The NVIDIA GPUs EC2 DescribeInstanceTypes counts (GpuInfo.Gpus[].Count): 0 for a
    fractional GPU (g6f, gr6f: Count 0, LogicalGpuCount 1). What Karpenter counts (types.go
    nvidiaGPUs) and what the cluster-autoscaler's generated table holds (cloudprovider/aws/
    ec2_instance_types.go: g6f.large GPU 0)."""
    return 0 if gpu_fraction < 1 else gpus


def arm64(ami_type: str) -> bool:
    """The EKS AMI type is an arm64 one (``AL2023_ARM_64_NVIDIA``, ``BOTTLEROCKET_ARM_64_NVIDIA``)."""
    return "ARM_64" in ami_type


def eni_limits(instance_type: str, data_dir: Path) -> tuple[int, int] | None:
    """(ENIs of the default network card, IPv4 addresses per ENI), or ``None`` if not on file
    (``aws_eni_limits.csv`` of the catalog in ``data_dir``)."""
    for r in table("aws_eni_limits.csv", data_dir):
        if r["instance_type"] == instance_type:
            return int(r["default_max_enis"]), int(r["ipv4_per_interface"])
    return None


# A type not on file (a declared ``shape``) is one nodeadm looks up in EC2 DescribeInstanceTypes
# (eni_max_pods.go GetInstanceInfo: instance-info.jsonl first, then EC2; defaultMaxPods 110 only
# when both fail, config.go withDefaultReservedResources) and Karpenter always reads from EC2:
# both reserve for its real ENI limits, which the plan cannot know. The plan takes the most pods
# any type on file allows, so kube-reserved is never understated.
def most_eni_limited_pods(data_dir: Path) -> int:
    """The most ENI-limited pods of any instance type in aws_eni_limits.csv."""
    rows = table("aws_eni_limits.csv", data_dir)
    return max(eni_pods(int(r["default_max_enis"]), int(r["ipv4_per_interface"])) for r in rows)


def eni_limited_pods(instance_type: str, data_dir: Path, efa_only_enis: int = 0) -> int:
    """Max pods by ENI (nodeadm's default maxPods, Karpenter's ENILimitedPods). A type not on
    file (a declared ``shape``) gets the most any type on file allows (the most reserve)."""
    limits = eni_limits(instance_type, data_dir)
    if limits is None:
        return most_eni_limited_pods(data_dir)
    enis, ips = limits
    return eni_pods(max(enis - efa_only_enis, 0), ips)


def eni_pods(enis: int, ips: int) -> int:
    """ENIs x (IPv4 per ENI - 1) + 2 (0 without a usable ENI)."""
    return 0 if enis == 0 else enis * (ips - 1) + ENI_POD_OFFSET


def kube_reserved_mib(pods: int) -> int:
    """kube-reserved memory (MiB) for ``pods`` max pods (nodeadm, Karpenter, Bottlerocket)."""
    return KUBE_RESERVED_MIB_PER_POD * pods + KUBE_RESERVED_BASE_MIB


def vm_memory_mib(memory_gib: float, arm64: bool = False) -> int:
    """The memory (MiB) Karpenter assumes the kubelet sees: the nominal size less the Graviton
    CMA area, less ceil(7.5 %) (types.go memory())."""
    mib = int(memory_gib * 1024) - (ARM64_CMA_MIB if arm64 else 0)
    return mib - math.ceil(mib * VM_MEMORY_OVERHEAD_PERCENT)


def nodeadm_allocatable_mib(
    instance_type: str, memory_gib: float, data_dir: Path, arm64: bool = False
) -> int:
    """Allocatable memory (MiB) of a running managed-node-group node: nodeadm reserves
    kube-reserved for its ENI-limited maxPods (config.go withDefaultReservedResources) and the
    100Mi hard eviction threshold, from the memory the kernel leaves."""
    reserved = kube_reserved_mib(eni_limited_pods(instance_type, data_dir))
    return vm_memory_mib(memory_gib, arm64) - reserved - EVICTION_HARD_MIB


def autoscaler_template_memory_mib(memory_gib: float) -> int:
    """The cluster-autoscaler's AWS template memory (MiB): the instance type's MemoryMb, with
    ``node.Status.Allocatable = node.Status.Capacity`` (aws_manager.go buildNodeFromTemplate)."""
    return int(memory_gib * 1024)
