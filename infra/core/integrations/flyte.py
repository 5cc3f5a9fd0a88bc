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

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from infra.core.catalog.vendored import Catalog
from infra.core.config.base import PoolBase
from infra.core.labels import STACK_LABEL
from infra.core.platform import Features, Platform
from infra.core.pools import GPU_RESOURCE, PoolHints
from infra.core.sharing import FLYTE_PARTITION_LABEL

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


def accelerator_name(h: PoolHints, features: Features, catalog: Catalog) -> str:
    """The flytekit accelerator value for the pool's GPU (GKE's name for the model)."""
    if features.gpu_type_is_accelerator or h.gpu_type.startswith("nvidia-"):
        return h.gpu_type
    known = catalog.gcp_accelerator_of(h.gpu_model)
    return known if known is not None else f"nvidia-{h.gpu_model.lower()}"


def _labelled_by(features: Features, labelled: bool) -> str:
    if not labelled:
        return "nobody: the pool's nodes carry no accelerator label"
    return features.labelled_by


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
    platform: Platform,
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
    own = {t.group.taint.key for t, _, _ in targets if t.group is not None and t.group.taint}
    tolerations: list[dict[str, str]] = []
    for _, hints, _ in targets:
        for tol in hints["tolerations"]:
            if tol not in tolerations and tol.get("key") not in own:
                tolerations.append(dict(tol))
    features = platform.features
    partition = _partition_label(features, targets)
    plugin = _plugin_k8s(features, resource, tolerations, partition)
    carried = {
        t.name: platform.carried_labels(t, specs[t.name][1], (patched or {}).get(t.name, {}))
        for t, hints, _ in targets
        if not hints.get("computeClass")
    }
    per_pool, templates = _per_target(features, targets, carried, image, partition, namespace)
    # A task requests `resource`; selecting the accelerator of a pool that advertises another
    # name would leave it Pending (the note above says so), so such a pool offers none.
    other = {t.name for t, h, _ in targets if h["resourceName"] != resource}
    for name in other - {n for n, e in per_pool.items() if e.get("podTemplateName")}:
        per_pool[name] = {**per_pool[name], "accelerator": None, "partitionSize": None}
        per_pool[name]["nodeLabels"] = {}
    notes += _accelerator_notes(features, {n: e for n, e in per_pool.items() if n not in other})
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
    features: Features, targets: Sequence[tuple[PoolHints, Mapping[str, Any], tuple[str, ...]]]
) -> str:
    """The platform's own partition label (GKE's), unless a pool partitions by operator MIG."""
    operator_mig = any(FLYTE_PARTITION_LABEL in t.labels for t, _, _ in targets)
    native = features.partition_label
    return native if native is not None and not operator_mig else FLYTE_PARTITION_LABEL


def _plugin_k8s(
    features: Features, resource: str, tolerations: list[dict[str, str]], partition: str
) -> dict[str, Any]:
    unpartitioned = {"key": partition, "operator": "DoesNotExist"}
    return {
        "gpu-resource-name": resource,
        # Flyte's documented list-of-maps form ("Configuring access to GPUs": `resource-tolerations:
        # - nvidia.com/gpu: [...]`), which every Flyte 1 release's config loader reads.
        "resource-tolerations": [{resource: tolerations}],
        "gpu-device-node-label": features.accelerator_label,
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
    features: Features,
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
        device = features.accelerator_label
        labels = {k: have[k] for k in (device, partition) if k in have}
        per_pool[t.name] = {
            "accelerator": labels.get(device),
            "partitionSize": labels.get(partition),
            "nodeLabels": labels,
            "labelledBy": _labelled_by(features, bool(labels)),
        }
        if stack := hints.get("nodeSelector", {}).get(STACK_LABEL):
            # A shared cluster: accelerator= alone also matches another stack's nodes with the same
            # GPU, so the pool's own selector (pool and stack labels) rides in a PodTemplate, named
            # per stack as two stacks' pools may share a name.
            name = f"gpu-{t.name}-{hashlib.sha256(stack.encode()).hexdigest()[:6]}"
            templates.append(pod_template(name, hints, image, namespace))
            per_pool[t.name].update(podTemplateName=name, pools=list(members))
    return per_pool, templates


def _accelerator_notes(features: Features, per_pool: Mapping[str, Any]) -> list[str]:
    notes: list[str] = []
    for name, entry in per_pool.items():
        if entry.get("podTemplateName") and entry.get("accelerator"):
            notes.append(
                f"{name}: the cluster is shared, so accelerator= alone also matches other stacks' "
                f"nodes with this GPU; give tasks pod_template_name={entry['podTemplateName']!r} "
                "to stay on this stack's pool"
            )
        elif entry.get("podTemplateName"):
            continue
        acc = entry["accelerator"]
        if acc is None:
            notes.append(
                f"{name}: its nodes carry no {features.accelerator_label} label, so tasks cannot "
                f"select it with accelerator= ({features.unlabelled_fix}); tasks without "
                "accelerator still land there"
            )
        elif acc not in FLYTEKIT_ACCELERATORS:
            notes.append(
                f"{name}: nodes are labelled {features.accelerator_label}={acc}, which is no "
                f"flytekit constant; use accelerator=GPUAccelerator({acc!r})"
            )
    return notes
