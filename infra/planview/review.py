"""The change preview as a reviewer reads it: values, counts, the cost change, a CI verdict.

``python -m infra.plan --stack NEW --diff OLD`` computes the changes in ``infra.core.diff``; this
module adds what a review needs around them: per changed property ``old => new``, a summary line
with create / update / replace / delete / unchanged counts, the cost at minimum and maximum per
hour and per month before and after, the ``--fail-on`` verdict, and the text / Markdown / JSON
renderings.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from infra.core.cost import HOURS_PER_MONTH, Cost
from infra.core.diff import Change, HalfApplied, changed_paths, value_at
from infra.core.errors import ConfigErrors, ConfigIssue
from infra.core.labels import GKE_COMPUTE_CLASS_LABEL
from infra.core.tokens import COMPUTE_CLASS, EKS_NODE_GROUP, NAMESPACE

Out = Callable[[str], None]

FAIL_ON = ("replace", "disruptive", "any")
OPS = ("create", "update", "replace", "delete", "unknown")
ABSENT = "(absent)"  # a property only one side sets
MAX_VALUE = 120  # characters of one value shown in text; JSON carries it whole


# --- where the old stack file comes from -------------------------------------------------------


NO_FILE = "/dev/null"  # `--diff /dev/null`: the stack is new (git's name for "no file")


class AbsentInRef(ConfigErrors):
    """``git show REF:path``: the ref exists, the path does not exist in it."""


@contextmanager
def old_stack_file(spec: str) -> Iterator[tuple[str, Path | None]]:
    """``(label, path)`` of ``--diff SPEC``: a stack name, a file path, or ``REF:path`` (git).

    ``REF:path`` is read with ``git show REF:path`` into a temporary file that lives as long as
    the context; its label stays ``REF:path``, so errors name what the user typed. ``path`` is
    ``None`` when the old side has no stack file: ``/dev/null``, or a ``REF:path`` whose ref
    exists without that path (a stack the change adds).

    Raises:
        ConfigErrors: no such stack or file, or git cannot show ``REF:path`` (a bad ref).
    """
    from infra.cli import stack_file, stack_path

    if spec == NO_FILE:
        yield spec, None
        return
    if Path(spec).exists() or ("/" in spec and ":" not in spec):
        yield spec, Path(spec)
        return
    if ":" in spec and not Path(spec).exists():
        ref, _, rel = spec.partition(":")
        try:
            text = git_show(spec, ref, rel)
        except AbsentInRef:
            yield f"{spec} {ABSENT}", None
            return
        with tempfile.TemporaryDirectory(prefix="infra-plan-diff-") as tmp:
            path = Path(tmp) / Path(rel).name
            path.write_text(text, encoding="utf-8")
            yield spec, path
        return
    try:
        path = stack_file(spec) if not spec.endswith((".yaml", ".yml")) else stack_path(spec)
    except ConfigErrors as e:  # "no stack 'x'": said of --diff, not of --stack
        raise ConfigErrors(ConfigIssue("--diff", i.reason) for i in e.issues) from e
    yield display_path(path), path


def display_path(path: Path) -> str:
    """``path`` relative to the working directory when it is below it (shorter in a PR comment)."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def git_show(spec: str, ref: str, rel: str, flag: str = "--diff", cwd: Path | None = None) -> str:
    """``git show REF:rel`` (in ``cwd``); a failure is a ``ConfigErrors`` line naming ``flag``."""
    # `git show REF:./path` resolves path from the working directory, `REF:path` from the top
    # of the repository (gitrevisions(7), "<rev>:<path>").
    if ref.startswith("-") or not ref:
        # git would read "-..." as an option (`--output=FILE` writes a file): refuse it, and
        # end git's options before the argument anyway ("--end-of-options", gitcli(7)).
        raise ConfigErrors(
            [ConfigIssue(flag, f"{spec}: a git ref cannot be empty or start with '-'")]
        )
    try:
        proc = subprocess.run(
            ["git", "show", "--end-of-options", f"{ref}:{rel}"],
            capture_output=True,
            text=True,
            check=False,
            cwd=cwd,
            env={**os.environ, "LC_ALL": "C"},  # git's own words, matched below
        )
    except OSError as e:
        raise ConfigErrors([ConfigIssue(flag, f"{spec}: cannot run git: {e}")]) from e
    if proc.returncode != 0:
        why = (proc.stderr.strip().splitlines() or ["git show failed"])[-1]
        # A ref without the path: "path '%s' does not exist in '%.*s'" / "path '%s' exists on
        # disk, but not in '%.*s'" (git object-name.c, diagnose_invalid_oid_path); a bad ref is
        # "invalid object name" and stays an error.
        absent = "does not exist in '" in why or "exists on disk, but not in '" in why
        raise (AbsentInRef if absent else ConfigErrors)([ConfigIssue(flag, f"{spec}: {why}")])
    return proc.stdout


