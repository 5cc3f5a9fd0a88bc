"""The receiver check: every name, label, annotation, taint and tag a plan sends, checked as its
receiver checks it, and every name the plan creates owned once.

A backstop that runs on every plan, offline (``infra.core.plan.build_plan``): the config rules check
what the stack file says; this checks what the planners derived from it (fallback pool names,
node-group names per zone, autoscaler tags built from the cluster and stack names, node labels built
from a GPU model, Helm values a preset sets). Each problem names the config key the string came
from. Limits come from ``infra/core/data/receiver_limits.csv`` (``infra.core.rules.limits``); the
grammars from ``infra.core.rules`` (apimachinery's, GCE's).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from infra.core import rules
from infra.core.config.stack import StackConfig
from infra.core.errors import ConfigIssue, join_path
from infra.core.labels import POOL_LABEL
from infra.core.operator.model import OperatorPlan
from infra.core.planned import Plan
from infra.core.rules.limits import limit
from infra.core.sent import Claim, helm_release_issues, label_issues, labels_issues, pool_key
from infra.core.warm import WarmPlan

# Kinds whose names are DNS-1123 labels (Namespace: ValidateNamespaceName; a Job's name becomes
# its pods' job-name label value, k8s.io/kubernetes pkg/apis/batch/validation).
_LABEL_NAMED_KINDS = ("Namespace", "Job")


def check_plan(plan: Plan) -> list[ConfigIssue]:
    """Every receiver problem of ``plan`` and every name claimed twice, as ``<key>: <reason>``."""
    out: list[ConfigIssue] = []
    config = plan.config
    out += plan.platform.receiver_issues()
    if plan.operator is not None:
        models = {h.name: h.gpu_model for h in plan.pools}
        out += _operator(config, plan.operator, models)
    if plan.warm is not None:
        out += [i for m, key in _warm_manifests(config, plan.warm) for i in _object(m, key)]
    out += owned_once(claims(plan))
    return list(dict.fromkeys(out))


# --------------------------------------------------------------------------------------------------
# Names owned once


def claims(plan: Plan) -> list[Claim]:
    """Every namespace, object, release and cloud name the plan creates, with its config key;
    the cluster's own namespaces first (claimed by Kubernetes)."""
    config = plan.config
    # Namespaces every cluster has before gpu-infra runs.
    out = [Claim("Namespace", n, "") for n in rules.SHARED_NAMESPACES]
    op = plan.operator
    if op is not None and op.release is not None:
        out.append(Claim("Namespace", op.namespace, "gpuOperator.namespace"))
        out.append(Claim(f"Helm release in {op.namespace}", op.release.name, "gpuOperator"))
    if op is not None and (smoke := _smoke_key(config)) is not None:
        from infra.core.operator.model import SMOKE_TEST_NAMESPACE

        out.append(Claim("Namespace", SMOKE_TEST_NAMESPACE, smoke))
    out += plan.platform.namespace_claims()  # an autoscaler's own, on an existing cluster
    out += [
        Claim("Namespace", ns.name, join_path("gpuNamespaces", i, "name"))
        for i, ns in enumerate(config.namespaces)
    ]
    if op is not None:
        out += [
            Claim(
                f"{m.get('kind')} in {m['metadata'].get('namespace', '(cluster)')}",
                str(m["metadata"].get("name")),
                key,
            )
            for m, key in _manifests(config, op)
            if m.get("kind") != "Namespace"  # claimed from their config keys above
        ]
    if plan.warm is not None:
        for m, key in _warm_manifests(config, plan.warm):
            meta = m["metadata"]
            scope = "Namespace" if m["kind"] == "Namespace" else f"{m['kind']} in "
            scope += "" if m["kind"] == "Namespace" else meta.get("namespace", "(cluster)")
            out.append(Claim(scope, str(meta["name"]), key))
    out += plan.platform.claims()
    return out


def _warm_manifests(config: StackConfig, warm: WarmPlan) -> Iterator[tuple[Mapping[str, Any], str]]:
    """The warm placeholders' objects, each with the ``gpuPools[i].warm`` key behind it."""
    first = pool_key(config, warm.targets[0].pool, "warm")
    yield warm.namespace, first
    yield warm.priority_class, first
    for t in warm.targets:
        yield t.deployment, pool_key(config, t.pool, "warm")


def _smoke_key(config: StackConfig) -> str | None:
    """``gpuPools[i].smokeTest`` of the first pool that asks for the smoke-test namespace."""
    return next(
        (join_path("gpuPools", i, "smokeTest") for i, p in enumerate(config.pools) if p.smoke_test),
        None,
    )


def owned_once(all_claims: Iterable[Claim]) -> list[ConfigIssue]:
    """A second claim on a name is an error naming both config keys."""
    first: dict[tuple[str, str], Claim] = {}
    out: list[ConfigIssue] = []
    for c in all_claims:
        seen = first.setdefault((c.scope, c.name), c)
        if seen is c:
            continue
        if not seen.key:
            reason = (
                f"{c.name!r} is a namespace every cluster already has (Kubernetes initial "
                "namespaces); gpu-infra would adopt a namespace others share: pick another name"
            )
        else:
            reason = (
                f"{c.scope} {c.name!r} is also created by {seen.key}; two resources with one "
                "name (one Pulumi URN, one API object): give them different names"
            )
        out.append(ConfigIssue(c.key, reason))
    return out


