"""What an in-place update does to running nodes and GPU pods, from the receivers' rules as data.

``data/node_disruption.csv`` holds one sourced row per resource type and property: GKE node pool
properties whose update re-creates every node, EKS node group properties that start
``UpdateNodegroupVersion``, Karpenter NodePool / EC2NodeClass fields that drift nodes (and the
``hash:"ignore"`` ones that drift only nodes that no longer match), the MIG layout label on each
platform's nodes and the chart's MIG strategy. ``--diff`` reads only this table for updates; a
replace or delete is judged by its op (``infra.core.diff``). The longest row that covers a changed
path decides for it, so a narrower row (``spec.amiSelectorTerms``) overrides a wider one
(``spec``).
"""

from __future__ import annotations

import functools
import json
import typing
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from infra.core.catalog.vendored import DATA_DIR, read_rows
from infra.core.inputs import forces, value_at

FILE = "node_disruption.csv"
Effect = Literal[
    "rolls",
    "drifts",
    "drifts-matching",
    "no-drift",
    "reconfigures-gpus",
    "readvertises",
    "reloads-driver",
    "restarts-containerd",
    "evicts",
    "removes-nodes",
    "none",
]
EFFECTS: tuple[Effect, ...] = typing.get_args(Effect)
# Judged by what each side resolves (the operator's model, infra.core.operator.upgrade), not by
# the path: the row only says which changed paths can have the effect.
RESOLVED: frozenset[Effect] = frozenset({"reloads-driver", "restarts-containerd"})
KARPENTER_NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
# "": any change | "was-set": only a change of a value already set | "narrowed": only a change that
# lets some node it admitted no longer match (a pure widening drifts nothing; ``widens``).
WHEN = ("", "was-set", "narrowed", "noexecute-added", "family", "lowered")
# Effects that take nothing down: a row with one is a checked verdict, not a gap in the table.
HARMLESS: frozenset[Effect] = frozenset({"no-drift", "none"})


@dataclass(frozen=True, slots=True)
class DisruptionRule:
    """One row: what changing ``property`` of a ``type`` does to the nodes, and the source."""

    type: str
    property: str
    effect: Effect
    when: str  # one of WHEN
    source: str


@functools.cache
def disruption_rules(data_dir: Path = DATA_DIR) -> tuple[DisruptionRule, ...]:
    """Every row of the table; an unknown effect or ``when`` raises ValueError."""
    out = []
    for r in read_rows(FILE, data_dir):
        if r["effect"] not in EFFECTS or r["when"] not in WHEN or not r["source"]:
            raise ValueError(f"{FILE}: {r['type']} {r['property']}: bad effect, when or source")
        out.append(DisruptionRule(r["type"], r["property"], r["effect"], r["when"], r["source"]))  # type: ignore[arg-type]
    return tuple(out)


def rule_for(
    type_token: str,
    path: str,
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    rules: Iterable[DisruptionRule] | None = None,
) -> DisruptionRule | None:
    """The most specific row covering a changed ``path`` of ``type_token`` (None: no effect)."""
    hits = [
        r
        for r in (rules if rules is not None else disruption_rules())
        if r.type == type_token and r.effect not in RESOLVED and forces(r.property, path, old, new)
    ]
    if not hits:
        return None
    top = max(len(r.property) for r in hits)
    hits = [r for r in hits if len(r.property) == top]
    # A family row decides while the resolved family changes, else its same-path twin (if any):
    # either way it shadows the wider rows, for the hash sees the resolved family only.
    moved = ami_family(old) != ami_family(new)
    hits = sorted(hits, key=lambda r: r.when == "family", reverse=moved)
    best = hits[0]
    if best.when == "family" and not moved:
        return None
    if best.when == "was-set" and value_at(old, path) is None:
        return None  # first recorded: nothing resolved differently yet
    if best.when == "noexecute-added" and not noexecute_added(
        value_at(old, best.property), value_at(new, best.property)
    ):
        return None  # NoSchedule / PreferNoSchedule leave running pods alone
    if best.when == "lowered" and not _lowered(value_at(old, path), value_at(new, path)):
        return None  # a larger or equal size removes no node
    if best.when == "narrowed" and widens(
        value_at(old, best.property), value_at(new, best.property)
    ):
        return None  # every node the old value admitted still matches the new one
    return best


