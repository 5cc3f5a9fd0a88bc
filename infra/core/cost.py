"""What a planned stack costs per hour at its minimum and at its maximum scale, from catalog prices.

Prices come from the catalog (``Catalog.prices``, ``infra.core.catalog.pricing``, which names the
files). A price the catalog lacks is ``None`` ("unknown"), never 0; a total that
would need an unknown price for a node that runs is unknown too. Where a pool spans zones with
different prices, the highest is used, so the estimate does not understate. ``pricesAsOf`` is the
oldest date of the rows used: a row's file header date, or the day ``price_checks.csv`` says its
on-demand price was read at the cloud's price API.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from infra.core.catalog.pricing import Price, Prices
from infra.core.platform_cost import HOURS_PER_MONTH, USAGE_BASED, Line, eks_lines, gke_lines
from infra.core.warm import idle_nodes, warm_of

__all__ = ["HOURS_PER_MONTH", "Cost", "PoolCost", "Prices", "estimate"]

if TYPE_CHECKING:  # infra.core.plan imports the planners; cost needs only the type
    from infra.core.eks.planner import EksPlan, EksSystemGroupPlan
    from infra.core.gke.planner import GkePlan
    from infra.core.plan import Plan


@dataclass(frozen=True, slots=True)
class PoolCost:
    """One node pool's hourly price per node and its node range.

    Attributes:
        name: pool / node-group name.
        per_node: USD per node-hour (spot price for spot pools), ``None`` when unknown.
        min_nodes: pool total minimum.
        max_nodes: pool total maximum.
        spot: priced at the spot price.
        note: why the price is unknown, or how it was chosen.
        warm: nodes the pool's warm placeholders keep running (``gpuPools[].warm``).
        max_enforced: whether the provider caps the pool at ``max_nodes``; ``False`` for a GKE
            pool auto-created by a ComputeClass, which has no node limit (the maximum is planned).
        drift_nodes: nodes ``max_nodes`` counts beyond the pool's maxNodes (a Karpenter pool's
            drift replacement, which its NodePool limits admit).
    """

    name: str
    per_node: float | None
    min_nodes: int
    max_nodes: int
    spot: bool = False
    note: str = ""
    warm: int = 0
    max_enforced: bool = True
    drift_nodes: int = 0

    @property
    def idle_nodes(self) -> int:
        """Nodes paid for at minimum: warm nodes are running nodes (infra.core.warm)."""
        return idle_nodes(self.min_nodes, self.warm)

    def at(self, nodes: int) -> float | None:
        """USD per hour with ``nodes`` nodes; 0 nodes cost 0 whatever the price."""
        if nodes == 0:
            return 0.0
        return None if self.per_node is None else self.per_node * nodes


@dataclass(frozen=True, slots=True)
class Total:
    """Everything priced at one scale: USD per hour, and what could not be priced."""

    per_hour: float
    unpriced: tuple[str, ...]

    @property
    def per_month(self) -> float:
        """USD per month of 730 hours."""
        return self.per_hour * HOURS_PER_MONTH


@dataclass(frozen=True, slots=True)
class Cost:
    """The stack's hourly cost: GPU pools plus the system (CPU) pool, and the other lines
    (control plane, NAT, disks) of ``infra.core.platform_cost``."""

    pools: tuple[PoolCost, ...]
    system: PoolCost | None
    prices_as_of: str
    own_hardware: bool = False  # platform kubernetes: nothing is billed per hour by a cloud
    lines: tuple[Line, ...] = ()
    usage_based: str = ""  # charges that depend on traffic, never in the totals
    # GKE node auto-provisioning's cluster-wide resource limits (type, maximum) when the plan
    # enables it: they, not a pool's maxNodes, cap what auto-created pools may reach.
    cluster_limits: tuple[tuple[str, int], ...] = ()

    def total(self, scale: str) -> Total:
        """Nodes and lines at ``min`` or ``max`` scale: what is priced, and a list of what is not
        (a partial total rather than none)."""
        priced = 0.0
        unpriced: list[str] = []
        for p in self._all():
            n = p.idle_nodes if scale == "min" else p.max_nodes
            v = p.at(n)
            if v is None:
                unpriced.append(f"{p.name} nodes ({p.note or 'no price'})")
            else:
                priced += v
        for line in self.lines:
            v = line.at_min if scale == "min" else line.at_max
            if line.missing:
                unpriced.append(line.missing)
            priced += v or 0.0
        return Total(priced, tuple(unpriced))

    def _all(self) -> tuple[PoolCost, ...]:
        return (*self.pools, self.system) if self.system is not None else self.pools

    @property
    def at_min(self) -> float | None:
        """USD per hour with every pool at its minimum (``None`` if a running node is unpriced)."""
        if self.own_hardware:
            return None
        return _sum(p.at(p.idle_nodes) for p in self._all())

    @property
    def at_max(self) -> float | None:
        """USD per hour with every pool at its maximum (``None`` if a running node is unpriced)."""
        if self.own_hardware:
            return None
        return _sum(p.at(p.max_nodes) for p in self._all())

    def to_json(self) -> dict[str, Any]:
        """The ``cost`` object of ``python -m infra.plan --json``."""
        return {
            "currency": "USD",
            "atMinPerHour": _round(self.at_min),
            "atMaxPerHour": _round(self.at_max),
            # The system pool is keyed apart from the GPU pools, so no pool name can shadow it.
            "atMinPerMonth": _month(self.at_min),
            "atMaxPerMonth": _month(self.at_max),
            "pools": {p.name: _pool_json(p) for p in self.pools},
            "systemPool": None
            if self.system is None
            else {
                "name": self.system.name,
                "perNodePerHour": _round(self.system.per_node),
                "minNodes": self.system.min_nodes,
                "note": self.system.note or None,
            },
            "pricesAsOf": self.prices_as_of,
            "items": [_line_json(x) for x in self.lines],
            "total": None if self.own_hardware else self._total_json(),
        }

    def _total_json(self) -> dict[str, Any]:
        lo, hi = self.total("min"), self.total("max")
        return {
            "atMinPerHour": _round(lo.per_hour),
            "atMaxPerHour": _round(hi.per_hour),
            "atMinPerMonth": round(lo.per_month, 2),
            "atMaxPerMonth": round(hi.per_month, 2),
            "partial": bool(lo.unpriced or hi.unpriced),
            "unpriced": list(dict.fromkeys((*lo.unpriced, *hi.unpriced))),
            "usageBased": self.usage_based or None,
        }


def _month(v: float | None) -> float | None:
    return None if v is None else round(v * HOURS_PER_MONTH, 2)


def _pool_json(p: PoolCost) -> dict[str, Any]:
    return {
        "perNodePerHour": _round(p.per_node),
        "perNodePerMonth": _month(p.per_node),
        "minNodes": p.min_nodes,
        "maxNodes": p.max_nodes,
        "warmNodes": p.warm,
        "atMinPerHour": _round(p.at(p.idle_nodes)),
        "atMaxPerHour": _round(p.at(p.max_nodes)),
        "spot": p.spot,
        "note": p.note or None,
    }


def _line_json(x: Line) -> dict[str, Any]:
    return {
        "item": x.item,
        "atMinPerHour": _round(x.at_min),
        "atMaxPerHour": _round(x.at_max),
        "atMinPerMonth": _month(x.at_min),
        "atMaxPerMonth": _month(x.at_max),
        "prices": [
            {
                "item": p.item,
                "usd": p.usd,
                "unit": p.unit,
                "source": p.source,
                "asOf": p.as_of,
                "verified": p.verified,
            }
            for p in x.prices
        ],
        "unpriced": x.missing or None,
    }


def _sum(values: Iterable[float | None]) -> float | None:
    total = 0.0
    for v in values:
        if v is None:
            return None
        total += v
    return total


def _round(v: float | None) -> float | None:
    return None if v is None else round(v, 5)


def _highest(prices: Iterable[Price], spot: bool) -> float | None:
    """The highest price of the pool's places; unknown if any place is unpriced."""
    chosen = [p[1] if spot else p[0] for p in prices]
    if not chosen or any(c is None for c in chosen):
        return None
    return max(c for c in chosen if c is not None)


