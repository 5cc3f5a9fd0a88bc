"""Check rows, the ``--json`` document, the table and the exit code (pure apart from printing).

The JSON shape and exit codes are the outside contract (CONTRACT.md, ``python -m quota.check``).
"""

from __future__ import annotations

import math
import re
import shutil
import textwrap
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
        """A row whose status follows from ``reading`` and what the stack runs already."""
        status, reason = verdict(demand.needed, reading, demand.own, demand.surge)
        if demand.own_error and reading.usage is not None:
            reason += f"; the stack's own nodes not read ({demand.own_error}): counted as others'"
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
            # Extension: what the stack holds at minimum scale (minNodes and warm nodes).
            "neededAtMinimum": self.demand.at_min,
            # Extension: of ``needed``, what an upgrade's surge nodes add.
            "surge": self.demand.surge,
        }
        if k.is_metric:  # what the stack's own running VMs hold, within ``usage`` (null: unread)
            out["ownUsage"] = _whole(self.demand.own, math.floor)
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


def role_check(cloud: Cloud, role: str, why: str, found: tuple[Status, str]) -> Check:
    """A row for an IAM role the stack needs to exist (``found``: status and reason)."""
    key = QuotaKey(cloud, "global", None, role, "role", "iam")
    row = DemandRow(key=key, name=f"IAM role {role} exists ({why})", needed=1)
    status, reason = found
    return Check(demand=row, status=status, reason=reason)


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


# Colour per status on a terminal (ANSI SGR): green ok, red short, yellow unknown.
_STYLE: Mapping[str, str] = {"ok": "32", "short": "31", "unknown": "33"}
# The API call a client names before its error ("regions.get: ", "GetServiceQuota: ").
_API_CALL = re.compile(r"^(?:[a-z]\w*(?:\.\w+)+|[A-Z]\w+): ")
# What to do about an error that hits every row, by a phrase of its text.
_ACTIONS = (
    (
        ("DefaultCredentialsError", "default credentials were not found"),
        "run `gcloud auth application-default login` (Application Default Credentials: "
        "https://cloud.google.com/docs/authentication/provide-credentials-adc), or pass "
        "--offline for the demand alone",
    ),
    (
        ("no AWS credentials", "Unable to locate credentials"),
        "configure AWS credentials (AWS_PROFILE, `aws sso login` or `aws configure`: "
        "https://docs.aws.amazon.com/cli/latest/userguide/cli-chap-authentication.html), or "
        "pass --offline for the demand alone",
    ),
    (
        (CONNECT, "endpoint unreachable"),
        "check the network or the QUOTA_ENDPOINT_* / AWS_ENDPOINT_URL settings, or pass "
        "--offline for the demand alone",
    ),
)


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
    if req.get("withoutSurge"):
        text += f" (without the upgrade surge of {req['withoutSurge']})"
    for c in req.get("context") or ():  # earlier requests that no longer stand in the way
        text += f"; {c}"
    if req.get("hint"):
        text += f"; {req['hint']}"
    return text


def shared_reason(checks: Sequence[Check]) -> str | None:
    """The reason every row that is not ``ok`` shares (its API call prefix aside), if there are at
    least two such rows: printed once instead of on every row."""
    reasons = {_API_CALL.sub("", c.reason) for c in checks if c.status != "ok"}
    rows = sum(1 for c in checks if c.status != "ok")
    return reasons.pop() if rows >= 2 and len(reasons) == 1 else None


def action_for(reason: str) -> str:
    """What a user can do about ``reason`` ("" when there is no general answer)."""
    for phrases, action in _ACTIONS:
        if any(p in reason for p in phrases):
            return action
    return ""


@dataclass(frozen=True, slots=True)
class _Row:
    cells: tuple[str, ...]  # region, quota, unit, need, limit, usage, status
    below: tuple[str, ...]  # lines under the row: name, reason, pools, request


_HEAD = ("REGION", "QUOTA", "UNIT", "NEED", "LIMIT", "USAGE", "STATUS")
_RIGHT = {3, 4, 5}  # numbers right-aligned


