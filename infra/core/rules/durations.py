"""Durations as their receivers parse them: one rule per receiver parser.

- Go's ``time.ParseDuration`` (golang/go src/time/format.go @ f7396aaea029: ParseDuration,
  leadingInt, leadingFraction, unitMap): the cluster-autoscaler's ``flag.Duration`` flags
  (kubernetes/autoscaler cluster-autoscaler/config/flags/flags.go, e.g. scale-down-unneeded-time).
- Karpenter's NodePool fields: first the API server checks the CRD's pattern (the vendored
  ``infra/core/data/karpenter/nodepools.schema.json``), then the controller decodes the value with
  ``time.ParseDuration``: ``*metav1.Duration`` (k8s.io/apimachinery pkg/apis/meta/v1/duration.go
  UnmarshalJSON) for terminationGracePeriod, ``NillableDuration`` (kubernetes-sigs/karpenter
  pkg/apis/v1/duration.go: ``Never`` or ParseDuration) for consolidateAfter and expireAfter.
- GKE's ``maxRunDuration``: a google.protobuf.Duration in seconds, at most the flex-start limit.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

from infra.core.errors import shown
from infra.core.rules.limits import limit

# format.go unitMap: nanoseconds per unit; "µs" is U+00B5 (micro sign), "μs" U+03BC (Greek mu).
UNITS: dict[str, int] = {
    "ns": 1,
    "us": 10**3,
    "µs": 10**3,
    "μs": 10**3,
    "ms": 10**6,
    "s": 10**9,
    "m": 60 * 10**9,
    "h": 3600 * 10**9,
}
# time.Duration is an int64 of nanoseconds (receiver_limits.csv go.duration = 1<<63 - 1); the
# parser accumulates in a uint64 and refuses anything past 1<<63 along the way.
MAX_NS = limit("go.duration")
_BOUND = MAX_NS + 1
LONGEST = "2562047h47m16.854775807s"  # Duration(math.MaxInt64).String()


class GoDurationError(ValueError):
    """What ``time.ParseDuration`` answers for a value it refuses (its own error text)."""

    def __init__(self, message: str, *, overflow: bool = False) -> None:
        super().__init__(message)
        self.overflow = overflow


def _digits(s: str) -> int:
    i = 0
    while i < len(s) and "0" <= s[i] <= "9":
        i += 1
    return i


def _leading_int(s: str, orig: str) -> tuple[int, str]:
    """leadingInt: the leading [0-9]* as an integer, refusing one beyond 1<<63."""
    x, n = 0, _digits(s)
    for c in s[:n]:
        if x > _BOUND // 10 or (x := x * 10 + ord(c) - 48) > _BOUND:
            raise GoDurationError(f"time: invalid duration {_quote(orig)}", overflow=True)
    return x, s[n:]


def _leading_fraction(s: str) -> tuple[int, float, str]:
    """leadingFraction: the digits after '.', which stop adding precision (never fail) once the
    next one would pass int64."""
    x, scale, overflow, n = 0, 1.0, False, _digits(s)
    for c in s[:n]:
        if overflow:
            continue
        if x > MAX_NS // 10 or (y := x * 10 + ord(c) - 48) > _BOUND:
            overflow = True
            continue
        x, scale = y, scale * 10
    return x, scale, s[n:]


def _quote(s: str) -> str:
    return json.dumps(s, ensure_ascii=True)


def go_duration_ns(value: str) -> int:
    """Nanoseconds of ``value`` exactly as ``time.ParseDuration`` computes them.

    Raises:
        GoDurationError: with the message ParseDuration returns.
    """
    s, neg = value, False
    if s[:1] in ("-", "+"):
        neg, s = s[0] == "-", s[1:]
    if s == "0":
        return 0
    if not s:
        raise GoDurationError(f"time: invalid duration {_quote(value)}")
    total = 0
    while s:
        if not (s[0] == "." or "0" <= s[0] <= "9"):
            raise GoDurationError(f"time: invalid duration {_quote(value)}")
        whole, rest = _leading_int(s, value)
        pre, s = len(rest) != len(s), rest
        frac, scale, post = 0, 1.0, False
        if s[:1] == ".":
            frac, scale, rest = _leading_fraction(s[1:])
            post, s = len(rest) != len(s) - 1, rest
        if not pre and not post:
            raise GoDurationError(f"time: invalid duration {_quote(value)}")
        i = next((k for k, c in enumerate(s) if c == "." or "0" <= c <= "9"), len(s))
        if i == 0:
            raise GoDurationError(f"time: missing unit in duration {_quote(value)}")
        unit, s = s[:i], s[i:]
        if unit not in UNITS:
            raise GoDurationError(f"time: unknown unit {_quote(unit)} in duration {_quote(value)}")
        if whole > _BOUND // UNITS[unit]:
            raise GoDurationError(f"time: invalid duration {_quote(value)}", overflow=True)
        whole *= UNITS[unit]
        if frac > 0:
            # float64, as Go computes it: nanosecond-exact for fractions of an hour
            whole += int(float(frac) * (float(UNITS[unit]) / scale))
        total = (total + whole) % (1 << 64)  # uint64, as Go adds (1<<63 twice wraps to 0)
        if whole > _BOUND or total > _BOUND:
            raise GoDurationError(f"time: invalid duration {_quote(value)}", overflow=True)
    if neg:
        return -total
    if total > MAX_NS:
        raise GoDurationError(f"time: invalid duration {_quote(value)}", overflow=True)
    return total


def _go_reason(v: str, e: GoDurationError, receiver: str) -> str:
    said = shown(str(e), 120)[1:-1]  # Go's message quotes the whole value; a long one is cut
    if e.overflow:
        return f"{shown(v)} is beyond Go's longest duration ({LONGEST}); {receiver} would refuse it ({said})"
    return (
        f"{shown(v)} is not a Go duration such as 90s, 10m or 1h30m (units ns, us, ms, s, m, h); "
        f"{receiver} would refuse it ({said})"
    )


def check_go_duration(v: str) -> str:
    """A value ``time.ParseDuration`` accepts: the cluster-autoscaler's ``flag.Duration`` flags."""
    try:
        go_duration_ns(v)
    except GoDurationError as e:
        raise ValueError(_go_reason(v, e, "the cluster-autoscaler's flag parser")) from None
    return v


