"""A fleet of stacks planned in one process: one table of platform, region, GPUs and cost.

``python -m infra.plan --stack A --stack B`` (or ``--all``) loads the SDK once and runs each
stack's program on the mock engine in turn, so a second stack costs its own work, not another
interpreter start and SDK import.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infra.core.cost import HOURS_PER_MONTH, Cost
from infra.core.errors import ConfigErrors

Out = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class FleetRow:
    """One stack of the fleet."""

    stack: str
    platform: str
    region: str
    pools: int
    gpus_at_max: int
    cost: Cost
    resources: int
    document: dict[str, Any]  # the stack's ``--json`` plan document
    notes: tuple[str, ...]  # the operator's notes
    logs: tuple[tuple[str, str], ...]  # what ``pulumi up`` would log


def plan_one(spec: str) -> FleetRow:
    """Plan one stack (a name or a path) as ``python -m infra.plan --stack SPEC`` does.

    Raises:
        ConfigErrors: the stack file is missing or invalid.
    """
    from infra import mockengine
    from infra.cli import stack_file
    from infra.plan import load_path

    raw, config, plan = load_path(stack_file(spec))
    return fleet_row(config, plan, mockengine.run(raw, config.stack, plan.catalog))


def fleet_row(config: Any, plan: Any, recording: Any) -> FleetRow:
    """The fleet row of a stack already planned and run on the mock engine."""
    from infra.core.cost import estimate
    from infra.plan import plan_document
    from infra.planview.table import pool_rows

    cost = estimate(plan)
    rows = pool_rows(plan)
    return FleetRow(
        config.stack,
        config.platform,
        config.zone or config.region or "existing cluster",
        len(rows),
        sum(r.max_gpus for r in rows),
        cost,
        len(recording.resources),
        plan_document(config, cost, recording, plan),
        tuple(dict.fromkeys((*plan.notes, *(plan.operator.notes if plan.operator else ())))),
        tuple(recording.logs),
    )


def print_fleet_notes(rows: Sequence[FleetRow], hidden: frozenset[str]) -> None:
    """Each note and warning once, naming the stacks it concerns (ids as for one stack)."""
    from infra.planview import notes as notes_view

    where: dict[tuple[str, str], list[str]] = {}
    for r in rows:
        for n in r.notes:
            where.setdefault(("note", n), []).append(r.stack)
        for level, m in r.logs:
            if level in ("warning", "error") and m not in r.notes:
                where.setdefault((level, m), []).append(r.stack)
    for (level, text), stacks in where.items():
        if level == "error" or notes_view.shown(text, hidden):
            print(
                f"{level}: {text} [{notes_view.note_id(text)}] ({', '.join(stacks)})",
                file=sys.stderr,
            )


def _money(v: float | None) -> str:
    return "-" if v is None else f"${v:,.2f}"


def _month(v: float | None) -> float | None:
    return None if v is None else v * HOURS_PER_MONTH


def _sum(values: Sequence[float | None]) -> float | None:
    """The fleet's total; ``None`` only when no stack has a price (own hardware counts 0)."""
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _total(cost: Cost, scale: str) -> float | None:
    """Every priced item of a stack (``None``: own hardware, nothing billed by a cloud)."""
    return None if cost.own_hardware else cost.total(scale).per_hour


def _partial(cost: Cost) -> bool:
    return not cost.own_hardware and bool(cost.total("min").unpriced or cost.total("max").unpriced)


def totals(rows: Sequence[FleetRow]) -> dict[str, Any]:
    """The fleet's totals (``--json`` ``totals``): every priced item of every stack."""
    at_min = _sum([_total(r.cost, "min") for r in rows])
    at_max = _sum([_total(r.cost, "max") for r in rows])
    return {
        "stacks": len(rows),
        "gpuPools": sum(r.pools for r in rows),
        "gpusAtMax": sum(r.gpus_at_max for r in rows),
        "resources": sum(r.resources for r in rows),
        "atMinPerHour": None if at_min is None else round(at_min, 5),
        "atMaxPerHour": None if at_max is None else round(at_max, 5),
        "atMinPerMonth": None if at_min is None else round(at_min * HOURS_PER_MONTH, 2),
        "atMaxPerMonth": None if at_max is None else round(at_max * HOURS_PER_MONTH, 2),
        # stacks with items not priced (listed per stack in its cost.total.unpriced)
        "partial": [r.stack for r in rows if _partial(r.cost)],
        "ownHardware": [r.stack for r in rows if r.cost.own_hardware],
        # stacks priced from a node price a second source disagrees with (named in its plan)
        "unverified": [r.stack for r in rows if r.cost.unverified],
    }


