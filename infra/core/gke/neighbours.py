"""GKE pools on a cluster the stack does not own: node pool names per stack, kept where they run.

Pure code. A node pool name is unique in its cluster (nodePools.create answers 409
ALREADY_EXISTS), and a pool is named after its ``gpuPools`` entry, so two stacks with a pool
``gpu`` on one existing cluster would name one node pool: the second stack's create fails, and
``cloud.google.com/gke-nodepool=gpu``, which GKE puts on every node of the pool and the pool's
workloads select, would stand for both. On an existing cluster each pool's node pool is therefore
``<name>-<6 hex>``, the hex being the stack's mark on its project-scoped names
(``names.stack_hash``), fitted to GKE's node-pool name rule; so is a fallback entry's ComputeClass,
a cluster-scoped object named after the entry whose label its pods select.

Renaming a node pool replaces it (``name`` is ForceNew: replace_forcing_properties.csv), deleting
every node, so a running stack keeps the names it runs under: a ``gpuPools`` entry whose unscoped
pool the observe step finds on the cluster, made by gpu-infra for that pool (``POOL_LABEL``) and not
labelled for another stack (``STACK_LABEL``), keeps its names, and its next deploy labels it with
this stack (node labels are updated in place). Renaming a ComputeClass replaces it too, and a
class acts only on the pods whose class label is its name (infra.core.diff judges that), so an
auto-creating entry, which runs no node pool while idle, keeps its names when the class itself is
found under the entry's name with priorities that label nodes for the entry's pools and not for
another stack. Offline nothing is read: a first deploy's names.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from infra.core.config.stack import StackConfig
from infra.core.errors import Issues, join_path
from infra.core.gke.model import ComputeClassPlan, GkePlan, GkePoolPlan
from infra.core.gke.names import node_sa_email, project_names, stack_hash, stack_node_account
from infra.core.gke.observed import GkeComputeClassObserved, GkeNodePoolObserved
from infra.core.labels import GKE_COMPUTE_CLASS_LABEL, GKE_NODEPOOL_LABEL, POOL_LABEL, STACK_LABEL
from infra.core.neighbours import stack_label_value
from infra.core.pools import Taint
from infra.core.rules.limits import limit

# GKE NodePool.name: "Must be a match of regex '(?:[a-z](?:[-a-z0-9]{0,38}[a-z0-9])?)'", i.e.
# lowercase letters, digits and '-', starting with a letter, ending with a letter or digit, at most
# 40 characters (receiver_limits.csv gke.node_pool_name; infra.core.rules.gcp check_pool_name).
NODE_POOL_NAME_MAX = limit("gke.node_pool_name")
_HASH = 8

LiveGkePools = Mapping[str, GkeNodePoolObserved]
LiveGkeClasses = Mapping[str, GkeComputeClassObserved]


@dataclass(frozen=True, slots=True)
class Me:
    """What marks this stack's node pools: its stack label value, and the node service account
    they run as (``cluster.nodeServiceAccount``, else the one it creates: ``names.project_names``)
    in its project, for its cluster."""

    label: str
    account: str
    cluster: str
    project: str
    brought: bool = False  # the account is cluster.nodeServiceAccount: other stacks may bring it

    @classmethod
    def of(cls, config: StackConfig) -> Me:
        c, project = config.cluster, config.project or ""
        made = node_sa_email(project_names(config.stack, c.location, c.name).node_sa_id, project)
        account = c.node_service_account or made
        brought = c.node_service_account is not None
        return cls(stack_label_value(config.stack), account, c.name, project, brought)

    def theirs(self, pool: GkeNodePoolObserved) -> bool:
        """Whether ``pool`` is surely another stack's: labelled with another stack, or running as
        the node service account another stack created for this cluster."""
        label = pool.labels.get(STACK_LABEL)
        if label is not None:
            return label != self.label
        sa = pool.service_account
        return sa != self.account and stack_node_account(sa, self.cluster, self.project)


def stack_pool_name(name: str, mark: str) -> str:
    """``<name>-<mark>`` when it fits GKE's 40 characters; else ``name`` cut, ``-`` and 8 hex of
    the SHA-256 of ``<name>-<mark>``, so two long pools of one stack stay apart. ``name`` is a
    pool name (check_pool_name: it starts with a letter) and ``mark`` hex: the result keeps the
    rule."""
    scoped = f"{name}-{mark}"
    if len(scoped) <= NODE_POOL_NAME_MAX:
        return scoped
    digest = hashlib.sha256(scoped.encode()).hexdigest()[:_HASH]
    return f"{name[: NODE_POOL_NAME_MAX - _HASH - 1].rstrip('-')}-{digest}"


def entry_of(p: GkePoolPlan) -> str:
    """The ``gpuPools`` entry a pool is planned from (a fallback pool's is its main pool's)."""
    return p.hints.spec or p.hints.name


def runs_as_ours(live: GkeNodePoolObserved, pool: str, me: Me) -> bool:
    """Whether a live node pool is this stack's pool ``pool``: labelled with this stack, or,
    without a stack label (made before gpu-infra labelled them), labelled by gpu-infra with that
    pool's name and not surely another stack's (``Me.theirs``)."""
    if STACK_LABEL in live.labels:
        return live.labels[STACK_LABEL] == me.label
    return live.labels.get(POOL_LABEL) == pool and not me.theirs(live)


def unscoped_evidence(pools: Sequence[GkePoolPlan], live: LiveGkePools, me: Me) -> dict[str, str]:
    """Entry -> the live node pool showing it runs under its unscoped names as this stack's: a pool
    of the entry (``POOL_LABEL``) named as the pool itself, or auto-created for the class named as
    the entry, and not another stack's."""
    entries: dict[str, set[str]] = {}
    for p in pools:
        entries.setdefault(entry_of(p), set()).add(p.name)
    found: dict[str, str] = {}
    for name, pool in sorted(live.items()):
        own = pool.labels.get(POOL_LABEL, "")
        entry = next((e for e, names in entries.items() if own in names), None)
        if entry is None or me.theirs(pool):
            continue
        if name == own or pool.labels.get(GKE_COMPUTE_CLASS_LABEL) == entry:
            found.setdefault(entry, name)
    return found


