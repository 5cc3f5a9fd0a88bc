"""How a change moves a stack's quota demand: per quota, what the old stack file needs, what the
new one needs, and the difference (``python -m quota.check --offline --diff OLD``), so a pull
request shows the quota it adds before anyone reads a limit. A side without a stack file (a new
or a deleted stack) needs nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from quota.demand import DemandRow
from quota.keys import QuotaKey


@dataclass(frozen=True, slots=True)
class Delta:
    """One quota's demand before and after the change."""

    key: QuotaKey
    name: str
    old: int
    new: int

    @property
    def change(self) -> int:
        """``new - old``: what the change adds (negative: frees)."""
        return self.new - self.old


def deltas(old: Sequence[DemandRow], new: Sequence[DemandRow]) -> list[Delta]:
    """Every quota either side needs, the new side's order first, then quotas only the old side
    needed (a row one side lacks counts 0 there)."""
    before = {r.key: r for r in old}
    after = {r.key: r for r in new}
    keys = [*after, *(k for k in before if k not in after)]
    return [
        Delta(
            k,
            (after.get(k) or before[k]).name,
            before[k].needed if k in before else 0,
            after[k].needed if k in after else 0,
        )
        for k in keys
    ]


def _signed(n: int) -> str:
    return f"+{n}" if n > 0 else str(n)


def render(found: Sequence[Delta], old_label: str, out: TextIO) -> None:
    """The change as a table below the demand: quota, unit, old → new, change."""
    print(f"Change from {old_label}:", file=out)
    head = ("REGION", "QUOTA", "UNIT", "OLD", "NEW", "CHANGE")
    rows = [
        (
            d.key.region or "global",
            d.key.quota,
            d.key.unit,
            str(d.old),
            str(d.new),
            _signed(d.change),
        )
        for d in found
    ]
    widths = [max(len(r[i]) for r in (head, *rows)) for i in range(len(head))]
    for r in (head, *rows):
        left = [c.ljust(w) for c, w in zip(r[:3], widths[:3], strict=True)]
        right = [c.rjust(w) for c, w in zip(r[3:], widths[3:], strict=True)]
        print("  ".join([*left, *right]).rstrip(), file=out)
    if not any(d.change for d in found):
        print("no quota demand changes", file=out)


def to_json(found: Sequence[Delta], old_label: str) -> dict[str, Any]:
    """The ``"diff"`` object of ``--json``: the old side's label and one row per quota."""
    return {
        "old": old_label,
        "rows": [
            {
                "scope": d.key.scope,
                "region": d.key.region,
                "quota": d.key.quota,
                "name": d.name,
                "unit": d.key.unit,
                "old": d.old,
                "new": d.new,
                "change": d.change,
            }
            for d in found
        ],
    }
