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
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from infra.core.catalog.vendored import DATA_DIR, read_rows
from infra.core.disruption import rule_for, update_disruption
from infra.core.inputs import changed_paths, covers, forces, strip_indexes, value_at
from infra.core.lifecycle import replace_phrase
from infra.core.operator.removal import is_operator_release, removal_effects

Op = Literal["create", "update", "replace", "delete", "unknown"]

# Types whose replacement or deletion takes the whole cluster down.
CLUSTER_TYPES = frozenset(
    {"gcp:container/cluster:Cluster", "eks:index:Cluster", "aws:eks/cluster:Cluster"}
)
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
NODE_POOL_TYPES = frozenset({"gcp:container/nodePool:NodePool", "aws:eks/nodeGroup:NodeGroup"})


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
    """

    urn: str
    type: str
    name: str
    op: Op
    properties: tuple[str, ...] = ()
    replace_because: tuple[tuple[str, str], ...] = ()
    disruptive: str = ""
    because: str = ""

    def to_json(self) -> dict[str, Any]:
        """One entry of ``{"changes": [...]}``."""
        return {
            "urn": self.urn,
            "op": self.op,
            "properties": list(self.properties),
            "replaceBecause": [{"property": p, "source": s} for p, s in self.replace_because],
            "disruptive": self.disruptive or None,
            "because": self.because or None,
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
            changes.append(
                Change(
                    r["urn"], r["type"], r["name"], "delete", disruptive=_disruption(r, "delete")
                )
            )
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
    rank = {"delete": 0, "replace": 0, "unknown": 1, "update": 1, "create": 2}
    return sorted(changes, key=lambda c: rank[c.op])  # stable: plan order within a rank


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


def _dependencies(resources: Sequence[Mapping[str, Any]]) -> dict[str, set[str]]:
    """URN -> URNs it depends on: ``dependsOn``, inputs equal to another resource's id, and a
    Kubernetes object's provider (its ``pulumi:providers:kubernetes``)."""
    by_id = {r["id"]: r["urn"] for r in resources if r.get("id")}
    k8s_providers = {r["urn"] for r in resources if r["type"] == "pulumi:providers:kubernetes"}
    deps: dict[str, set[str]] = {}
    for r in resources:
        d: set[str] = set(r.get("dependsOn") or ())
        d |= {by_id[v] for v in _leaves(r.get("inputs") or {}) if isinstance(v, str) and v in by_id}
        if r["type"].startswith("kubernetes:"):
            d |= k8s_providers
        d.discard(r["urn"])
        deps[r["urn"]] = d
    return deps


def _propagate(
    changes: list[Change], old_by: Mapping[str, Mapping[str, Any]], new: Sequence[Mapping[str, Any]]
) -> list[Change]:
    """Mark what depends on a replaced resource, and EKS node groups whose template is updated.

    The simple, honest version: a dependent "may be replaced or updated" (the engine decides from
    the new outputs, which a plan does not have); its own op stays if it had one.
    """
    by_urn = {c.urn: c for c in changes}
    deps = _dependencies(new)
    replaced = {c.urn for c in changes if c.op == "replace"}
    cause: dict[str, str] = {}  # dependent URN -> the replaced URN it hangs on
    grew = True
    while grew:
        grew = False
        for r in new:
            u = r["urn"]
            if u in replaced or u in cause or u not in old_by:
                continue
            hit = next((d for d in sorted(deps.get(u, ())) if d in replaced or d in cause), None)
            if hit is not None:
                cause[u] = cause.get(hit, hit)
                grew = True
    lt_updated = {
        c.urn: c.name
        for c in changes
        if c.type == LAUNCH_TEMPLATE and c.op in ("update", "unknown")
    }
    extra: list[Change] = []
    for r in new:
        u = r["urn"]
        c = by_urn.get(u)
        because = ""
        rolling = ""
        if u in cause:
            because = f"may be replaced or updated because {cause[u]} is replaced"
        if rule_for(r["type"], LT_VERSION, {}, {}) is not None:
            lt = next((d for d in sorted(deps.get(u, ())) if d in lt_updated), None)
            if lt is not None:
                rolling = LT_ROLL.format(name=lt_updated[lt])
        if not because and not rolling:
            continue
        if c is None:
            op: Op = "update" if rolling and not because else "unknown"
            extra.append(Change(u, r["type"], r["name"], op, disruptive=rolling, because=because))
        else:
            by_urn[u] = Change(
                c.urn,
                c.type,
                c.name,
                c.op,
                c.properties,
                c.replace_because,
                c.disruptive or rolling,
                "; ".join(x for x in (c.because, because) if x),
            )
    return [by_urn[c.urn] for c in changes] + extra