def _rows(checks: Sequence[Check], offline: bool, shared: str | None) -> list[_Row]:
    rows = []
    for c in checks:
        k = c.demand.key
        fam = k.gpu_family or k.vm_family
        quota = f"{k.quota} [{fam}]" if fam else k.quota
        lim, use = _whole(c.limit, math.floor), _whole(c.usage, math.ceil)
        cells = (
            k.region or "global",
            quota,
            k.unit,
            str(c.demand.needed),
            "-" if lim is None else str(lim),
            "-" if use is None else str(use),
            c.status,
        )
        below = []
        if k.cloud == "aws" and c.demand.name != k.quota:
            below.append(c.demand.name)  # AWS codes alone mean nothing to readers
        if c.reason and not (shared and _API_CALL.sub("", c.reason) == shared):
            below.append(c.reason)
        if offline and c.demand.pools:
            below.append("pools: " + "; ".join(c.demand.pools))
        elif c.demand.notes:  # why some pools' demand sits on this row (Spot on standard quota)
            below.append("counted here: " + "; ".join(c.demand.notes))
        if c.request:
            below.append("request: " + _request_text(c.request))
        rows.append(_Row(cells, tuple(below)))
    return rows


def render(
    stack: str,
    cloud: Cloud,
    checks: Sequence[Check],
    out: TextIO,
    offline: bool = False,
    notes: Sequence[str] = (),
    width: int | None = None,
    colour: bool | None = None,
) -> None:
    """Print ``checks`` to ``out``: one line per row with quota, unit, need, limit, usage and
    status, which fit in 80 columns; the quota's name, the reason, the pools and the request
    wrap below the row. A reason every row shares is printed once, with what to do about it.

    ``width``: the terminal's (``COLUMNS``, else the terminal size, else 80). ``colour``: on a
    terminal only, unless ``NO_COLOR`` / ``FORCE_COLOR`` say otherwise.
    """
    width = width or shutil.get_terminal_size((80, 24)).columns
    if colour is None:
        from infra.cli import colour_enabled

        colour = colour_enabled(out)
    shared = shared_reason(checks)
    rows = _rows(checks, offline, shared)
    widths = [max(len(r[i]) for r in (_HEAD, *(x.cells for x in rows))) for i in range(7)]
    # The quota column gives way when the line would not fit: its full text goes below the row.
    spare = width - (sum(widths) + 2 * 6)
    if spare < 0:
        widths[1] = max(len(_HEAD[1]), widths[1] + spare)
    title = f"{'Quota demand' if offline else 'Quota check'}: stack {stack} ({cloud})"
    print(title, file=out)
    print(_line(_HEAD, widths), file=out)
    wrap = textwrap.TextWrapper(
        width=max(20, width), initial_indent="    ", subsequent_indent="      "
    )
    wrap.break_on_hyphens = wrap.break_long_words = False  # URLs and quota names stay whole
    for r in rows:
        cells = list(r.cells)
        below = list(r.below)
        if len(cells[1]) > widths[1]:
            below.insert(0, cells[1])
            cells[1] = cells[1][: widths[1] - 1] + "\u2026"
        line = _line(tuple(cells), widths)
        if colour:
            line = line[: -len(r.cells[6])] + f"\033[{_STYLE[r.cells[6]]}m{r.cells[6]}\033[0m"
        print(line, file=out)
        for text in below:
            print("\n".join(wrap.wrap(text)), file=out)
    if shared:
        wrap.initial_indent = wrap.subsequent_indent = ""
        print("\n".join(wrap.wrap(f"every row: {shared}")), file=out)
        if action := action_for(shared):
            print("\n".join(wrap.wrap(f"to fix: {action}")), file=out)
    for n in notes:
        print(n, file=out)


def _line(cells: tuple[str, ...], widths: list[int]) -> str:
    return "  ".join(
        c.rjust(w) if i in _RIGHT else c.ljust(w)
        for i, (c, w) in enumerate(zip(cells, widths, strict=True))
    ).rstrip()