def print_fleet(rows: Sequence[FleetRow], out: Out = print) -> None:
    """One line per stack and a totals line."""
    from infra.planview.table import table

    head = ("STACK", "PLATFORM", "REGION", "POOLS", "GPUS AT MAX", "$/H MIN", "$/H MAX")
    head += ("$/MONTH MIN", "$/MONTH MAX", "RESOURCES")
    body = [
        (
            r.stack,
            r.platform,
            r.region,
            str(r.pools),
            str(r.gpus_at_max),
            *(
                _money(v)
                + ("*" if _partial(r.cost) and v is not None else "")
                + ("!" if r.cost.unverified and v is not None else "")
                for v in (
                    _total(r.cost, "min"),
                    _total(r.cost, "max"),
                    _month(_total(r.cost, "min")),
                    _month(_total(r.cost, "max")),
                )
            ),
            str(r.resources),
        )
        for r in rows
    ]
    t = totals(rows)
    body.append(
        (
            "TOTAL",
            "",
            "",
            str(t["gpuPools"]),
            str(t["gpusAtMax"]),
            _money(t["atMinPerHour"]),
            _money(t["atMaxPerHour"]),
            _money(t["atMinPerMonth"]),
            _money(t["atMaxPerMonth"]),
            str(t["resources"]),
        )
    )
    table(head, body, out)
    out("\ncost: every priced item (nodes, control plane, NAT, boot disks, local SSD)")
    if t["partial"]:
        out(f"  * partial, some items not priced: {', '.join(t['partial'])} (see its plan)")
    if t["ownHardware"]:
        out(f"  - own hardware, no cloud price: {', '.join(t['ownHardware'])}")
    if t["unverified"]:
        out(
            "  ! node prices not verified, a second source disagrees: "
            f"{', '.join(t['unverified'])} (see its plan; the totals use the catalog's)"
        )


def unique_specs(specs: Sequence[str]) -> list[str]:
    """``specs`` with each stack file once: a stack named twice, or by its name and its path,
    would count its GPUs and cost twice. A repeat is named on stderr."""
    from infra.cli import stack_path

    seen: dict[Path, str] = {}
    out: list[str] = []
    for spec in specs:
        key = stack_path(spec).resolve()
        if key in seen:
            print(f"{spec}: --stack: the same stack file as {seen[key]}; planned once",
                  file=sys.stderr)  # fmt: skip
            continue
        seen[key] = spec
        out.append(spec)
    return out


def stacks_in(stacks_dir: Path) -> list[str]:
    """The stack files of ``stacks_dir`` (``Pulumi.<stack>.yaml``), sorted.

    Raises:
        ConfigErrors: the directory does not exist or holds no stack file.
    """
    from infra.core.errors import ConfigIssue

    found = sorted(str(p) for p in stacks_dir.glob("Pulumi.*.yaml")) if stacks_dir.is_dir() else []
    if not found:
        why = "is not a directory" if not stacks_dir.is_dir() else "holds no Pulumi.<stack>.yaml"
        raise ConfigErrors([ConfigIssue("--stacks-dir", f"{stacks_dir} {why}")])
    return found


def run_fleet(
    specs: Sequence[str], as_json: bool, hidden: frozenset[str], stacks_dir: Path | None = None
) -> int:
    """Plan ``specs`` (every stack file of ``stacks_dir`` if empty, default ``stacks/`` of the
    working directory: a user's own stacks, not the samples beside this project's code); exit
    code as for one stack.

    A stack with an invalid config is reported (its file named on every line) and left out;
    the others are still planned, and the exit code is 2.
    """
    rows: list[FleetRow] = []
    code = 0
    for spec in unique_specs(specs or stacks_in(stacks_dir or Path.cwd() / "stacks")):
        try:
            row = plan_one(spec)
        except ConfigErrors as e:
            for line in str(e).splitlines():
                print(f"{spec}: {line}", file=sys.stderr)
            code = 2
            continue
        if any(r.stack == row.stack for r in rows):  # two files, one stack name: totals lie
            print(f"{spec}: --stack: a stack named {row.stack!r} is already in the fleet; "
                  "left out (rename one)", file=sys.stderr)  # fmt: skip
            code = 2
            continue
        rows.append(row)
    print_fleet_notes(rows, hidden)
    if as_json:
        doc = {"stacks": {r.stack: r.document for r in rows}, "totals": totals(rows)}
        sys.stdout.write(json.dumps(doc, indent=2, allow_nan=False) + "\n")
    else:
        lines: list[str] = []
        print_fleet(rows, lines.append)
        from infra.plan import write_text

        write_text("\n".join(lines) + "\n")
    return code