def in_file(label: str, errors: ConfigErrors, tmp_path: Path | None = None) -> ConfigErrors:
    """The same problems, each line naming the stack file it is in (``label``)."""
    issues = []
    for i in errors.issues:
        path = i.path if tmp_path is None else i.path.replace(str(tmp_path), label)
        reason = i.reason if tmp_path is None else i.reason.replace(str(tmp_path), label)
        named = path if path.startswith(label) else f"{label}: {path}"
        issues.append(ConfigIssue(named, reason))
    return ConfigErrors(issues)


def kept_then_created_issues(kept: Sequence[Change]) -> list[ConfigIssue]:
    """One line per delete-first replace of a retained object of the same name and cluster
    (``infra.core.diff.kept_then_created``): its create would fail with AlreadyExists."""
    return [
        ConfigIssue(
            "--diff",
            f"{c.type} {c.name}: replaced in place of a retained object of the same name ({c.why}), "
            "so the create fails with AlreadyExists; change its name, or delete the live object "
            "first so the create finds none",
        )
        for c in kept
    ]


def name_collision_issues(same: Sequence[Change]) -> list[ConfigIssue]:
    """One line per create-first replace that keeps its name (``infra.core.diff.name_collisions``):
    the provider would create the new resource under the old one's name and be refused."""
    return [
        ConfigIssue(
            "--diff",
            f"{c.type} {c.name}: replaced create-first by {', '.join(p for p, _ in c.replace_because) or c.because}, "
            "which its name does not follow, so the new one is created under the old one's name "
            "and refused (ResourceInUseException); change a property its name hashes in the same "
            "edit, or remove the pool in one `pulumi up` and add it back in the next",
        )
        for c in same
    ]


def half_applied_issues(
    found: Sequence[HalfApplied], old_raw: Mapping[str, Any], new_raw: Mapping[str, Any]
) -> list[ConfigIssue]:
    """One ``<key>: <reason>`` line per replace that ``pulumi up`` would begin and fail in the
    middle of (``infra.core.diff.half_applied``), naming the stack keys of the guard and of the
    change that forces the replace, and the two-step fix."""
    keys = [_config_key(p) for p in changed_paths(dict(old_raw), dict(new_raw))]
    issues = []
    for h in found:
        c = h.change
        forced = [p for p, _ in c.replace_because]
        guard_key = next((k for k in keys if k.endswith(h.guard)), h.guard)
        causes = [k for k in keys if k.rsplit(".", 1)[-1] in {f.split(".")[0] for f in forced}]
        cause = ", ".join(causes or forced)
        two_steps = f"two steps: {guard_key}: false alone first, then {cause}"
        if h.turned_off:
            why = (
                f"false with {cause} (replaces {c.name}) in one `pulumi up`: the replace starts "
                f'once protect is off, then the provider refuses the delete ("Cannot destroy '
                f'cluster because deletion_protection is set to true" in the state); apply it in '
                f"{two_steps}"
            )
        else:
            why = (
                f"true in the state while {cause} replaces {c.name}: the provider refuses its "
                f"delete half-way; apply it in {two_steps}"
            )
        issues.append(ConfigIssue(guard_key, why))
    return issues


