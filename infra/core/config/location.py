"""Where a stack lives: its region, zone and project from ``cluster.location`` and provider keys.

GCP locations (region or zone) and AWS regions by shape, checked against the regions and zones the
catalog lists with GPUs (GKE) and against the provider keys (``gcp:project``, ``gcp:region``,
``gcp:zone``, ``aws:region``) that must agree with them: GKE's rule and EKS's, each named by its
platform's config entry (``PlatformConfig.locate``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from infra.core import rules
from infra.core.errors import Issues, did_you_mean, shown

# Location shapes: GCP regions/zones and AWS regions (the provider keys that must agree with them).
_GCP_REGION = re.compile(r"^[a-z]+-[a-z]+[0-9]+$")
_GCP_ZONE = re.compile(r"^([a-z]+-[a-z]+[0-9]+)-[a-z]$")
_AWS_REGION = re.compile(r"^[a-z]{2}(-gov)?-[a-z]+-[0-9]$")


def gcp_region_of(location: str) -> tuple[str, str | None] | None:
    """Split a GCP location into (region, zone-or-None); ``None`` if it is neither.

    >>> gcp_region_of("us-central1-a")
    ('us-central1', 'us-central1-a')
    """
    if m := _GCP_ZONE.fullmatch(location):
        return m.group(1), location
    if _GCP_REGION.fullmatch(location):
        return location, None
    return None


def gke_location(
    cluster: Any, providers: Mapping[str, Any], issues: Issues, data_dir: Path
) -> tuple[str | None, str | None, str | None]:
    """(region, zone, project) of a GKE stack from ``cluster.location`` (a region or a zone) and
    ``gcp:project``; ``gcp:region`` and ``gcp:zone``, if given, must agree with it; a created
    cluster's location must be one the catalog in ``data_dir`` offers GPUs in."""
    loc: str = cluster.location
    project = providers.get("gcp:project")
    if project is None or project == "":
        hint = did_you_mean("gcp:project", [str(k) for k in providers], cutoff=0.8)
        issues.add(
            "gcp:project", f"required on gke stacks (the project the cluster lives in){hint}"
        )
    else:
        try:
            rules.check_gcp_project_id(project)
        except ValueError as e:
            issues.add("gcp:project", str(e))
            project = None
    split = gcp_region_of(loc)
    if split is None:
        issues.add(
            "cluster.location",
            f"{loc!r} is neither a GCP region (us-central1) nor a zone (us-central1-a)",
        )
        return None, None, project if isinstance(project, str) else None
    region, zone = split
    if not cluster.existing:  # an existing cluster is wherever it is
        _check_gcp_location(region, zone, issues, data_dir)
    given = providers.get("gcp:region")
    if given is not None and given != region:
        issues.add(
            "gcp:region",
            f"{given!r} disagrees with cluster.location {loc!r} (region {region}); "
            "quotas and pools must live in one region",
        )
    gzone = providers.get("gcp:zone")
    if gzone is not None and (not isinstance(gzone, str) or not gzone.startswith(region + "-")):
        issues.add("gcp:zone", f"{gzone!r} is not a zone of region {region}")
    return region, zone, project if isinstance(project, str) else None


def eks_location(
    cluster: Any, providers: Mapping[str, Any], issues: Issues, _data_dir: Path
) -> tuple[str | None, str | None, str | None]:
    """(region, no zone, no project) of an EKS stack: ``cluster.location`` is the AWS region, and
    ``aws:region`` must be it."""
    loc: str = cluster.location
    if not _AWS_REGION.fullmatch(loc):
        issues.add("cluster.location", f"{loc!r} is not an AWS region such as us-west-2")
        return None, None, None
    given = providers.get("aws:region")
    if given is None:
        hint = did_you_mean("aws:region", [str(k) for k in providers], cutoff=0.8)
        issues.add("aws:region", f"required on eks stacks; set it to {loc!r}{hint}")
    elif given != loc:
        issues.add(
            "aws:region",
            f"{given!r} disagrees with cluster.location {loc!r}; "
            "quotas and node groups must live in one region",
        )
    return loc, None, None


@functools.cache
def _gcp_gpu_zones(data_dir: Path) -> dict[str, tuple[str, ...]]:
    """Region -> zones with any GPU, from the catalog in ``data_dir`` (zones and regions that exist
    for us)."""
    from infra.core.catalog.vendored import Catalog  # the catalog only when a GKE stack needs it

    catalog = Catalog(data_dir)
    out: dict[str, set[str]] = {}
    for acc in catalog.gcp_accelerators():
        for region in catalog.gcp_regions_offering(acc):
            out.setdefault(region, set()).update(catalog.gcp_zones_offering(acc, region))
    return {r: tuple(sorted(z)) for r, z in sorted(out.items())}


def _check_gcp_location(region: str, zone: str | None, issues: Issues, data_dir: Path) -> None:
    """The region (and zone) must be one the catalog lists with GPUs (gcp_accelerators.csv)."""
    zones = _gcp_gpu_zones(data_dir)
    if region not in zones:
        hint = did_you_mean(region, list(zones), cutoff=0.8)
        issues.add(
            "cluster.location",
            f"{shown(region)} is not a GCP region with GPUs in the catalog{hint}",
        )
    elif zone is not None and zone not in zones[region]:
        offered = ", ".join(zones[region])
        issues.add(
            "cluster.location",
            f"{shown(zone)} is not a zone of {region} with GPUs in the catalog (those: {offered})",
        )
