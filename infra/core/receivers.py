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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from infra.core import rules
from infra.core.errors import ConfigIssue, join_path, shown
from infra.core.rules.limits import limit

if TYPE_CHECKING:
    from infra.core.config.stack import StackConfig
    from infra.core.eks.planner import EksPlan
    from infra.core.gke.planner import GkePlan
    from infra.core.operator.model import OperatorPlan
    from infra.core.warm import WarmPlan

# Namespaces every cluster has before gpu-infra runs
# (https://kubernetes.io/docs/concepts/overview/working-with-objects/namespaces/#initial-namespaces).
CLUSTER_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
# PriorityClasses Kubernetes creates; other names with this prefix are refused
# (k8s.io/kubernetes pkg/apis/scheduling/validation ValidatePriorityClass).
SYSTEM_PRIORITY_CLASSES = ("system-node-critical", "system-cluster-critical")
# Kinds whose names are DNS-1123 labels (Namespace: ValidateNamespaceName; a Job's name becomes
# its pods' job-name label value, k8s.io/kubernetes pkg/apis/batch/validation).
_LABEL_NAMED_KINDS = ("Namespace", "Job")


class PlannedStack(Protocol):
    """What the check reads of a plan (``infra.core.plan.Plan``, which imports this module)."""

    @property
    def config(self) -> StackConfig: ...
    @property
    def gke(self) -> GkePlan | None: ...
    @property
    def eks(self) -> EksPlan | None: ...
    @property
    def operator(self) -> OperatorPlan | None: ...
    @property
    def warm(self) -> WarmPlan | None: ...


@dataclass(frozen=True, slots=True)
class Claim:
    """A name the plan creates, in its scope (``Namespace`` / ``<kind> in <ns>`` / a cloud scope)."""

    scope: str
    name: str
    key: str


def check_plan(plan: PlannedStack) -> list[ConfigIssue]:
    """Every receiver problem of ``plan`` and every name claimed twice, as ``<key>: <reason>``."""
    out: list[ConfigIssue] = []
    config = plan.config
    if plan.gke is not None:
        out += _gke(config, plan.gke)
    if plan.eks is not None:
        out += _eks(config, plan.eks)
    if plan.operator is not None:
        out += _operator(config, plan.operator)
    if plan.warm is not None:
        out += [i for m, key in _warm_manifests(config, plan.warm) for i in _object(m, key)]
    out += owned_once(claims(plan))
    return list(dict.fromkeys(out))


# --------------------------------------------------------------------------------------------------
# Names owned once


def claims(plan: PlannedStack) -> list[Claim]:
    """Every namespace, object, release and cloud name the plan creates, with its config key;
    the cluster's own namespaces first (claimed by Kubernetes)."""
    config = plan.config
    out = [Claim("Namespace", n, "") for n in CLUSTER_NAMESPACES]
    op = plan.operator
    if op is not None and op.release is not None:
        out.append(Claim("Namespace", op.namespace, "gpuOperator.namespace"))
        out.append(Claim(f"Helm release in {op.namespace}", op.release.name, "gpuOperator"))
    if op is not None and (smoke := _smoke_key(config)) is not None:
        from infra.core.operator.model import SMOKE_TEST_NAMESPACE

        out.append(Claim("Namespace", SMOKE_TEST_NAMESPACE, smoke))
    ca = plan.eks.autoscaler if plan.eks is not None else None
    if ca is not None and ca.create_namespace:  # its own namespace on an existing cluster
        out.append(Claim("Namespace", ca.namespace, "cluster.existing"))
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
    if plan.gke is not None:
        if not plan.gke.cluster.existing:  # infra/components/gke.py: NodePool "system"
            out.append(Claim("GKE node pool", "system", "cluster.systemPool"))
        out += [Claim("GKE node pool", p.name, _pool_key(config, p.name)) for p in plan.gke.pools]
    if plan.eks is not None:
        out += _eks_claims(config, plan.eks)
    return out


def _warm_manifests(config: StackConfig, warm: WarmPlan) -> Iterator[tuple[Mapping[str, Any], str]]:
    """The warm placeholders' objects, each with the ``gpuPools[i].warm`` key behind it."""
    first = _pool_key(config, warm.targets[0].pool, "warm")
    yield warm.namespace, first
    yield warm.priority_class, first
    for t in warm.targets:
        yield t.deployment, _pool_key(config, t.pool, "warm")


def _smoke_key(config: StackConfig) -> str | None:
    """``gpuPools[i].smokeTest`` of the first pool that asks for the smoke-test namespace."""
    return next(
        (join_path("gpuPools", i, "smokeTest") for i, p in enumerate(config.pools) if p.smoke_test),
        None,
    )


