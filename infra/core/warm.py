"""Warm GPUs: low-priority placeholder pods that keep ``gpuPools[].warm`` nodes of a pool ready.

The cluster-autoscaler's over-provisioning recipe (kubernetes/autoscaler cluster-autoscaler/FAQ.md
"How can I configure overprovisioning with Cluster Autoscaler?"), as z2jh's user placeholders and
GKE's "Provision extra compute capacity for rapid Pod scaling" apply it: a Deployment of pause pods
with a negative PriorityClass holds capacity; a real pod preempts one, which goes Pending and makes
the autoscaler add a node for it. Autoscaler-agnostic: the pods select the pool by its node labels
and tolerate its taints, so the cluster-autoscaler, GKE's and Karpenter all see one Pending pod
that fits one node of the pool.

How many nodes it holds: placeholders land on any free node of the pool, the ``minNodes`` ones
included, so an idle pool runs max(minNodes, warm) nodes and a busy one keeps ``warm`` free nodes
beside the ones users hold (up to maxNodes). ``idle_nodes`` is that rule; cost and quota use it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from infra.core.catalog.pins import pin
from infra.core.config.stack import StackConfig
from infra.core.integrations.scheduling import gpu_request, workload_targets
from infra.core.labels import MANAGED_BY, POOL_LABEL, SKIP_AWAIT
from infra.core.platform import EXPENDABLE_CUTOFF_DEFAULT, Platform
from infra.core.pools import PoolHints, warm_of
from infra.core.rules.limits import limit

Manifest = dict[str, Any]

# A namespace of its own: not kube-system, whose non-DaemonSet pods block scale-down
# (cluster-autoscaler/FAQ.md "What types of pods can prevent CA from removing a node?"), and not a
# team namespace, whose GPU ResourceQuota the placeholders would use up. Both names end in the
# stack's name (``warm_names``): they are cluster-wide, and a second stack on the cluster must
# neither collide with them nor delete them on destroy.
WARM_NAMESPACE = "gpu-warm"
PRIORITY_CLASS = "gpu-infra-warm"
_HASH = 8
# The cutoff's default (EXPENDABLE_CUTOFF_DEFAULT) is the lowest priority that still scales up,
# the value of GKE's guide (https://cloud.google.com/kubernetes-engine/docs/how-to/capacity-provisioning)
# and of z2jh's userPlaceholderPriority (jupyterhub/zero-to-jupyterhub-k8s jupyterhub/values.yaml).
WARM_PRIORITY = EXPENDABLE_CUTOFF_DEFAULT
# z2jh's scheduling.userPlaceholder.image: pins.csv row warm-placeholder of the plan's catalog.
PAUSE_PIN = "warm-placeholder"
# The pause binary only sleeps (kubernetes/kubernetes build/pause/linux/pause.c); what a placeholder
# holds is the GPU. Small CPU and memory leave the node's rest to the users who preempt it.
CPU_REQUEST = "10m"
MEMORY_REQUEST = "16Mi"
APP_LABEL = {"app.kubernetes.io/name": "gpu-warm"}
# One placeholder per node (https://kubernetes.io/docs/concepts/scheduling-eviction/
# assign-pod-node/#inter-pod-affinity-and-anti-affinity): a node is warm or it is not.
HOSTNAME_TOPOLOGY = "kubernetes.io/hostname"
# Pod Security "restricted" (https://kubernetes.io/docs/concepts/security/pod-security-standards/):
# the pause container needs nothing more.
RESTRICTED_PSA = {
    f"pod-security.kubernetes.io/{mode}": "restricted" for mode in ("enforce", "audit", "warn")
}


@dataclass(frozen=True, slots=True, kw_only=True)
class WarmTarget:
    """The placeholders of one ``gpuPools`` entry.

    Attributes:
        pool: the ``gpuPools`` entry (a GKE ComputeClass is named after it).
        members: the pools a placeholder may land on (the pool, or the class's pools).
        replicas: ``warm``.
        resource: the extended resource held; ``count``: how many per placeholder.
        deployment: the Deployment manifest.
    """

    pool: str
    members: tuple[str, ...]
    replicas: int
    resource: str
    count: int
    deployment: Manifest


@dataclass(frozen=True, slots=True, kw_only=True)
class WarmPlan:
    """The namespace, the PriorityClass and one Deployment per warm pool."""

    namespace: Manifest
    priority_class: Manifest
    targets: tuple[WarmTarget, ...]
    notes: tuple[str, ...] = ()


def warm_names(stack: str) -> tuple[str, str]:
    """``(namespace, PriorityClass)`` of a stack's placeholders: ``gpu-warm-<stack>`` and
    ``gpu-infra-warm-<stack>``, the stack's name lowercased with other characters as ``-`` (a
    namespace is a DNS-1123 label of at most 63 characters, a PriorityClass a DNS-1123 subdomain
    of at most 253; k8s.io/apimachinery pkg/util/validation/validation.go). A name that had to
    change, or to be cut, ends in 8 hex characters of the stack name's SHA-256, so two stacks
    never share one."""
    slug = re.sub(r"[^a-z0-9]+", "-", stack.lower()).strip("-")
    digest = hashlib.sha256(stack.encode()).hexdigest()[:_HASH]
    if slug != stack:
        slug = f"{slug}-{digest}" if slug else digest

    def fitted(prefix: str, most: int) -> str:
        name = f"{prefix}-{slug}"
        if len(name) <= most:
            return name
        return f"{name[: most - _HASH - 1].rstrip('-')}-{digest}"

    return (
        fitted(WARM_NAMESPACE, limit("k8s.dns1123_label")),
        fitted(PRIORITY_CLASS, limit("k8s.dns1123_subdomain")),
    )


def plan_warm(
    config: StackConfig,
    pools: Sequence[PoolHints],
    platform: Platform,
    scheduling: Mapping[str, Mapping[str, Any]],
) -> WarmPlan | None:
    """Placeholders for every pool with ``warm`` > 0; ``None`` when no pool asks for any."""
    warm = warm_of(config)
    names = warm_names(config.stack)
    image = pin(PAUSE_PIN, platform.catalog.data_dir).image
    targets: list[WarmTarget] = []
    for h, hints, members in workload_targets(pools, scheduling):
        n = warm.get(h.name, 0)
        if n == 0:
            continue
        # One slot still keeps the node: one placeholder per node (anti-affinity), users take
        # its other slots beside it.
        resource, count = str(hints["resourceName"]), gpu_request(hints)
        targets.append(
            WarmTarget(
                pool=h.name,
                members=members,
                replicas=n,
                resource=resource,
                count=count,
                deployment=deployment(h.name, n, hints, (resource, count), names, image),
            )
        )
    if not targets:
        return None
    return WarmPlan(
        namespace={
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": names[0], "labels": {**RESTRICTED_PSA, **MANAGED_BY}},
        },
        priority_class=priority_class(names[1]),
        targets=tuple(targets),
        notes=tuple(_notes(platform, targets)),
    )


def priority_class(name: str) -> Manifest:
    """The placeholders' PriorityClass: below every pod (0 by default), never preempting."""
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name, "labels": dict(MANAGED_BY)},
        "value": WARM_PRIORITY,
        # Never: a placeholder waits for a free node and evicts no one
        # (https://kubernetes.io/docs/concepts/scheduling-eviction/pod-priority-preemption/#non-preempting-priority-class).
        "preemptionPolicy": "Never",
        "globalDefault": False,
        "description": "gpu-infra warm GPU placeholders: any other pod preempts them",
    }


