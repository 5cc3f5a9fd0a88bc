"""Amazon EKS version facts as data: the support calendar and the add-on versions pinned per
Kubernetes minor (``eks_standard_support.csv``, ``eks_addon_versions.csv``)."""

from __future__ import annotations

import functools
import os
import re
from datetime import UTC, datetime
from pathlib import Path

from infra.core.catalog.vendored import read_rows

# "Once a version is past the end of standard support date, it enters extended support for the
# next 12 months ... If you haven't updated your cluster before the extended support period ends,
# your cluster is auto-upgraded" (https://docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.html).
EXTENDED_SUPPORT_MONTHS = 12


@functools.cache
def eks_standard_support_ends(data_dir: Path) -> dict[str, str]:
    """Kubernetes minor version -> the day (ISO date, UTC) EKS standard support ends for it."""
    return {
        r["version"]: r["end_of_standard_support"]
        for r in read_rows("eks_standard_support.csv", data_dir)
    }


@functools.cache
def eks_support_as_of(data_dir: Path) -> str:
    """The day the support calendar was read (its rows' ``as_of``): what "today" means for it."""
    return max(r["as_of"] for r in read_rows("eks_standard_support.csv", data_dir))


# The day the support rule judges on is the later of the table's reading and today, so a table
# read months ago still retires a version whose extended support has ended since;
# GPU_INFRA_TODAY=YYYY-MM-DD stands for today (reproducible runs and tests).
TODAY_ENV = "GPU_INFRA_TODAY"
_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def support_judged_on(data_dir: Path, today: str | None = None) -> str:
    """max(the table's ``as_of``, today): ``today`` given, else $GPU_INFRA_TODAY, else the clock.

    Raises ValueError naming the variable when it is not a YYYY-MM-DD date.
    """
    return max(eks_support_as_of(data_dir), today or today_or_override())


def today_or_override() -> str:
    """$GPU_INFRA_TODAY, else the clock's UTC day: the "today" of every support calendar.

    Raises ValueError naming the variable when it is not a YYYY-MM-DD date.
    """
    today = os.environ.get(TODAY_ENV) or datetime.now(UTC).date().isoformat()
    if not _ISO_DAY.fullmatch(today):
        raise ValueError(f"{TODAY_ENV}={today!r}: not a YYYY-MM-DD date")
    return today


def judged_day(data_dir: Path) -> str:
    """``support_judged_on(data_dir)``, or the table's date when $GPU_INFRA_TODAY is not a date (the
    config check reports that, ``infra.core.eks.versions.support_problem``)."""
    try:
        return support_judged_on(data_dir)
    except ValueError:
        return eks_support_as_of(data_dir)


def in_standard_support(version: str, day: str, data_dir: Path) -> bool | None:
    """Whether ``version`` is in EKS standard support on ``day`` (``None``: not in the table)."""
    end = eks_standard_support_ends(data_dir).get(version)
    return None if end is None else day < end


def default_eks_version(data_dir: Path) -> str:
    """The newest Kubernetes minor in EKS standard support on ``judged_day()``: what a new
    cluster is created with when the stack names none; the newest listed one when the calendar
    lists none in standard support any more (it lags a release)."""
    ends = eks_standard_support_ends(data_dir)
    day = judged_day(data_dir)
    by_minor = sorted(ends, key=lambda v: int(v.split(".")[1]))
    standard = [v for v in by_minor if day < ends[v]]
    return (standard or by_minor)[-1]


def extended_support_ends(standard_end: str) -> str:
    """The day extended support ends: the end of standard support plus 12 months (ISO date)."""
    year, month, day = (int(x) for x in standard_end.split("-"))
    month += EXTENDED_SUPPORT_MONTHS
    year, month = year + (month - 1) // 12, (month - 1) % 12 + 1
    return f"{year:04d}-{month:02d}-{day:02d}"


@functools.cache
def eks_addon_versions(data_dir: Path) -> dict[tuple[str, str], str]:
    """(add-on name, Kubernetes minor) -> the add-on version pinned for that minor."""
    return {
        (r["addon"], r["kubernetes_version"]): r["version"]
        for r in read_rows("eks_addon_versions.csv", data_dir)
    }
