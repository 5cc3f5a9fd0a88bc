"""Pod priorities across the whole plan: the warm placeholders must sit below every pod the plan
emits or implies, and no lower than the autoscaler's expendable cutoff.

A pod's priority comes from its ``priorityClassName``; without one it is 0 while no PriorityClass
is ``globalDefault`` ("If there is no PriorityClass with globalDefault set, the priority of Pods
with no priorityClassName is zero", https://kubernetes.io/docs/concepts/scheduling-eviction/
pod-priority-preemption/). gpu-infra creates no global default (its one class sets ``false``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from infra.core.operator.helm_values import chart_defaults
from infra.core.planned import Plan
from infra.core.platform import CUTOFF_FLAG, EXPENDABLE_CUTOFF_DEFAULT

# The built-in classes: SystemCriticalPriority = 2 * HighestUserDefinablePriority (1e9), and
# system-node-critical 1000 above it (kubernetes/kubernetes pkg/apis/scheduling/types.go).
BUILTIN_PRIORITIES = {
    "system-cluster-critical": 2_000_000_000,
    "system-node-critical": 2_000_001_000,
}
DEFAULT_PRIORITY = 0
# Spellings of a pod's priority class: PodSpec and Helm charts, KubeSpawner's trait
# (jupyterhub/kubespawner spawner.py priority_class_name).
_CLASS_KEYS = ("priorityClassName", "priority_class_name")


def _classes(node: Any, where: str) -> Iterator[tuple[str, str]]:
    """Every priority class name below ``node`` (a manifest, Helm values, an integration doc)."""
    if isinstance(node, list):
        for i, item in enumerate(node):
            yield from _classes(item, f"{where}[{i}]")
    elif isinstance(node, Mapping):
        for k, v in node.items():
            if k in _CLASS_KEYS and isinstance(v, str) and v:
                yield f"{where}.{k}", v
            else:
                yield from _classes(v, f"{where}.{k}")


def _sources(plan: Plan) -> Iterator[tuple[str, Any]]:
    """Every document the plan emits that may name a pod's priority class."""
    op = plan.operator
    if op is not None:
        for m in (*op.before_release, *op.after_release):
            yield f"{m['kind']}/{m['metadata']['name']}", m
        if op.release is not None:
            # The chart's defaults, then our overrides (operands run system-node-critical).
            yield "gpu-operator chart defaults", chart_defaults(op.release.version)
            yield "gpu-operator values", op.release.values
        for name, doc in op.integrations.items():
            yield f"integration {name}", doc
    # The platform's own releases (an autoscaler, device plugins).
    yield from plan.platform.pod_documents()


def emitted_priorities(plan: Plan) -> list[tuple[str, int | None]]:
    """``(where, priority)`` of every pod class the plan names (``None``: a class the plan does
    not know the value of), plus the default 0 of every pod that names none."""
    out: list[tuple[str, int | None]] = [("pods without priorityClassName", DEFAULT_PRIORITY)]
    own = plan.warm.priority_class["metadata"]["name"] if plan.warm is not None else None
    for where, doc in _sources(plan):
        for at, name in _classes(doc, where):
            if name != own:
                out.append((f"{at}={name}", BUILTIN_PRIORITIES.get(name)))
    return out


def expendable_cutoff(plan: Plan) -> int:
    """The cluster-autoscaler's --expendable-pods-priority-cutoff as this plan runs it."""
    cutoff = plan.platform.expendable_cutoff
    return EXPENDABLE_CUTOFF_DEFAULT if cutoff is None else cutoff


def priority_problems(plan: Plan) -> list[str]:
    """Why the warm placeholders' priority is not below every other pod, or would never scale up."""
    if plan.warm is None:
        return []
    value = int(plan.warm.priority_class["value"])
    out: list[str] = []
    for where, p in emitted_priorities(plan):
        if p is None:
            out.append(f"priority: {where} has no known value to compare with the placeholders'")
        elif p <= value:
            out.append(f"priority: {where} ({p}) is not above the warm placeholders' {value}")
    if value < (cutoff := expendable_cutoff(plan)):
        out.append(f"priority: warm placeholders' {value} is below the {CUTOFF_FLAG} {cutoff}")
    return out
