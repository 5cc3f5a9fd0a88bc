"""The allocatable memory of a GKE node as the GCE cloud provider of cluster-autoscaler builds its
template at zero nodes (the node GKE's autoscaler decides a scale-up on).

kubernetes/autoscaler @ 55c37cd5 cluster-autoscaler/cloudprovider/gce/templates.go: BuildCapacity
takes the kernel's share off the machine's memory (``mem - CalculateKernelReserved(m, mem)``,
gce_reserved.go), CalculateAllocatable then subtracts the kube_reserved GKE writes into the node
pool's kube-env (AUTOSCALER_ENV_VARS) and the hard eviction threshold. GKE's kube-reserved is its
documented reservation of the machine's memory
(https://cloud.google.com/kubernetes-engine/docs/concepts/plan-node-sizes#memory_reservations).
Measured nodes have a little more (2i2c-org/infrastructure node-capacity-info.json; tested), so a
pod that fits this node fits the running one.
"""

from __future__ import annotations

import math

KIB, MIB, GIB = 1024, 1024**2, 1024**3

# gce_reserved.go constants.
KERNEL_RESERVED_RATIO = 64  # kernelReservedRatio: 1/64 of the memory
KERNEL_RESERVED_MEMORY = 16 * MIB  # kernelReservedMemory
SWIOTLB_RESERVED_MEMORY = 64 * MIB  # swiotlbReservedMemory, above swiotlbThresholdMemory
SWIOTLB_THRESHOLD_MEMORY = 3 * GIB
CORRECTION_CONSTANT = 0.00175  # correctionConstant x memory, at most maximumCorrectionValue
MAXIMUM_CORRECTION_VALUE = 248 * MIB
UBUNTU_SPECIFIC_OFFSET = 4 * MIB  # ubuntuSpecificOffset
LOW_MEMORY_OFFSET = 8 * MIB  # lowMemoryOffset, at or below lowMemoryThreshold
LOW_MEMORY_THRESHOLD = 8 * GIB
# gce_reserved.go defaultKubeletEvictionHardMemory (GKE's evictionHard memory.available 100Mi).
EVICTION_HARD_MEMORY = 100 * MIB

# GKE's kube-reserved memory: 25 % of the first 4 GiB, 20 % of the next 4, 10 % of the next 8,
# 6 % of the next 112, 2 % above 128 GiB (plan-node-sizes#memory_reservations).
GKE_KUBE_RESERVED = ((4, 0.25), (4, 0.20), (8, 0.10), (112, 0.06), (math.inf, 0.02))


def distribution(node_image: str) -> str:
    """The OS distribution the GCE provider derives from the image type (templates.go
    extractOperatingSystemDistributionFromImageType): ``cos`` or ``ubuntu``."""
    return "ubuntu" if "UBUNTU" in node_image.upper() else "cos"


def kernel_reserved(memory: int, os_distribution: str = "cos") -> int:
    """gce_reserved.go CalculateKernelReserved for Linux on x86 (bytes)."""
    reserved = memory // KERNEL_RESERVED_RATIO + KERNEL_RESERVED_MEMORY
    if memory > SWIOTLB_THRESHOLD_MEMORY:
        reserved += SWIOTLB_RESERVED_MEMORY
    if memory <= LOW_MEMORY_THRESHOLD:
        reserved += LOW_MEMORY_OFFSET
    reserved += int(min(CORRECTION_CONSTANT * memory, MAXIMUM_CORRECTION_VALUE))
    if os_distribution == "ubuntu":
        reserved += UBUNTU_SPECIFIC_OFFSET
    return reserved


def kube_reserved(memory: int) -> int:
    """GKE's kube-reserved memory for a machine of ``memory`` bytes."""
    left, reserved = memory / GIB, 0.0
    for size, share in GKE_KUBE_RESERVED:
        part = min(left, size)
        reserved += part * share
        left -= part
        if left <= 0:
            break
    return int(reserved * GIB)


def template_allocatable(memory_gib: float, node_image: str) -> int:
    """Allocatable memory (bytes) of the GCE template node of a machine with ``memory_gib``."""
    memory = int(memory_gib * GIB)
    capacity = memory - kernel_reserved(memory, distribution(node_image))
    return capacity - kube_reserved(memory) - EVICTION_HARD_MEMORY


def template_allocatable_mib(memory_gib: float, node_image: str) -> int:
    """``template_allocatable`` in whole MiB (rounded down)."""
    return template_allocatable(memory_gib, node_image) // MIB