def _eks_claims(config: StackConfig, eks: EksPlan) -> Iterator[Claim]:
    for g in eks.groups:
        for ng in g.node_groups:
            yield Claim("EKS node group", ng.name, _pool_key(config, g.name, "name"))
    if eks.system is not None:
        yield Claim("EKS node group", eks.system.node_group_name, "cluster.systemPool")
    if eks.autoscaler is not None:
        scope = f"Helm release in {eks.autoscaler.namespace}"
        yield Claim(scope, eks.autoscaler.release, "cluster.autoscaler")
    if eks.karpenter is not None:
        k = eks.karpenter
        yield Claim(f"Helm release in {k.namespace}", k.release, "cluster.autoscaler.kind")
        yield Claim(f"Helm release in {k.namespace}", k.crd_release, "cluster.autoscaler.kind")


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
# GKE and EKS


def _gke(config: StackConfig, gke: GkePlan) -> Iterator[ConfigIssue]:
    if not gke.cluster.existing:
        sa = gke.cluster.node_sa_id
        if not 6 <= len(sa) <= limit("gcp.service_account_id"):
            yield ConfigIssue(
                "cluster.name",
                f"node service account ID {sa!r} is {len(sa)} characters; Google Cloud IAM takes "
                f"6-{limit('gcp.service_account_id')}",
            )
    for p in gke.pools:
        key = _pool_key(config, p.name)
        yield from _length(join_path(key, "name"), p.name, "gke.node_pool_name", "node pool name")
        yield from _labels(key, p.labels, config)
        yield from _taints(join_path(key, "taints"), [(t.key, t.value, t.effect) for t in p.taints])


def _eks(config: StackConfig, eks: EksPlan) -> Iterator[ConfigIssue]:
    yield from _length("cluster.name", eks.cluster_name, "eks.cluster_name", "EKS cluster name")
    if eks.stack_tag:
        yield from _aws_tags("cluster.name", {eks.stack_tag: "owned"})
    for name in iam_role_names(eks):
        if len(name) + limit("pulumi.autoname_suffix") > (most := limit("aws.iam_role_name")):
            yield ConfigIssue(
                "cluster.name",
                f"IAM role {name!r} gets a '-' and 7 random characters from Pulumi: "
                f"{len(name) + limit('pulumi.autoname_suffix')} characters, IAM takes at most "
                f"{most} (a shorter cluster name fits)",
            )
    if eks.autoscaler is not None:
        try:
            rules.check_go_duration(config.cluster.autoscaler.scale_down_unneeded_time)
        except ValueError as e:
            yield ConfigIssue("cluster.autoscaler.scaleDownUnneededTime", str(e))
        # On an existing cluster the release is named after the stack (autoscaler.stack_release_name).
        yield from _helm_release(
            "cluster.existing" if eks.existing else "cluster.autoscaler", eks.autoscaler.release
        )
    for g in eks.groups:
        key = _pool_key(config, g.name)
        for ng in g.node_groups:
            yield from _length(
                join_path(key, "name"), ng.name, "eks.nodegroup_name", "EKS node group name"
            )
        yield from _labels(key, g.labels, config)
        yield from _taints(join_path(key, "taints"), [(t.key, t.value, t.effect) for t in g.taints])
        if len(g.taints) > (most := limit("eks.taints_per_nodegroup")):
            yield ConfigIssue(
                join_path(key, "taints"), f"{len(g.taints)} taints; EKS takes at most {most}"
            )
        # The stack tag is checked once above; it still counts towards each group's tags.
        yield from _aws_tags(key, {**g.asg_tags, "Name": g.name}, also=int(bool(eks.stack_tag)))


def iam_role_names(eks: EksPlan) -> list[str]:
    """Logical names of the IAM roles ``infra/components/eks.py`` registers without a ``name``
    (Pulumi autonames them): the nodes', each add-on's with a service account, the autoscaler's.
    tests/stack/test_receivers_stack.py keeps this list equal to what the program registers."""
    return list(eks.iam_role_names)  # fitted to IAM's 64 by the planner (eks.names)


def _aws_tags(key: str, tags: Mapping[str, str], also: int = 0) -> Iterator[ConfigIssue]:
    if (count := len(tags) + also) > (most := limit("aws.tags_per_resource")):
        yield ConfigIssue(key, f"{count} tags; AWS allows at most {most} per resource")
    for k, v in tags.items():
        if not 1 <= len(k) <= limit("aws.tag_key"):
            yield ConfigIssue(
                key,
                f"tag key {shown(k, 60)}: AWS tag keys are 1-{limit('aws.tag_key')}",
            )
        if len(v) > limit("aws.tag_value"):
            yield ConfigIssue(
                key,
                f"tag {shown(k, 40)}: value is {len(v)} characters; AWS tag values are at most "
                f"{limit('aws.tag_value')}",
            )


def _length(key: str, value: str, name: str, what: str) -> Iterator[ConfigIssue]:
    if len(value) > (most := limit(name)):
        yield ConfigIssue(key, f"{what} {shown(value, 60)}: at most {most} characters")


