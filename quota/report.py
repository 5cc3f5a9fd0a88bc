"""Check rows, the ``--json`` document, the table and the exit code (pure apart from printing).

The JSON shape and exit codes are the outside contract (CONTRACT.md, ``python -m quota.check``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from quota.arithmetic import Reading, Status, verdict
from quota.demand import Cloud, DemandRow
from quota.keys import QuotaKey, quota_id_of

EXIT_OK = 0
EXIT_SHORT = 1
EXIT_UNKNOWN = 3


@dataclass(slots=True, kw_only=True)
class Check:
    """One row of the report: a demand row with what the cloud said and what was requested.

    Attributes:
        demand: the quota and how much of it the stack needs.
        limit: effective limit (``None``: not read).
        usage: current usage (``None``: not read).
        status: ``ok`` | ``short`` | ``unknown``.
        reason: why, in one sentence.
        request: what ``--request`` did for this row, ``None`` if nothing.
    """

    demand: DemandRow
    limit: float | None = None
    usage: float | None = None
    status: Status = "unknown"
    reason: str = ""
    request: dict[str, Any] | None = None

    @classmethod
    def judged(cls, demand: DemandRow, reading: Reading) -> Check:
        """A row whose status follows from ``reading``."""
        status, reason = verdict(demand.needed, reading)
        return cls(
            demand=demand, limit=reading.limit, usage=reading.usage, status=status, reason=reason
        )

    def as_json(self) -> dict[str, Any]:
        """The contract's JSON object for this row (plus ``pools``, an extension)."""
        k = self.demand.key
        out: dict[str, Any] = {
            "scope": k.scope,
            "region": k.region,
            "quota": k.quota,
            "name": self.demand.name,
            "unit": k.unit,
            "needed": self.demand.needed,
            "limit": _whole(self.limit, math.floor),
            "usage": _whole(self.usage, math.ceil),
            "status": self.status,
            "reason": self.reason,
            "request": self.request,
            "pools": list(self.demand.pools),
        }
        if k.gpu_family:
            out["gpuFamily"] = k.gpu_family
        if k.vm_family:
            out["vmFamily"] = k.vm_family
        if k.cloud == "gcp" and k.is_metric:
            out["quotaId"] = quota_id_of(k)
        if self.demand.source:
            out["source"] = self.demand.source
        return out


def _whole(x: float | None, rounding: Callable[[float], int]) -> int | None:
    # Quotas are whole units; Compute returns floats (24.0). Limits round down and usage up, so a
    # fractional value never shows more headroom than there is.
    return None if x is None else rounding(x)


def api_checks(cloud: Cloud, problems: Sequence[tuple[str, str]]) -> list[Check]:
    """An ``unknown`` row per required API that is disabled or could not be read."""
    out: list[Check] = []
    for api, reason in problems:
        key = QuotaKey(cloud, "global", None, api, "API", "serviceusage")
        row = DemandRow(key=key, name=f"API {api} enabled", needed=1)
        out.append(Check(demand=row, status="unknown", reason=reason))
    return out


CONNECT = "cannot connect to "


def collapse_connection_failures(checks: Sequence[Check]) -> list[str]:
    """When every row failed to connect, say each endpoint and cause once (returned as notes).

    The rows stay ``unknown`` with a short reason pointing at the note.
    """
    judged = [c for c in checks if c.demand.key.is_metric]
    if not judged or any(not c.reason.startswith(CONNECT) for c in judged):
        return []
    notes = list(dict.fromkeys(c.reason for c in checks if c.reason.startswith(CONNECT)))
    for c in checks:
        if c.reason.startswith(CONNECT):
            c.reason = "not read: endpoint unreachable (see below)"
    return notes


def offline_checks(rows: Sequence[DemandRow]) -> list[Check]:
    """Demand-only rows for ``--offline`` (no limits read, so every status is unknown)."""
    return [Check(demand=r, reason="offline: demand only, no cloud calls") for r in rows]


def document(
    stack: str, cloud: Cloud, checks: Sequence[Check], notes: Sequence[str] = ()
) -> dict[str, Any]:
    """The ``--json`` document."""
    doc: dict[str, Any] = {"stack": stack, "cloud": cloud, "checks": [c.as_json() for c in checks]}
    if notes:
        doc["notes"] = list(notes)
    return doc


def exit_code(checks: Sequence[Check], offline: bool = False) -> int:
    """0 all ok; 1 something short (requests filed or pending included); 3 something unknown.

    Short wins over unknown: a known shortfall is the more actionable answer, and both fail.
    """
    if offline:
        return EXIT_OK
    statuses = {c.status for c in checks}
    if "short" in statuses:
        return EXIT_SHORT
    if "unknown" in statuses:
        return EXIT_UNKNOWN
    return EXIT_OK


_STYLE: Mapping[str, str] = {"ok": "green", "short": "red", "unknown": "yellow"}


def _request_text(req: dict[str, Any] | None) -> str:
    if not req:
        return ""
    text = str(req.get("action", ""))
    asked = req.get("preferred", req.get("requested"))
    if text == "pending" and asked is not None and req.get("desired") and asked < req["desired"]:
        text += f" for {asked} (needs {req['desired']})"  # an open request asking for too little
    elif req.get("desired"):
        text += f" -> {req['desired']}"
    if req.get("status"):
        text += f" ({req['status']})"
    if req.get("caseId"):
        text += f" case {req['caseId']}"
    for c in req.get("context") or ():  # earlier requests that no longer stand in the way
        text += f"; {c}"
    return text


def render(
    stack: str,
    cloud: Cloud,
    checks: Sequence[Check],
    out: TextIO,
    offline: bool = False,
    notes: Sequence[str] = (),
) -> None:
    """Print a readable table of ``checks`` to ``out``."""
    from rich.console import Console  # rich only when a table is printed
    from rich.table import Table

    console = Console(file=out, soft_wrap=False, width=max(120, Console(file=out).width))
    title = f"{'Quota demand' if offline else 'Quota check'}: stack {stack} ({cloud})"
    table = Table(title=title, show_lines=False)
    for col in ("scope", "region", "quota", "unit", "needed"):
        table.add_column(col, justify="right" if col == "needed" else "left", no_wrap=True)
    if offline:
        table.add_column("pools")
    else:
        for col in ("limit", "usage"):
            table.add_column(col, justify="right")
        table.add_column("status")
        table.add_column("reason")
        if any(c.request for c in checks):
            table.add_column("request")
    for c in checks:
        k = c.demand.key
        fam = k.gpu_family or k.vm_family
        quota = f"{k.quota} [{fam}]" if fam else k.quota
        if k.cloud == "aws" and c.demand.name != k.quota:  # codes alone mean nothing to readers
            quota = f"{k.quota} {c.demand.name}"
        cells = [k.scope, k.region or "-", quota, k.unit, str(c.demand.needed)]
        if offline:
            cells.append("; ".join(c.demand.pools))
        else:
            lim, use = _whole(c.limit, math.floor), _whole(c.usage, math.ceil)
            cells += [
                "-" if lim is None else str(lim),
                "-" if use is None else str(use),
                f"[{_STYLE[c.status]}]{c.status}[/]",
                c.reason,
            ]
            if any(x.request for x in checks):
                cells.append(_request_text(c.request))
        table.add_row(*cells)
    console.print(table)
    for n in notes:
        console.print(n, highlight=False, markup=False)