def _config_key(path: str) -> str:
    """``gpu-infra:cluster.network`` -> ``cluster.network`` (a stack key as errors name it)."""
    head, _, rest = path.partition(".")
    bare = head.split(":", 1)[-1]
    return f"{bare}.{rest}" if rest else bare


# --- the review --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Value:
    """One changed property of one resource: its value before and after (``ABSENT`` if unset)."""

    path: str
    old: Any
    new: Any


@dataclass(frozen=True, slots=True)
class Review:
    """Everything the diff prints."""

    changes: tuple[Change, ...]
    values: Mapping[str, tuple[Value, ...]]  # URN -> its changed properties' values
    notes: Mapping[str, tuple[str, ...]]  # URN -> how the change happens (``change_notes``)
    unchanged: int
    old_cost: Cost
    new_cost: Cost
    old_label: str
    new_label: str
    absent: str = ""  # "old": the stack is new (all create); "new": it is deleted (all delete)

    def counts(self) -> dict[str, int]:
        """Resources per op, with ``unchanged``; ops that do not occur are 0 (``unknown`` left
        out when 0)."""
        counts: dict[str, int] = dict.fromkeys(OPS, 0)
        for c in self.changes:
            counts[c.op] += 1
        if not counts["unknown"]:
            del counts["unknown"]
        counts["unchanged"] = self.unchanged
        return counts

    def summary(self) -> str:
        """``1 to create, 2 to update, 0 to replace, 0 to delete, 40 unchanged``."""
        return ", ".join(
            f"{n} {op}" if op == "unchanged" else f"{n} to {op}" for op, n in self.counts().items()
        )


def disruption(c: Change, before: Mapping[str, Any]) -> str:
    """Why ``c`` takes down nodes or pods: the diff's reason (``infra.core.disruption``), else a
    deleted or replaced Namespace
    ("When you delete a namespace, it deletes all resources in that namespace",
    https://kubernetes.io/docs/tasks/administer-cluster/namespaces/#deleting-a-namespace), else a
    GKE ComputeClass deleted or replaced under a new name (``before``: its old inputs). A class acts
    only on the pods whose class label is its name: "Given ComputeClass affects only workloads
    using workload separation label equal to CCs name" (the CRD's description,
    https://cloud.google.com/kubernetes-engine/docs/reference/crds/computeclass); "You define a
    ComputeClass object in the cluster, and then request that compute class in workloads ... When a
    matching workload demands new infrastructure, GKE provisions new nodes in line with the
    priorities that you set" (https://cloud.google.com/kubernetes-engine/docs/concepts/about-custom-compute-classes).
    Once the old name is gone, its pods get no new node."""
    if c.disruptive or c.retained:
        return c.disruptive
    if c.type == NAMESPACE and c.op in ("delete", "replace"):
        name = value_at(before, "metadata.name", None) or c.name
        return f"{c.op} of namespace {name}: every object in it is deleted, its pods stop"
    renamed = c.op == "replace" and "metadata.name" in c.properties
    if c.type == COMPUTE_CLASS and (c.op == "delete" or renamed):
        name = value_at(before, "metadata.name", None) or c.name
        return (
            f"{c.op} of ComputeClass {name}: pods that select it ({GKE_COMPUTE_CLASS_LABEL}="
            f"{name}, the gpuPools output's nodeSelector) get no new node once it is gone; only "
            "nodes already labelled for it take them"
        )
    return ""


def change_notes(c: Change) -> tuple[str, ...]:
    """What a reviewer should know about how a change happens, beyond its op.

    - An EKS node group replace is create-before-delete: its name carries a hash of what EKS
      cannot change in place (``infra.core.eks.lifecycle``), so the replacement has a new name
      and Pulumi creates it before deleting the old group, Pulumi's default order for a replace
      (https://www.pulumi.com/docs/iac/concepts/options/deletebeforereplace/).
    """
    notes: list[str] = []
    if c.type == EKS_NODE_GROUP and c.op == "replace":
        notes.append(
            "create-before-delete: the new node group (new name) is created first, then the old "
            "one is drained and deleted"
        )
    return tuple(notes)