def node_price(prices: Iterable[Price], spot: bool) -> float | None:
    """The per-node-hour price of a pool over its places, as ``estimate`` prices it (shared with
    ``quota.check --where``): the highest place; unknown if any place is unpriced."""
    return _highest(prices, spot)


def estimate(plan: Plan, prices: Prices | None = None) -> Cost:
    """Hourly cost of ``plan`` at minimum and maximum scale."""
    prices = prices or Prices.load()
    lines: list[Line] = []
    warm = {k: v for k, v in warm_of(plan.config).items() if v}
    if plan.gke is not None:
        as_of, cloud = prices.as_of["gcp"], "gcp"
        pools, system = _gke_nodes(plan, plan.gke, prices)
        as_of = _oldest(_gke_dates(plan, plan.gke, prices)) or as_of
        nodes = (system.min_nodes, system.max_nodes) if system is not None else (0, 0)
        lines = gke_lines(plan.gke, nodes, warm)
    elif plan.eks is not None:
        as_of, cloud = prices.as_of["aws"], "aws"
        pools, system = _eks_nodes(plan, plan.eks, prices)
        as_of = _oldest(_eks_dates(plan, plan.eks, prices)) or as_of
        lines = eks_lines(plan.eks, plan.config.region or "", warm)
    else:
        as_of, cloud, system = prices.as_of["gcp"], "", None
        pools = [
            PoolCost(h.name, None, h.min_nodes, h.max_nodes, h.spot, "own hardware: no price")
            for h in plan.pools
        ]
    # Warm placeholders keep their nodes running: paid for at minimum.
    pools = [replace(p, warm=warm[p.name]) if p.name in warm else p for p in pools]
    return Cost(
        tuple(pools),
        system,
        as_of,
        own_hardware=plan.gke is None and plan.eks is None,
        lines=tuple(lines),
        usage_based=USAGE_BASED.get(cloud, ""),
        cluster_limits=_nap_limits(plan),
    )


