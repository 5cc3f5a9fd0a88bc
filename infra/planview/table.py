"""The readable plan table: per pool what a person decides on, the system pool, totals and cost."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from infra.core.cost import HOURS_PER_MONTH, Cost
from infra.core.pools import PoolHints, idle_nodes
from infra.core.sharing import mig_instances_per_gpu  # NVIDIA MIG User Guide counts

if TYPE_CHECKING:
    from infra.core.catalog.pricing import Disagreement
    from infra.core.config.base import PoolBase
    from infra.core.plan import Plan
    from infra.core.platform import PoolView

Out = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class PoolRow:
    """One GPU pool as the table shows it."""

    name: str
    gpu: str
    gpus: int
    alloc: int | None  # allocatable GPUs (or slices) per node; None: depends on the layout
    zones: tuple[str, ...]
    capacity: str
    sharing: str
    min_nodes: int
    max_nodes: int
    warm: int = 0  # nodes its warm placeholders keep ready (gpuPools[].warm)

    @property
    def idle_nodes(self) -> int:
        """GPU nodes running with no user: minNodes, or the warm ones if more."""
        return idle_nodes(self.min_nodes, self.warm)

    @property
    def max_gpus(self) -> int:
        return self.gpus * self.max_nodes


def pool_rows(plan: Plan) -> list[PoolRow]:
    """One row per GPU pool of ``plan``, in plan order."""
    specs = {s.name: s for s in plan.config.pools}
    rows: list[PoolRow] = []
    for h in plan.pools:
        spec = specs.get(h.name)
        view = plan.platform.pool_view(h)
        sharing, factor = _sharing(h, spec, view)
        alloc = None if factor is None else h.gpus_per_node * factor
        if view.alloc:
            alloc = view.alloc  # what the platform's device plugin advertises
        rows.append(
            PoolRow(
                h.name,
                h.gpu_model,
                h.gpus_per_node,
                alloc,
                view.places,
                view.capacity,
                sharing,
                view.min_nodes,
                h.max_nodes,
                spec.warm if spec is not None else 0,
            )
        )
    return rows


def _sharing(h: PoolHints, spec: PoolBase | None, view: PoolView) -> tuple[str, int | None]:
    """(what the table says, allocatable units per physical GPU; None when layout-dependent):
    the platform's own sharing first, then the operator's MIG and time-slicing."""
    parts: list[str] = list(view.sharing)
    factor = view.factor
    mig = spec.mig if spec is not None else None
    if mig is not None:
        profile = mig.config.removeprefix("all-")
        per = mig_instances_per_gpu(profile, h.mig_profiles)
        parts.append(f"MIG {mig.strategy} {mig.config}" + (f" x{per}" if per else ""))
        factor = per
    sharing = spec.sharing if spec is not None else None
    if sharing is not None:
        parts.append(f"time-slicing x{sharing.replicas}")
        factor = None if factor is None else factor * sharing.replicas
    return (", ".join(parts) or "-"), factor


def money(v: float | None) -> str:
    """USD with cents, or ``unknown``."""
    return "unknown" if v is None else f"${v:,.2f}"


def print_table(
    plan: Plan,
    cost: Cost,
    recording: Any,
    out: Out = print,
    *,
    resources: bool = True,
    outputs: bool = True,
) -> None:
    """The human-readable plan: pools, system pool, totals, cost, the resource count, and with
    ``resources`` / ``outputs`` every resource and the stack outputs in full."""
    cfg = plan.config
    where = cfg.zone or cfg.region or "existing cluster"
    out(f"stack {cfg.stack}: platform {cfg.platform}, {where}")
    out("")
    rows = pool_rows(plan)
    print_pools(plan, cost, rows, out)
    print_system_pool(plan, cost, out)
    for line in plan.platform.table_notes():  # its autoscaler, node auto-provisioning
        out(line)
    print_totals(rows, out)
    print_cost(cost, out)
    print_pool_lines(plan, out)
    if resources:
        out("")
        print_resources(recording, out)
    else:
        n = len(recording.resources)
        out(f"\n{n} resources (--resources lists them, --outputs prints the stack outputs)")
    if outputs:
        print_outputs(recording, out)


def print_pools(plan: Plan, cost: Cost, rows: Sequence[PoolRow], out: Out = print) -> None:
    """The GPU pool table: one row per pool."""
    prices = {p.name: p for p in cost.pools}
    zone_head = plan.platform.features.places
    table(
        (
            "GPU POOL",
            "GPU",
            "GPUS/NODE",
            "ALLOC/NODE",
            zone_head,
            "CAPACITY",
            "SHARING/MIG",
            "NODES",
            "MAX GPUS",
            "$/NODE-H",
        ),
        [
            (
                r.name,
                r.gpu,
                str(r.gpus),
                "?" if r.alloc is None else str(r.alloc),
                ",".join(_short_zones(r.zones)) or "-",
                r.capacity,
                r.sharing,
                f"{r.min_nodes}-{r.max_nodes}" + (f" ({r.warm} warm)" if r.warm else ""),
                str(r.max_gpus),
                _price_cell(prices.get(r.name)),
            )
            for r in rows
        ],
        out,
    )


def print_system_pool(plan: Plan, cost: Cost, out: Out = print) -> None:
    """The system pool's machine, node range and price (or that the existing cluster's is used)."""
    if cost.system is not None:
        s = cost.system
        machine = plan.platform.system_machine
        nodes = f"{s.min_nodes}-{s.max_nodes}" if s.max_nodes != s.min_nodes else f"{s.min_nodes}"
        fixed = plan.platform.system_fixed
        out(
            f"\nsystem pool: {machine}, {nodes} nodes{' (fixed: nothing scales it)' if fixed else ''}, "
            f"{_price_cell(s)} per node-hour"
        )
    elif plan.platform.existing and not plan.platform.features.own_hardware:
        out("\nsystem pool: the existing cluster's (not created or priced here)")


def print_totals(rows: Sequence[PoolRow], out: Out = print) -> None:
    """Pools, GPUs (and allocatable units) at maximum, GPU nodes at minimum."""
    total_gpus = sum(r.max_gpus for r in rows)
    allocs = [r.alloc * r.max_nodes if r.alloc is not None else None for r in rows]
    alloc_total = "?" if any(a is None for a in allocs) else str(sum(a or 0 for a in allocs))
    warm = sum(r.warm for r in rows)
    out(
        f"totals: {len(rows)} GPU pools, up to {total_gpus} GPUs "
        f"({alloc_total} allocatable), {sum(r.idle_nodes for r in rows)} GPU nodes at minimum"
        + (f" (warm nodes included: {warm})" if warm else "")
    )


def print_cost(cost: Cost, out: Out = print) -> None:
    """The nodes' cost, each pool's price note, the other lines (control plane, NAT, disks) with
    their prices' sources and dates, and the total per hour and per month."""
    out(
        f"cost: {money(cost.at_min)}/h at minimum, {money(cost.at_max)}/h at maximum "
        f"(nodes at catalog prices as of {cost.prices_as_of}; spot pools at spot prices"
        + ("; ≥: a floor, some places have no price" if any(p.floor for p in cost.pools) else "")
        + ("; !: not verified, a second source disagrees" if cost.unverified else "")
        + ")"
    )
    if (uncapped := [p.name for p in cost.pools if not p.max_enforced]) and cost.cluster_limits:
        # Node auto-provisioning's limits cap the cluster's totals, not one pool (gke/nap.py).
        out(
            f"  at maximum: {', '.join(uncapped)} auto-created: node auto-provisioning limits "
            "cap the cluster's totals: "
            + ", ".join(f"{k} {v}{' GB' if k == 'memory' else ''}" for k, v in cost.cluster_limits)
        )
    elif uncapped:
        # A ComputeClass has no node limit, and node auto-provisioning is off.
        out(
            f"  at maximum: {', '.join(uncapped)} auto-created: maxNodes is planned, not a cap "
            "GKE enforces (the project's GPU quota is the hard cap)"
        )
    if drift := [p for p in cost.pools if p.drift_nodes]:
        out(
            "  at maximum: "
            + ", ".join(f"{p.name} {p.max_nodes - p.drift_nodes}+{p.drift_nodes}" for p in drift)
            + " nodes: the drift-replacement node each Karpenter pool's NodePool limits admit "
            "(a replacement runs beside the node it replaces; cost and quota count it)"
        )
    for p in (*cost.pools, *((cost.system,) if cost.system else ())):
        if p.note:
            out(f"  {p.name}: " + (f"price unknown ({p.note})" if p.per_node is None else p.note))
        for d in p.disagreements:
            out(f"  {p.name}: {disagreement_text(d)}")
        if p.warm:
            out(
                f"  {p.name}: at minimum {p.idle_nodes} node{'s' if p.idle_nodes > 1 else ''}: "
                # min_nodes is the pool's minimum as run (a GKE pool's initial nodes per zone may
                # outweigh the stack's minNodes), not the config key.
                f"warm {p.warm} placeholder-held (paid while idle), {p.min_nodes} without "
                "placeholders"
            )
    if cost.own_hardware:
        return
    for x in cost.lines:
        if x.price is None:
            continue
        prices = ", ".join(
            f"{p.item} ${p.usd:g}{'/GB-month' if p.unit == 'per_gb_month' else '/h'}"
            for p in x.prices
        )
        out(
            f"  + {x.item}: {_range(x.at_min, x.at_max)}/h, "
            f"{_range(_month(x.at_min), _month(x.at_max))}/month "
            f"({prices} as of {x.price.dated}{_older(x.price.as_of, cost.prices_as_of)}; "
            f"{x.price.source})"
        )
    lo, hi = cost.total("min"), cost.total("max")
    out(
        f"total: {money(lo.per_hour)}/h ({money(lo.per_month)}/month) at minimum, "
        f"{money(hi.per_hour)}/h ({money(hi.per_month)}/month) at maximum"
        + (" (partial)" if lo.unpriced or hi.unpriced else "")
    )
    for item in dict.fromkeys((*lo.unpriced, *hi.unpriced)):
        out(f"  not priced: {item}")
    if cost.unverified:
        out(
            f"  not verified: the node prices of {', '.join(cost.unverified)} (a second source "
            "disagrees, above; the totals use the catalog's)"
        )
    if cost.usage_based:
        out(f"  usage-based, not included: {cost.usage_based}")


