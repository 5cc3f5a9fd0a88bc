"""GKE versions: parsing GKE's version strings and the feature -> minimum version gates.

Pure code; the gates are data (``infra/core/data/gke_feature_versions.csv``, one sourced row per
feature), checked against ``cluster.minMasterVersion``.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from infra.core.catalog.gke_versions import (
    extended_support_ends,
    gke_support,
    gke_support_judged_on,
)
from infra.core.catalog.vendored import read_rows
from infra.core.errors import Issues


def gke_version(v: str) -> tuple[int, ...] | None:
    """``1.32.2-gke.1652000`` -> (1, 32, 2, 1652000), ``1.32`` -> (1, 32); ``None`` if not a version."""
    m = re.fullmatch(r"(\d+)\.(\d+)(?:\.(\d+)(?:-gke\.(\d+))?)?", v, re.ASCII)
    if m is None:
        return None
    return tuple(int(g) for g in m.groups() if g is not None)


def version_at_least(v: str | None, floor: str) -> bool:
    """Whether the version GKE picks for ``v`` is not below ``floor``. Aliases pick the highest
    release they name ("1.X": highest patch, "1.X.Y": highest gke.N; "latest"; "-" the default),
    so only the parts given are compared (UpdateMasterRequest.master_version, GKE API v1).
    An unparsable ``v`` is reported by the cluster rules and counts as below."""
    if v is None or v in ("latest", "-"):
        return True
    have, need = gke_version(v), gke_version(floor)
    return have is not None and need is not None and have >= need[: len(have)]


def version_surely_at_least(v: str | None, floor: str) -> bool:
    """Whether every release ``v`` may name is not below ``floor``: a full version compared as
    is, an alias by the lowest release it names ("1.34" -> 1.34.0-gke.0, "1.33.3" ->
    1.33.3-gke.0). Unset, "latest" or "-" is the release channel's default, which this stack
    does not know, so it counts as below."""
    have, need = (gke_version(v) if v is not None else None), gke_version(floor)
    if have is None or need is None:
        return False
    return have + (0,) * (len(need) - len(have)) >= need


@functools.cache
def feature_versions(data_dir: Path) -> dict[str, str]:
    """Feature -> the oldest GKE version it works on (``gke_feature_versions.csv`` of the catalog
    in ``data_dir``)."""
    return {r["feature"]: r["min_version"] for r in read_rows("gke_feature_versions.csv", data_dir)}


def check_feature_version(
    feature: str,
    what: str,
    min_master: str | None,
    path: str,
    issues: Issues,
    *,
    strict: bool = False,
    declared: bool = False,
    data_dir: Path,
) -> None:
    """Record at ``path`` that ``what`` needs a newer GKE than ``cluster.minMasterVersion``.
    ``strict``: an alias counts by the lowest release it names and an unset version is refused
    (``version_surely_at_least``), for a gate whose failure is silent at run time. ``declared``:
    the version is declared for an existing cluster, which the stack does not upgrade;
    ``data_dir``: the plan's catalog, whose gates apply."""
    floor = feature_versions(data_dir)[feature]
    if strict and not version_surely_at_least(min_master, floor):
        below = not version_at_least(min_master, floor)
        fix = (
            f"upgrade the existing cluster to {floor} or later (this stack does not) and declare "
            "its version"
            if declared
            else f"set a full version such as {floor} or a later minor"
        )
        issues.add(
            path,
            f"{what} need GKE {floor} or later; cluster.minMasterVersion is "
            f"{min_master or 'unset (the release channel default, not known here)'}"
            + ("" if below else ", which may name an older release")
            + f": {fix}",
        )
    elif not strict and not version_at_least(min_master, floor):
        issues.add(
            path,
            f"{what} need GKE {floor} or later; cluster.minMasterVersion is {min_master}",
        )


def support_problem(min_master: str | None, channel: str, data_dir: Path) -> str | None:
    """Why GKE no longer runs the minor ``cluster.minMasterVersion`` names, or ``None``, per the
    calendar of the catalog in ``data_dir`` (the catalog the plan is built with).

    Past its end of standard support a minor is upgraded away by GKE and no new cluster or
    control plane gets it, except on the Extended channel, which keeps it until its extended
    support ends (``catalog.gke_versions``; GKE versioning and support,
    https://cloud.google.com/kubernetes-engine/versioning). ``latest``, ``-`` or unset is the
    channel's default, always a supported one; a minor newer than the table is let through (the
    schedule lags a release); one older than every row is long gone.
    """
    have = gke_version(min_master) if min_master not in (None, "latest", "-") else None
    if have is None:
        return None
    try:
        today = gke_support_judged_on(data_dir)
    except ValueError as e:
        return str(e)
    table = gke_support(data_dir)
    minor = f"{have[0]}.{have[1]}"
    extended = channel == "EXTENDED"

    def ends(v: str) -> str:
        regular, standard = table[v]
        return extended_support_ends(regular) if extended else standard

    supported = [v for v in table if ends(v) > today]
    newest = max(table, key=lambda v: int(v.split(".")[1]))
    if minor in table:
        if ends(minor) > today:
            return None
        what = "extended support (the Extended channel)" if extended else "standard support"
        ended = f"GKE {what} for {minor} ended {ends(minor)}"
    elif have[1] > int(newest.split(".")[1]):
        return None
    else:
        ended = f"GKE {minor} is older than every supported minor"
    later = f"{', '.join(supported)} or later" if supported else f"a minor after {newest}"
    hint = "" if extended else "; the Extended channel keeps a minor up to 24 months"
    return f"{min_master!r}: {ended}; supported as of {today}: {later}{hint}"