def _nap_limits(plan: Plan) -> tuple[tuple[str, int], ...]:
    limits = plan.gke.cluster.auto_provisioning_limits if plan.gke is not None else None
    return tuple((lim.resource_type, lim.maximum) for lim in limits or ())


def _gke_nodes(plan: Plan, gke: GkePlan, prices: Prices) -> tuple[list[PoolCost], PoolCost | None]:
    """Per GKE pool its node price and range; the system pool's."""
    pools: list[PoolCost] = []
    system: PoolCost | None = None
    for p in gke.pools:
        shape_note = _user_shape_note(plan, p.name)
        per = (
            None
            if shape_note
            else _highest(
                (
                    prices.gcp_node(p.machine_type, p.accelerator, p.accelerator_count, z)
                    for z in p.node_locations
                ),
                p.spot,
            )
        )
        note = shape_note or ("" if per is not None else f"no catalog price for {p.machine_type}")
        if per is not None and (p.flex_start or p.queued_provisioning):
            # DWS VMs have their own discounted price, which the catalog does not hold.
            note = "priced at on-demand: an upper bound for DWS flex-start / queued capacity"
        if p.nodes_at_min > p.total_min:
            note = (note + "; " if note else "") + (
                f"at minimum {p.nodes_at_min} nodes: initialNodeCount {p.initial_node_count} per "
                f"zone x {len(p.node_locations)} zones outweighs totalMinNodeCount {p.total_min}"
            )
        pools.append(
            PoolCost(
                p.name,
                per,
                p.nodes_at_min,
                p.total_max,
                p.spot,
                note,
                max_enforced=not p.auto_create,
            )
        )
    c = gke.cluster
    if not c.existing:
        zones = _gke_system_zones(gke)
        per = _highest((prices.gcp_node(c.system_machine_type, None, 0, z) for z in zones), False)
        note = "" if per is not None else f"no catalog price for {c.system_machine_type}"
        # initialNodeCount=1 is per zone (infra/components/gke.py) and a regional cluster
        # runs its pools in 3 zones by default
        # (https://cloud.google.com/kubernetes-engine/docs/concepts/regional-clusters), so
        # pulumi up starts one node per zone even when totalMinNodeCount is lower.
        started = GKE_REGIONAL_DEFAULT_ZONES if _gke_regional(gke) else 1
        at_min = max(c.system_min, started)
        if at_min > c.system_min:
            note = (note + "; " if note else "") + (
                f"at minimum {at_min} nodes: initialNodeCount 1 per zone x {started} zones "
                f"outweighs totalMinNodeCount {c.system_min}"
            )
        system = PoolCost("system", per, at_min, max(c.system_max, at_min), False, note)
    return pools, system


