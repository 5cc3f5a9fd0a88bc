"""An existing cluster (``platform: kubernetes``) as a ``Platform`` (``infra.core.platform``): the
pools it already has and every answer shared code asks of it. No cloud: no autoscaler gpu-infra
runs, no price, no quota. ``plan`` is the registry's entry (``infra.core.platforms``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from infra.core.catalog.shapes import refuse_shapes
from infra.core.catalog.vendored import Catalog
from infra.core.config.base import PoolBase
from infra.core.config.kubernetes import KubernetesClusterSpec, KubernetesPoolSpec
from infra.core.config.stack import StackConfig
from infra.core.errors import Issues, join_path
from infra.core.kubernetes.planner import KubernetesPlan, plan_kubernetes
from infra.core.kubernetes.presets import PRESETS
from infra.core.labels import ONPREM_ACCELERATOR_LABEL
from infra.core.nodes import (
    Node,
    PoolNodes,
    daemonset_memory_mib,
    node_taints,
    running_allocatable,
    shared_resources,
)
from infra.core.platform import Features, Platform, PoolView, Preset
from infra.core.platform_defaults import PlannedPlatform, planned_as
from infra.core.pools import PoolHints

FEATURES = Features(
    autoscaler=None,
    accelerator_label=ONPREM_ACCELERATOR_LABEL,
    listed_nodes=True,
    own_hardware=True,
    places="HOSTS",
    labelled_by="gpu-infra (node label patch) or the stack's declared labels",
    unlabelled_fix="list its nodes under nodes so gpu-infra labels them",
)


def plan(config: StackConfig, catalog: Catalog, issues: Issues) -> KubernetesPlatform:
    """The existing cluster of ``config`` and its pools (no declared shapes: its pools describe
    their own nodes)."""
    refuse_shapes(config, issues)
    return KubernetesPlatform(config, plan_kubernetes(config, catalog, issues), catalog, FEATURES)


def kubernetes_plan(platform: Platform) -> KubernetesPlan:
    """The KubernetesPlan a stack's ``Plan.platform`` holds (for this platform's components)."""
    return planned_as(platform, KubernetesPlatform, "kubernetes").plan


@dataclass(frozen=True, slots=True)
class KubernetesPlatform(PlannedPlatform[KubernetesClusterSpec, KubernetesPlan]):
    """A planned stack on an existing cluster."""

    @property
    def name(self) -> str:
        return "kubernetes"

    @property
    def pools(self) -> tuple[PoolHints, ...]:
        return self.plan.pools

    @property
    def notes(self) -> tuple[str, ...]:
        return ()

    # --- the GPU Operator and the workloads ------------------------------------------------------
    def presets(self) -> Mapping[str, Preset]:
        return PRESETS

    def default_preset(self, pools: Sequence[PoolHints]) -> str:
        return self.cluster.distribution

    def driver_key(self, index: int, pool: PoolBase) -> str:
        return join_path("gpuPools", index, "driver")

    @property
    def stated_cpu_nodes(self) -> int | None:
        return None

    def listed_nodes(self, pool: str) -> tuple[str, ...]:
        spec = self._spec(pool)
        return tuple(spec.nodes) if spec is not None else ()

    def workload_selector(self, h: PoolHints) -> dict[str, str]:
        return dict(h.node_selector)

    def carried_labels(
        self, h: PoolHints, pool: PoolBase, patched: Mapping[str, str]
    ) -> dict[str, str]:
        # The declared labels, the selector the nodes are chosen by, and gpu-infra's patch.
        return {**h.labels, **h.node_selector, **patched}

    def warm_note(self, pools: str) -> str | None:
        return (
            f"gpuPools warm ({pools}): gpu-infra runs no autoscaler on platform kubernetes; the "
            "placeholders warm nodes only if the cluster's own autoscaler adds nodes for Pending "
            "pods, else they just hold GPUs that any other pod preempts, so the JupyterHub and "
            "Kubeflow choices promise no warm node"
        )

    @property
    def count_remedy(self) -> str:
        return "the cluster's own autoscaler, if any, is the user's to configure"

    @property
    def system_daemonset_mib(self) -> int:
        return daemonset_memory_mib("kubernetes", self.catalog.data_dir)

    def node_memory_mib(self, h: PoolHints) -> int:
        return declared_memory_mib(h)

    # --- checks ----------------------------------------------------------------------------------
    def pool_nodes(
        self, operator: bool, patched: Mapping[str, Mapping[str, str]]
    ) -> dict[str, PoolNodes]:
        specs = {p.name: p for p in self.config.pools}
        return {
            h.name: PoolNodes(_running_node(h, specs[h.name], patched.get(h.name, {})), None)
            for h in self.plan.pools
        }

    # --- views -----------------------------------------------------------------------------------
    def pool_view(self, h: PoolHints) -> PoolView:
        spec = self._spec(h.name)
        return PoolView(
            places=tuple(spec.nodes) if spec is not None else (),
            capacity="own",
            min_nodes=h.min_nodes,
        )

    def _spec(self, pool: str) -> KubernetesPoolSpec | None:
        return next((p for p in self.config.pools if p.name == pool), None)


# What a Linux node reports (status.capacity.memory) is its RAM less what the kernel and firmware
# keep before the kubelet starts: the memmap alone (a 64-byte struct page per 4 KiB page, 1/64 of
# RAM: the kernel's struct page; kubernetes/autoscaler @ 55c37cd5 cloudprovider/gce/gce_reserved.go
# kernelReservedRatio), plus firmware holes, crashkernel and boot allocations. Measured nodes lose
# 1.6-3.7 % of their RAM in all (2i2c-org/infrastructure @ 9ad7cd0f src/deployer/dev/commands/
# generate/resource_allocation/node-capacity-info.json: r7i.xlarge reports 33,089,273,856 B of
# 32 GiB, n2-standard-64 270,450,806,784 B of 256 GiB), at most 2.2 % beyond the memmap, so the
# model takes a 2.5 % margin on top of it: a declared nominal size never overstates the node.
KERNEL_MEMMAP_RATIO = 64
KERNEL_MARGIN = 0.025
# The kubelet's default hard eviction threshold memory.available 100Mi, and no kube-reserved or
# system-reserved by default (https://kubernetes.io/docs/reference/config-api/
# kubelet-config.v1beta1/ KubeletConfiguration evictionHard, kubeReserved); k3s and RKE2 keep
# the defaults. gpuPools[].memoryGib is the node's nominal memory (the VM's size, the host's RAM).
KUBELET_EVICTION_HARD_MIB = 100


def reported_capacity_mib(memory_gib: float) -> int:
    """The memory (MiB) a Linux node of ``memory_gib`` installed reports as its capacity, at most."""
    nominal = memory_gib * 1024
    return int(nominal - nominal / KERNEL_MEMMAP_RATIO - nominal * KERNEL_MARGIN)


def declared_memory_mib(h: PoolHints) -> int:
    """Allocatable memory (MiB) of a listed or selected on-prem node: the capacity its declared
    nominal memory reports, less the kubelet's default hard eviction threshold."""
    return reported_capacity_mib(h.memory_gib) - KUBELET_EVICTION_HARD_MIB


def _running_node(h: PoolHints, pool: PoolBase, patched: Mapping[str, str]) -> Node:
    """An on-prem node: the labels the stack declares it carries, the selector it is chosen by,
    and what gpu-infra patches onto listed nodes."""
    labels = {**h.labels, **h.node_selector, **patched}
    alloc = running_allocatable(h, pool, declared_memory_mib(h))
    return Node(h.name, labels, node_taints(h), alloc, shared_resources(h, pool))
