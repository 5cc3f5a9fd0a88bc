"""Per pool, what a GPU workload needs to land there: the facts every integration is built from."""

from __future__ import annotations

from typing import Any

from infra.core.config_base import PoolBase
from infra.core.pools import GPU_RESOURCE, PoolHints
from infra.core.sharing import resource_names, slots_per_node

# Labels GKE and EKS put on GPU nodes, for workloads' node selectors
# (https://cloud.google.com/kubernetes-engine/docs/how-to/gpus#multiple_gpus; EKS: set by
# infra.core.eks on every GPU node group, the key cluster-autoscaler reads as its GPU label).
GKE_ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"
EKS_ACCELERATOR_LABEL = "k8s.amazonaws.com/accelerator"


def scheduling_hints(
    platform: str, h: PoolHints, pool: PoolBase, runtime_class: str | None = None
) -> dict[str, Any]:
    """What a workload needs to land on pool ``h``: node selector, tolerations, resource name(s),
    slots per node and, when the nvidia runtime is not containerd's default, the runtime class."""
    selector = dict(h.node_selector)
    if platform == "gke":
        selector.setdefault(GKE_ACCELERATOR_LABEL, h.gpu_type)
    elif platform == "eks" and EKS_ACCELERATOR_LABEL in h.labels:
        selector.setdefault(EKS_ACCELERATOR_LABEL, h.labels[EKS_ACCELERATOR_LABEL])
    tolerations: list[dict[str, str]] = h.tolerations()
    if not any(t.key == GPU_RESOURCE for t in h.taints):
        # GKE taints GPU nodes nvidia.com/gpu=present when the cluster has CPU pools
        # (https://cloud.google.com/kubernetes-engine/docs/how-to/gpus#create).
        tolerations.append({"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"})
    sharing = pool.sharing
    mig = pool.mig
    names = resource_names(h, pool)
    return {
        "nodeSelector": selector,
        "tolerations": tolerations,
        "resourceName": names[0],
        "resourceNames": list(names),
        "gpuModel": h.gpu_model,
        "gpusPerNode": h.gpus_per_node,
        "timeSlicingReplicas": sharing.replicas if sharing is not None else None,
        "migStrategy": mig.strategy if mig is not None else None,
        "migConfig": mig.config if mig is not None else None,
        "slotsPerNode": slots_per_node(h, pool),
        "runtimeClassName": runtime_class,
        "spot": h.spot,
    }
