"""The zones of a GKE GPU pool: those given, each checked, or every zone that can host it.

Pure code over the catalog's offerings (accelerator and count per zone, the machine type's own
zones); a zonal cluster's pools default to its zone and a note says when they leave it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from infra.core.catalog.vendored import GcpMachine
from infra.core.config.gke import GkePoolSpec
from infra.core.config.location import gcp_region_of
from infra.core.errors import join_path

if TYPE_CHECKING:
    from infra.core.gke.pools import PoolContext


def pool_zones(
    spec: GkePoolSpec,
    machine: GcpMachine,
    accelerator: str,
    count: int,
    path: str,
    ctx: PoolContext,
) -> list[str]:
    """The pool's node locations: the given zones, each checked; else the zonal cluster's zone, or
    every zone of the region that can host the pool. A zonal cluster's pools default to its zone
    (https://cloud.google.com/kubernetes-engine/docs/concepts/types-of-clusters#zonal_clusters)."""
    issues, region = ctx.issues, ctx.region
    offered = [
        z
        for z in ctx.catalog.gcp_zones_offering(accelerator, region, count)
        if machine.zones is None or z in machine.zones
    ]
    what = (
        f"{machine.name} with {count}x {accelerator}"
        if machine.accelerator is None
        else machine.name
    )
    short = ", ".join(_short(offered))
    if spec.zones is None:
        if ctx.cluster_zone is not None:
            if ctx.cluster_zone in offered:
                return [ctx.cluster_zone]
            issues.add(
                join_path(path, "zones"),
                f"required: the zonal cluster's zone {ctx.cluster_zone} does not offer {what} "
                f"(offered: {short or 'none'}); name zones to place the pool there",
            )
            return []
        if not offered:
            elsewhere = ctx.catalog.gcp_regions_offering(accelerator)
            issues.add(
                join_path(path, "machineType"),
                f"no zone of {region} offers {what}; regions offering {accelerator}: "
                f"{', '.join(elsewhere) or 'none'}",
            )
        return offered
    if not spec.zones:
        issues.add(
            join_path(path, "zones"),
            "must not be empty; omit it to use every zone offering the GPU",
        )
    for k, zone in enumerate(spec.zones):
        split = gcp_region_of(zone)
        zpath = join_path(path, "zones", k)
        if split is None or split[1] is None:
            issues.add(zpath, f"{zone!r} is not a GCP zone such as {region}-a")
        elif split[0] != region:
            issues.add(zpath, f"{zone} is not in region {region} (cluster.location)")
        elif zone not in offered:
            issues.add(zpath, f"{zone} does not offer {what} (offered: {short or 'none'})")
    if len(set(spec.zones)) != len(spec.zones):
        issues.add(join_path(path, "zones"), "lists a zone twice")
    chosen = [z for z in spec.zones if z in offered]
    if ctx.cluster_zone is not None and chosen != [ctx.cluster_zone]:
        ctx.notes.append(
            f"{path}.zones: pool {spec.name} spans {', '.join(chosen)}, beyond the zonal "
            f"cluster's zone {ctx.cluster_zone}"
        )
    return chosen


def _short(zones: list[str]) -> list[str]:
    """``us-central1-a, -b, -c`` style, as in the contract's example message."""
    return [z if i == 0 else "-" + z.rsplit("-", 1)[1] for i, z in enumerate(zones)]
