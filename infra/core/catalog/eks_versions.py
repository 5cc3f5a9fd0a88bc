"""Amazon EKS version facts as data: the support calendar and the add-on versions pinned per
Kubernetes minor (``eks_standard_support.csv``, ``eks_addon_versions.csv``)."""

from __future__ import annotations

import functools
from pathlib import Path

from infra.core.catalog.vendored import DATA_DIR, read_rows

# "Once a version is past the end of standard support date, it enters extended support for the
# next 12 months ... If you haven't updated your cluster before the extended support period ends,
# your cluster is auto-upgraded" (https://docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.html).
EXTENDED_SUPPORT_MONTHS = 12


@functools.cache
def eks_standard_support_ends(data_dir: Path = DATA_DIR) -> dict[str, str]:
    """Kubernetes minor version -> the day (ISO date, UTC) EKS standard support ends for it."""
    return {
        r["version"]: r["end_of_standard_support"]
        for r in read_rows("eks_standard_support.csv", data_dir)
    }


@functools.cache
def eks_support_as_of(data_dir: Path = DATA_DIR) -> str:
    """The day the support calendar was read (its rows' ``as_of``): what "today" means for it."""
    return max(r["as_of"] for r in read_rows("eks_standard_support.csv", data_dir))


def extended_support_ends(standard_end: str) -> str:
    """The day extended support ends: the end of standard support plus 12 months (ISO date)."""
    year, month, day = (int(x) for x in standard_end.split("-"))
    month += EXTENDED_SUPPORT_MONTHS
    year, month = year + (month - 1) // 12, (month - 1) % 12 + 1
    return f"{year:04d}-{month:02d}-{day:02d}"


@functools.cache
def eks_addon_versions(data_dir: Path = DATA_DIR) -> dict[tuple[str, str], str]:
    """(add-on name, Kubernetes minor) -> the add-on version pinned for that minor."""
    return {
        (r["addon"], r["kubernetes_version"]): r["version"]
        for r in read_rows("eks_addon_versions.csv", data_dir)
    }