def disagreement_text(d: Disagreement) -> str:
    """A node price a second source disagrees with: both figures, the other's source and date."""
    return (
        f"price not verified: {d.provisioning} {d.item} in {d.region} ({d.covers}) is "
        f"${d.catalog_usd:.4f}/h in the catalog, ${d.other_usd:.4f}/h in {d.source} as of "
        f"{d.as_of}; the catalog's is used"
    )


def _month(v: float | None) -> float | None:
    return None if v is None else v * HOURS_PER_MONTH


def _range(a: float | None, b: float | None) -> str:
    return money(a) if a == b else f"{money(a)}-{money(b)}"


def print_pool_lines(plan: Plan, out: Out = print) -> None:
    """Per pool its machine and node range (or instance types and AMI). The planner's notes go
    to stderr with the operator's (``infra.plan``), in every output mode."""
    for line in plan.platform.pool_lines():
        out(line)


def print_resources(recording: Any, out: Out = print) -> None:
    """Every resource the program registers (type, name, parent) and their count."""
    res = [(r.type, r.name, (r.parent or "").rsplit("::", 1)[-1]) for r in recording.resources]
    table(("TYPE", "NAME", "PARENT"), res, out)
    out(f"\n{len(recording.resources)} resources")


def print_outputs(recording: Any, out: Out = print) -> None:
    """The stack outputs in full (JSON, indented)."""
    out("\noutputs:")
    for key, value in recording.outputs.items():
        out(f"  {key}:")
        for line in json.dumps(value, indent=2).splitlines():
            out(f"    {line}")