def class_evidence(
    pools: Sequence[GkePoolPlan],
    classes: Sequence[ComputeClassPlan],
    live: LiveGkeClasses,
    me: Me,
) -> dict[str, GkeNodePoolObserved]:
    """Entry -> the priority of a live ComputeClass named as an auto-creating entry showing it
    runs under its unscoped names as this stack's: one that labels its nodes for a pool of the
    entry (``POOL_LABEL``) and is not another stack's (``Me.theirs``)."""
    names: dict[str, set[str]] = {}
    for p in pools:
        names.setdefault(entry_of(p), set()).add(p.name)
    found: dict[str, GkeNodePoolObserved] = {}
    for k in classes:
        running = live.get(k.name)
        if k.auto is None or running is None:
            continue
        rules = [r for r in running.priorities if r.labels.get(POOL_LABEL) in names.get(k.name, ())]
        if rules and not any(me.theirs(r) for r in running.priorities):
            found[k.name] = rules[0]
    return found


def scope_to_stack(
    config: StackConfig,
    pools: Sequence[GkePoolPlan],
    classes: Sequence[ComputeClassPlan],
    live: LiveGkePools | None,
    issues: Issues,
    live_classes: LiveGkeClasses | None = None,
) -> tuple[list[GkePoolPlan], list[ComputeClassPlan], list[str]]:
    """The pools under their node pool (and ComputeClass) names on a cluster the stack does not
    own, the classes naming them, and a note per entry kept under a name no stack label marks."""
    c = config.cluster
    me = Me.of(config)
    mark = stack_hash(config.stack, c.location, c.name)
    found = live or {}
    # Entry -> what shows it runs unscoped: (kind, name, its labels and account).
    kept: dict[str, tuple[str, str, GkeNodePoolObserved]] = {
        e: ("node pool", n, found[n]) for e, n in unscoped_evidence(pools, found, me).items()
    }
    for e, rule in class_evidence(pools, classes, live_classes or {}, me).items():
        kept.setdefault(e, ("ComputeClass", e, rule))
    out = [p if entry_of(p) in kept else _scoped_pool(p, mark) for p in pools]
    physical = {p.name: p.node_pool for p in out}
    scoped = [
        replace(
            k,
            node_pools=tuple(physical.get(n, n) for n in k.pools),
            **({} if k.name in kept else {"name": stack_pool_name(k.name, mark), "entry": k.name}),
        )
        for k in classes
    ]
    _foreign_issues(config, out, found, me, issues)
    notes = [
        _kept_note(c.name, kind, name, me, sure=ev.service_account == me.account and not me.brought)
        for kind, name, ev in (kept[e] for e in sorted(kept))
        if STACK_LABEL not in ev.labels
    ]
    return out, scoped, notes


