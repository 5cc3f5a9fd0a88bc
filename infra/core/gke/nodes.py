"""A GKE pool's nodes as the scheduling proof judges pods against them: the node as it runs, and
the template node the GCE cloud provider of cluster-autoscaler builds at zero nodes.

GCE/GKE templates follow kubernetes/autoscaler cluster-autoscaler/cloudprovider/gce/templates.go
BuildNodeFromTemplate: labels and taints of the node pool (kube-env NODE_LABELS / NODE_TAINTS,
which carry GKE's own cloud.google.com/gke-nodepool and gke-accelerator), capacity from the machine
type and ``nvidia.com/gpu`` = the accelerator count of the instance template.
"""

from __future__ import annotations

from fractions import Fraction

from infra.core.config.gke import GkePoolSpec
from infra.core.gke.model import GkePoolPlan
from infra.core.gke.node_model import template_allocatable_mib
from infra.core.labels import GPU_PRESENT_LABEL
from infra.core.nodes import (
    Node,
    base_allocatable,
    node_taints,
    running_allocatable,
    shared_resources,
)
from infra.core.pools import GPU_RESOURCE, PoolHints

# The strings the autoscaler and GKE read, written out from upstream instead of imported from the
# code that emits them, so a wrong key there fails the proof (a unit test compares the two).
# GPULabel of cluster-autoscaler's GCE provider (cloudprovider/gce/gce_cloud_provider.go), which
# GKE puts on every GPU node (https://cloud.google.com/kubernetes-engine/docs/how-to/gpus).
GCE_GPU_LABEL = "cloud.google.com/gke-accelerator"
# "Each node in the pool has a Kubernetes node label, cloud.google.com/gke-nodepool, which has the
# node pool's name" (https://cloud.google.com/kubernetes-engine/docs/concepts/node-pools).
GKE_NODEPOOL = "cloud.google.com/gke-nodepool"
# GKE's own partitioning labels the node with the partition size
# (https://cloud.google.com/kubernetes-engine/docs/how-to/gpus-multi).
GKE_PARTITION_LABEL = "cloud.google.com/gke-gpu-partition-size"


def gke_cloud_labels(p: GkePoolPlan) -> dict[str, str]:
    """Labels GKE puts on every node of the pool (gke-nodepool, gke-accelerator, partition size;
    https://cloud.google.com/kubernetes-engine/docs/how-to/gpus)."""
    # An auto-created pool is named by GKE, not by the stack: no gke-nodepool value to promise.
    labels = (
        {GCE_GPU_LABEL: p.accelerator}
        if p.auto_create
        else {GKE_NODEPOOL: p.node_pool, GCE_GPU_LABEL: p.accelerator}
    )
    if p.partition_size:
        labels[GKE_PARTITION_LABEL] = p.partition_size
    return labels


def gke_node_memory_mib(h: PoolHints) -> int:
    """Allocatable memory (MiB) of the pool's nodes: the GCE template's (``infra.core.gke.
    node_model``); a running node has a little more, so this bounds both."""
    return template_allocatable_mib(h.memory_gib, h.node_image)


def gke_template_node(p: GkePoolPlan) -> Node:
    """The GCE cloud provider's template node for a GKE pool at zero nodes."""
    h = p.hints
    alloc = base_allocatable(h, gke_node_memory_mib(h))
    # GKE's sharing/partitioning is node pool config the GKE autoscaler reads; the operator's
    # sharing and MIG happen on the node, so the template has the instance's accelerators only.
    alloc[GPU_RESOURCE] = Fraction(p.schedulable_gpus if p.gke_sharing else p.accelerator_count)
    labels = {**p.labels, **gke_cloud_labels(p)}
    return Node(f"template/{p.name}", labels, node_taints(h), alloc)


def gke_running_node(p: GkePoolPlan, pool: GkePoolSpec, operator: bool) -> Node:
    """A running node of the pool (``pool``: its gpuPools entry; ``operator``: the GPU Operator
    runs). GKE time-sharing / MPS hands out ``nvidia.com/gpu`` as shared slots ("at most 1
    nvidia.com/gpu can be requested"); its MIG partitions alone are not shared."""
    h = p.hints
    labels = {**p.labels, **gke_cloud_labels(p)}
    if operator:
        labels[GPU_PRESENT_LABEL] = "true"  # NFD/GFD, or the pool label we set up front
    alloc = running_allocatable(
        h, pool, gke_node_memory_mib(h), p.schedulable_gpus if p.gke_sharing else None
    )
    if p.gke_sharing:
        shared = frozenset({GPU_RESOURCE}) if pool.gpu.sharing is not None else frozenset()
    else:
        shared = shared_resources(h, pool)
    return Node(p.name, labels, node_taints(h), alloc, shared)