def review(
    old_resources: Sequence[Mapping[str, Any]],
    new_resources: Sequence[Mapping[str, Any]],
    changes: Sequence[Change],
    costs: tuple[Cost, Cost],
    labels: tuple[str, str],
    absent: str = "",
) -> Review:
    """The review of ``changes`` between two plans' resource dicts (the ``--json`` shape)."""
    old_by = {r["urn"]: r for r in old_resources}
    new_by = {r["urn"]: r for r in new_resources}
    values: dict[str, tuple[Value, ...]] = {}
    for c in changes:
        before = (old_by.get(c.urn) or {}).get("inputs") or {}
        after = (new_by.get(c.urn) or {}).get("inputs") or {}
        values[c.urn] = tuple(
            Value(p, value_at(before, p, ABSENT), value_at(after, p, ABSENT)) for p in c.properties
        )
    notes = {c.urn: change_notes(c) for c in changes}
    marked = tuple(
        replace(c, disruptive=disruption(c, (old_by.get(c.urn) or {}).get("inputs") or {}))
        for c in changes
    )
    changed = {c.urn for c in changes}
    unchanged = sum(1 for u in new_by if u in old_by and u not in changed)
    return Review(marked, values, notes, unchanged, costs[0], costs[1], *labels, absent)


def empty_cost(like: Cost) -> Cost:
    """The cost of a side without a stack file: nothing runs, so every total is 0 (or, for own
    hardware, not priced, as ``like`` is), dated as ``like``."""
    return Cost((), None, like.prices_as_of, own_hardware=like.own_hardware)


_URN = re.compile(r"urn:pulumi:[^\s,;]*::([^\s,;:]+)")


def short_names(text: str) -> str:
    """``text`` with every URN shown as its resource's name (the part after the last ``::``)."""
    return _URN.sub(lambda m: m.group(1), text)


def failures(rev: Review, fail_on: str | None) -> list[str]:
    """The changes ``--fail-on`` refuses, one line each (empty: pass).

    ``any``: every change. ``replace``: replacements and deletions. ``disruptive``: changes that
    take down nodes, pods or the cluster (replaced or deleted clusters, pools and releases, and
    in-place updates that re-create a pool's nodes). A change whose op is ``unknown`` fails
    ``replace`` and ``disruptive`` too: it may be either, and an unknown is never a pass.
    """
    if fail_on is None:
        return []
    hit: list[str] = []
    for c in rev.changes:
        bad = (
            fail_on == "any"
            or c.op == "unknown"
            or (fail_on == "replace" and c.op in ("replace", "delete"))
            or (fail_on == "disruptive" and bool(c.disruptive))
        )
        if bad:
            hit.append(f"{c.op} {c.type} {c.name}" + (f": {c.disruptive}" if c.disruptive else ""))
    return hit


# --- renderings --------------------------------------------------------------------------------


def show(value: Any, limit: int = MAX_VALUE) -> str:
    """A value as one line: strings bare, everything else compact JSON, cut at ``limit``."""
    text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def show_pair(old: Any, new: Any, limit: int = MAX_VALUE) -> tuple[str, str]:
    """Two values as ``show`` does; two long strings are cut around where they first differ."""
    if not (isinstance(old, str) and isinstance(new, str)) or max(len(old), len(new)) <= limit:
        return show(old, limit), show(new, limit)
    same = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), 0)
    start = max(0, same - 20)
    lead = "\u2026" if start else ""
    return show(lead + old[start:], limit), show(lead + new[start:], limit)


def _money(v: float | None) -> str:
    return "unknown" if v is None else f"${v:,.2f}"


def _delta(old: float | None, new: float | None) -> str:
    if old is None or new is None:
        return "change unknown"
    d = new - old
    return f"{'+' if d >= 0 else '-'}${abs(d):,.2f}"


