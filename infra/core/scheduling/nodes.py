"""The nodes a pod must fit, built from a plan: the cluster-autoscaler's template node at zero
nodes, and the node as it runs.

Template nodes follow how the autoscaler builds them:
- GCE/GKE (kubernetes/autoscaler cluster-autoscaler/cloudprovider/gce/templates.go
  BuildNodeFromTemplate): labels and taints of the node pool (kube-env NODE_LABELS / NODE_TAINTS,
  which carry GKE's own cloud.google.com/gke-nodepool and gke-accelerator), capacity from the
  machine type and ``nvidia.com/gpu`` = the accelerator count of the instance template;
- AWS (cloudprovider/aws/aws_manager.go buildNodeFromTemplate): capacity from the instance type
  (``nvidia.com/gpu`` = its GPUs), then the ASG's ``k8s.io/cluster-autoscaler/node-template/``
  label, taint and resources tags (extractLabelsFromAsg, extractTaintsFromAsg,
  extractAllocatableResourcesFromAsg; a resources tag overrides the instance type's value).
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from infra.core.config.base import PoolBase
from infra.core.config.gke import GkePoolSpec
from infra.core.integrations.jupyterhub import allocatable_mib
from infra.core.labels import GPU_PRESENT_LABEL
from infra.core.pools import GPU_RESOURCE, PoolHints
from infra.core.scheduling.predicates import Node, quantity
from infra.core.sharing import advertised_resources, pool_mig_gpu

if TYPE_CHECKING:
    from infra.core.eks.planner import EksGroupPlan
    from infra.core.gke.model import GkePoolPlan

# The strings the autoscaler and GKE read, written out from upstream instead of imported from the
# code that emits them, so a wrong key there fails the proof (a unit test compares the two).
# ASG tags of a scale-from-zero template (kubernetes/autoscaler cluster-autoscaler/cloudprovider/
# aws/aws_manager.go extractLabelsFromAsg, extractTaintsFromAsg, extractAllocatableResourcesFromAsg;
# cloudprovider/aws/README.md "Auto-Discovery Setup").
CA_TEMPLATE_LABEL = "k8s.io/cluster-autoscaler/node-template/label/"
CA_TEMPLATE_TAINT = "k8s.io/cluster-autoscaler/node-template/taint/"
CA_TEMPLATE_RESOURCES = "k8s.io/cluster-autoscaler/node-template/resources/"
# GPULabel of cluster-autoscaler's GCE provider (cloudprovider/gce/gce_cloud_provider.go), which
# GKE puts on every GPU node (https://cloud.google.com/kubernetes-engine/docs/how-to/gpus).
GCE_GPU_LABEL = "cloud.google.com/gke-accelerator"
# GPULabel of its AWS provider (cloudprovider/aws/aws_cloud_provider.go).
AWS_GPU_LABEL = "k8s.amazonaws.com/accelerator"
# "Each node in the pool has a Kubernetes node label, cloud.google.com/gke-nodepool, which has the
# node pool's name" (https://cloud.google.com/kubernetes-engine/docs/concepts/node-pools).
GKE_NODEPOOL = "cloud.google.com/gke-nodepool"
# The label each cloud's autoscaler tells GPU nodes apart by.
AUTOSCALER_GPU_LABELS = {"gke": GCE_GPU_LABEL, "eks": AWS_GPU_LABEL}

# GKE's own partitioning labels the node with the partition size
# (https://cloud.google.com/kubernetes-engine/docs/how-to/gpus-multi).
GKE_PARTITION_LABEL = "cloud.google.com/gke-gpu-partition-size"


def _base(h: PoolHints) -> dict[str, Fraction]:
    # CPU: the machine's vCPUs, an upper bound of allocatable (no workload here requests CPU);
    # memory: allocatable by GKE's reservation formula, what JupyterHub's guarantee is cut from.
    return {
        "cpu": Fraction(h.vcpus),
        "memory": Fraction(allocatable_mib(h.memory_gib)) * 2**20,
    }


def running_allocatable(
    h: PoolHints, pool: PoolBase, gke_schedulable: int | None
) -> dict[str, Fraction]:
    """What a running node of the pool advertises: its CPU and memory, and the GPU resources of
    the device plugin's sharing / MIG config (``gke_schedulable``: GKE's own sharing, what
    GKE's device plugin advertises)."""
    out = _base(h)
    if gke_schedulable is not None and h.gke_sharing:
        out[GPU_RESOURCE] = Fraction(gke_schedulable)
        return out
    for name, n in advertised_resources(
        h.gpus_per_node, pool.sharing, pool.mig, pool_mig_gpu(h)
    ).items():
        out[name] = Fraction(n)
    return out


