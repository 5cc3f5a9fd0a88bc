"""The receivers' limits as data (``infra/core/data/receiver_limits.csv``): one table, read once.

The config rules and the receiver check over the whole plan (``infra.core.receivers``) both take
their numbers from here, so a limit has one home and one source.
"""

from __future__ import annotations

import csv
import functools
from dataclasses import dataclass
from pathlib import Path

LIMITS_CSV = Path(__file__).parent.parent / "data" / "receiver_limits.csv"


@dataclass(frozen=True, slots=True)
class Limit:
    """One receiver limit.

    Attributes:
        name: ``<receiver>.<what>``, e.g. ``aws.tag_key``.
        receiver: the API or tool that enforces it.
        maximum: the largest accepted count or length.
        unit: what ``maximum`` counts.
        source: where the limit is stated.
    """

    name: str
    receiver: str
    maximum: int
    unit: str
    source: str


@functools.cache
def limits() -> dict[str, Limit]:
    """Every limit by name."""
    with LIMITS_CSV.open(encoding="utf-8", newline="") as f:
        rows = csv.DictReader(line for line in f if not line.startswith("#"))
        return {
            r["limit"]: Limit(r["limit"], r["receiver"], int(r["maximum"]), r["unit"], r["source"])
            for r in rows
        }


def limit(name: str) -> int:
    """The maximum of limit ``name`` (KeyError for a limit the table lacks)."""
    return limits()[name].maximum