def _price_cell(p: Any) -> str:
    if p is None or p.per_node is None:
        return "unknown"
    floor = "≥" if getattr(p, "floor", False) else ""
    unverified = "!" if getattr(p, "disagreements", ()) else ""
    return f"{unverified}{floor}${p.per_node:.2f}" + (" spot" if p.spot else "")


def _short_zones(zones: tuple[str, ...]) -> list[str]:
    """``us-central1-a,b,c``: the region once, then the zone letters."""
    if len(zones) > 1 and all(z.count("-") >= 2 for z in zones):
        regions = {z.rsplit("-", 1)[0] for z in zones}
        if len(regions) == 1:
            return [zones[0], *(z.rsplit("-", 1)[1] for z in zones[1:])]
    return list(zones)


def table(header: tuple[str, ...], rows: Sequence[tuple[str, ...]], out: Out = print) -> None:
    """Left-aligned columns, two spaces apart."""
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=False)]
    for row in (header, *rows):
        out("  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())


def _older(as_of: str, nodes_as_of: str) -> str:
    """A warning when a price was read over a year before the node prices beside it."""
    try:
        days = (dt.date.fromisoformat(nodes_as_of) - dt.date.fromisoformat(as_of)).days
    except ValueError:
        return ""
    return f", {days // 365} year(s) before the node prices" if days > 365 else ""