def ami_family(node_class: Mapping[str, Any]) -> str:
    """The AMI family an EC2NodeClass resolves to, which its drift hash covers
    (aws/karpenter-provider-aws @ 1d927085 pkg/apis/v1/ec2nodeclass.go ``Hash`` hashes
    ``AMIFamily()``: ``spec.amiFamily``, else the family of the first alias term, else Custom),
    compared case-blind as ``amiFamilyFromAlias`` matches the alias."""
    spec = node_class.get("spec") or {}
    if family := spec.get("amiFamily"):
        return str(family).lower()
    terms = spec.get("amiSelectorTerms") or []
    alias = next((t["alias"] for t in terms if isinstance(t, Mapping) and t.get("alias")), "")
    return str(alias).split("@", 1)[0].lower() if alias else "custom"


def noexecute_added(old: Any, new: Any) -> bool:
    """Whether ``new`` taints carry a NoExecute taint ``old`` did not: the kubelet's taint manager
    evicts every running pod that does not tolerate it ("Pods that do not tolerate the taint are
    evicted immediately", https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/);
    NoSchedule and PreferNoSchedule affect only new pods. The providers spell it NO_EXECUTE."""

    def hard(taints: Any) -> list[Any]:
        items = taints if isinstance(taints, list) else []
        return [
            t
            for t in items
            if str((t or {}).get("effect", "")).replace("_", "").lower() == "noexecute"
        ]

    before = hard(old)
    return any(t not in before for t in hard(new))


def _lowered(old: Any, new: Any) -> bool:
    return isinstance(old, int) and isinstance(new, int) and new < old


def widens(old: Any, new: Any) -> bool:
    """Whether ``new`` admits every node ``old`` admitted, for the two list shapes of the
    ``narrowed`` rows.

    NodePool requirements: a NodeClaim drifts when its labels are not ``Compatible`` with the
    NodePool's requirements (kubernetes-sigs/karpenter @ 22664681
    pkg/controllers/nodeclaim/disruption/drift.go areRequirementsDrifted), checked per key: a key
    dropped constrains nothing, an ``In`` whose values grow and a ``NotIn`` whose values shrink
    still admit the old labels; a new key or another operator may not. Selector terms (a list of
    terms, each a selector): a node drifts when its subnet or capacity reservation is not among
    the resolved ones (aws/karpenter-provider-aws @ 1d927085 pkg/cloudprovider/drift.go
    isSubnetDrifted, isCapacityReservationDrifted), so terms only added keep every old one.
    """
    if not isinstance(old, list) or not isinstance(new, list):
        return False
    if all(isinstance(t, Mapping) and "key" in t and "operator" in t for t in old + new):
        return _requirements_widen(old, new)
    return all(t in new for t in old)


def _requirements_widen(old: list[Any], new: list[Any]) -> bool:
    def by_key(reqs: list[Any]) -> dict[str, list[Mapping[str, Any]]]:
        out: dict[str, list[Mapping[str, Any]]] = {}
        for r in reqs:
            out.setdefault(str(r["key"]), []).append(r)
        return out

    before, after = by_key(old), by_key(new)
    for key, reqs in after.items():
        was = before.get(key)
        if was is None or len(was) != 1 or len(reqs) != 1:
            return False  # a new key (or one spelled twice): old nodes may not carry it
        a, b = was[0], reqs[0]
        if a["operator"] != b["operator"] or a.get("minValues") != b.get("minValues"):
            return False
        va, vb = set(a.get("values") or ()), set(b.get("values") or ())
        if not {"In": va <= vb, "NotIn": vb <= va}.get(str(a["operator"]), va == vb):
            return False
    return True


def nominated(
    type_token: str,
    paths: Sequence[str],
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    rules: Iterable[DisruptionRule] | None = None,
) -> set[Effect]:
    """The resolved effects (``RESOLVED``) some row of ``type_token`` names for a changed path."""
    return {
        r.effect
        for r in (rules if rules is not None else disruption_rules())
        if r.type == type_token
        and r.effect in RESOLVED
        and any(forces(r.property, p, old, new) for p in paths)
    }