def _totals(rev: Review, scale: str) -> tuple[float | None, float | None, bool]:
    """(old, new, partial) USD per hour at ``scale``: every priced item (``None``: own hardware)."""
    old, new = rev.old_cost.total(scale), rev.new_cost.total(scale)
    o = None if rev.old_cost.own_hardware else old.per_hour
    n = None if rev.new_cost.own_hardware else new.per_hour
    return o, n, bool(old.unpriced or new.unpriced)


def cost_lines(rev: Review) -> list[str]:
    """The cost before and after, at minimum and maximum, per hour and per month, and the change
    (every priced item: nodes, control plane, NAT, disks; partial when some are not priced)."""
    lines = []
    for label, scale in (("minimum", "min"), ("maximum", "max")):
        old, new, partial = _totals(rev, scale)
        lines.append(
            f"cost at {label}: {_money(old)}/h => {_money(new)}/h ({_delta(old, new)}/h); "
            f"{_money(_month(old))}/month => {_money(_month(new))}/month "
            f"({_delta(_month(old), _month(new))}/month)" + (" (partial)" if partial else "")
        )
    if unverified := _unverified(rev):
        lines.append(f"cost: {unverified}")
    return lines


def _unverified(rev: Review) -> str:
    """The pools of each side priced from a node price a second source disagrees with."""
    sides = (("before", rev.old_cost.unverified), ("after", rev.new_cost.unverified))
    named = "; ".join(f"{side}: {', '.join(pools)}" for side, pools in sides if pools)
    return (
        f"node prices not verified, a second source disagrees ({named}; see the plan)"
        if named
        else ""
    )


def _month(v: float | None) -> float | None:
    return None if v is None else v * HOURS_PER_MONTH


_SYMBOL = {"create": "+", "update": "~", "replace": "+-", "delete": "-", "unknown": "?"}


def print_review(rev: Review, out: Out = print) -> None:
    """The text rendering: one block per changed resource, then the summary and cost lines."""
    out(f"diff: {rev.old_label} => {rev.new_label}")
    if rev.absent:
        out(ABSENT_SIDE[rev.absent].replace("`", ""))
    if not rev.changes:
        out("no changes: pulumi up would leave every resource as it is")
    for c in rev.changes:
        out(f"{_SYMBOL[c.op]:>2} {c.op:<7} {c.type} {c.name}")
        forced = dict(c.replace_because)
        for v in rev.values.get(c.urn, ()):
            mark = "  (forces replacement)" if v.path in forced else ""
            old, new = show_pair(v.old, v.new)
            out(f"      {v.path}: {old} => {new}{mark}")
        for p, source in c.replace_because:
            out(f"      why {p}: {source}")
        if c.order:
            out(f"      order: {c.order} ({c.why})")
        if c.disruptive:
            kind = "DISRUPTIVE" if c.op != "update" else "NOTE"
            out(f"      {kind}: {short_names(c.disruptive)}")
        if c.because:
            out(f"      {'unknown — ' if c.op == 'unknown' else ''}{short_names(c.because)}")
        for n in rev.notes.get(c.urn, ()):
            out(f"      NOTE: {n}")
    out("")
    out(rev.summary())
    for line in cost_lines(rev):
        out(line)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


ABSENT_SIDE = {
    "old": "A new stack: no stack file on the old side, so every resource is created.",
    "new": "The stack file is removed: every resource below is what `pulumi destroy` of the "
    "stack deletes (removing the file alone deletes nothing).",
}


def _unpriced(rev: Review) -> list[str]:
    """What the new side's totals leave out (and the old side's, when only it has a file)."""
    cost = rev.old_cost if rev.absent == "new" else rev.new_cost
    lo, hi = cost.total("min"), cost.total("max")
    return list(dict.fromkeys((*lo.unpriced, *hi.unpriced)))


