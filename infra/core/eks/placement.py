"""Where an EKS GPU pool's nodes go: the AZs offering its types, narrowed to zones and subnets.

Pure code: AZ IDs from the catalog's offerings, the ``zones`` given (each checked), the private
subnets' AZs, one AZ for hpc and capacity reservations, and the AZ count ``groupPerZone`` splits by.
"""

from __future__ import annotations

from dataclasses import dataclass

from infra.core.catalog.vendored import AwsInstance, Catalog
from infra.core.config.eks import EksPoolSpec
from infra.core.eks.instance_types import GroupShape
from infra.core.eks.network import EksNetworkPlan
from infra.core.errors import Issues, join_path


def offered_az_ids(instances: list[AwsInstance], region: str) -> set[str]:
    """AZ IDs of ``region`` offering every one of ``instances``."""
    sets = [set(i.az_ids.get(region, ())) for i in instances]
    return set.intersection(*sets) if sets else set()


def region_az_ids(catalog: Catalog, region: str) -> set[str]:
    """Every AZ ID of ``region`` the catalog knows (any GPU type offered there)."""
    out: set[str] = set()
    for t in catalog.aws_instances():
        inst = catalog.aws_instance(t)
        if inst is not None:
            out |= inst.az_ids.get(region, frozenset())
    return out


@dataclass(frozen=True, slots=True, kw_only=True)
class Placement:
    """Step 2 (AZs and subnets): where the pool's nodes go."""

    az_ids: tuple[str, ...]
    offered: tuple[str, ...]  # every usable AZ, before hpc/reservations keep one
    reservation_id: str | None
    single_az: bool
    zones_n: int


def plan_placement(
    i: int,
    pool: EksPoolSpec,
    region: str,
    network: EksNetworkPlan | None,
    shape: GroupShape,
    issues: Issues,
) -> Placement | None:
    """AZs: every type offered there (catalog), restricted to zones/subnets if given; one AZ
    for hpc and reservations."""
    offered = offered_az_ids(list(shape.instances), region)
    if not offered:
        _not_offered(i, shape, region, issues)
        return None
    usable = _given_zones(i, pool, region, offered, shape.names, issues)
    if network is not None:
        with_subnet = usable & set(network.az_ids)
        if not with_subnet and usable:
            issues.add(
                join_path("gpuPools", i, "machineType"),
                f"{', '.join(shape.names)} is offered in {region} only in "
                f"{', '.join(sorted(usable))}, but the private subnets are in "
                f"{', '.join(network.az_ids)}",
            )
        usable = with_subnet
    az_ids = sorted(usable)
    offered_azs = tuple(az_ids)
    reservation_id = pool.capacity_reservation.id if pool.capacity_reservation else None
    single_az = pool.hpc or reservation_id is not None
    if reservation_id is not None and (pool.zones is None or len(pool.zones) != 1):
        # A reservation lives in one AZ that only the account can see; instances launched into
        # another AZ miss it (aws-ia/terraform-aws-eks-blueprints ml-capacity-block pattern:
        # restrict the node group's subnets to the reservation's AZ).
        issues.add(
            join_path("gpuPools", i, "zones"),
            f"capacityReservation.id {reservation_id}: give zones: [<AZ ID of the reservation>] "
            "(aws ec2 describe-capacity-reservations shows its AvailabilityZoneId)",
        )
    if single_az and len(az_ids) > 1:
        if pool.zones is not None and len(pool.zones) > 1:
            why_one = (
                "hpc (a cluster placement group is in one AZ)"
                if pool.hpc
                else "a capacity reservation (it is in one AZ)"
            )
            issues.add(
                join_path("gpuPools", i, "zones"),
                f"{why_one} needs exactly one AZ ID; got {', '.join(pool.zones)}",
            )
        az_ids = az_ids[:1]  # the first AZ offering the type (when no zone was given)
    return Placement(
        az_ids=tuple(az_ids),
        offered=offered_azs,
        reservation_id=reservation_id,
        single_az=single_az,
        zones_n=len(az_ids) if pool.group_per_zone else 1,
    )


def _not_offered(i: int, shape: GroupShape, region: str, issues: Issues) -> None:
    where = {x.name: sorted(x.az_ids) for x in shape.instances if region not in x.az_ids}
    detail = "; ".join(
        f"{t} is offered in: {', '.join(r) or 'no region'}" for t, r in where.items()
    )
    issues.add(
        join_path("gpuPools", i, "machineType"),
        f"{' and '.join(shape.names)} is not offered in {region}: no AZ there offers it "
        f"({detail or 'each is offered somewhere, but no AZ offers all of them'})",
    )


def _given_zones(
    i: int,
    pool: EksPoolSpec,
    region: str,
    offered: set[str],
    names: tuple[str, ...],
    issues: Issues,
) -> set[str]:
    """The offered AZ IDs narrowed to ``zones`` (each checked: listed once, offering the types)."""
    usable = set(offered)
    if pool.zones is None:
        return usable
    for k, az in enumerate(pool.zones):
        if az in pool.zones[:k]:
            issues.add(join_path("gpuPools", i, "zones", k), f"{az!r} is listed twice")
        elif az not in offered:
            issues.add(
                join_path("gpuPools", i, "zones", k),
                f"{az!r} does not offer {', '.join(names)} in {region} (AZ IDs offering "
                f"it: {', '.join(sorted(offered))})",
            )
    return usable & set(pool.zones)


def check_group_per_zone(i: int, pool: EksPoolSpec, placement: Placement, issues: Issues) -> None:
    if pool.group_per_zone and placement.single_az:
        issues.add(
            join_path("gpuPools", i, "groupPerZone"),
            "a one-AZ pool (hpc or capacityReservation) has one node group already",
        )
    zones_n = placement.zones_n
    if pool.group_per_zone and placement.az_ids and pool.max_nodes < zones_n:
        issues.add(
            join_path("gpuPools", i, "maxNodes"),
            f"{pool.max_nodes} is below the {zones_n} AZs of groupPerZone (every node group "
            "needs maxSize >= 1)",
        )
