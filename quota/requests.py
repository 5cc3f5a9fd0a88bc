"""``--request``: which short rows to file, for how much, and the justification an approver reads.

Pure apart from the service calls it is handed. A row is filed for ``usage - own + needed``
(``arithmetic.desired_value``: the stack's running nodes are in the usage and in the demand, so
they count once), or without the upgrade surge when ``--no-surge`` says so. The default
justification names the stack, the cluster, every pool's nodes and units, the surge and what
runs already: what a reviewer weighs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from quota.arithmetic import Reading, counted_own, desired_value
from quota.keys import QuotaKey

# Preemptible quota is requested only when asked (--preemptible-quota): Spot draws on it once granted.
_SPOT_SKIP = (
    "Spot demand counts here because preemptible quota is granted; pass --preemptible-quota to "
    "request more of it"
)
# Lines of a row's pools a justification lists before it says how many more there are.
_MAX_POOL_LINES = 6


def to_file(
    checks: Sequence[Any],
    readings: dict[QuotaKey, Reading],
    *,
    preemptible_quota: bool,
    no_surge: bool,
    limit_advice: Any,
) -> list[tuple[Any, int]]:
    """``(check, value)`` of every short row to file; the others short get ``request`` set to
    why they are skipped (``limit_advice(key)``: what to do about a short service limit)."""
    todo: list[tuple[Any, int]] = []
    for c in checks:
        key = c.demand.key
        if c.status == "short" and key.is_service_limit:
            c.request = {"action": "skipped", "status": limit_advice(key)}
            continue
        if c.status != "short" or not key.is_metric:
            continue
        spot_only = c.demand.models == {"spot"}  # flex-start/queued always use preemptible
        if spot_only and _is_preemptible(key) and not preemptible_quota:
            c.request = {"action": "skipped", "status": _SPOT_SKIP}
            continue
        needed, surge = _sized(c, no_surge)
        want = desired_value(needed, readings[key], c.demand.own, surge)
        if want is None and readings[key].usage is None:
            # short from the limit alone: usage unknown, so no size to ask for
            c.request = {
                "action": "skipped",
                "status": "usage unknown: cannot size the request (limit "
                f"{c.limit:g} < {c.demand.needed} needed); read the usage and request by hand",
            }
            continue
        if want is None:  # short only by the surge, and --no-surge leaves it out
            c.request = {
                "action": "skipped",
                "status": f"fits without the upgrade surge (+{c.demand.surge}); --no-surge",
            }
            continue
        todo.append((c, want))
    return todo


def _sized(c: Any, no_surge: bool) -> tuple[int, int]:
    """(needed, surge) a request is sized for: without the surge with ``--no-surge``."""
    if no_surge:
        return c.demand.needed - c.demand.surge, 0
    return c.demand.needed, c.demand.surge


def _is_preemptible(key: QuotaKey) -> bool:
    return key.cloud == "gcp" and key.quota.startswith("PREEMPTIBLE_")


def file_all(todo: Sequence[tuple[Any, int]], file: Any, no_surge: bool) -> None:
    """File every ``(check, value)`` at once with ``file(check, value)``; set each ``request``."""
    with ThreadPoolExecutor(max_workers=max(1, len(todo))) as pool:
        for (c, _), result in zip(todo, pool.map(lambda t: file(*t), todo), strict=True):
            if no_surge and c.demand.surge:
                result = {**result, "withoutSurge": c.demand.surge}
            c.request = result


def _asides_out(line: str) -> str:
    """A pools line without its parenthesised and bracketed explanations."""
    out = line
    for _ in range(3):  # nested asides
        out = re.sub(r"\s*[\(\[][^\(\)\[\]]*[\)\]]", "", out)
    return out.strip()


_SINGULAR = {"GPUs": "GPU", "vCPUs": "vCPU", "VMs": "VM", "addresses": "address"}


def _pool_text(line: str, unit: str) -> str:
    """``gpu-t4: 1 x 20 nodes`` (a pools line) as ``gpu-t4: 20 nodes x 1 GPU``."""
    m = re.fullmatch(
        r"(?P<pool>.+): (?P<per>\d+) x (?P<n>\d+) (?P<what>(?:bootstrap )?nodes)", line
    )
    if m is None:
        return line
    per = int(m["per"])
    each = _SINGULAR.get(unit, unit) if per == 1 else unit
    return f"{m['pool']}: {m['n']} {m['what']} x {per} {each}"


def justification(
    stack: str, cluster: str, region: str, check: Any, want: int, no_surge: bool
) -> str:
    """The default justification of a request: the stack, the cluster, what each pool needs at
    its maximum, the upgrade surge, what the stack and others run, and the value asked."""
    row = check.demand
    key = row.key
    where = f"in {key.region}" if key.region else "across all regions"
    lines = [
        _pool_text(_asides_out(p), key.unit)
        for p in row.pools
        if not p.startswith(("surge:", "bootstrap"))
    ]
    more = len(lines) - _MAX_POOL_LINES
    pools = "; ".join(lines[:_MAX_POOL_LINES]) + (f"; and {more} more" if more > 0 else "")
    surge = ""
    if row.surge:
        surge = (
            f"; without the {row.surge} of the upgrade surge"
            if no_surge
            else f"; {row.surge} for surge nodes during node upgrades"
        )
    usage = check.usage or 0.0
    own = counted_own(row.needed, usage, row.own, 0 if no_surge else row.surge)
    running = (
        f" It runs {own:g} of them already; other workloads use {usage - own:g}."
        if row.own is not None
        else ""
    )
    return (
        f"gpu-infra stack {stack}, Kubernetes cluster {cluster} in {region}: its node pools need "
        f"{row.needed - (row.surge if no_surge else 0)} {key.unit} of {key.quota} {where} "
        f"({pools} at their maximum{surge}).{running} Requested value {want}."
    )
