"""Quota arithmetic: verdicts and request sizes, in pure code.

``ok`` needs a known limit and a known usage with ``needed - own <= limit - usage``; anything the
reads could not establish is ``unknown`` (never ok). A missing usage can still prove ``short`` when
the demand alone exceeds the limit.

``own`` is what the stack's running VMs hold (``quota.own``): in the usage already and again in the
demand, so it is counted once. It offsets the demand only down to the surge: an upgrade adds its
surge nodes beside whatever runs ("the maximum number of nodes that can be created beyond the
current size of the node pool during the upgrade", GKE NodePool.upgradeSettings.maxSurge; EKS
"increments the Auto Scaling group's maximum size and desired size", managed-node-update-behavior),
and never by more than the usage the cloud reports.
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


def counted_own(needed: int, usage: float, own: float | None, surge: int = 0) -> float:
    """The part of ``own`` the demand already holds: at most the usage, and at most the demand
    without its surge (``needed - surge``), never below 0."""
    if own is None:
        return 0.0
    return max(0.0, min(own, usage, float(needed - surge)))


def verdict(
    needed: int, reading: Reading, own: float | None = None, surge: int = 0
) -> tuple[Status, str]:
    """``(status, reason)`` for ``needed`` units against ``reading``; ``own`` of them run already.

    >>> verdict(20, Reading(limit=24, usage=4))
    ('ok', '20 needed, 20 free (limit 24, usage 4)')
    >>> verdict(21, Reading(limit=21, usage=20), own=20, surge=1)
    ('ok', '21 needed, 20 already running in this stack: 1 more, 1 free (limit 21, usage 20)')
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
    held = counted_own(needed, usage, own, surge)
    more = needed - held
    ran = f", {_fmt(held)} already running in this stack: {_fmt(more)} more" if held else ""
    text = f"{needed} needed{ran}, {_fmt(free)} free (limit {_fmt(limit)}, usage {_fmt(usage)})"
    return ("ok" if more <= free else "short"), text


def desired_value(
    needed: int, reading: Reading, own: float | None = None, surge: int = 0
) -> int | None:
    """The limit to request for a short row: ``ceil(usage - own + needed)``, only when above the
    limit (``own`` as ``counted_own`` counts it: the stack's running VMs are in both).

    Returns ``None`` when no request should be filed: unknown limit, unknown usage (a request
    sized as if nothing ran could be granted and still be short), or a value that would not raise
    the limit (clouds reject requests at or below the current value).
    """
    if reading.limit is None or reading.limit == UNLIMITED or reading.usage is None:
        return None
    held = counted_own(needed, reading.usage, own, surge)
    want = math.ceil(reading.usage - held + needed)
    return want if want > reading.limit else None
