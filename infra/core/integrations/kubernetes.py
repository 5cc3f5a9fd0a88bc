"""Plain Kubernetes: a ready Pod and Job manifest per pool that requests one GPU
slot with the pool's selector, tolerations and (where the runtime needs it) runtime class."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from infra.core.labels import POOL_LABEL

Manifest = dict[str, Any]
# CUDA base image: nvidia-smi only (the smoke test's image; pinned in infra.core.config.operator).
SAMPLE_COMMAND = ["nvidia-smi"]


def pod_spec(hints: Mapping[str, Any], image: str) -> dict[str, Any]:
    """The pod spec of a workload needing one GPU slot of the pool."""
    resource = hints["resourceName"]
    spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "nodeSelector": dict(hints["nodeSelector"]),
        "tolerations": [dict(t) for t in hints["tolerations"]],
        "containers": [
            {
                "name": "cuda",
                "image": image,
                "command": list(SAMPLE_COMMAND),
                "env": [{"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "compute,utility"}],
                # Extended resources: limits are required; requests, if given, must equal them
                # (https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/).
                "resources": {"limits": {resource: "1"}},
            }
        ],
    }
    if hints.get("runtimeClassName"):
        spec["runtimeClassName"] = hints["runtimeClassName"]
    return spec


def manifests(pool: str, hints: Mapping[str, Any], image: str) -> dict[str, Manifest]:
    """``{"pod": Pod, "job": Job}`` for ``pool``."""
    labels = {"app.kubernetes.io/name": "gpu-workload", POOL_LABEL: pool}
    spec = pod_spec(hints, image)
    return {
        "pod": {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"gpu-{pool}", "labels": labels},
            "spec": spec,
        },
        "job": {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": f"gpu-{pool}", "labels": labels},
            "spec": {"backoffLimit": 0, "template": {"metadata": {"labels": labels}, "spec": spec}},
        },
    }