def _eks_nodes(plan: Plan, eks: EksPlan, prices: Prices) -> tuple[list[PoolCost], PoolCost | None]:
    """Per EKS node group its instance price and range; the system group's."""
    pools: list[PoolCost] = []
    for g in eks.groups:
        spot = g.capacity_type == "SPOT"
        shape_note = _user_shape_note(plan, g.name)
        per = (
            None
            if shape_note
            else _highest(
                (prices.aws_instance(t, az) for t in g.instance_types for az in g.az_ids),
                spot,
            )
        )
        types = ", ".join(g.instance_types)
        note = shape_note or ("" if per is not None else f"no catalog price for {types}")
        if per is not None and g.capacity_type == "CAPACITY_BLOCK":
            # Capacity Blocks are paid up front at the block's price, not per node-hour.
            note = "priced at on-demand: a Capacity Block is paid up front at its own price"
        # A Karpenter pool at its maximum: the nodes its NodePool limits admit (maxNodes and the
        # drift replacement, which limits cannot tell from a scale-up).
        hi = g.karpenter.limit_nodes if g.karpenter is not None else g.max_size
        pools.append(PoolCost(g.name, per, g.min_size, hi, spot, note, drift_nodes=hi - g.max_size))
    s = eks.system
    if s is None:
        return pools, None
    azs = _eks_system_azs(eks, s)
    per = _highest((prices.aws_instance(t, az) for t in s.instance_types for az in azs), False)
    note = "" if per is not None else f"no catalog price for {', '.join(s.instance_types)}"
    return pools, PoolCost(s.name, per, s.min_size, s.max_size, False, note)


def _oldest(dates: Iterable[str]) -> str:
    """The oldest of the node price rows' dates (unknown if one is); empty when none was used."""
    found = set(dates)
    return "unknown" if "unknown" in found else min(found, default="")


def _gke_dates(plan: Plan, gke: GkePlan, prices: Prices) -> list[str]:
    """The dates of the price rows the GKE node prices are read from (machine and GPUs per zone)."""
    dates: list[str] = []
    for p in gke.pools:
        if _user_shape_note(plan, p.name):
            continue
        for z in p.node_locations:
            dates.append(prices.gcp_vm_date(p.machine_type, z, p.spot))
            if p.accelerator and p.accelerator_count:
                dates.append(prices.gcp_gpu_date(p.accelerator, p.accelerator_count, z, p.spot))
    if not gke.cluster.existing:
        c = gke.cluster
        dates += [
            prices.gcp_vm_date(c.system_machine_type, z, False) for z in _gke_system_zones(gke)
        ]
    return dates


def _eks_dates(plan: Plan, eks: EksPlan, prices: Prices) -> list[str]:
    """The dates of the price rows the EKS node prices are read from (type and AZ)."""
    dates: list[str] = []
    for g in eks.groups:
        if _user_shape_note(plan, g.name):
            continue
        spot = g.capacity_type == "SPOT"
        dates += [prices.aws_date(t, az, spot) for t in g.instance_types for az in g.az_ids]
    if eks.system is not None:
        s = eks.system
        azs = _eks_system_azs(eks, s)
        dates += [prices.aws_date(t, az, False) for t in s.instance_types for az in azs]
    return dates


# A regional cluster's node pools run in three of its region's zones unless nodeLocations says
# otherwise (https://cloud.google.com/kubernetes-engine/docs/concepts/regional-clusters).
GKE_REGIONAL_DEFAULT_ZONES = 3


def _gke_regional(gke: GkePlan) -> bool:
    return gke.cluster.location.count("-") < 2  # us-central1-a: a zonal cluster


def _gke_system_zones(gke: GkePlan) -> tuple[str, ...]:
    """Zones the system pool runs in: the cluster's zone, or every catalog zone of its region."""
    loc = gke.cluster.location
    if not _gke_regional(gke):
        return (loc,)
    zones = {z for p in gke.pools for z in p.node_locations}
    return tuple(sorted(zones)) or (f"{loc}-a",)


def _user_shape_note(plan: Plan, pool: str) -> str:
    """A pool planned from a user-declared ``shape`` has no catalog price."""
    for spec in plan.config.pools:
        if spec.name == pool and getattr(spec, "shape", None) is not None:
            return "shape declared in the stack file: no catalog price"
    return ""


def _eks_system_azs(eks: EksPlan, system: EksSystemGroupPlan) -> tuple[str, ...]:
    """The AZs the system group's subnets are in (its own, not every network AZ)."""
    if system.az_ids:
        return tuple(system.az_ids)
    return eks.network.az_ids if eks.network is not None else ()
