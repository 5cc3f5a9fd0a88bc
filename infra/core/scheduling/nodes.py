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
from infra.core.eks.autoscaler import TEMPLATE_PREFIX
from infra.core.integrations.jupyterhub import allocatable_mib
from infra.core.labels import GKE_ACCELERATOR_LABEL, GKE_NODEPOOL_LABEL, GPU_PRESENT_LABEL
from infra.core.pools import GPU_RESOURCE, PoolHints
from infra.core.scheduling.predicates import Node, quantity
from infra.core.sharing import advertised_resources, pool_mig_gpu

if TYPE_CHECKING:
    from infra.core.eks.planner import EksGroupPlan
    from infra.core.gke.model import GkePoolPlan

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


def gke_cloud_labels(p: GkePoolPlan) -> dict[str, str]:
    """Labels GKE puts on every node of the pool (gke-nodepool, gke-accelerator, partition size;
    https://cloud.google.com/kubernetes-engine/docs/how-to/gpus)."""
    labels = {GKE_NODEPOOL_LABEL: p.name, GKE_ACCELERATOR_LABEL: p.accelerator}
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
    return Node(p.name, labels, _taints(h), running_allocatable(h, pool, p.schedulable_gpus))


def eks_template_node(g: EksGroupPlan) -> Node:
    """The AWS cloud provider's template node for a node group at zero, from its ASG tags."""
    h = g.hints
    alloc = _base(h)
    alloc[GPU_RESOURCE] = Fraction(h.gpus_per_node)
    labels: dict[str, str] = {}
    taints: list[dict[str, str]] = []
    for key, value in g.asg_tags.items():
        if not key.startswith(TEMPLATE_PREFIX + "/"):
            continue
        kind, _, name = key.removeprefix(TEMPLATE_PREFIX + "/").partition("/")
        if kind == "label":
            labels[name] = value
        elif kind == "taint":
            v, _, effect = value.rpartition(":")
            taints.append({"key": name, "value": v, "effect": effect})
        elif kind == "resources":
            alloc[name] = quantity(value)
    return Node(f"template/{h.name}", labels, tuple(taints), alloc)


def eks_running_node(g: EksGroupPlan, pool: PoolBase) -> Node:
    h = g.hints
    return Node(h.name, dict(g.labels), _taints(h), running_allocatable(h, pool, None))


def onprem_running_node(h: PoolHints, pool: PoolBase, patched: Mapping[str, str]) -> Node:
    """An on-prem node: the labels the stack declares it carries, the selector it is chosen by,
    and what gpu-infra patches onto listed nodes."""
    labels = {**h.labels, **h.node_selector, **patched}
    return Node(h.name, labels, _taints(h), running_allocatable(h, pool, None))


def _taints(h: PoolHints) -> tuple[dict[str, Any], ...]:
    return tuple({"key": t.key, "value": t.value, "effect": t.effect} for t in h.taints)