def deployment(
    pool: str,
    replicas: int,
    hints: Mapping[str, Any],
    request: tuple[str, int],
    names: tuple[str, str],
    image: str,
) -> Manifest:
    """The placeholder Deployment of one pool: ``request`` (resource, count) per placeholder, in
    the stack's ``names`` (namespace, PriorityClass), running the pause ``image``."""
    resource, count = request
    namespace, klass = names
    labels = {**APP_LABEL, POOL_LABEL: pool}
    container = {
        "name": "pause",
        "image": image,
        "resources": {
            # Extended resources: requests, if given, must equal limits
            # (https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/).
            "requests": {"cpu": CPU_REQUEST, "memory": MEMORY_REQUEST, resource: str(count)},
            "limits": {"memory": MEMORY_REQUEST, resource: str(count)},
        },
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": 65534,  # nobody, as z2jh's user placeholder runs
            "runAsGroup": 65534,
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
            "seccompProfile": {"type": "RuntimeDefault"},
        },
    }
    spec = {
        "priorityClassName": klass,
        # A preempted placeholder frees its node at once.
        "terminationGracePeriodSeconds": 0,
        "automountServiceAccountToken": False,
        "nodeSelector": dict(hints["nodeSelector"]),
        "tolerations": [dict(t) for t in hints["tolerations"]],
        "affinity": {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {"matchLabels": dict(labels)},
                        "topologyKey": HOSTNAME_TOPOLOGY,
                    }
                ]
            }
        },
        "containers": [container],
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": f"warm-{pool}",
            "namespace": namespace,
            "labels": {**labels, **MANAGED_BY},
            # `pulumi up` does not wait for the placeholders to run: that takes a GPU node's
            # boot, driver and device plugin ("pulumi.com/skipAwait",
            # https://www.pulumi.com/registry/packages/kubernetes/installation-configuration/).
            "annotations": {SKIP_AWAIT: "true"},
        },
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            # Recreate: a rolling update's surge pod would make the autoscaler add one more GPU
            # node on every change ("All existing Pods are killed before new ones are created",
            # https://kubernetes.io/docs/concepts/workloads/controllers/deployment/#recreate-deployment).
            "strategy": {"type": "Recreate"},
            "template": {"metadata": {"labels": labels}, "spec": spec},
        },
    }


def _notes(platform: Platform, targets: Sequence[WarmTarget]) -> list[str]:
    """Why the placeholders may warm nothing where gpu-infra runs no autoscaler of the pools
    (``Features.autoscaler``: the one answer to who scales them)."""
    if platform.features.autoscaler is not None:
        return []
    note = platform.warm_note(", ".join(t.pool for t in targets))
    return [note] if note is not None else []
