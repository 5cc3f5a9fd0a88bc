"""The kube-scheduler's Filter semantics for one pod on one node, and quota admission.

Written from the documented semantics:
- node selector and required node affinity: https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/
  (kubernetes/kubernetes pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go; matching in
  staging/src/k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go);
- taints and tolerations: https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/
  (pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go; Toleration.ToleratesTaint in
  staging/src/k8s.io/api/core/v1/toleration.go);
- resources: https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/
  (pkg/scheduler/framework/plugins/noderesources/fit.go);
- quota: https://kubernetes.io/docs/concepts/policy/resource-quotas/.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from infra.core.nodes import Node, Obj, quantity

__all__ = [
    "Node",
    "Obj",
    "Pod",
    "affinity_problem",
    "fit_problems",
    "pod_from_spec",
    "quantity",
    "quota_problem",
    "requirement_matches",
    "resource_problem",
    "shared_request_problem",
    "taint_problem",
    "term_matches",
    "tolerates",
]


@dataclass(frozen=True, slots=True)
class Pod:
    """What the scheduler reads of a pod spec."""

    name: str
    node_selector: Mapping[str, str]
    # requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms; None: no required affinity.
    affinity_terms: tuple[Obj, ...] | None
    tolerations: tuple[Obj, ...]
    requests: Mapping[str, Fraction]
    # Per container, its requests (the device plugin allocates per container).
    containers: tuple[Mapping[str, Fraction], ...] = ()


def pod_from_spec(name: str, spec: Obj) -> Pod:
    """Read a PodSpec. A container's request defaults to its limit when only the limit is set
    (manage-resources-containers: "If you specify a limit for a resource, but do not specify any
    request, ... Kubernetes copies the limit"); the pod's request is the sum over containers."""
    requests: dict[str, Fraction] = {}
    containers: list[dict[str, Fraction]] = []
    for c in spec.get("containers", []):
        res = c.get("resources", {})
        merged = {**res.get("limits", {}), **res.get("requests", {})}
        containers.append({r: quantity(q) for r, q in merged.items()})
        for r, q in containers[-1].items():
            requests[r] = requests.get(r, Fraction(0)) + q
    required = (
        spec.get("affinity", {})
        .get("nodeAffinity", {})
        .get("requiredDuringSchedulingIgnoredDuringExecution")
    )
    terms = tuple(required.get("nodeSelectorTerms", [])) if required is not None else None
    return Pod(
        name=name,
        node_selector=dict(spec.get("nodeSelector") or {}),
        affinity_terms=terms,
        tolerations=tuple(spec.get("tolerations") or ()),
        requests=requests,
        containers=tuple(containers),
    )


def requirement_matches(req: Obj, labels: Mapping[str, str]) -> bool:
    """One NodeSelectorRequirement: In, NotIn, Exists, DoesNotExist, Gt, Lt (assign-pod-node
    "Operators"; NotIn and DoesNotExist also match a node without the label)."""
    key, op, values = req["key"], req["operator"], list(req.get("values") or [])
    present = key in labels
    if op == "In":
        return present and labels[key] in values
    if op == "NotIn":
        return not present or labels[key] not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt"):
        if not present or len(values) != 1:
            return False
        try:
            have, want = int(labels[key]), int(values[0])
        except ValueError:
            return False
        return have > want if op == "Gt" else have < want
    raise ValueError(f"unknown node selector operator {op!r}")


def term_matches(term: Obj, labels: Mapping[str, str]) -> bool:
    """A NodeSelectorTerm: every requirement holds (AND); a term with no requirements matches no
    node (core/v1 NodeSelectorTerm: "A null or empty node selector term matches no objects")."""
    exprs = list(term.get("matchExpressions") or [])
    if not exprs:
        return False
    return all(requirement_matches(r, labels) for r in exprs)


def affinity_problem(pod: Pod, node: Node) -> str | None:
    """NodeAffinity filter: every nodeSelector pair equals a node label, and, when required node
    affinity is set, at least one term matches (terms are ORed)."""
    for k, v in pod.node_selector.items():
        if node.labels.get(k) != v:
            return f"nodeSelector {k}={v} (node has {node.labels.get(k)!r})"
    if pod.affinity_terms is not None and not any(
        term_matches(t, node.labels) for t in pod.affinity_terms
    ):
        return f"required node affinity {list(pod.affinity_terms)} matches no label of the node"
    return None


def tolerates(toleration: Obj, taint: Obj) -> bool:
    """Toleration.ToleratesTaint: an empty effect matches every effect; an empty key with
    operator Exists matches every key; Exists ignores the value; Equal (the default operator)
    needs the same value."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint["effect"]:
        return False
    key = toleration.get("key") or ""
    if key and key != taint["key"]:
        return False
    op = toleration.get("operator") or "Equal"
    if op == "Exists":
        return True
    if op == "Equal":
        return bool(key) and (toleration.get("value") or "") == (taint.get("value") or "")
    return False


def taint_problem(pod: Pod, node: Node) -> str | None:
    """TaintToleration filter: every NoSchedule / NoExecute taint must be tolerated
    (PreferNoSchedule only scores)."""
    for taint in node.taints:
        if taint["effect"] == "PreferNoSchedule":
            continue
        if not any(tolerates(t, taint) for t in pod.tolerations):
            return f"untolerated taint {taint['key']}={taint.get('value', '')}:{taint['effect']}"
    return None


def resource_problem(pod: Pod, node: Node) -> str | None:
    """NodeResourcesFit on an empty node: every requested resource, extended ones included, is at
    most the node's allocatable; a resource the node does not advertise has allocatable 0."""
    for r, want in sorted(pod.requests.items()):
        if want == 0:
            continue
        have = node.allocatable.get(r, Fraction(0))
        if want > have:
            return f"Insufficient {r}: requests {_fmt(want)}, node allocatable {_fmt(have)}"
    return None


def shared_request_problem(pod: Pod, node: Node) -> str | None:
    """A container requests at most 1 of a shared resource: GKE refuses more ("at most 1
    nvidia.com/gpu can be requested on GPU nodes", UnexpectedAdmissionError,
    https://cloud.google.com/kubernetes-engine/docs/concepts/timesharing-gpus) and so does the
    device plugin under failRequestsGreaterThanOne ("maximum request size for shared resources is
    1", NVIDIA/k8s-device-plugin internal/rm/rm.go). The scheduler places the pod; the kubelet's
    admission then fails it."""
    for i, c in enumerate(pod.containers):
        for r in sorted(node.shared):
            if c.get(r, Fraction(0)) > 1:
                return (
                    f"container {i} requests {_fmt(c[r])} of shared {r}: at most 1 per container "
                    "(the node refuses it at admission)"
                )
    return None


def fit_problems(pod: Pod, node: Node) -> list[str]:
    """Every filter the pod fails on the node (empty: it fits), and the node's shared-resource
    admission."""
    checks = (affinity_problem, taint_problem, resource_problem, shared_request_problem)
    return [p for check in checks if (p := check(pod, node)) is not None]


def quota_problem(pod: Pod, hard: Mapping[str, str], resources: Sequence[str]) -> str | None:
    """ResourceQuota admission of one pod in an empty namespace, for the GPU ``resources``.

    Extended resources are quota'd only as ``requests.<name>`` (resource-quotas "Resource quota
    for extended resources"); a resource with no quota item is not limited at all, so for GPU
    resources that is reported too: the namespace's GPU quota would not bind it.
    """
    for r in resources:
        want = pod.requests.get(r, Fraction(0))
        if want == 0:
            continue
        item = f"requests.{r}"
        if item not in hard:
            return f"{r} has no quota item {item}: the namespace's GPU quota does not limit it"
        if want > quantity(hard[item]):
            return f"exceeds quota {item}={hard[item]} with {_fmt(want)}"
    return None


def _fmt(q: Fraction) -> str:
    return str(q.numerator) if q.denominator == 1 else f"{float(q):g}"
