"""What a planned stack costs per hour at its minimum and at its maximum scale, from catalog prices.

Prices come from the catalog (``Catalog.prices``, ``infra.core.catalog.pricing``, which names the
files). A price the catalog lacks is ``None`` ("unknown"), never 0; a total that
would need an unknown price for a node that runs is unknown too. Where a pool spans zones with
different prices, the highest is used, so the estimate does not understate; where only some of its
zones have a price (an AZ without a Spot price), the highest of those is a floor, said so and
counted as partial in the totals. ``pricesAsOf`` is the
oldest date of the rows used: a row's file header date, or the day ``price_checks.csv`` says its
on-demand price was read at the cloud's price API.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from infra.core.catalog.pricing import Disagreement, Price, Prices
from infra.core.platform import NodePlace, PricedPool
from infra.core.platform_cost import HOURS_PER_MONTH, Line
from infra.core.pools import idle_nodes, warm_of

__all__ = ["HOURS_PER_MONTH", "Cost", "PoolCost", "Prices", "estimate"]

if TYPE_CHECKING:
    from infra.core.planned import Plan


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
        disagreements: the catalog node prices of its places that a second source disagrees
            with (``price_disagreements.csv``): ``per_node`` is still the catalog's, not verified.
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
    # The price is the highest of the places that have one, while some place has none: a floor
    # (what those places would cost is not known), never "unknown" for the whole pool.
    floor: bool = False
    disagreements: tuple[Disagreement, ...] = ()

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
                if p.floor and n:
                    unpriced.append(f"{p.name} nodes beyond the floor ({p.note})")
        for line in self.lines:
            v = line.at_min if scale == "min" else line.at_max
            if line.missing:
                unpriced.append(line.missing)
            priced += v or 0.0
        return Total(priced, tuple(unpriced))

    def _all(self) -> tuple[PoolCost, ...]:
        return (*self.pools, self.system) if self.system is not None else self.pools

    @property
    def unverified(self) -> tuple[str, ...]:
        """Pools (the system pool too) priced from a node price a second source disagrees with."""
        return tuple(p.name for p in self._all() if p.disagreements)

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
                **_disagreements_json(self.system),
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
        **({"floor": True} if p.floor else {}),  # perNodePerHour is a lower bound
        **_disagreements_json(p),
    }


def _disagreements_json(p: PoolCost) -> dict[str, Any]:
    """A pool priced from a node price a second source disagrees with: not verified, and what
    the other source says (perNodePerHour stays the catalog's)."""
    if not p.disagreements:
        return {}
    return {"unverified": True, "disagreements": [d.to_json() for d in p.disagreements]}


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


def _floor(
    places: Iterable[NodePlace], prices: Iterable[Price], spot: bool
) -> tuple[float, str] | None:
    """The highest price among the places that have one, and the places without, when only some
    lack a price (an AZ with no Spot price, say); ``None`` when all or none are priced."""
    pairs = list(zip(places, (p[1] if spot else p[0] for p in prices), strict=True))
    known = [v for _, v in pairs if v is not None]
    missing = sorted({f"{x.machine_type} in {x.zone}" for x, v in pairs if v is None})
    if not known or not missing:
        return None
    return max(known), ", ".join(missing)


def node_price(prices: Iterable[Price], spot: bool) -> float | None:
    """The per-node-hour price of a pool over its places, as ``estimate`` prices it (shared with
    ``quota.check --where``): the highest place; unknown if any place is unpriced."""
    return _highest(prices, spot)


def estimate(plan: Plan, prices: Prices | None = None) -> Cost:
    """Hourly cost of ``plan`` at minimum and maximum scale, at ``prices`` (default: those of the
    catalog the plan was built with, whose platform prices every other line is priced at)."""
    prices = prices or plan.catalog.prices
    warm = {k: v for k, v in warm_of(plan.config).items() if v}
    platform = plan.platform
    cloud = platform.features.cloud
    if platform.features.own_hardware:
        pools = [
            PoolCost(h.name, None, h.min_nodes, h.max_nodes, h.spot, "own hardware: no price")
            for h in plan.pools
        ]
        system, as_of, lines = None, "", []
    else:
        priced, system_nodes = platform.priced_pools()
        pools = [_priced(plan, p, prices) for p in priced]
        system = _priced(plan, system_nodes, prices, system=True) if system_nodes else None
        as_of = _oldest(_dates(plan, priced, system_nodes, prices))
        lines = platform.cost_lines(warm, prices)
    # No cloud prices own hardware: the date shown is then that of the GCP tables.
    as_of = as_of or prices.as_of[cloud or "gcp"]
    # Warm placeholders keep their nodes running: paid for at minimum.
    pools = [replace(p, warm=warm[p.name]) if p.name in warm else p for p in pools]
    return Cost(
        tuple(pools),
        system,
        as_of,
        own_hardware=platform.features.own_hardware,
        lines=tuple(lines),
        usage_based=platform.usage_based,
        cluster_limits=platform.cluster_limits,
    )


def _priced(plan: Plan, p: PricedPool, prices: Prices, system: bool = False) -> PoolCost:
    """A pool's per-node price (the highest of its places) and range, with why it is unknown or
    only a bound."""
    shape_note = "" if system else _user_shape_note(plan, p.name)
    found = [_place_price(prices, x) for x in p.places]
    per = None if shape_note else _highest(found, p.spot)
    floor = None if shape_note or per is not None else _floor(p.places, found, p.spot)
    note = shape_note or ("" if per is not None else f"no catalog price for {p.machine}")
    if floor is not None:
        per = floor[0]
        kind = "spot " if p.spot else ""
        note = f"a floor: the highest {kind}price of the places priced; none for {floor[1]}"
    if per is not None and p.bound:
        note = p.bound if floor is None else f"{note}; {p.bound}"
    if p.spot_or_on_demand and per is not None:
        note = (note + "; " if note else "") + _spot_floor_note(found)
    if p.extra:
        note = (note + "; " if note else "") + p.extra
    disputed = () if per is None else _disagreements(prices, p)
    return PoolCost(
        p.name,
        per,
        p.min_nodes,
        p.max_nodes,
        p.spot,
        note,
        max_enforced=p.max_enforced,
        drift_nodes=p.drift_nodes,
        floor=floor is not None,
        disagreements=disputed,
    )


def _disagreements(prices: Prices, p: PricedPool) -> tuple[Disagreement, ...]:
    """The node prices of the pool's places that a second source disagrees with, once each."""
    found = (
        prices.disagreement(x.cloud, x.machine_type, x.accelerator, x.count, x.zone, p.spot)
        for x in p.places
    )
    return tuple(dict.fromkeys(d for d in found if d is not None))


def _spot_floor_note(found: list[Price]) -> str:
    """A pool allowing Spot and on-demand is priced at its on-demand ceiling (what it costs when
    no Spot capacity is left, never understated); Karpenter launches Spot first, so the cheapest
    Spot price of its types and places is the floor it usually pays."""
    spot = [p[1] for p in found if p[1] is not None]
    floor = f"${min(spot):.4f}" if spot else "unknown (no Spot price)"
    return f"priced at the on-demand ceiling; Spot first, Spot floor {floor} per node-hour"


def _place_price(prices: Prices, x: NodePlace) -> Price:
    if x.cloud == "gcp":
        return prices.gcp_node(x.machine_type, x.accelerator, x.count, x.zone)
    return prices.aws_instance(x.machine_type, x.zone)


def _dates(
    plan: Plan, pools: Iterable[PricedPool], system: PricedPool | None, prices: Prices
) -> list[str]:
    """The dates of the price rows the node prices are read from (machine and GPUs per place);
    a pool planned from a declared shape is priced from none."""
    used = [p for p in pools if not _user_shape_note(plan, p.name)]
    if system is not None:
        used.append(system)
    return [d for p in used for x in p.places for d in _place_dates(prices, x, p.spot)]


def _place_dates(prices: Prices, x: NodePlace, spot: bool) -> list[str]:
    if x.cloud == "aws":
        return [prices.aws_date(x.machine_type, x.zone, spot)]
    dates = [prices.gcp_vm_date(x.machine_type, x.zone, spot)]
    if x.accelerator and x.count:
        dates.append(prices.gcp_gpu_date(x.accelerator, x.count, x.zone, spot))
    return dates


def _oldest(dates: Iterable[str]) -> str:
    """The oldest of the node price rows' dates (unknown if one is); empty when none was used."""
    found = set(dates)
    return "unknown" if "unknown" in found else min(found, default="")


def _user_shape_note(plan: Plan, pool: str) -> str:
    """A pool planned from a user-declared ``shape`` has no catalog price."""
    for spec in plan.config.pools:
        if spec.name == pool and spec.shape is not None:
            return "shape declared in the stack file: no catalog price"
    return ""
