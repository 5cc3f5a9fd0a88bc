"""JupyterHub (zero-to-jupyterhub) ``singleuser.profileList`` entries, one per GPU pool (seed 000)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from infra.core.pools import GPU_RESOURCE, PoolHints


def jupyterhub_profile(h: PoolHints, hints: Mapping[str, Any]) -> dict[str, Any]:
    """A JupyterHub ``singleuser.profileList`` entry for pool ``h`` (seed 000)."""
    whole_node = hints["resourceName"] == GPU_RESOURCE and not hints["timeSlicingReplicas"]
    whole_node = whole_node and not hints["migStrategy"]
    count = h.gpus_per_node if whole_node else 1
    if whole_node:
        what = f"a dedicated node with {count} GPU" + ("s" if count > 1 else "")
    elif hints["migStrategy"]:
        what = f"one MIG instance ({hints['resourceName']}) of a shared node"
    else:
        what = f"one time-sliced GPU ({hints['timeSlicingReplicas']} pods per GPU)"
    return {
        "display_name": f"NVIDIA {h.gpu_model}, ~{round(h.memory_gib)} GB, ~{h.vcpus} CPUs",
        "description": f"Start a container on {what} (pool {h.name})",
        "slug": h.name,
        "kubespawner_override": {
            # Without it the runtime injects no CUDA libraries or nvidia-smi (seed 000).
            "environment": {"NVIDIA_DRIVER_CAPABILITIES": "compute,utility"},
            "node_selector": dict(hints["nodeSelector"]),
            "tolerations": [dict(t) for t in hints["tolerations"]],
            "extra_resource_limits": {hints["resourceName"]: str(count)},
        },
    }
