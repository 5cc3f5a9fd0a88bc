"""GKE version facts as data: per Kubernetes minor, its Regular-channel availability and the end
of its standard support (``gke_standard_support.csv``, GKE's release schedule)."""

from __future__ import annotations

import calendar
import functools
from pathlib import Path

from infra.core.catalog.eks_versions import today_or_override
from infra.core.catalog.vendored import read_rows

# "GKE provides up to a total of 24 months of support for a minor version after the version has
# been made available for new cluster creation in the Regular channel" (~14 standard, ~10 more
# on the Extended channel; https://cloud.google.com/kubernetes-engine/versioning).
EXTENDED_SUPPORT_MONTHS_FROM_REGULAR = 24


@functools.cache
def gke_support(data_dir: Path) -> dict[str, tuple[str, str]]:
    """Minor (``1.33``) -> (Regular availability, end of standard support), ISO dates."""
    return {
        r["version"]: (r["regular_available"], r["end_of_standard_support"])
        for r in read_rows("gke_standard_support.csv", data_dir)
    }


def gke_support_judged_on(data_dir: Path, today: str | None = None) -> str:
    """max(the table's ``as_of``, today): a table read long ago still retires a minor since."""
    as_of = max(r["as_of"] for r in read_rows("gke_standard_support.csv", data_dir))
    return max(as_of, today or today_or_override())


def extended_support_ends(regular_available: str) -> str:
    """The latest day the Extended channel supports a minor: Regular availability + 24 months."""
    year, month, day = (int(x) for x in regular_available.split("-"))
    year += EXTENDED_SUPPORT_MONTHS_FROM_REGULAR // 12
    last = calendar.monthrange(year, month)[1]  # a 29 February lands on the 28th
    return f"{year:04d}-{month:02d}-{min(day, last):02d}"
