"""Change preview: what ``pulumi up`` would do to resources planned from an old and a new stack file.

Both plans are resource lists in the ``python -m infra.plan --json`` shape. A resource is matched by
URN: only in the new plan -> create; only in the old -> delete; inputs differ -> update, or replace
when a changed property is in the sourced table of replace-forcing properties
(``data/replace_forcing_properties.csv``, from the providers' schemas). A changed resource whose
type has no row in that table is ``unknown`` (check ``pulumi preview``), never a guessed update.
Replacing or deleting a cluster or a system pool is disruptive; replacing a GPU pool drops the jobs
running on it. An update that the receiver turns into node rolls, drift or GPU reconfiguration is
judged by the disruption table (``data/node_disruption.csv``, ``infra.core.disruption``).
A replacement propagates: resources that depend on a replaced one (``dependsOn``, an
input equal to its id, or, for Kubernetes objects, their provider) are marked as possibly replaced.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from infra.core.catalog.vendored import DATA_DIR, read_rows
from infra.core.disruption import nominated, rule_for, update_disruption, vpc_cni_step
from infra.core.inputs import changed_paths, covers, forces, strip_indexes, value_at
from infra.core.lifecycle import (
    KEPT_THEN_CREATED,
    name_collides,
    protect_refusal,
    provider_replaced,
    replace_order,
    replace_phrase,
)
from infra.core.operator.removal import is_operator_release, removal_effects
from infra.core.operator.upgrade import driver_effect, toolkit_effect
from infra.core.tokens import (
    AWS_EKS_CLUSTER,
    EKS_CLUSTER,
    EKS_NODE_GROUP,
    GKE_CLUSTER,
    GKE_NODE_POOL,
    HELM_RELEASE,
)

Op = Literal["create", "update", "replace", "delete", "unknown"]

# Types whose replacement or deletion takes the whole cluster down.
CLUSTER_TYPES = frozenset({GKE_CLUSTER, EKS_CLUSTER, AWS_EKS_CLUSTER})
NODE_POOL_TYPES = frozenset({GKE_NODE_POOL, EKS_NODE_GROUP})


@dataclass(frozen=True, slots=True)
class ForcingRule:
    """One replace-forcing property of a resource type and the schema that says so."""

    type: str  # a type token, or ``<package>:*`` for every type of a package
    # Dotted camelCase path; covers every path below it ("": no ForceNew input). ``block.#``
    # (Terraform's count address): the block itself is ForceNew, so adding or removing it replaces.
    property: str
    source: str
    kept_when_removed: bool = False  # Optional+Computed: a removed value keeps the live one
    in_place: bool = False  # listed only as kept_when_removed: an updatable, non-forcing property


@dataclass(frozen=True, slots=True)
class Change:
    """One resource's change.

    Attributes:
        urn: the resource's URN.
        type: its type token.
        name: its logical name.
        op: create / update / replace / delete.
        properties: changed property paths (dotted, ``[i]`` for list items), sorted.
        replace_because: for replace, the changed paths that force it, each with its rule's source.
        disruptive: why this change interrupts the cluster or running jobs ("" if it does not).
        because: why this resource changes although its own inputs may not (a replaced dependency),
            or why its op is unknown.
        retained: a delete the engine makes without a Delete call (``retainOnDelete``).
        order: for a replace, ``delete-first`` or ``create-first``; why: the rule that decided.
    """

    urn: str
    type: str
    name: str
    op: Op
    properties: tuple[str, ...] = ()
    replace_because: tuple[tuple[str, str], ...] = ()
    disruptive: str = ""
    because: str = ""
    retained: bool = False
    order: str = ""
    why: str = ""

    def to_json(self) -> dict[str, Any]:
        """One entry of ``{"changes": [...]}``."""
        return {
            "urn": self.urn,
            "op": self.op,
            "properties": list(self.properties),
            "replaceBecause": [{"property": p, "source": s} for p, s in self.replace_because],
            "disruptive": self.disruptive or None,
            "because": self.because or None,
            "retained": self.retained,
            "order": self.order or None,
            "why": self.why or None,
        }


@functools.cache
def forcing_rules(data_dir: Path = DATA_DIR) -> tuple[ForcingRule, ...]:
    """The sourced table of replace-forcing properties."""
    return tuple(
        ForcingRule(
            r["type"],
            r["property"],
            r["source"],
            (r.get("kept_when_removed") or "") == "true",
            (r.get("in_place") or "") == "true",
        )
        for r in read_rows("replace_forcing_properties.csv", data_dir)
    )


def _rules_for(type_token: str, rules: Iterable[ForcingRule]) -> list[ForcingRule]:
    package = type_token.split(":", 1)[0]
    return [r for r in rules if r.type == type_token or r.type == f"{package}:*"]


def diff(
    old: Sequence[Mapping[str, Any]],
    new: Sequence[Mapping[str, Any]],
    rules: Iterable[ForcingRule] | None = None,
    ignored: Mapping[str, Sequence[str]] | None = None,
) -> list[Change]:
    """Every change from ``old`` to ``new`` (resource dicts of the plan JSON), unchanged ones left out.

    ``ignored`` maps a URN to its ``ignoreChanges`` paths: the engine keeps the old value there,
    so a change below them is no change at all.

    Order: deletions and replacements first (what can hurt), then updates, then creations; within
    each, plan order.
    """
    rules = tuple(rules if rules is not None else forcing_rules())
    old_by = {r["urn"]: r for r in old}
    new_by = {r["urn"]: r for r in new}
    changes: list[Change] = []
    for r in old:
        if r["urn"] not in new_by:
            changes.append(_deletion(r))
    for r in new:
        before = old_by.get(r["urn"])
        if before is None:
            changes.append(Change(r["urn"], r["type"], r["name"], "create"))
            continue
        applicable = _rules_for(r["type"], rules)
        skip = (ignored or {}).get(r["urn"], ())
        old_in, new_in = before.get("inputs") or {}, r.get("inputs") or {}
        paths = [
            p
            for p in changed_paths(old_in, new_in)
            if not any(covers(i, p) for i in skip) and not _kept(applicable, old_in, new_in, p)
        ]
        if not paths:
            continue
        if r["type"] == K8S_PROVIDER:  # pulumi-kubernetes DiffConfig (lifecycle)
            op_: Op = "replace" if provider_replaced(old_in, new_in) else "update"
            changes.append(Change(r["urn"], r["type"], r["name"], op_, tuple(paths)))
            continue
        if not applicable and r.get("custom", True):
            changes.append(
                Change(
                    r["urn"],
                    r["type"],
                    r["name"],
                    "unknown",
                    tuple(paths),
                    because=f"no replace-forcing table for {r['type']}: check `pulumi preview`",
                )
            )
            continue
        # One source per changed path: the first rule that covers it.
        forced: dict[str, str] = {}
        for p in paths:
            for rule in applicable:
                if rule.property and not rule.in_place and forces(rule.property, p, old_in, new_in):
                    forced.setdefault(p, rule.source)
        op: Op = "replace" if forced else "update"
        changes.append(
            Change(
                r["urn"],
                r["type"],
                r["name"],
                op,
                tuple(paths),
                tuple(forced.items()),
                _disruption(r, op, before)
                if op == "replace"
                else _rolling(r["type"], paths, old_in, new_in),
            )
        )
    changes = _propagate(changes, old_by, new)
    changes = [
        _ordered(c, old_by.get(c.urn), new_by[c.urn]) if c.op == "replace" else c for c in changes
    ]
    rank = {"delete": 0, "replace": 0, "unknown": 1, "update": 1, "create": 2}
    return sorted(changes, key=lambda c: rank[c.op])  # stable: plan order within a rank


# A retained resource removed from the stack is forgotten, never deleted: "Deleting a "drop on
# delete" is a no-op as the user has explicitly asked us to not delete the resource" (pulumi/pulumi
# pkg/resource/deploy/step.go DeleteStep.Apply), after the protect check, which still refuses.
RETAINED = "dropped from the stack, kept in the cluster (retainOnDelete: the engine forgets it)"


def _deletion(r: Mapping[str, Any]) -> Change:
    """The delete of ``r`` (an old resource): what it takes down, or that it is only forgotten."""
    refused = protect_refusal("delete", r, None)
    if (r.get("options") or {}).get("retainOnDelete") and not refused:
        return Change(r["urn"], r["type"], r["name"], "delete", because=RETAINED, retained=True)
    disruptive = _disruption(r, "delete")
    if refused and r["type"] not in CLUSTER_TYPES:
        disruptive = "; ".join(x for x in (disruptive, refused) if x)
    return Change(r["urn"], r["type"], r["name"], "delete", disruptive=disruptive)


def _ordered(c: Change, old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> Change:
    """``c`` with the order the engine replaces in and the rule that decided
    (``lifecycle.replace_order``); a type without a lifecycle row gets the engine's default
    unless its ``deleteBeforeReplace`` option is set, and says the provider may still differ."""
    found = replace_order(old, new)
    if found is not None:
        return replace(c, order=found[0], why=found[1])
    explicit = (new.get("options") or {}).get("deleteBeforeReplace")
    if explicit is not None:
        order = "delete-first" if explicit else "create-first"
        return replace(c, order=order, why=f"deleteBeforeReplace={str(explicit).lower()} is set")
    why = (
        f"the engine's default: no lifecycle row for {c.type}, whose provider's Diff may still ask "
        "for delete-first (check `pulumi preview`)"
    )
    return replace(c, order="create-first", why=why)


def _kept(
    rules: Iterable[ForcingRule], old: Mapping[str, Any], new: Mapping[str, Any], path: str
) -> bool:
    """An Optional+Computed input removed from the inputs, or a removed block whose every set
    leaf is one: Terraform keeps the live value, so nothing is sent."""
    if not _removed(new, path):
        return False
    kept = {k.property.removesuffix(".#") for k in rules if k.kept_when_removed}
    if path in kept:
        return True
    leaves = changed_paths(value_at(old, path), {}, path)
    return bool(leaves) and all(strip_indexes(leaf) in kept for leaf in leaves)


def kept_removals(
    old: Sequence[Mapping[str, Any]],
    new: Sequence[Mapping[str, Any]],
    rules: Iterable[ForcingRule] | None = None,
) -> list[str]:
    """A warning per Optional+Computed input removed from a resource that stays: ``pulumi up``
    sends nothing and the live value stays (the diff shows no change for it)."""
    rules = tuple(rules if rules is not None else forcing_rules())
    new_by = {r["urn"]: r for r in new}
    out = []
    for r in old:
        after = new_by.get(r["urn"])
        if after is None:
            continue
        old_in, new_in = r.get("inputs") or {}, after.get("inputs") or {}
        applicable = _rules_for(r["type"], rules)
        kept = [p for p in changed_paths(old_in, new_in) if _kept(applicable, old_in, new_in, p)]
        if kept:
            out.append(
                f"{r['type']} {r['name']}: {', '.join(kept)} removed from the inputs is no change: "
                "the provider keeps the live value (Optional+Computed), so it stays as deployed"
            )
    return out


def _removed(inputs: Mapping[str, Any], path: str) -> bool:
    """``path`` (dotted, no list indexes) is absent from ``inputs``."""
    node: Any = inputs
    for key in path.split("."):
        if not isinstance(node, Mapping) or key not in node:
            return True
        node = node[key]
    return False


LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
# A node group's launchTemplate.version is the template's latest_version: any template update
# writes a new version, a change of the group's launchTemplate.version (a disruption-table row,
# UpdateNodegroupVersion) that the plan cannot see, since the version is an output.
LT_VERSION = "launchTemplate.version"
LT_ROLL = (
    "launch template {name} gets a new version: launchTemplate.version follows its latest_version, "
    "so EKS rolls every node of the group onto it (UpdateNodegroupVersion)"
)


def _leaves(value: Any) -> Iterable[Any]:
    if isinstance(value, Mapping):
        for v in value.values():
            yield from _leaves(v)
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v)
    else:
        yield value


K8S_PROVIDER = "pulumi:providers:kubernetes"
Edge = tuple[str, str, str]  # (URN depended on, "deleted-with" | "provider" | "input", input key)


def _edges(r: Mapping[str, Any], by_id: Mapping[str, str], providers: Iterable[str]) -> list[Edge]:
    """What ``r`` (as the old state holds it) hangs on, along the edges a replacement follows:
    its ``deletedWith``, a Kubernetes object's provider, and each input key's property
    dependencies (or an input equal to another resource's id). Never ``dependsOn``."""
    out: list[Edge] = []
    if target := (r.get("options") or {}).get("deletedWith"):
        out.append((str(target), "deleted-with", ""))
    if r["type"].startswith("kubernetes:"):
        out += [(p, "provider", "") for p in providers]
    for key, urns in (r.get("propertyDependencies") or {}).items():
        out += [(u, "input", key) for u in urns]
    for key, value in (r.get("inputs") or {}).items():
        out += [
            (by_id[v], "input", key) for v in _leaves(value) if isinstance(v, str) and v in by_id
        ]
    return [e for e in out if e[0] != r["urn"]]


def _propagate(
    changes: list[Change], old_by: Mapping[str, Mapping[str, Any]], new: Sequence[Mapping[str, Any]]
) -> list[Change]:
    """What a replacement does to the resources that hang on it, as the engine decides it, and
    EKS node groups whose launch template is updated.

    pulumi/pulumi pkg/resource/deploy/step_generator.go ``calculateDependentReplacements``, over
    the old state's dependency graph: a resource deleted with a replaced one, or whose provider is
    replaced, is replaced; one whose input comes from a replaced resource is replaced when the
    provider's Diff says that input forces it (the replace-forcing table), else updated with the
    new value; an edge that is only ``dependsOn`` changes nothing ("the edge from B to A may be a
    simple `dependsOn` edge such that a change to B does not actually influence any of B's input
    properties").
    """
    rules = forcing_rules()
    by_urn = {c.urn: c for c in changes}
    olds = list(old_by.values())
    by_id = {r["id"]: r["urn"] for r in olds if r.get("id")}
    providers = [r["urn"] for r in olds if r["type"] == K8S_PROVIDER]
    new_by = {r["urn"]: r for r in new}
    derived: dict[str, tuple[Op, str]] = {}  # URN -> (op, because) from what it hangs on
    grew = True
    while grew:
        grew = False
        replaced = {u for u, c in by_urn.items() if c.op == "replace"}
        replaced |= {u for u, (op, _) in derived.items() if op == "replace"}
        kept = {  # providers kept while the cluster they point at is replaced
            u
            for u, (op, _) in derived.items()
            if op == "update" and new_by[u]["type"] == K8S_PROVIDER
        }
        for u, r in new_by.items():
            old = old_by.get(u)
            if old is None or u in replaced:
                continue
            found = _dependent(old, r, _edges(old, by_id, providers), replaced | kept, rules, kept)
            if found is not None and derived.get(u) != found:
                derived[u] = found
                grew = True
    lt_updated = {
        c.urn: c.name
        for c in changes
        if c.type == LAUNCH_TEMPLATE and c.op in ("update", "unknown")
    }
    extra: list[Change] = []
    for r in new:
        u = r["urn"]
        op, because = derived.get(u, (None, ""))
        rolling = ""
        if u in old_by and rule_for(r["type"], LT_VERSION, {}, {}) is not None:
            lt = next((e[0] for e in _edges(old_by[u], by_id, ()) if e[0] in lt_updated), None)
            if lt is not None:
                rolling = LT_ROLL.format(name=lt_updated[lt])
        if op is None and not rolling:
            continue
        c = by_urn.get(u)
        hurt = _disruption(r, "replace", old_by[u]) if op == "replace" else ""
        if c is None:
            base: Op = "update" if op is None else op
            extra.append(
                Change(u, r["type"], r["name"], base, disruptive=hurt or rolling, because=because)
            )
            continue
        stronger = op is not None and _RANK[op] > _RANK[c.op]
        by_urn[u] = replace(
            c,
            op=op if stronger and op is not None else c.op,
            disruptive=c.disruptive or (hurt if stronger else "") or rolling,
            because="; ".join(x for x in (c.because, because) if x),
        )
    return [by_urn[c.urn] for c in changes] + extra


_RANK: Mapping[str, int] = {"update": 0, "unknown": 1, "replace": 2}


def _dependent(
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    edges: Sequence[Edge],
    replaced: set[str],
    rules: Sequence[ForcingRule],
    kept: set[str],
) -> tuple[Op, str] | None:
    """The op and the reason a resource gets from the replaced resources it hangs on
    (``kept``: Kubernetes providers updated in place while their cluster is replaced)."""
    hit = [e for e in edges if e[0] in replaced]
    if not hit:
        return None
    for target, kind, _ in hit:
        if kind == "deleted-with":
            return "replace", f"replaced: deleted with {target}, which is replaced"
        if kind == "provider" and target not in kept:
            return "replace", f"replaced: its provider {target} is replaced"
    hit = [e for e in hit if e[1] != "provider"]
    if not hit:
        # The engine keeps it (its provider is not replaced), but it lived in the old cluster.
        return "unknown", (
            "its cluster is replaced while its provider is kept (clusterIdentifier unchanged): "
            "the engine keeps it in the state, but it goes with the old cluster; run `pulumi "
            "refresh` after the update, then `pulumi up` creates it again"
        )
    applicable = _rules_for(new["type"], rules)
    old_in, new_in = old.get("inputs") or {}, new.get("inputs") or {}
    for target, _, key in hit:
        if any(
            r.property and not r.in_place and forces(r.property, key, old_in, new_in)
            for r in applicable
        ):
            return "replace", f"replaced: its input {key} comes from {target}, which is replaced"
    target, _, key = hit[0]
    if new["type"] == K8S_PROVIDER:
        if provider_replaced(old_in, new_in):
            return "replace", f"replaced: {key} follows {target} and its clusterIdentifier changes"
        return "update", (
            f"{key} takes the new value of {target}, which is replaced; the provider is kept "
            "(clusterIdentifier unchanged)"
        )
    if not applicable and new.get("custom", True):
        return (
            "unknown",
            f"input {key} comes from {target}, which is replaced; no replace-forcing table for {new['type']}",
        )
    return "update", f"input {key} takes the new value of {target}, which is replaced"


# Provider-side deletion guards: an input that makes the provider's Delete refuse, read from the
# state. "Cannot destroy cluster because deletion_protection is set to true. Set it to false to
# proceed with cluster deletion." (hashicorp/terraform-provider-google @ e03b7622
# google/services/container/resource_container_cluster.go resourceContainerClusterDelete).
DELETION_GUARDS = {"gcp:container/cluster:Cluster": "deletionProtection"}


@dataclass(frozen=True, slots=True)
class HalfApplied:
    """A replace the engine starts but the provider cannot finish: the guard is on in the state."""

    change: Change
    guard: str  # the guard input, on in the old state
    turned_off: bool  # the edit also turns the guard off (so protect no longer stops it)


def half_applied(
    changes: Sequence[Change], old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]
) -> list[HalfApplied]:
    """Replacements that ``pulumi up`` would begin and fail in the middle of.

    The engine allows a replace once ``protect`` is off on the new side (``protect_refusal``);
    the delete of a replacement then runs against the old state, whose guard is still on, so
    the provider refuses it after the resources deleted before it (delete-first dependents) are
    gone. The guard must be turned off by an ``up`` of its own first.
    """
    old_by = {r["urn"]: r for r in old}
    new_by = {r["urn"]: r for r in new}
    out = []
    for c in changes:
        guard = DELETION_GUARDS.get(c.type)
        before, after = old_by.get(c.urn) or {}, new_by.get(c.urn) or {}
        if (
            c.op != "replace"
            or guard is None
            or (before.get("inputs") or {}).get(guard) is not True
        ):
            continue
        if protect_refusal("replace", before, after):
            continue  # both sides protected: the engine refuses before it deletes anything
        out.append(HalfApplied(c, guard, guard in c.properties))
    return out


