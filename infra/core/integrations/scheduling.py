"""Per pool, what a GPU workload needs to land there: the facts every integration is built from."""

from __future__ import annotations

from typing import Any

from infra.core.config_base import PoolBase
from infra.core.pools import GPU_RESOURCE, PoolHints
from infra.core.sharing import resource_name

# Labels GKE and EKS put on GPU nodes, for workloads' node selectors (gke.md §8, eks.md §2.4).
GKE_ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"
EKS_ACCELERATOR_LABEL = "k8s.amazonaws.com/accelerator"


def scheduling_hints(platform: str, h: PoolHints, pool: PoolBase) -> dict[str, Any]:
    """What a workload needs to land on pool ``h``: node selector, tolerations, resource name."""
    selector = dict(h.node_selector)
    if platform == "gke":
        selector.setdefault(GKE_ACCELERATOR_LABEL, h.gpu_type)
    elif platform == "eks" and EKS_ACCELERATOR_LABEL in h.labels:
        selector.setdefault(EKS_ACCELERATOR_LABEL, h.labels[EKS_ACCELERATOR_LABEL])
    tolerations: list[dict[str, str]] = h.tolerations()
    if not any(t.key == GPU_RESOURCE for t in h.taints):
        # GKE taints GPU nodes nvidia.com/gpu=present when the cluster has CPU pools (gke.md §8).
        tolerations.append({"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"})
    sharing = pool.sharing
    mig = pool.mig
    return {
        "nodeSelector": selector,
        "tolerations": tolerations,
        "resourceName": resource_name(h, pool),
        "gpuModel": h.gpu_model,
        "gpusPerNode": h.gpus_per_node,
        "timeSlicingReplicas": sharing.replicas if sharing is not None else None,
        "migStrategy": mig.strategy if mig is not None else None,
        "spot": h.spot,
    }