# --- Karpenter NodePool fields -------------------------------------------------------------------
_NODEPOOL_CRD = Path(__file__).resolve().parents[1] / "data" / "karpenter" / "nodepools.schema.json"
# field -> its path in the CRD's openAPIV3Schema, and whether "Never" is a value (NillableDuration)
NODEPOOL_DURATIONS: dict[str, tuple[tuple[str, ...], bool]] = {
    "consolidateAfter": (("spec", "disruption", "consolidateAfter"), True),
    "expireAfter": (("spec", "template", "spec", "expireAfter"), True),
    "terminationGracePeriod": (("spec", "template", "spec", "terminationGracePeriod"), False),
}


@functools.cache
def _nodepool_schema() -> Any:
    return json.loads(_NODEPOOL_CRD.read_text(encoding="utf-8"))["openAPIV3Schema"]


@functools.cache
def nodepool_pattern(field: str) -> re.Pattern[str]:
    """The API server's pattern of NodePool duration ``field``, from the vendored CRD."""
    node = _nodepool_schema()
    for part in NODEPOOL_DURATIONS[field][0]:
        node = node["properties"][part]
    return re.compile(node["pattern"], re.ASCII)


def check_nodepool_duration(field: str, v: str) -> str:
    """A value NodePool ``field`` takes: the CRD's pattern, then the controller's decoder."""
    if not nodepool_pattern(field).fullmatch(v):
        never = ", or Never" if NODEPOOL_DURATIONS[field][1] else ""
        raise ValueError(
            f"{shown(v)} is not a NodePool {field}: whole numbers each with s, m or h such as "
            f"90s or 1h30m{never} (the CRD's pattern {nodepool_pattern(field).pattern})"
        )
    if v != "Never":
        try:
            go_duration_ns(v)
        except GoDurationError as e:
            raise ValueError(_go_reason(v, e, "Karpenter's NodePool decoder")) from None
    return v


def check_termination_grace_period(v: str) -> str:
    """NodePool ``spec.template.spec.terminationGracePeriod`` (``*metav1.Duration``)."""
    return check_nodepool_duration("terminationGracePeriod", v)


def check_consolidate_after(v: str) -> str:
    """NodePool ``spec.disruption.consolidateAfter`` (``NillableDuration``: ``Never`` too)."""
    return check_nodepool_duration("consolidateAfter", v)


# --- GKE -----------------------------------------------------------------------------------------
# Flex-start VMs run for at most seven days
# (https://cloud.google.com/kubernetes-engine/docs/concepts/dws: "for up to seven days").
MAX_FLEX_RUN_SECONDS = limit("gke.flex_start_run_seconds")


# google.protobuf.Duration in JSON: "seconds with up to nine fractional digits, ending with 's'"
# (https://protobuf.dev/reference/protobuf/google.protobuf/#duration); protocolbuffers/protobuf-go
# encoding/protojson well_known_types.go parseDuration: an optional sign, 0 or [1-9][0-9]* (or
# nothing before a '.'), an optional '.' with 0-9 digits, then 's' ("1s, 0.1s, 1.s, .1s, +1s").
_PROTO_DURATION = re.compile(r"([-+]?)(0|[1-9][0-9]*)?(?:\.([0-9]{0,9}))?s", re.ASCII)


def check_max_run_duration(v: str) -> str:
    """``maxRunDuration``: a protobuf Duration (``86400s``, ``3.5s``), positive, at most 7 days."""
    m = _PROTO_DURATION.fullmatch(v) if len(v) <= 24 else None
    if m is None or not (m[2] or m[3] is not None):
        raise ValueError(
            f"{shown(v)} is not a duration in seconds such as 86400s or 3.5s (a protobuf "
            "Duration: digits, up to nine fractional digits, then s)"
        )
    nanos = int(m[2] or 0) * 10**9 + int((m[3] or "").ljust(9, "0"))
    if m[1] == "-" or nanos == 0:
        raise ValueError(f"{v} is not a positive duration; flex-start nodes need a run time")
    if nanos > MAX_FLEX_RUN_SECONDS * 10**9:
        raise ValueError(
            f"{v} is longer than 7 days; flex-start VMs run for at most {MAX_FLEX_RUN_SECONDS}s"
        )
    return v