# --------------------------------------------------------------------------------------------------
# Kubernetes objects


def _operator(
    config: StackConfig, op: OperatorPlan, models: Mapping[str, str]
) -> Iterator[ConfigIssue]:
    """The release, its values, every manifest, and the node labels gpu-infra patches (``models``:
    per pool the GPU model its labels are built from)."""
    if op.release is not None:
        yield from helm_release_issues("gpuOperator", op.release.name)
        yield from _walk(op.release.values, (), lambda path: _values_key(config, path))
    for manifest, key in _manifests(config, op):
        yield from _object(manifest, key)
    for nl in op.node_labels:
        yield from labels_issues(pool_key(config, nl.pool), nl.labels, config, models[nl.pool])


def _manifests(config: StackConfig, op: OperatorPlan) -> Iterator[tuple[Mapping[str, Any], str]]:
    """Every manifest with the config key it comes from."""
    from infra.core.operator.objects import smoke_test_namespace

    by_ns = {ns.name: join_path("gpuNamespaces", i) for i, ns in enumerate(config.namespaces)}
    smoke = _smoke_key(config) or "gpuPools"
    if op.namespace_object is not None:
        yield op.namespace_object, "gpuOperator.namespace"
    for m in op.before_release:
        yield m, "gpuOperator"
    for m in op.after_release:
        meta = m.get("metadata", {})
        ns = meta.get("namespace") or meta.get("name")
        if m.get("kind") == "Job":
            yield m, pool_key(config, meta.get("labels", {}).get(POOL_LABEL), "smokeTest")
        elif m == smoke_test_namespace() or ns not in by_ns:
            yield m, smoke
        else:
            yield m, by_ns[ns]


def _object(manifest: Mapping[str, Any], key: str) -> Iterator[ConfigIssue]:
    meta = manifest.get("metadata", {})
    name = str(meta.get("name", ""))
    kind = str(manifest.get("kind", ""))
    check = (
        rules.check_dns1123_label if kind in _LABEL_NAMED_KINDS else rules.check_dns1123_subdomain
    )
    try:
        check(name)
    except ValueError as e:
        yield ConfigIssue(key, f"{kind} name: {e}")
    if kind == "PriorityClass":
        yield from _priority_class(key, name)
    yield from _walk(manifest, (), lambda _: key)


def _walk(node: Any, at: tuple[str | int, ...], key_of: Any) -> Iterator[ConfigIssue]:
    """Labels, node selectors, annotations, PriorityClass names and tolerations anywhere below."""
    if isinstance(node, list):
        for i, item in enumerate(node):
            yield from _walk(item, (*at, i), key_of)
        return
    if not isinstance(node, Mapping):
        return
    for k, v in node.items():
        here = (*at, k)
        if k in ("labels", "nodeSelector", "matchLabels") and isinstance(v, Mapping):
            for lk, lv in v.items():
                yield from label_issues(key_of(here), lk, lv)
        elif k == "annotations" and isinstance(v, Mapping):
            yield from _annotations(key_of(here), v)
        elif k == "priorityClassName" and isinstance(v, str) and v:
            yield from _priority_class(key_of(here), v)
        elif k == "tolerations" and isinstance(v, list):
            yield from _tolerations(key_of(here), v)
        else:
            yield from _walk(v, here, key_of)


def _annotations(key: str, annotations: Mapping[str, Any]) -> Iterator[ConfigIssue]:
    total = 0
    for k, v in annotations.items():
        total += len(str(k).encode()) + len(str(v).encode())
        try:
            rules.check_qualified_name(str(k), "annotation key")
        except ValueError as e:
            yield ConfigIssue(key, f"{e} (Kubernetes API server)")
    if total > (most := limit("k8s.annotations_total")):
        yield ConfigIssue(key, f"annotations total {total} bytes; the API server takes {most}")


def _priority_class(key: str, name: str) -> Iterator[ConfigIssue]:
    try:
        rules.check_dns1123_subdomain(name)
    except ValueError as e:
        yield ConfigIssue(key, f"PriorityClass name: {e}")
        return
    if name.startswith("system-") and name not in rules.SYSTEM_PRIORITY_CLASSES:
        yield ConfigIssue(
            key,
            f"PriorityClass {name!r}: names starting with system- are reserved for "
            f"{' and '.join(rules.SYSTEM_PRIORITY_CLASSES)}",
        )


def _tolerations(key: str, tolerations: list[Any]) -> Iterator[ConfigIssue]:
    for t in tolerations:
        if isinstance(t, Mapping) and t.get("key"):
            try:
                rules.check_taint_key(str(t["key"]))
            except ValueError as e:
                yield ConfigIssue(key, f"toleration: {e}")


# --------------------------------------------------------------------------------------------------
# Config keys


def _values_key(config: StackConfig, path: tuple[str | int, ...]) -> str:
    """``gpuOperator.values.<path>`` when the user set it, else the preset that did."""
    node: Any = config.operator.values
    for part in path:
        if not isinstance(node, Mapping) or part not in node:
            return "gpuOperator.preset"
        node = node[part]
    return join_path("gpuOperator.values", *path)