def print_markdown(rev: Review, out: Out = print) -> None:
    """A pull-request comment: summary, cost table (partial marked, unpriced items listed), one
    table row per changed property with its resource type and a disruptive marker per row."""
    out(f"### `{rev.old_label}` → `{rev.new_label}`")
    out("")
    if rev.absent:
        out(ABSENT_SIDE[rev.absent])
        out("")
    out(f"**{rev.summary()}**")
    out("")
    out("| cost | before | after | change |")
    out("|---|---|---|---|")
    for label, scale in (("at minimum", "min"), ("at maximum", "max")):
        old, new, partial = _totals(rev, scale)
        mark = " (partial)" if partial else ""
        out(f"| {label}, per hour | {_money(old)} | {_money(new)}{mark} | {_delta(old, new)} |")
        o, n = _month(old), _month(new)
        out(f"| {label}, per month | {_money(o)} | {_money(n)}{mark} | {_delta(o, n)} |")
    unpriced = _unpriced(rev)
    if unpriced:
        out("")
        out("(partial): not in the totals: " + "; ".join(_cell(u) for u in unpriced))
    if unverified := _unverified(rev):
        out("")
        out(_cell(unverified[0].upper() + unverified[1:]))
    if not rev.changes:
        out("")
        out("No changes: `pulumi up` would leave every resource as it is.")
        return
    out("")
    out("| op | type | resource | property | old | new | disruptive | note |")
    out("|---|---|---|---|---|---|---|---|")
    for c in rev.changes:
        _markdown_rows(rev, c, out)


def _markdown_rows(rev: Review, c: Change, out: Out) -> None:
    """One row per changed property of ``c`` (one row if none), its op, type and name on the
    first; every row of a disruptive change is marked, the reason on the first."""
    forced = dict(c.replace_because)
    note = "; ".join(x for x in ("" if c.disruptive else c.because, *rev.notes.get(c.urn, ())) if x)
    vals = rev.values.get(c.urn) or (Value("", "", ""),)
    for i, v in enumerate(vals):
        first = i == 0
        why = "; ".join(
            x for x in ("forces replacement" if v.path in forced else "", note * first) if x
        )
        marker = ""
        if c.disruptive:
            marker = "⚠️ " + (short_names(c.disruptive) if first else "(same change)")
        old, new = show_pair(v.old, v.new, 60)
        path = f"`{v.path}`" if v.path else ""
        head = f"| {c.op} | `{c.type}` | `{c.name}` " if first else "| | | "
        out(
            f"{head}| {path} | {_cell(old)} | {_cell(new)} | {_cell(marker)} "
            f"| {_cell(short_names(why))} |"
        )


def review_json(rev: Review) -> dict[str, Any]:
    """``{"changes": [...], "summary": {...}, "cost": {...}}``: each change with ``old``/``new``
    per property (a property one side does not set is ``null`` there)."""
    changes = []
    for c in rev.changes:
        doc = c.to_json()
        vals = rev.values.get(c.urn, ())
        doc["old"] = {v.path: None if v.old is ABSENT else v.old for v in vals}
        doc["new"] = {v.path: None if v.new is ABSENT else v.new for v in vals}
        doc["notes"] = list(rev.notes.get(c.urn, ()))
        changes.append(doc)
    cost: dict[str, Any] = {"currency": "USD"}
    for key, scale in (("atMin", "min"), ("atMax", "max")):
        old, new, partial = _totals(rev, scale)
        cost[f"{key}Partial"] = partial
        for unit, mul in (("PerHour", 1.0), ("PerMonth", HOURS_PER_MONTH)):
            o = None if old is None else round(old * mul, 2 if mul > 1 else 5)
            n = None if new is None else round(new * mul, 2 if mul > 1 else 5)
            d = None if o is None or n is None else round(n - o, 2 if mul > 1 else 5)
            cost[f"{key}{unit}"] = {"old": o, "new": n, "change": d}
    # pools priced from a node price a second source disagrees with (named in each side's plan)
    cost["unverified"] = {
        "old": list(rev.old_cost.unverified),
        "new": list(rev.new_cost.unverified),
    }
    absent = rev.absent or None  # the side without a stack file: a new or a deleted stack
    return {"changes": changes, "summary": rev.counts(), "absent": absent, "cost": cost}