def name_collisions(
    changes: Sequence[Change], old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]
) -> list[Change]:
    """Create-first replaces whose new resource keeps the old one's name (``name_collides``)."""
    old_by, new_by = {r["urn"]: r for r in old}, {r["urn"]: r for r in new}
    return [
        c
        for c in changes
        if c.op == "replace"
        and c.order == "create-first"
        and name_collides(old_by[c.urn], new_by[c.urn])
    ]


def kept_then_created(
    changes: Sequence[Change], old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]
) -> list[Change]:
    """Delete-first replaces of retained objects that would fail on create: the engine keeps the
    old object (``lifecycle.KEPT_THEN_CREATED``), so creating one of the same name and namespace
    in the same cluster gets "AlreadyExists" from the API server. A replaced Kubernetes provider
    (another cluster) is a new target, where the create succeeds."""
    if any(c.type == K8S_PROVIDER and c.op == "replace" for c in changes):
        return []
    old_by, new_by = {r["urn"]: r for r in old}, {r["urn"]: r for r in new}
    keys = ("metadata.name", "metadata.namespace")
    return [
        c
        for c in changes
        if c.op == "replace"
        and KEPT_THEN_CREATED in c.why
        and all(
            value_at(old_by[c.urn].get("inputs") or {}, k)
            == value_at(new_by[c.urn].get("inputs") or {}, k)
            for k in keys
        )
    ]