def _scoped_pool(p: GkePoolPlan, mark: str) -> GkePoolPlan:
    """``p`` under its stack's names: its node pool (not for an auto-created one: GKE names those)
    and the ComputeClass it is bound to, in its label, taint and selector."""
    hints, labels, taints = p.hints, dict(p.labels), p.taints
    name = "" if p.auto_create else stack_pool_name(p.name, mark)
    selector = dict(hints.node_selector)
    if GKE_NODEPOOL_LABEL in selector:
        selector[GKE_NODEPOOL_LABEL] = name
    cc = p.compute_class
    if cc is not None:
        cc = stack_pool_name(cc, mark)
        labels[GKE_COMPUTE_CLASS_LABEL] = cc
        taints = tuple(
            replace(t, value=cc) if t.key == GKE_COMPUTE_CLASS_LABEL else t for t in taints
        )
        selector[GKE_COMPUTE_CLASS_LABEL] = cc
    group = hints.group
    if group is not None and cc is not None:  # the group keeps its entry's name as a target
        taint = Taint(GKE_COMPUTE_CLASS_LABEL, cc, "NoSchedule")  # pools._bind's
        group = replace(group, selector={GKE_COMPUTE_CLASS_LABEL: cc}, taint=taint)
    hints = replace(
        hints, node_selector=selector, node_pool=name, labels=labels, taints=taints, group=group
    )
    return replace(
        p, node_pool_name=name, labels=labels, taints=taints, compute_class=cc, hints=hints
    )


def _kept_note(cluster: str, kind: str, name: str, me: Me, *, sure: bool) -> str:
    """Why a running pool (or auto-creating ComputeClass) keeps its name; ``sure``: its nodes run
    as this stack's own account."""
    why = (
        "the class keeps its name as this stack's, since a new name would replace it and leave "
        "the pods that select it without new nodes"
        if kind == "ComputeClass"
        else "its pools keep their names as this stack's, since a new name would replace each "
        "pool and every node on it"
    )
    note = (
        f"GKE: cluster {cluster} runs {kind} {name} without a {STACK_LABEL} label (made before "
        f"gpu-infra named pools per stack on a shared cluster): {why}; this deploy labels them "
        f"{STACK_LABEL}={me.label} in place"
    )
    if kind == "ComputeClass":
        # "When you modify an existing compute class, all future nodes that GKE creates for that
        # compute class use the modified configuration" (https://cloud.google.com/kubernetes-engine/docs/concepts/about-custom-compute-classes).
        note += " (the nodes GKE creates from then on; auto-created nodes running now keep theirs)"
    if sure:
        return f"{note} (its nodes run as the node service account this stack created)"
    return (
        f"{note}. Its nodes do not run as a node service account only this stack has, so another "
        "stack may have made it; then this deploy fails creating it (409 alreadyExists): deploy "
        "that stack first (its deploy labels its pools) and plan again"
    )


def _foreign_issues(
    config: StackConfig,
    pools: Sequence[GkePoolPlan],
    live: LiveGkePools,
    me: Me,
    issues: Issues,
) -> None:
    """A node pool name the plan would create that a live pool not this stack's holds: GKE refuses
    the create (409 ALREADY_EXISTS), and its nodes would be selected as this pool's."""
    index = {p.name: i for i, p in enumerate(config.pools)}
    for p in pools:
        found = live.get(p.node_pool)
        if p.auto_create or found is None or runs_as_ours(found, p.name, me):
            continue
        theirs = found.labels.get(STACK_LABEL)
        whose = (
            f"it is labelled {STACK_LABEL}={theirs}"
            if theirs
            else f"its nodes run as {found.service_account}"
            if me.theirs(found)
            else "gpu-infra did not make it for this pool"
        )
        issues.add(
            join_path("gpuPools", index.get(entry_of(p)), "name"),
            f"{p.name!r}: cluster {config.cluster.name} already runs a node pool {p.node_pool} "
            f"that is not this stack's ({whose}); GKE refuses a second pool of that name "
            "(409 alreadyExists): give this pool another name",
        )


def deployed_names(plan: GkePlan, gpu_pools: Mapping[str, Any] | None) -> dict[str, str | None]:
    """Each per-stack name of ``plan`` (a node pool or ComputeClass named ``<name>-<hash>``) ->
    the name the deployed stack runs it under, from its ``gpuPools`` output: the class its entry
    selects, or the node pool its one pool selects. An entry runs all its names scoped or all
    unscoped (``scope_to_stack``), so a deployed unscoped class stands for unscoped node pools;
    ``None``: the output does not show the entry (or was not given)."""
    entries: dict[str, list[GkePoolPlan]] = {}
    for p in plan.pools:
        entries.setdefault(entry_of(p), []).append(p)
    classes = {k.key: k for k in plan.compute_classes}
    out: dict[str, str | None] = {}
    for entry, pools in entries.items():
        k = classes.get(entry)
        planned = k.name if k is not None else pools[0].node_pool
        if planned == entry:
            continue  # unscoped already: the plan observed it running so, or owns its cluster
        shown = ((gpu_pools or {}).get(entry) or {}).get("nodeSelector") or {}
        found = shown.get(GKE_COMPUTE_CLASS_LABEL if k is not None else GKE_NODEPOOL_LABEL)
        deployed = str(found) if found else None
        if k is not None:
            out[k.name] = deployed
        for p in pools:
            if p.node_pool_name:  # not an auto-created pool: GKE names those
                same = deployed == planned
                out[p.node_pool] = p.node_pool if same else p.name if deployed == entry else None
    return out