def shared_resources(h: PoolHints, pool: PoolBase) -> frozenset[str]:
    """The resources a running node hands out as shared slots, at most 1 per container: GKE
    time-sharing / MPS (``nvidia.com/gpu``; GKE's MIG partitions alone are not), or every resource
    operator time-slicing replicates (renamed or not, MIG ones included; the operator's config sets
    failRequestsGreaterThanOne, infra.core.sharing.time_slicing_config)."""
    if isinstance(pool, GkePoolSpec) and h.gke_sharing:
        return frozenset({GPU_RESOURCE}) if pool.gpu.sharing is not None else frozenset()
    if pool.sharing is None:
        return frozenset()
    advertised = advertised_resources(h.gpus_per_node, pool.sharing, pool.mig, pool_mig_gpu(h))
    return frozenset(r for r, n in advertised.items() if n)


def gke_cloud_labels(p: GkePoolPlan) -> dict[str, str]:
    """Labels GKE puts on every node of the pool (gke-nodepool, gke-accelerator, partition size;
    https://cloud.google.com/kubernetes-engine/docs/how-to/gpus)."""
    # An auto-created pool is named by GKE, not by the stack: no gke-nodepool value to promise.
    labels = (
        {GCE_GPU_LABEL: p.accelerator}
        if p.auto_create
        else {GKE_NODEPOOL: p.name, GCE_GPU_LABEL: p.accelerator}
    )
    if p.partition_size:
        labels[GKE_PARTITION_LABEL] = p.partition_size
    return labels


def gke_template_node(p: GkePoolPlan) -> Node:
    """The GCE cloud provider's template node for a GKE pool at zero nodes."""
    h = p.hints
    alloc = _base(h)
    # GKE's sharing/partitioning is node pool config the GKE autoscaler reads; the operator's
    # sharing and MIG happen on the node, so the template has the instance's accelerators only.
    alloc[GPU_RESOURCE] = Fraction(p.schedulable_gpus if h.gke_sharing else p.accelerator_count)
    labels = {**p.labels, **gke_cloud_labels(p)}
    return Node(f"template/{p.name}", labels, _taints(h), alloc)


def gke_running_node(p: GkePoolPlan, pool: PoolBase, operator: bool) -> Node:
    h = p.hints
    labels = {**p.labels, **gke_cloud_labels(p)}
    if operator:
        labels[GPU_PRESENT_LABEL] = "true"  # NFD/GFD, or the pool label we set up front
    alloc = running_allocatable(h, pool, p.schedulable_gpus)
    return Node(p.name, labels, _taints(h), alloc, shared_resources(h, pool))


def eks_template_node(g: EksGroupPlan) -> Node:
    """The AWS cloud provider's template node for a node group at zero, from its ASG tags."""
    h = g.hints
    alloc = _base(h)
    alloc[GPU_RESOURCE] = Fraction(h.gpus_per_node)
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


def eks_running_node(g: EksGroupPlan, pool: PoolBase) -> Node:
    h = g.hints
    alloc = running_allocatable(h, pool, None)
    # The least the kubelet leaves allocatable on the group's nodefs (disk, filesystem, reserve).
    alloc["ephemeral-storage"] = Fraction(g.allocatable_ephemeral_gib) * 2**30
    return Node(h.name, dict(g.labels), _taints(h), alloc, shared_resources(h, pool))


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
        alloc = _base(g.hints)
        alloc["memory"] = Fraction(karpenter_memory_mib(memory_gib.get(t, g.hints.memory_gib)))
        alloc["memory"] *= 2**20
        alloc[GPU_RESOURCE] = Fraction(g.hints.gpus_per_node)
        node_labels = {**labels, "node.kubernetes.io/instance-type": t}
        out.append(
            Node(f"karpenter/{g.name}/{t}", node_labels, tuple(spec["spec"]["taints"]), alloc)
        )
    return out


def onprem_running_node(h: PoolHints, pool: PoolBase, patched: Mapping[str, str]) -> Node:
    """An on-prem node: the labels the stack declares it carries, the selector it is chosen by,
    and what gpu-infra patches onto listed nodes."""
    labels = {**h.labels, **h.node_selector, **patched}
    alloc = running_allocatable(h, pool, None)
    return Node(h.name, labels, _taints(h), alloc, shared_resources(h, pool))


def _taints(h: PoolHints) -> tuple[dict[str, Any], ...]:
    return tuple({"key": t.key, "value": t.value, "effect": t.effect} for t in h.taints)