def update_disruption(
    type_token: str,
    paths: Sequence[str],
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    rules: Iterable[DisruptionRule] | None = None,
) -> str:
    """Why an in-place update of this resource takes down nodes or GPU pods; "" if it does not."""
    rules = tuple(rules if rules is not None else disruption_rules())
    by_effect: dict[Effect, list[str]] = {}
    recorded: list[str] = []  # values the plan records (was-set rows): shown old -> new
    for p in paths:
        row = rule_for(type_token, p, old, new, rules)
        if row is not None and row.effect not in HARMLESS:
            by_effect.setdefault(row.effect, []).append(p)
            if row.when == "was-set":
                recorded.append(f"{p}: {_pair(old, new, p)}")
    parts = []
    drifting = by_effect.get("drifts", []) + by_effect.get("drifts-matching", [])
    if drifting:
        parts.append(_drift(type_token, drifting, bool(by_effect.get("drifts")), new))
        parts += [f"resolved {r}" for r in recorded]
    if rolled := by_effect.get("rolls"):
        parts.append(
            f"update in place, but {', '.join(rolled)} re-creates every node of the pool a batch "
            "at a time: pods are drained and rescheduled"
        )
    for p in by_effect.get("reconfigures-gpus", []):
        parts.append(
            f"update in place, but {p} ({_pair(old, new, p)}) changes the MIG layout: the MIG "
            "manager repartitions the GPUs of every node of the pool, terminating their GPU pods "
            "(and rebooting each node with WITH_REBOOT)"
        )
    for p in by_effect.get("evicts", []):
        parts.append(
            f"update in place, but {p} adds a NoExecute taint onto the running nodes: every pod "
            "without a matching toleration is evicted from them"
        )
    for p in by_effect.get("removes-nodes", []):
        was, now = value_at(old, p), value_at(new, p)
        if isinstance(was, int) and isinstance(now, int):
            parts.append(
                f"update in place, but {p} ({was} -> {now}): while more than {now} nodes run, "
                "the rest are removed, their pods evicted"
            )
            continue
        if not isinstance(was, list):
            if now != "WhenEmptyOrUnderutilized":
                continue  # back to WhenEmpty: only nodes without workload pods are removed
            parts.append(
                f"update in place, but {p} ({_pair(old, new, p)}) lets Karpenter remove nodes "
                "that still run pods, evicting them"
            )
            continue
        kept = now if isinstance(now, list) else []
        gone = [z for z in was if z not in kept] if isinstance(was, list) else []
        parts.append(
            f"update in place, but {p} drops {', '.join(map(str, gone))}: the pool's nodes there "
            "are drained and deleted, their pods rescheduled elsewhere"
        )
    for p in by_effect.get("readvertises", []):
        parts.append(
            f"update in place, but {p} ({_pair(old, new, p)}) changes the resources the device "
            "plugin advertises on the nodes (names such as nvidia.com/gpu or nvidia.com/mig-"
            "<profile>, or shared replicas): pods asking for the old ones stop scheduling"
        )
    return "; ".join(parts)


def _pair(old: Mapping[str, Any], new: Mapping[str, Any], path: str) -> str:
    def shown(side: Mapping[str, Any]) -> str:
        v = value_at(side, path, "(absent)")
        return v if isinstance(v, str) else json.dumps(v, separators=(",", ":"))

    return f"{shown(old)} -> {shown(new)}"


_DRIFT = (
    "update in place, but {what} ({paths}) {verb} of {whose} (replaced one at a time by the "
    "Drifted budget; pods with PDBs or karpenter.sh/do-not-disrupt are deleted after "
    "terminationGracePeriod)"
)


def _drift(type_token: str, paths: Sequence[str], every: bool, new: Mapping[str, Any]) -> str:
    """Karpenter drift (karpenter-provider-aws v1.14 concepts/disruption.md "Drift"): with terminationGracePeriod set, a drifted node
    is disrupted even past blocking PDBs and karpenter.sh/do-not-disrupt once it elapses."""
    name = value_at(new, "metadata.name") or "?"
    pool = type_token == KARPENTER_NODE_POOL
    return _DRIFT.format(
        what=f"the NodePool {name} template" if pool else f"the EC2NodeClass {name}",
        paths=", ".join(paths),
        verb="drifts every node" if every else "may drift the nodes that no longer match it",
        whose=f"pool {name}" if pool else f"every NodePool using node class {name}",
    )


# EKS updates the vpc-cni add-on one minor at a time: "InvalidParameterException: Updating VPC-CNI
# can only go up or down 1 minor version at a time" (terraform-aws-modules/terraform-aws-eks#2749);
# https://docs.aws.amazon.com/eks/latest/userguide/managing-vpc-cni.html "update one minor version
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


def markdown_table() -> str:
    """The table of docs/day2.md: every row's type, property and effect."""
    lines = ["| resource type | property | effect |", "|---|---|---|"]
    for r in disruption_rules():
        when = {
            "was-set": " (a change of a recorded value)",
            "narrowed": " (unless it only widens)",
            "noexecute-added": " (a NoExecute taint added)",
            "family": " (a change of the resolved AMI family)",
            "lowered": " (a lower number)",
        }
        when = when.get(r.when, "")
        lines.append(f"| `{r.type}` | `{r.property}` | {r.effect}{when} |")
    return "\n".join(lines) + "\n"
