"""Platform-neutral facts about a planned GPU pool, for the pieces that sit above the cloud layer.

GKE and EKS plans each produce one ``PoolHints`` per pool. The GPU Operator plan, the stack outputs
(scheduling hints, JupyterHub profiles), the smoke-test Job and the quota demand read only this.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from infra.core.config.base import PoolBase

if TYPE_CHECKING:
    from infra.core.config.stack import StackConfig

Effect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]

# The resource name the NVIDIA device plugin (GKE's or the operator's) advertises.
GPU_RESOURCE = "nvidia.com/gpu"


@dataclass(frozen=True, slots=True)
class MigGpu:
    """One GPU model's MIG facts.

    Attributes:
        profiles: GPU-instance profiles, smallest first, mig-parted spelling (``1g.5gb+me``).
        balanced: the profiles ``all-balanced`` creates on one GPU (mig-parted device-filter block).
        balanced_counts: how many of each ``balanced`` profile one GPU gets (same order).
    """

    profiles: tuple[str, ...]
    balanced: tuple[str, ...]
    balanced_counts: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Taint:
    """A node taint in Kubernetes spelling."""

    key: str
    value: str
    effect: Effect = "NoSchedule"

    def toleration(self) -> dict[str, str]:
        """The Kubernetes toleration that admits pods onto nodes with this taint."""
        return {"key": self.key, "operator": "Equal", "value": self.value, "effect": self.effect}


@dataclass(frozen=True, slots=True)
class PoolGroup:
    """Pools a workload reaches as one, the platform picking the member (a GKE ComputeClass and
    the node pools bound to it).

    Attributes:
        name: the group's name (a workload target of its own).
        selector: the node selector a pod reaches the group by.
        taint: the taint every member carries that only the group's workloads tolerate.
    """

    name: str
    selector: Mapping[str, str]
    taint: Taint | None = None


# Where the NVIDIA driver comes from on the pool's nodes:
# gke-default/gke-latest: GKE installs it; operator: the GPU Operator installs it;
# preinstalled: the node image ships it (EKS NVIDIA AMIs, Bottlerocket NVIDIA, on-prem hosts);
# vgpu: the GPU Operator installs the vGPU guest driver image the user built (vSphere VMs).
DriverSource = Literal["gke-default", "gke-latest", "operator", "preinstalled", "vgpu"]


@dataclass(frozen=True, slots=True, kw_only=True)
class PoolHints:
    """What a workload and the cluster-level add-ons need to know about one GPU pool.

    Attributes:
        name: pool / node-group name.
        gpu_type: the cloud's accelerator name (``nvidia-tesla-t4``; on EKS the GPU model ``T4``).
        gpu_model: short model name for people (``T4``, ``L4``, ``A100-40GB``).
        gpus_per_node: GPUs per node.
        vcpus: vCPUs per node.
        memory_gib: memory per node in GiB.
        node_image: ``COS_CONTAINERD`` | ``UBUNTU_CONTAINERD`` | ``AL2023_x86_64_NVIDIA`` | ... |
            ``containerd`` (on-prem).
        driver: where the driver comes from.
        node_selector: labels that select exactly this pool's nodes.
        labels: every label the pool's nodes carry that the program declared.
        taints: every taint the program declared on the pool's nodes (GPU taint included).
        spot: spot / preemptible capacity.
        min_nodes: pool total minimum.
        max_nodes: pool total maximum.
        mig_profiles: MIG profiles the GPU supports (empty: MIG not possible).
        mig: NVIDIA's MIG facts of the GPU (``nvidia_mig_profiles.csv`` of the catalog the pool
            was planned with: ``sharing.pool_mig``); ``None``: no MIG.
        spec: the ``gpuPools`` entry the pool is planned from when it is not its own name (a GKE
            fallback pool's main pool); ``None``: its own.
        group: the group workloads reach the pool through (its ComputeClass); ``None``: the pool
            alone.
        node_pool: the name the cloud knows the pool's node pool by, when it is not ``name``
            (a GKE pool on a shared cluster: ``infra.core.gke.neighbours``); ``""``: ``name``.
    """

    name: str
    gpu_type: str
    gpu_model: str
    gpus_per_node: int
    vcpus: int
    memory_gib: float
    node_image: str
    driver: DriverSource
    node_selector: Mapping[str, str]
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    spot: bool = False
    min_nodes: int = 0
    max_nodes: int = 1
    mig_profiles: tuple[str, ...] = ()
    mig: MigGpu | None = None
    spec: str | None = None
    group: PoolGroup | None = None
    node_pool: str = ""

    def tolerations(self) -> list[dict[str, str]]:
        """Tolerations for every taint declared on the pool."""
        return [t.toleration() for t in self.taints]


def warm_of(config: StackConfig) -> dict[str, int]:
    """``warm`` per ``gpuPools`` entry (GKE fallback pools have none of their own)."""
    return {p.name: p.warm for p in config.pools}


def idle_nodes(min_nodes: int, warm: int) -> int:
    """Nodes a pool runs with no user on it: the placeholders fill the minNodes first."""
    return max(min_nodes, warm)


# ``gpuPools`` entries by name: (index, spec).
PoolSpecs = Mapping[str, tuple[int, PoolBase]]


def spec_of(specs: PoolSpecs, h: PoolHints) -> tuple[int, PoolBase]:
    """The ``gpuPools`` entry (index, spec) behind ``h``: its own, or the one it is planned from
    (``PoolHints.spec``: a GKE fallback pool's main)."""
    return specs[h.spec or h.name]
