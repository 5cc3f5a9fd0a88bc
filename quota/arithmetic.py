"""Quota arithmetic: verdicts and request sizes, in pure code.

``ok`` needs a known limit and a known usage with ``needed <= limit - usage``; anything the reads
could not establish is ``unknown`` (never ok). A missing usage can still prove ``short`` when the
demand alone exceeds the limit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

Status = Literal["ok", "short", "unknown"]

# Cloud Quotas reports -1 for "unlimited or no explicit limit" (QuotaConfig.preferred_value docs);
# ambiguous, so it is never read as headroom.
UNLIMITED = -1


@dataclass(frozen=True, slots=True)
class Reading:
    """What the cloud said about one quota.

    Attributes:
        limit: effective limit, ``None`` if not read.
        usage: current usage, ``None`` if not read (Cloud Quotas has no usage).
        error: why the limit or usage could not be read (``None`` on success).
    """

    limit: float | None = None
    usage: float | None = None
    error: str | None = None


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def verdict(needed: int, reading: Reading) -> tuple[Status, str]:
    """``(status, reason)`` for ``needed`` units against ``reading``.

    >>> verdict(20, Reading(limit=24, usage=4))
    ('ok', '20 needed, 20 free (limit 24, usage 4)')
    """
    limit, usage = reading.limit, reading.usage
    if reading.error is not None:
        if limit is not None and limit != UNLIMITED and usage is None and needed > limit:
            # the limit was read and the demand alone exceeds it, whatever the usage is
            return "short", f"{needed} needed, limit {_fmt(limit)} ({reading.error})"
        return "unknown", reading.error
    if limit is None:
        return "unknown", "quota missing: no limit reported"
    if limit == UNLIMITED:
        return "unknown", "limit reported as -1 (unlimited or not set); cannot confirm headroom"
    if usage is None:
        if needed > limit:
            return "short", f"{needed} needed, limit {_fmt(limit)} (usage unknown)"
        return "unknown", (
            f"usage not available (limit {_fmt(limit)}); headroom cannot be confirmed"
        )
    free = limit - usage
    text = f"{needed} needed, {_fmt(free)} free (limit {_fmt(limit)}, usage {_fmt(usage)})"
    return ("ok" if needed <= free else "short"), text


def desired_value(needed: int, reading: Reading) -> int | None:
    """The limit to request for a short row: ``ceil(usage + needed)``, only when above the limit.

    Returns ``None`` when no request should be filed: unknown limit, unknown usage (a request
    sized as if nothing ran could be granted and still be short), or a value that would not raise
    the limit (clouds reject requests at or below the current value).
    """
    if reading.limit is None or reading.limit == UNLIMITED or reading.usage is None:
        return None
    want = math.ceil(reading.usage + needed)
    return want if want > reading.limit else None