def _rolling(
    type_token: str, paths: Sequence[str], old: Mapping[str, Any], new: Mapping[str, Any]
) -> str:
    if type_token == "aws:eks/addon:Addon":
        return vpc_cni_step(old, new)
    parts = [update_disruption(type_token, paths, old, new)]
    effects = nominated(type_token, paths, old, new)
    if "reloads-driver" in effects:
        parts.append(driver_effect(old, new))
    if "restarts-containerd" in effects:
        parts.append(toolkit_effect(old, new))
    return "; ".join(p for p in parts if p).replace("; update in place, but ", "; ")


def _disruption(resource: Mapping[str, Any], op: Op, old: Mapping[str, Any] | None = None) -> str:
    t = resource["type"]
    inputs = resource.get("inputs") or {}
    # The order the engine replaces in, from the lifecycle model (infra/core/lifecycle.py).
    first = replace_phrase(old, resource) if op == "replace" else ""
    if t in CLUSTER_TYPES:
        # The engine's protect rule (lifecycle.protect_refusal): old and new for a replace.
        refused = protect_refusal(op, old if op == "replace" else resource, resource)
        return f"{op} of the cluster: every workload and node goes with it" + (
            f"; {refused}" if refused else ""
        )
    if t in NODE_POOL_TYPES:
        name = inputs.get("name") or inputs.get("nodeGroupName") or resource["name"]
        if str(name) == "system" or str(resource["name"]).endswith("-system"):
            return (
                f"{op} of the system pool{first}: system pods (DNS, autoscaler, operator) restart"
            )
        return (
            f"{op} of a GPU pool{first}: its nodes are deleted and running jobs on them are killed"
        )
    if t == HELM_RELEASE:
        name = inputs.get("name") or resource["name"]
        effects = removal_effects(inputs, DATA_DIR) if is_operator_release(inputs) else []
        if op == "delete" and effects:
            return f"removal of Helm release {name} (helm uninstall): {'; '.join(effects)}"
        if op == "delete":
            return (
                f"removal of Helm release {name} (helm uninstall): its objects and pods are deleted"
            )
        # pulumi-kubernetes uninstalls the old release and installs the new one (helm_release.go).
        between = f"; the uninstall in between: {'; '.join(effects)}" if effects else ""
        return f"{op} of Helm release {name}{first}: uninstalled and installed again, its pods restart{between}"
    if t.startswith("kubernetes:") and first.startswith(" (kept, then created"):
        name = value_at(inputs, "metadata.name") or resource["name"]
        kind = t.rsplit(":", 1)[1]
        return f"{op} of {kind} {name}{first}: in the same cluster the create meets the kept object"
    if t.startswith("kubernetes:") and first.startswith(" (deleted before"):
        # Between the delete and the create, readers of the object (a ConfigMap's pods) miss it.
        name = value_at(inputs, "metadata.name") or resource["name"]
        return f"{op} of {t.rsplit(':', 1)[1]} {name}{first}: absent until it is created again"
    return ""
