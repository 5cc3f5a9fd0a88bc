"""Change preview: what ``pulumi up`` would do to resources planned from an old and a new stack file.

Both plans are resource lists in the ``python -m infra.plan --json`` shape. A resource is matched by
URN: only in the new plan -> create; only in the old -> delete; inputs differ -> update, or replace
when a changed property is in the sourced table of replace-forcing properties
(``data/replace_forcing_properties.csv``, from the providers' schemas). A changed resource whose
type has no row in that table is ``unknown`` (check ``pulumi preview``), never a guessed update.
Replacing or deleting a cluster or a system pool is disruptive; replacing a GPU pool drops the jobs
running on it. A replacement propagates: resources that depend on a replaced one (``dependsOn``, an
input equal to its id, or, for Kubernetes objects, their provider) are marked as possibly replaced.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from infra.core.catalog.vendored import DATA_DIR, read_rows
from infra.core.lifecycle import replace_phrase
from infra.core.operator.removal import is_operator_release, removal_effects
from infra.core.tokens import (
    AWS_EKS_CLUSTER,
    EKS_CLUSTER,
    EKS_NODE_GROUP,
    GKE_CLUSTER,
    GKE_NODE_POOL,
    HELM_RELEASE,
    KARPENTER_NODE_CLASS,
    KARPENTER_NODE_POOL,
)

Op = Literal["create", "update", "replace", "delete", "unknown"]

# Types whose replacement or deletion takes the whole cluster down.
CLUSTER_TYPES = frozenset({GKE_CLUSTER, EKS_CLUSTER, AWS_EKS_CLUSTER})
NODE_POOL_TYPES = frozenset({GKE_NODE_POOL, EKS_NODE_GROUP})
# In-place updates that still re-create every node of a GKE pool, a surge at a time (pods drained):
# nodePools.update "initiates an upgrade operation that migrates the nodes in the node pool to the
# specified" machine type / disk type / disk size / image
# (https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters.nodePools/update);
# the rest are GKE's "changes that recreate the nodes using the node upgrade strategy" (gVNIC, image
# streaming, node system config, GKE metadata server, network performance, private nodes):
# https://cloud.google.com/kubernetes-engine/docs/concepts/managing-clusters#manual-changes-strategy
ROLLING_UPDATES = {
    GKE_NODE_POOL: (
        "nodeConfig.machineType",
        "nodeConfig.diskType",
        "nodeConfig.diskSizeGb",
        "nodeConfig.imageType",
        "nodeConfig.gvnic",
        "nodeConfig.gcfsConfig",
        "nodeConfig.kubeletConfig",
        "nodeConfig.linuxNodeConfig",
        "nodeConfig.workloadMetadataConfig",
        "networkConfig.networkPerformanceConfig",
        "networkConfig.enablePrivateNodes",
    ),
}


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


def _covers(rule_path: str, changed: str) -> bool:
    """``nodeConfig.guestAccelerators`` covers ``nodeConfig.guestAccelerators[0].count``."""
    bare = _strip_indexes(changed)
    return bare == rule_path or bare.startswith(rule_path + ".")


def _forces(rule_path: str, changed: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """A change at or below ``rule_path``, or of a whole block (added, removed, a list item added)
    that sets ``rule_path`` on either side. A block whose ForceNew children are all unset is
    updated in place: the provider diffs children, not the block (terraform-plugin-sdk
    helper/schema: ForceNew is per attribute; e.g. privateClusterConfig.enablePrivateNodes is
    updatable while its masterIpv4CidrBlock is ForceNew)."""
    block = _strip_indexes(changed)
    if rule_path.endswith(".#"):  # the block itself is ForceNew: adding or removing it replaces
        return block == rule_path[:-2]
    if _covers(rule_path, changed):
        return True
    if not rule_path.startswith(block + "."):
        return False
    rest = rule_path[len(block) + 1 :].split(".")
    return any(_sets(_value_at(side, changed), rest) for side in (old, new))


def _value_at(inputs: Any, path: str) -> Any:
    """The value at a changed path (dotted, with ``[i]`` list indexes); None when absent."""
    node = inputs
    for part in path.split("."):
        key, _, tail = part.partition("[")
        node = node.get(key) if isinstance(node, Mapping) else None
        for idx in tail.split("[") if tail else ():
            i = int(idx.rstrip("]"))
            node = node[i] if isinstance(node, list) and i < len(node) else None
    return node


def _sets(value: Any, rest: Sequence[str]) -> bool:
    """Whether ``value`` (a block, a list of blocks, or a leaf) holds a non-null value at ``rest``.
    A non-null value of another shape where a block is expected counts as set (never fail open)."""
    if isinstance(value, list):
        return any(_sets(v, rest) for v in value)
    if not rest or value is None:
        return value is not None
    return _sets(value.get(rest[0]), rest[1:]) if isinstance(value, Mapping) else True


def _strip_indexes(path: str) -> str:
    out, depth = [], 0
    for ch in path:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def changed_paths(old: Any, new: Any, prefix: str = "") -> list[str]:
    """Leaf paths where ``old`` and ``new`` differ (a key only on one side counts as changed)."""
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        out: list[str] = []
        for k in sorted(set(old) | set(new)):
            p = f"{prefix}.{k}" if prefix else str(k)
            if k not in old or k not in new:
                out.append(p)
            else:
                out.extend(changed_paths(old[k], new[k], p))
        return out
    if (
        isinstance(old, list)
        and isinstance(new, list)
        and len(old) == len(new)
        and all(isinstance(x, Mapping | list) for x in (*old, *new))
    ):
        out = []
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            out.extend(changed_paths(a, b, f"{prefix}[{i}]"))
        return out
    return [] if old == new else [prefix]


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
            if not any(_covers(i, p) for i in skip) and not _kept(applicable, old_in, new_in, p)
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
                if (
                    rule.property
                    and not rule.in_place
                    and _forces(rule.property, p, old_in, new_in)
                ):
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
    return bool(leaves) and all(_strip_indexes(leaf) in kept for leaf in leaves)


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
# writes a new version and EKS rolls every node onto it (UpdateNodegroupVersion,
# https://docs.aws.amazon.com/eks/latest/APIReference/API_UpdateNodegroupVersion.html).
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
        if r["type"] in NODE_POOL_TYPES:
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


# Karpenter drift (aws/karpenter-provider-aws website/content/en/v1.14/concepts/disruption.md
# "Drift"): a NodeClaim drifts when its NodePool's spec.template or its EC2NodeClass's spec no
# longer matches it (a hash of each); spec.weight, spec.limits, spec.disruption.* are "Behavioral
# Fields ... not considered for Drift". With terminationGracePeriod set, a drifted node is
# disrupted "even if there are pods with blocking PDBs or the karpenter.sh/do-not-disrupt
# annotation", and they are deleted once it elapses.
_DRIFT_PREFIXES = {KARPENTER_NODE_POOL: "spec.template", KARPENTER_NODE_CLASS: "spec"}
# Fields left out of the hash (`hash:"ignore"`: kubernetes-sigs/karpenter v1.14.1
# pkg/apis/v1/nodepool.go; aws/karpenter-provider-aws v1.14.1 pkg/apis/v1/ec2nodeclass.go) but
# checked against what each node resolved to (disruption.md "Special Cases on Drift";
# pkg/cloudprovider/drift.go AMIDrift, SubnetDrift, SecurityGroupDrift, CapacityReservationDrift):
# only nodes whose value no longer matches drift.
_RESOLVED = {
    KARPENTER_NODE_POOL: ("spec.template.spec.requirements",),
    KARPENTER_NODE_CLASS: (
        "spec.amiSelectorTerms",
        "spec.amiFamily",
        "spec.subnetSelectorTerms",
        "spec.securityGroupSelectorTerms",
        "spec.capacityReservationSelectorTerms",
    ),
}
# Left out of the hash and of every resolved check: no drift.
_NO_DRIFT = {KARPENTER_NODE_CLASS: ("spec.ipPrefixCount",)}
_DRIFT = (
    "update in place, but {what} ({paths}) {verb} of {whose} (replaced one at a time by the "
    "Drifted budget; pods with PDBs or karpenter.sh/do-not-disrupt are deleted after "
    "terminationGracePeriod)"
)


def karpenter_drift(
    type_token: str, paths: Sequence[str], old: Mapping[str, Any], new: Mapping[str, Any]
) -> str:
    """Why this NodePool/EC2NodeClass update replaces the pool's nodes (Karpenter drift); "" if not."""
    prefix = _DRIFT_PREFIXES.get(type_token)
    if prefix is None:
        return ""
    drifting = [
        p
        for p in paths
        if _forces(prefix, p, old, new)
        and not any(_covers(q, p) for q in _NO_DRIFT.get(type_token, ()))
    ]
    if not drifting:
        return ""
    every = [p for p in drifting if not any(_covers(q, p) for q in _RESOLVED[type_token])]
    name = value_at(new, "metadata.name") or "?"
    pool = type_token == KARPENTER_NODE_POOL
    return _DRIFT.format(
        what=f"the NodePool {name} template" if pool else f"the EC2NodeClass {name}",
        paths=", ".join(drifting),
        verb="drifts every node" if every else "may drift the nodes that no longer match it",
        whose=f"pool {name}" if pool else f"every NodePool using node class {name}",
    )