def _helm_release(key: str, name: str) -> Iterator[ConfigIssue]:
    # helm/helm pkg/chartutil/validate_name.go: a DNS-1123 subdomain of at most 53 characters.
    most = limit("helm.release_name")
    try:
        rules.check_dns1123_subdomain(name)
    except ValueError as e:
        yield ConfigIssue(key, f"Helm release name: {e}")
    if len(name) > most:
        yield ConfigIssue(
            key,
            f"Helm release name {shown(name, 70)} is {len(name)} characters; Helm takes at most {most}",
        )


# --------------------------------------------------------------------------------------------------
# Kubernetes objects


def _operator(config: StackConfig, op: OperatorPlan) -> Iterator[ConfigIssue]:
    if op.release is not None:
        yield from _helm_release("gpuOperator", op.release.name)
        yield from _walk(op.release.values, (), lambda path: _values_key(config, path))
    for manifest, key in _manifests(config, op):
        yield from _object(manifest, key)
    for nl in op.node_labels:
        yield from _labels(_pool_key(config, nl.pool), nl.labels, config)


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
            yield m, _pool_key(config, meta.get("labels", {}).get("gpu-infra/pool"), "smokeTest")
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
                yield from _label(key_of(here), lk, lv)
        elif k == "annotations" and isinstance(v, Mapping):
            yield from _annotations(key_of(here), v)
        elif k == "priorityClassName" and isinstance(v, str) and v:
            yield from _priority_class(key_of(here), v)
        elif k == "tolerations" and isinstance(v, list):
            yield from _tolerations(key_of(here), v)
        else:
            yield from _walk(v, here, key_of)


def _labels(key: str, labels: Mapping[str, str], config: StackConfig) -> Iterator[ConfigIssue]:
    """A pool's node labels; a label the planner built from the GPU model names that key."""
    i = _pool_index(config, key)
    pool = config.pools[i] if i is not None else None
    model = str(getattr(getattr(pool, "gpu", None), "model", "") or "").lower()
    for k, v in labels.items():
        if pool is not None and k not in pool.labels and model and model in str(v).lower():
            yield from _label(join_path(key, "gpu", "model"), k, v)
        else:
            yield from _label(join_path(key, "labels", k), k, v)


def _label(key: str, k: Any, v: Any) -> Iterator[ConfigIssue]:
    try:
        rules.check_qualified_name(str(k))
        rules.check_label_value(str(v))
    except ValueError as e:
        yield ConfigIssue(key, f"label {shown(str(k), 60)}: {e} (Kubernetes API server)")


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
    if name.startswith("system-") and name not in SYSTEM_PRIORITY_CLASSES:
        yield ConfigIssue(
            key,
            f"PriorityClass {name!r}: names starting with system- are reserved for "
            f"{' and '.join(SYSTEM_PRIORITY_CLASSES)}",
        )


def _tolerations(key: str, tolerations: list[Any]) -> Iterator[ConfigIssue]:
    for t in tolerations:
        if isinstance(t, Mapping) and t.get("key"):
            try:
                rules.check_taint_key(str(t["key"]))
            except ValueError as e:
                yield ConfigIssue(key, f"toleration: {e}")


def _taints(key: str, taints: list[tuple[str, str, str]]) -> Iterator[ConfigIssue]:
    """Taints: valid keys and values, unique by key and effect (the API server's rule)."""
    seen: dict[tuple[str, str], int] = {}
    for k, v, effect in taints:
        try:
            rules.check_taint_key(k)
            rules.check_taint_value(v)
        except ValueError as e:
            yield ConfigIssue(key, str(e))
        seen[k, effect] = seen.get((k, effect), 0) + 1
        if seen[k, effect] == limit("k8s.taints_per_key_effect") + 1:
            yield ConfigIssue(
                key,
                f"two taints with key {k!r} and effect {effect}; the API server takes taints "
                "unique by key and effect",
            )


# --------------------------------------------------------------------------------------------------
# Config keys


def _pool_index(config: StackConfig, key_or_name: str | None) -> int | None:
    """The ``gpuPools`` index of a pool name (GKE fallback ``<pool>-<shape hash>`` -> its pool) or of
    a ``gpuPools[i]`` key."""
    if key_or_name is None:
        return None
    names = [p.name for p in config.pools]
    if key_or_name.startswith("gpuPools["):
        return int(key_or_name[len("gpuPools[") :].split("]", 1)[0])
    if key_or_name in names:
        return names.index(key_or_name)
    # Derived names (GKE fallback pools, EKS node groups per zone) start with "<pool>-".
    owners = [i for i, n in enumerate(names) if key_or_name.startswith(f"{n}-")]
    return max(owners, key=lambda i: len(names[i])) if owners else None


def _pool_key(config: StackConfig, name: str | None, *rest: str) -> str:
    i = _pool_index(config, name)
    return join_path("gpuPools", i, *rest) if i is not None else "gpuPools"


def _values_key(config: StackConfig, path: tuple[str | int, ...]) -> str:
    """``gpuOperator.values.<path>`` when the user set it, else the preset that did."""
    node: Any = config.operator.values
    for part in path:
        if not isinstance(node, Mapping) or part not in node:
            return "gpuOperator.preset"
        node = node[part]
    return join_path("gpuOperator.values", *path)
