"""What a GKE stack costs: its pools' nodes as the cost estimate prices them (``infra.core.cost``),
and the lines beside them (cluster fee, boot disks, Local SSD, external IPv4, Cloud NAT;
``infra.core.platform_cost``)."""

from __future__ import annotations

from collections.abc import Mapping

from infra.core.catalog.pricing import Prices
from infra.core.gke.model import GkePlan
from infra.core.platform import NodePlace, PricedPool
from infra.core.platform_cost import Line, line_of, price_of, sum_lines
from infra.core.pools import idle_nodes
from infra.core.rules.gcp import LOCAL_SSD_GB
from infra.core.sizing import GKE_DEFAULT_DISK_GB

# Cloud NAT bills per VM up to 32, then a flat rate (https://cloud.google.com/nat/pricing).
CLOUD_NAT_VM_CAP = 32
# A regional cluster's node pools run in three of its region's zones unless nodeLocations says
# otherwise (https://cloud.google.com/kubernetes-engine/docs/concepts/regional-clusters).
GKE_REGIONAL_DEFAULT_ZONES = 3
# DWS VMs have their own discounted price, which the catalog does not hold.
DWS_BOUND = "priced at on-demand: an upper bound for DWS flex-start / queued capacity"


def priced_pools(gke: GkePlan) -> tuple[tuple[PricedPool, ...], PricedPool | None]:
    """Per GKE pool its nodes' places and range; the system pool's (a cluster the stack creates)."""
    pools: list[PricedPool] = []
    for p in gke.pools:
        extra = ""
        if p.nodes_at_min > p.total_min:
            extra = (
                f"at minimum {p.nodes_at_min} nodes: initialNodeCount {p.initial_node_count} per "
                f"zone x {len(p.node_locations)} zones outweighs totalMinNodeCount {p.total_min}"
            )
        pools.append(
            PricedPool(
                name=p.name,
                places=tuple(
                    NodePlace("gcp", p.machine_type, z, p.accelerator, p.accelerator_count)
                    for z in p.node_locations
                ),
                spot=p.spot,
                min_nodes=p.nodes_at_min,
                max_nodes=p.total_max,
                machine=p.machine_type,
                bound=DWS_BOUND if p.flex_start or p.queued_provisioning else "",
                extra=extra,
                max_enforced=not p.auto_create,
            )
        )
    return tuple(pools), _system(gke)


def _system(gke: GkePlan) -> PricedPool | None:
    c = gke.cluster
    if c.existing:
        return None
    # initialNodeCount=1 is per zone (infra/components/gke.py) and a regional cluster runs its pools
    # in 3 zones by default (https://cloud.google.com/kubernetes-engine/docs/concepts/
    # regional-clusters), so pulumi up starts one node per zone even when totalMinNodeCount is lower.
    started = GKE_REGIONAL_DEFAULT_ZONES if regional(gke) else 1
    at_min = max(c.system_min, started)
    extra = ""
    if at_min > c.system_min:
        extra = (
            f"at minimum {at_min} nodes: initialNodeCount 1 per zone x {started} zones "
            f"outweighs totalMinNodeCount {c.system_min}"
        )
    return PricedPool(
        name="system",
        places=tuple(NodePlace("gcp", c.system_machine_type, z) for z in system_zones(gke)),
        spot=False,
        min_nodes=at_min,
        max_nodes=max(c.system_max, at_min),
        machine=c.system_machine_type,
        extra=extra,
    )


def regional(gke: GkePlan) -> bool:
    """The cluster is regional (``us-central1``), not zonal (``us-central1-a``)."""
    return gke.cluster.location.count("-") < 2


def system_zones(gke: GkePlan) -> tuple[str, ...]:
    """Zones the system pool runs in: the cluster's zone, or every catalog zone of its region."""
    loc = gke.cluster.location
    if not regional(gke):
        return (loc,)
    zones = {z for p in gke.pools for z in p.node_locations}
    return tuple(sorted(zones)) or (f"{loc}-a",)


def cost_lines(gke: GkePlan, warm: Mapping[str, int], prices: Prices) -> list[Line]:
    """The GKE lines, the system pool at its minimum and maximum as the node estimate counts it."""
    system = _system(gke)
    nodes = (system.min_nodes, system.max_nodes) if system is not None else (0, 0)
    return gke_lines(gke, nodes, prices, warm)


