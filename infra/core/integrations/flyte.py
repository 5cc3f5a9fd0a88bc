"""Flyte: the ``plugins.k8s`` block of flytepropeller's config, for flyte-core
(``configmap.k8s.plugins.k8s``) and flyte-binary (``configuration.inline.plugins.k8s``), and the
node labels Flyte's accelerator selection needs on each pool.

Keys and types: flyteorg/flyte flyteplugins/go/tasks/pluginmachinery/flytek8s/config/config.go
(``gpu-resource-name`` ResourceName, ``resource-tolerations`` map[ResourceName][]Toleration,
``gpu-device-node-label`` / ``gpu-partition-size-node-label`` string,
``gpu-unpartitioned-node-selector-requirement`` NodeSelectorRequirement); usage:
https://docs.flyte.org/en/latest/deployment/configuration/generated/... "Configuring access to
GPUs" (``resource-tolerations`` written as its list of one-key maps). A task's accelerator is
matched against the device label's value on the node, so each pool's accelerator is the value its
nodes carry; a value that is no flytekit constant (flytekit.extras.accelerators, e.g.
``nvidia-tesla-t4``) gets a note naming ``GPUAccelerator(<value>)``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from infra.core.catalog.vendored import DATA_DIR, read_rows
from infra.core.config.base import PoolBase
from infra.core.labels import EKS_ACCELERATOR_LABEL, GKE_ACCELERATOR_LABEL, GKE_COMPUTE_CLASS_LABEL
from infra.core.pools import GPU_RESOURCE, PoolHints
from infra.core.sharing import FLYTE_PARTITION_LABEL

# Node labels that carry the accelerator name per platform: GKE sets its own; gpu-infra puts
# k8s.amazonaws.com/accelerator on EKS GPU node groups (infra.core.eks.groups) and, on-prem, labels the
# listed nodes with its own key.
DEVICE_LABEL = {
    "gke": GKE_ACCELERATOR_LABEL,
    "eks": EKS_ACCELERATOR_LABEL,
    "kubernetes": "gpu-infra/accelerator",
}
# flytekit's NVIDIA accelerator constants (flyteorg/flytekit flytekit/extras/accelerators.py:
# T4, L4, A10G, V100, A100, A100_80GB, H100, H200, ...): the device values tasks select.
FLYTEKIT_ACCELERATORS = frozenset(
    {
        "nvidia-tesla-k80",
        "nvidia-tesla-m60",
        "nvidia-tesla-p4",
        "nvidia-tesla-p100",
        "nvidia-tesla-t4",
        "nvidia-tesla-v100",
        "nvidia-tesla-a100",
        "nvidia-a100-80gb",
        "nvidia-a10g",
        "nvidia-l4",
        "nvidia-l4-vws",
        "nvidia-h100",
        "nvidia-h200",
    }
)
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


def _labelled_by(h: PoolHints, labelled: bool) -> str:
    if not labelled:
        return "nobody: the pool's nodes carry no accelerator label"
    if h.platform == "gke":
        return "GKE (accelerator, partition size) and the node pool's labels"
    if h.karpenter:
        return "the Karpenter NodePool's template labels (gpu-infra)"
    if h.platform == "eks":
        return "the node group's labels (gpu-infra)"
    return "gpu-infra (node label patch) or the stack's declared labels"


def pod_template(
    name: str, hints: Mapping[str, Any], image: str, namespace: str = "flyte"
) -> dict[str, Any]:
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
        "metadata": {"name": name, "namespace": namespace},
        "template": {"spec": spec},
    }


def flyte(
    platform: str,
    targets: Sequence[tuple[PoolHints, Mapping[str, Any], tuple[str, ...]]],
    specs: Mapping[str, tuple[int, PoolBase]],
    image: str,
    namespace: str = "flyte",
    patched: Mapping[str, Mapping[str, str]] | None = None,
) -> dict[str, Any]:
    """The ``flyte`` integration document (stack output), one entry per workload target (a pool,
    or a GKE ComputeClass: a PodTemplate with the class's selector, no accelerator).

    ``patched``: per pool, the labels gpu-infra patches onto its listed nodes (on-prem). A pool's
    accelerator and partition are the values its nodes really carry, so a task selecting them
    lands there; a pool whose nodes carry no accelerator label gets none, with a note.
    """
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
            if tol not in tolerations and tol.get("key") != GKE_COMPUTE_CLASS_LABEL:
                tolerations.append(dict(tol))
    partition = _partition_label(platform, targets)
    plugin = _plugin_k8s(platform, resource, tolerations, partition)
    carried = {
        t.name: carried_labels(t, specs[t.name][1], platform, (patched or {}).get(t.name, {}))
        for t, hints, _ in targets
        if not hints.get("computeClass")
    }
    per_pool, templates = _per_target(platform, targets, carried, image, partition, namespace)
    # A task requests `resource`; selecting the accelerator of a pool that advertises another
    # name would leave it Pending (the note above says so), so such a pool offers none.
    other = {t.name for t, h, _ in targets if h["resourceName"] != resource}
    for name in other - {n for n, e in per_pool.items() if e.get("podTemplateName")}:
        per_pool[name] = {**per_pool[name], "accelerator": None, "partitionSize": None}
        per_pool[name]["nodeLabels"] = {}
    notes += _accelerator_notes(platform, {n: e for n, e in per_pool.items() if n not in other})
    if targets and all(h.get("computeClass") for _, h, _ in targets):
        notes.append(
            "every pool belongs to a ComputeClass, whose taint only its PodTemplate tolerates: "
            "GPU tasks must name pod_template_name (see podTemplates)"
        )
    return {
        "pluginsK8s": plugin,
        "flyte2PluginsK8s": _flyte2_plugin_k8s(plugin),
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
        # Flyte's documented list-of-maps form ("Configuring access to GPUs": `resource-tolerations:
        # - nvidia.com/gpu: [...]`), which every Flyte 1 release's config loader reads.
        "resource-tolerations": [{resource: tolerations}],
        "gpu-device-node-label": DEVICE_LABEL[platform],
        "gpu-partition-size-node-label": partition,
        "gpu-unpartitioned-node-selector-requirement": dict(unpartitioned),
    }


def _flyte2_plugin_k8s(plugin: Mapping[str, Any]) -> dict[str, Any]:
    """The Flyte 2 variant: the same section plus ``accelerator-device-classes``, which only the
    Flyte 2 code line reads (flyteorg/flyte, module github.com/flyteorg/flyte/v2: flytek8s
    config/config.go ``AcceleratorDeviceClasses``, added with the device classes of
    flyteorg/flyte#6654); there its NVIDIA_GPU default ``resource-name`` (nvidia.com/gpu)
    overrides ``gpu-resource-name``, so a renamed resource is repeated there. Kept out of the
    Flyte 1 Helm values, whose config loader knows no such key."""
    return {
        **plugin,
        "accelerator-device-classes": {
            "NVIDIA_GPU": {
                "resource-name": plugin["gpu-resource-name"],
                "device-node-label": plugin["gpu-device-node-label"],
                "partition-size-node-label": plugin["gpu-partition-size-node-label"],
                "unpartitioned-node-selector-requirement": dict(
                    plugin["gpu-unpartitioned-node-selector-requirement"]
                ),
            }
        },
    }


def _per_target(
    platform: str,
    targets: Sequence[tuple[PoolHints, Mapping[str, Any], tuple[str, ...]]],
    carried: Mapping[str, Mapping[str, str]],
    image: str,
    partition: str,
    namespace: str,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Per workload target: its accelerator, labels and (for a ComputeClass) PodTemplate."""
    per_pool: dict[str, Any] = {}
    templates: list[dict[str, Any]] = []
    for t, hints, members in targets:
        if hints.get("computeClass"):
            name = f"gpu-{t.name}"
            templates.append(pod_template(name, hints, image, namespace))
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
        have = carried[t.name]
        labels = {k: have[k] for k in (DEVICE_LABEL[platform], partition) if k in have}
        per_pool[t.name] = {
            "accelerator": labels.get(DEVICE_LABEL[platform]),
            "partitionSize": labels.get(partition),
            "nodeLabels": labels,
            "labelledBy": _labelled_by(t, bool(labels)),
        }
    return per_pool, templates


def carried_labels(
    h: PoolHints, pool: PoolBase, platform: str, patched: Mapping[str, str]
) -> dict[str, str]:
    """The labels the pool's nodes really carry: GKE's own (accelerator, partition size) and
    the pool's; EKS: the node group's; on-prem: the declared ones, the selector and gpu-infra's
    patch of listed nodes."""
    labels = {**h.labels}
    if platform == "gke":
        labels[GKE_ACCELERATOR_LABEL] = h.gpu_type
        gke_partition = getattr(getattr(pool, "gpu", None), "partition_size", None)
        if gke_partition:
            labels[GKE_PARTITION_LABEL] = str(gke_partition)
    elif platform == "kubernetes":
        labels.update(h.node_selector)
        labels.update(patched)
    return labels


def _accelerator_notes(platform: str, per_pool: Mapping[str, Any]) -> list[str]:
    notes: list[str] = []
    for name, entry in per_pool.items():
        if entry.get("podTemplateName"):
            continue
        acc = entry["accelerator"]
        if acc is None:
            how = (
                "list its nodes under nodes so gpu-infra labels them"
                if platform == "kubernetes"
                else "its nodes drop the label (MIG mixed or renamed time-slicing: no whole GPU)"
            )
            notes.append(
                f"{name}: its nodes carry no {DEVICE_LABEL[platform]} label, so tasks cannot "
                f"select it with accelerator= ({how}); tasks without accelerator still land there"
            )
        elif acc not in FLYTEKIT_ACCELERATORS:
            notes.append(
                f"{name}: nodes are labelled {DEVICE_LABEL[platform]}={acc}, which is no flytekit "
                f"constant; use accelerator=GPUAccelerator({acc!r})"
            )
    return notes
