"""GKE's maintenance-availability rule computed for any recurrence: expand the RRULE's windows and
find the fewest hours any 32-day rolling window holds.

"You must allow at least 48 hours of maintenance availability in a 32-day rolling window. Only
contiguous availability windows of at least four hours are considered"
(https://cloud.google.com/kubernetes-engine/docs/how-to/maintenance-windows-and-exclusions).
The recurrence is an RFC 5545 RRULE whose first window is ``start``-``end``
(MaintenanceWindow.recurringWindow): each occurrence starts on a day the rule names, at the start's
time of day. Expanded here, per RFC 5545 section 3.3.10: FREQ DAILY, WEEKLY, MONTHLY; INTERVAL;
BYDAY (with an ordinal under MONTHLY: ``1SA``, ``-1SU``); BYMONTHDAY; BYMONTH; WKST; COUNT; UNTIL.
Other rule parts (BYSETPOS, BYWEEKNO, BYYEARDAY, BYHOUR, ...) are not expanded: ``None``.
"""

from __future__ import annotations

import bisect
import datetime as dt
import functools
import re
from collections.abc import Iterator

ROLLING = dt.timedelta(days=32)
# Two years of windows: every modelled rule repeats within it (a MONTHLY;INTERVAL=12 rule twice).
HORIZON_DAYS = 2 * 366 + 32
_DAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
_BYDAY = re.compile(r"([+-]?\d{1,2})?(MO|TU|WE|TH|FR|SA|SU)", re.ASCII)
_EXPANDED = frozenset(
    ("FREQ", "INTERVAL", "BYDAY", "BYMONTHDAY", "BYMONTH", "WKST", "COUNT", "UNTIL")
)


@functools.lru_cache(maxsize=64)
def min_hours_per_32_days(start: dt.datetime, end: dt.datetime, rule: str) -> float | None:
    """The fewest maintenance hours any 32 days from ``start`` on hold, or ``None`` for a rule
    this expansion does not model. ``rule`` already passed ``cluster.rrule_problem``."""
    parts: dict[str, str] = {}
    for part in rule.split(";"):
        name, _, value = part.partition("=")
        parts[name] = value
    if set(parts) - _EXPANDED or parts.get("FREQ") not in ("DAILY", "WEEKLY", "MONTHLY"):
        return None
    length = end - start
    horizon = _horizon(parts)
    until = _until(parts.get("UNTIL"))
    count = int(parts["COUNT"]) if parts.get("COUNT", "").isdigit() else None
    spans: list[tuple[dt.datetime, dt.datetime]] = []
    for day in _days(start.date(), parts, horizon):
        begin = dt.datetime.combine(day, start.timetz())
        if until is not None and begin > until:
            break
        if spans and begin <= spans[-1][1]:  # overlapping windows are one contiguous window
            spans[-1] = (spans[-1][0], max(spans[-1][1], begin + length))
        else:
            spans.append((begin, begin + length))
        if count is not None and len(spans) >= count:
            break
    return _fewest_hours(spans, start, horizon)


def _horizon(parts: dict[str, str]) -> int:
    """Days to expand: a DAILY or WEEKLY rule without an end or BYMONTH repeats every INTERVAL
    days or weeks, so one period past 32 days shows every window position; others two years."""
    interval = int(parts.get("INTERVAL", "1") or "1")
    if parts["FREQ"] == "MONTHLY" or {"COUNT", "UNTIL", "BYMONTH", "BYMONTHDAY"} & set(parts):
        return HORIZON_DAYS
    period = interval * (7 if parts["FREQ"] == "WEEKLY" else 1)
    return min(HORIZON_DAYS, 2 * (period + 32))


def _until(text: str | None) -> dt.datetime | None:
    if not text:
        return None
    digits = text.rstrip("Z")
    fmt = "%Y%m%dT%H%M%S" if "T" in digits else "%Y%m%d"
    try:
        return dt.datetime.strptime(digits, fmt).replace(tzinfo=dt.UTC)
    except ValueError:
        return None


def _days(first: dt.date, parts: dict[str, str], horizon: int) -> Iterator[dt.date]:
    """The days, from ``first`` on, on which an occurrence starts."""
    freq = parts["FREQ"]
    interval = int(parts.get("INTERVAL", "1") or "1")
    wkst = _DAYS.index(parts.get("WKST", "MO")) if parts.get("WKST") in _DAYS else 0
    byday = [m.groups() for d in parts.get("BYDAY", "").split(",") if (m := _BYDAY.fullmatch(d))]
    monthdays = [int(x) for x in parts.get("BYMONTHDAY", "").split(",") if x]
    months = {int(x) for x in parts.get("BYMONTH", "").split(",") if x}
    if freq == "WEEKLY" and not byday:
        byday = [(None, _DAYS[first.weekday()])]
    if freq == "MONTHLY" and not byday and not monthdays:
        monthdays = [first.day]
    week0 = first - dt.timedelta(days=(first.weekday() - wkst) % 7)
    for n in range(horizon):
        day = first + dt.timedelta(days=n)
        if months and day.month not in months:
            continue
        if freq == "DAILY" and n % interval:
            continue
        if freq == "WEEKLY" and ((day - week0).days // 7) % interval:
            continue
        if (
            freq == "MONTHLY"
            and ((day.year - first.year) * 12 + day.month - first.month) % interval
        ):
            continue
        if monthdays and not _month_day(day, monthdays):
            continue
        if byday and not any(_weekday_matches(day, o, w, freq) for o, w in byday):
            continue
        yield day


def _month_day(day: dt.date, monthdays: list[int]) -> bool:
    last = _last_of_month(day)
    return any(md == day.day or (md < 0 and last.day + md + 1 == day.day) for md in monthdays)


def _last_of_month(day: dt.date) -> dt.date:
    nxt = (day.replace(day=28) + dt.timedelta(days=4)).replace(day=1)
    return nxt - dt.timedelta(days=1)


def _weekday_matches(day: dt.date, ordinal: str | None, weekday: str, freq: str) -> bool:
    if _DAYS[day.weekday()] != weekday:
        return False
    if not ordinal or freq != "MONTHLY":  # an ordinal counts within the month (RFC 5545)
        return True
    n = int(ordinal)
    if n > 0:
        return (day.day - 1) // 7 + 1 == n
    return (_last_of_month(day).day - day.day) // 7 + 1 == -n


def _fewest_hours(
    spans: list[tuple[dt.datetime, dt.datetime]], start: dt.datetime, horizon: int
) -> float:
    """min over t >= start of the hours of ``spans`` inside [t, t + 32 days), within the horizon.

    The hours inside a sliding window change slope only where its start or its end crosses a
    span's edge, so the minimum is at one of those positions."""
    last = start + dt.timedelta(days=horizon - 32)
    candidates = {start} | {s for s, _ in spans} | {e for _, e in spans}
    candidates |= {s - ROLLING for s, _ in spans} | {e - ROLLING for _, e in spans}
    starts = [s for s, _ in spans]
    best = float("inf")
    for t in sorted(c for c in candidates if start <= c <= last):
        t_end = t + ROLLING
        hours = 0.0
        for s, e in spans[max(bisect.bisect_right(starts, t) - 1, 0) :]:
            if s >= t_end:
                break
            hours += max((min(e, t_end) - max(s, t)).total_seconds(), 0) / 3600
        best = min(best, hours)
    return 0.0 if best == float("inf") else best