# EKS updates the vpc-cni add-on one minor at a time: "InvalidParameterException: Updating VPC-CNI
# can only go up or down 1 minor version at a time" (terraform-aws-modules/terraform-aws-eks#2749);
# https://docs.aws.amazon.com/eks/latest/userguide/managing-vpc-cni.md "update one minor version
# at a time".
_VPC_CNI_REFUSED = "Updating VPC-CNI can only go up or down 1 minor version at a time"


def _minor_of(version: Any) -> tuple[int, int] | None:
    parts = str(version or "").removeprefix("v").split("-", 1)[0].split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts[:2]):
        return None
    return int(parts[0]), int(parts[1])


def vpc_cni_step(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """Why EKS refuses (or may refuse) this vpc-cni ``addonVersion`` change; "" when it does not."""
    if new.get("addonName") != "vpc-cni" or old.get("addonVersion") == new.get("addonVersion"):
        return ""
    a, b = _minor_of(old.get("addonVersion")), _minor_of(new.get("addonVersion"))
    if a is None or b is None:
        return (
            f"vpc-cni {old.get('addonVersion')} -> {new.get('addonVersion')}: the minor step "
            f'cannot be checked before deploy; EKS refuses more than one ("{_VPC_CNI_REFUSED}")'
        )
    if a[0] != b[0] or abs(a[1] - b[1]) > 1:
        return (
            f"refused by EKS: vpc-cni {old['addonVersion']} -> {new['addonVersion']} moves more "
            f'than one minor version ("{_VPC_CNI_REFUSED}"); step through each minor'
        )
    return ""


def _rolling(
    type_token: str, paths: Sequence[str], old: Mapping[str, Any], new: Mapping[str, Any]
) -> str:
    if type_token == "aws:eks/addon:Addon":
        return vpc_cni_step(old, new)
    return update_disruption(type_token, paths, old, new)


def _disruption(resource: Mapping[str, Any], op: Op, old: Mapping[str, Any] | None = None) -> str:
    t = resource["type"]
    inputs = resource.get("inputs") or {}
    # The order the engine replaces in, from the lifecycle model (infra/core/lifecycle.py).
    first = replace_phrase(old, resource) if op == "replace" else ""
    if t in CLUSTER_TYPES:
        # The engine refuses to replace or delete a protected resource (pulumi/pulumi
        # pkg/resource/deploy/step_generator.go: "as it is currently marked for protection").
        held = (resource.get("options") or {}).get("protect") or (old or {}).get("options", {}).get(
            "protect"
        )
        refused = "; refused while the cluster is protected (`pulumi state unprotect` first)"
        return f"{op} of the cluster: every workload and node goes with it{refused if held else ''}"
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
        effects = removal_effects(inputs) if is_operator_release(inputs) else []
        if op == "delete" and effects:
            return f"removal of Helm release {name} (helm uninstall): {'; '.join(effects)}"
        if op == "delete":
            return (
                f"removal of Helm release {name} (helm uninstall): its objects and pods are deleted"
            )
        # pulumi-kubernetes uninstalls the old release and installs the new one (helm_release.go).
        between = f"; the uninstall in between: {'; '.join(effects)}" if effects else ""
        return f"{op} of Helm release {name}{first}: uninstalled and installed again, its pods restart{between}"
    if t.startswith("kubernetes:") and first.startswith(" (deleted before"):
        # Between the delete and the create, readers of the object (a ConfigMap's pods) miss it.
        name = value_at(inputs, "metadata.name") or resource["name"]
        return f"{op} of {t.rsplit(':', 1)[1]} {name}{first}: absent until it is created again"
    return ""
