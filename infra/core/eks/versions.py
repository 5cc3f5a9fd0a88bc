"""Which Kubernetes versions EKS still runs, and the add-on version pinned for each, as the
catalog a plan is built with states them (``data_dir``: its directory; ``--old-catalog`` plans
the old side of a diff with an earlier one)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from infra.core.catalog.eks_versions import (
    default_eks_version,
    eks_addon_versions,
    eks_standard_support_ends,
    extended_support_ends,
    judged_day,
    support_judged_on,
)

if TYPE_CHECKING:
    from infra.core.config.eks import EksClusterSpec


def with_planned_version(cluster: EksClusterSpec, data_dir: Path) -> EksClusterSpec:
    """``cluster`` with the Kubernetes version it is planned at: the stack's, or (omitted) the
    newest in standard support per the calendar of the catalog in ``data_dir``, the catalog the
    plan is built with (``--old-catalog``: the old side's), so that a calendar refresh shows in
    ``--diff`` as the upgrade ``pulumi up`` makes. The observe step and the planner both ask this
    (``EksClusterSpec.planned_version`` reads it back)."""
    if cluster.kubernetes_version is not None:
        return cluster
    version = default_eks_version(data_dir)
    return cluster.model_copy(update={"kubernetes_version": version})


def _minor(version: str) -> int:
    return int(version.split(".")[1])


def support_problem(version: str, data_dir: Path) -> str | None:
    """Why EKS no longer runs ``version`` today (never before the calendar's date), or ``None``.

    A version past the end of extended support cannot be created and an existing cluster on it is
    upgraded by EKS ("Understand the Kubernetes version lifecycle on EKS",
    https://docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.html). A version older
    than every listed one is long gone; one newer than every listed one is let through (the
    calendar lags a release; its control-plane fee is then shown unpriced).
    """
    ends = eks_standard_support_ends(data_dir)
    try:
        today = support_judged_on(data_dir)
    except ValueError as e:
        return str(e)
    supported = sorted(
        (v for v, end in ends.items() if extended_support_ends(end) > today), key=_minor
    )
    end = ends.get(version)
    gone = (
        extended_support_ends(end) <= today
        if end is not None
        else bool(ends) and _minor(version) < min(_minor(v) for v in ends)
    )
    if not gone:
        return None
    ended = f" (extended support ended {extended_support_ends(end)})" if end else ""
    return (
        f"{version!r}: Amazon EKS no longer supports this Kubernetes version{ended}; "
        f"supported as of {today}: {', '.join(supported)}"
    )


def support_notes(version: str, given: bool, creates: bool, data_dir: Path) -> list[str]:
    """What a reviewer should know about the cluster's version: that it was defaulted (the newest
    in standard support, which a refreshed calendar moves: pin it), and that a cluster this stack
    creates on it starts in extended support, billed at the extended rate from day one ("Billing
    for extended support starts at the beginning of the day that the version reaches end of
    standard support", https://docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.html).
    """
    day = judged_day(data_dir)
    notes = []
    if not given:
        notes.append(
            f"EKS: cluster.kubernetesVersion is not set: {version}, the newest version in EKS "
            f"standard support on {day}; set it in the stack file so that a later calendar "
            "refresh does not upgrade the running cluster"
        )
    end = eks_standard_support_ends(data_dir).get(version)
    if creates and end is not None and day >= end:
        notes.append(
            f"EKS: a new cluster on {version} starts in extended support (standard support ended "
            f"{end}) and pays the extended-support control-plane rate from its first hour; "
            f"{default_eks_version(data_dir)} is in standard support"
        )
    return notes


def addon_version(addon: str, kubernetes_version: str, data_dir: Path) -> str:
    """The version pinned for ``addon`` on ``kubernetes_version`` (``eks_addon_versions.csv``),
    or ``""``: EKS's default version for that minor, read at deploy time."""
    return eks_addon_versions(data_dir).get((addon, kubernetes_version), "")