def _rolling(
    type_token: str, paths: Sequence[str], old: Mapping[str, Any], new: Mapping[str, Any]
) -> str:
    if type_token == "aws:eks/addon:Addon":
        return vpc_cni_step(old, new)
    if type_token in _DRIFT_PREFIXES:
        return karpenter_drift(type_token, paths, old, new)
    rolled = [
        p
        for p in paths
        if any(_forces(r, p, old, new) for r in ROLLING_UPDATES.get(type_token, ()))
    ]
    if not rolled:
        return ""
    return (
        f"update in place, but {', '.join(rolled)} re-creates every node of the pool a surge at "
        "a time: pods are drained and rescheduled"
    )


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


def value_at(inputs: Any, path: str, absent: Any = None) -> Any:
    """The value at a path of ``changed_paths`` (``a.b[0].c``) in ``inputs``; ``absent`` if unset.

    A key may hold dots itself (tag and label keys such as ``karpenter.sh/discovery``): where a
    part is no key, it is joined with the next parts until one is.
    """
    node: Any = inputs
    parts = [p for p in path.replace("[", ".[").split(".") if p]
    i = 0
    while i < len(parts):
        part = parts[i]
        if part.startswith("["):
            n = int(part[1:-1])
            if not isinstance(node, list) or n >= len(node):
                return absent
            node, i = node[n], i + 1
            continue
        if not isinstance(node, Mapping):
            return absent
        j = next((j for j in range(i + 1, len(parts) + 1) if ".".join(parts[i:j]) in node), None)
        if j is None:
            return absent
        node, i = node[".".join(parts[i:j])], j
    return node
