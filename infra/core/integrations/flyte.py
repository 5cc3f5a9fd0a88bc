"""Flyte: the ``plugins.k8s`` block of flytepropeller's config, for flyte-core
(``configmap.k8s.plugins.k8s``) and flyte-binary (``configuration.inline.plugins.k8s``), and the
node labels Flyte's accelerator selection needs on each pool.

Keys and types: flyteorg/flyte flyteplugins/go/tasks/pluginmachinery/flytek8s/config/config.go
(``gpu-resource-name`` ResourceName, ``resource-tolerations`` map[ResourceName][]Toleration,
``gpu-device-node-label`` / ``gpu-partition-size-node-label`` string,
``gpu-unpartitioned-node-selector-requirement`` NodeSelectorRequirement); usage:
https://docs.flyte.org/en/latest/deployment/configuration/generated/... "Configuring access to
GPUs". An accelerator value must be a flytekit constant (flytekit.extras.accelerators, e.g.
``nvidia-tesla-t4``), which are GKE's accelerator names.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from infra.core.catalog.vendored import DATA_DIR, read_rows
from infra.core.config.base import PoolBase
from infra.core.eks import autoscaler
from infra.core.gke.model import ACCELERATOR_LABEL, COMPUTE_CLASS_LABEL
from infra.core.pools import GPU_RESOURCE, PoolHints
from infra.core.sharing import FLYTE_PARTITION_LABEL

# Node labels that carry the accelerator name per platform: GKE sets its own; gpu-infra puts
# k8s.amazonaws.com/accelerator on EKS GPU node groups (infra.core.eks.planner) and, on-prem, labels the
# listed nodes with its own key.
DEVICE_LABEL = {
    "gke": ACCELERATOR_LABEL,
    "eks": autoscaler.GPU_LABEL,
    "kubernetes": "gpu-infra/accelerator",
}
# GKE's own MIG partitioning labels nodes with this
# (https://cloud.google.com/kubernetes-engine/docs/how-to/gpus-multi).
GKE_PARTITION_LABEL = "cloud.google.com/gke-gpu-partition-size"


@functools.cache
def _accelerator_by_model() -> dict[str, str]:
    rows = read_rows("gcp_accelerator_models.csv", DATA_DIR)
    return {r["model"].lower(): r["accelerator"] for r in rows}


def accelerator_name(h: PoolHints) -> str:
    """The flytekit accelerator value for the pool's GPU (GKE's name for the model)."""
    if h.platform == "gke" or h.gpu_type.startswith("nvidia-"):
        return h.gpu_type
    return _accelerator_by_model().get(h.gpu_model.lower(), f"nvidia-{h.gpu_model.lower()}")


def node_labels(h: PoolHints, pool: PoolBase, platform: str) -> dict[str, str]:
    """The labels the pool's nodes need for Flyte's accelerator and partition selectors."""
    labels = {DEVICE_LABEL[platform]: accelerator_name(h)}
    gke_partition = getattr(getattr(pool, "gpu", None), "partition_size", None)
    if gke_partition:
        labels[GKE_PARTITION_LABEL] = str(gke_partition)
    elif FLYTE_PARTITION_LABEL in h.labels:
        labels[FLYTE_PARTITION_LABEL] = h.labels[FLYTE_PARTITION_LABEL]
    return labels


def _labelled_by(platform: str, pool: PoolBase) -> str:
    if platform == "gke":
        return "GKE (accelerator, partition size) and the node pool's labels"
    if platform == "eks":
        return "the node group's labels (gpu-infra)"
    if getattr(pool, "nodes", None):
        return "gpu-infra (node label patch)"
    return "you: label the pool's nodes (list them under nodes to have gpu-infra do it)"


def pod_template(name: str, hints: Mapping[str, Any], image: str) -> dict[str, Any]:
    """A runtime PodTemplate a task names with ``pod_template_name`` to target a ComputeClass:
    FlytePropeller looks it up in the execution's namespace, then in its own
    (flyteorg/flyte docs/deployment/configuration/general.rst "Runtime PodTemplates"). Flyte
    drops containers not named default/primary and overrides the image, so ``noop`` only
    satisfies the PodSpec schema."""
    spec: dict[str, Any] = {
        "nodeSelector": dict(hints["nodeSelector"]),
        "tolerations": [dict(t) for t in hints["tolerations"]],
        "containers": [{"name": "noop", "image": image}],
    }
    if hints.get("runtimeClassName"):
        spec["runtimeClassName"] = hints["runtimeClassName"]
    return {
        "apiVersion": "v1",
        "kind": "PodTemplate",
        "metadata": {"name": name, "namespace": "flyte"},
        "template": {"spec": spec},
    }


def flyte(
    platform: str,
    targets: Sequence[tuple[PoolHints, Mapping[str, Any], tuple[str, ...]]],
    specs: Mapping[str, tuple[int, PoolBase]],
    image: str,
) -> dict[str, Any]:
    """The ``flyte`` integration document (stack output), one entry per workload target (a pool,
    or a GKE ComputeClass: a PodTemplate with the class's selector, no accelerator)."""
    notes: list[str] = []
    names = {hints["resourceName"] for _, hints, _ in targets}
    resource = GPU_RESOURCE if GPU_RESOURCE in names or not names else sorted(names)[0]
    for t, hints, _ in targets:
        if hints["resourceName"] != resource:
            notes.append(
                f"{t.name}: advertises {hints['resourceName']}, but Flyte requests one GPU resource "
                f"name cluster-wide ({resource}); tasks cannot target this pool"
            )
    # Tolerations Flyte adds to every GPU task; a class's taint belongs to its PodTemplate only,
    # or every GPU task would also be admitted onto the class's nodes.
    tolerations: list[dict[str, str]] = []
    for _, hints, _ in targets:
        for tol in hints["tolerations"]:
            if tol not in tolerations and tol.get("key") != COMPUTE_CLASS_LABEL:
                tolerations.append(dict(tol))
    partition = _partition_label(platform, targets)
    plugin = _plugin_k8s(platform, resource, tolerations, partition)
    per_pool, templates = _per_target(platform, targets, specs, image, partition)
    return {
        "pluginsK8s": plugin,
        "helmValues": {
            "flyte-core": {"configmap": {"k8s": {"plugins": {"k8s": plugin}}}},
            "flyte-binary": {"configuration": {"inline": {"plugins": {"k8s": plugin}}}},
        },
        "pools": per_pool,
        "podTemplates": templates,
        "notes": notes,
    }


def _partition_label(
    platform: str, targets: Sequence[tuple[PoolHints, Mapping[str, Any], tuple[str, ...]]]
) -> str:
    operator_mig = any(FLYTE_PARTITION_LABEL in t.labels for t, _, _ in targets)
    return GKE_PARTITION_LABEL if platform == "gke" and not operator_mig else FLYTE_PARTITION_LABEL


def _plugin_k8s(
    platform: str, resource: str, tolerations: list[dict[str, str]], partition: str
) -> dict[str, Any]:
    unpartitioned = {"key": partition, "operator": "DoesNotExist"}
    return {
        "gpu-resource-name": resource,
        "resource-tolerations": {resource: tolerations},
        "gpu-device-node-label": DEVICE_LABEL[platform],
        "gpu-partition-size-node-label": partition,
        "gpu-unpartitioned-node-selector-requirement": dict(unpartitioned),
        # Newer Flyte reads the device class first and its NVIDIA_GPU default resource-name
        # (nvidia.com/gpu) overrides gpu-resource-name (flyteplugins flytek8s/config/config.go
        # AcceleratorDeviceClasses, pod_helper.go getAcceleratorConfig), so repeat it there.
        "accelerator-device-classes": {
            "NVIDIA_GPU": {
                "resource-name": resource,
                "device-node-label": DEVICE_LABEL[platform],
                "partition-size-node-label": partition,
                "unpartitioned-node-selector-requirement": dict(unpartitioned),
            }
        },
    }


def _per_target(
    platform: str,
    targets: Sequence[tuple[PoolHints, Mapping[str, Any], tuple[str, ...]]],
    specs: Mapping[str, tuple[int, PoolBase]],
    image: str,
    partition: str,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Per workload target: its accelerator, labels and (for a ComputeClass) PodTemplate."""
    per_pool: dict[str, Any] = {}
    templates: list[dict[str, Any]] = []
    for t, hints, members in targets:
        if hints.get("computeClass"):
            name = f"gpu-{t.name}"
            templates.append(pod_template(name, hints, image))
            per_pool[t.name] = {
                # Setting an accelerator would add its gke-accelerator selector and pin one GPU.
                "accelerator": None,
                "partitionSize": None,
                "nodeLabels": dict(hints["nodeSelector"]),
                "podTemplateName": name,
                "pools": list(members),
                "labelledBy": "GKE (ComputeClass label on every pool of the class)",
            }
            continue
        spec = specs[t.name]
        labels = node_labels(t, spec[1], platform)
        per_pool[t.name] = {
            "accelerator": labels[DEVICE_LABEL[platform]],
            "partitionSize": labels.get(partition),
            "nodeLabels": labels,
            "labelledBy": _labelled_by(platform, spec[1]),
        }
    return per_pool, templates