def gke_lines(
    gke: GkePlan,
    system_nodes: tuple[int, int],
    prices: Prices,
    warm: Mapping[str, int] | None = None,
) -> list[Line]:
    """GKE: cluster fee, boot disks, Local SSD, Cloud NAT (``system_nodes``: system pool at
    minimum and maximum, as the node estimate counts it; ``warm``: per pool its warm nodes, which
    run at minimum too), at ``prices``."""
    region = gke.region
    lo_of = {p.name: idle_nodes(p.nodes_at_min, (warm or {}).get(p.name, 0)) for p in gke.pools}
    lines: list[Line] = []
    if not gke.cluster.existing:
        lines.append(
            line_of(prices, "control plane (GKE fee)", "gcp", "gke-cluster-fee", region, 1, 1, "")
        )
    disks: list[Line] = []
    ssd: list[Line] = []
    for p in gke.pools:
        size = p.disk_size_gb or GKE_DEFAULT_DISK_GB
        disks.append(
            line_of(
                prices,
                "",
                "gcp",
                f"disk-{p.disk_type}",
                region,
                lo_of[p.name] * size,
                p.total_max * size,
                p.name,
            )
        )
        if p.local_ssd_count:
            gb = p.local_ssd_count * LOCAL_SSD_GB
            # A Spot VM's Local SSD is billed by its own SKU ("SSD backed Local Storage attached
            # to Spot Preemptible VMs"), at "smaller discounts for local SSDs"
            # (https://cloud.google.com/compute/docs/instances/spot); an auto-created pool's Spot
            # priority is a spot pool here too.
            item = "local-ssd-spot" if p.spot else "local-ssd"
            ssd.append(
                line_of(
                    prices, "", "gcp", item, region, lo_of[p.name] * gb, p.total_max * gb, p.name
                )
            )
    if not gke.cluster.existing:
        lo, hi = system_nodes
        disks.append(
            line_of(
                prices,
                "",
                "gcp",
                f"disk-{gke.cluster.system_disk_type}",
                region,
                lo * GKE_DEFAULT_DISK_GB,
                hi * GKE_DEFAULT_DISK_GB,
                "system",
            )
        )
    lines += [x for x in (sum_lines("boot disks", disks), sum_lines("local SSD", ssd)) if x]
    if not gke.cluster.private_nodes:
        # Public nodes hold one external IPv4 each, billed per in-use address
        # (https://cloud.google.com/vpc/network-pricing#ipaddress).
        lo = system_nodes[0] + sum(lo_of.values())
        hi = system_nodes[1] + sum(p.total_max for p in gke.pools)
        lines.append(line_of(prices, "external IPv4 (1 per public node)", "gcp", "external-ipv4", region,
                           lo, hi, "node addresses"))  # fmt: skip
    if gke.cluster.cloud_nat:
        lines.append(_cloud_nat(gke, region, (system_nodes[0] + sum(lo_of.values()), 0), prices))
    return lines


def _cloud_nat(gke: GkePlan, region: str, nodes: tuple[int, int], prices: Prices) -> Line:
    """Cloud NAT: per VM using it, capped at 32 VMs, plus one external address (auto-allocated;
    more under load). ``nodes``: every node at minimum (warm ones included), the system pool's
    at maximum."""
    vm, cap, ip = (
        price_of(prices, "gcp", k, region)
        for k in ("cloud-nat-per-vm", "cloud-nat-max", "cloud-nat-ip")
    )
    if vm is None or cap is None or ip is None:
        return Line("Cloud NAT", None, None, None, "Cloud NAT: no price")
    lo = nodes[0]
    hi = nodes[1] + sum(p.total_max for p in gke.pools)

    def at(n: int) -> float:
        return (vm.usd * n if n <= CLOUD_NAT_VM_CAP else cap.usd) + ip.usd

    return Line("Cloud NAT (gateway and 1 address)", at(lo), at(hi), vm, more=(cap, ip))


def usage_based(prices: Prices) -> str:
    """What GKE bills by use (Cloud NAT data processing at its platform_prices.csv price)."""
    p = price_of(prices, "gcp", "cloud-nat-data-processing", "*")
    nat = f"${p.usd:g}/GiB" if p is not None else "per GiB"
    return f"Cloud NAT data processing ({nat}), data transfer, load balancers, logging"
