"""``quota.check --where``: every region of the stack's cloud that offers each GPU pool's shape,
with live quota headroom, the catalog's hourly price, and whether the whole stack would fit.

Offering and price come from the vendored catalog (pure); ``--offline`` stops there. Otherwise
all candidate regions are read concurrently: GCP in one ``read`` (one regions.get per region, all
in flight at once, bounded by ``QUOTA_WHERE_CONCURRENCY``), AWS with one Service Quotas / EC2
client pair per region, regions read in parallel under the same bound. So the wall time stays
about one round trip for any number of regions up to the bound.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, TextIO

from infra.core.catalog.vendored import Catalog
from infra.core.cost import Prices, node_price
from quota import limits
from quota.arithmetic import Reading, verdict
from quota.demand import (
    Demand,
    DemandRow,
    aws_contributions,
    gcp_contributions,
    reading_of,
    reading_pick,
    reserved_nodes,
    stack_sizings,
)
from quota.keys import QuotaKey
from quota.limits import LimitDemand
from quota.sizing import NodeGroupSizing

DEFAULT_CONCURRENCY = 32


@dataclass(slots=True)
class RegionFit:
    """One candidate region for one pool."""

    region: str
    price: float | None  # USD per node-hour (infra.plan's price), None if any part is unpriced
    gpu_quota: str | None = None  # the quota the pool's GPUs/vCPUs count against there
    headroom: int | None = None  # free units of that quota (None: not read / unknown)
    fits: bool | None = None  # the whole stack fits (None: offline or unknown)
    reason: str = ""
    short: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "region": self.region,
            "pricePerNodeHour": self.price,
            "quota": self.gpu_quota,
            "headroom": self.headroom,
            "fits": self.fits,
            "reason": self.reason,
        }


# --- catalog: offering and price (pure) --------------------------------------------------------


def _zones_in(s: NodeGroupSizing, offered: Sequence[str]) -> Sequence[str]:
    """The zones (GCP) / AZ IDs (AWS) a pool would run in there: its planned ones in its own
    region (what ``infra.plan`` prices), every offering one elsewhere."""
    own = [z for z in s.zones if z in offered]
    return own if s.zones and own and len(own) == len(s.zones) else offered


def gcp_offer(
    s: NodeGroupSizing, catalog: Catalog, prices: Prices | None = None
) -> dict[str, float | None]:
    """Regions offering the pool's GPU (and machine type), with the node's hourly price.

    The price is ``infra.plan``'s (``infra.core.cost``): machine plus GPUs in the same zone,
    the highest over the pool's zones there, unknown if any part of any zone is unpriced.
    """
    assert s.gpu_type is not None
    prices = prices or Prices.load()
    machine = s.machine_types[0]
    m = catalog.gcp_machine(machine)
    out: dict[str, float | None] = {}
    for region in catalog.gcp_regions_offering(s.gpu_type):
        zones = catalog.gcp_zones_offering(s.gpu_type, region, s.gpus_per_node)
        if m is not None and m.zones is not None:
            zones = [z for z in zones if z in m.zones]
        if not zones:
            continue
        places = _zones_in(s, zones)
        per = node_price(
            (prices.gcp_node(machine, s.gpu_type, s.gpus_per_node, z) for z in places),
            s.model == "spot",
        )
        out[region] = None if per is None else round(per, 5)
    return out


def _offer(
    s: NodeGroupSizing, cloud: str, region: str, catalog: Catalog
) -> dict[str, float | None]:
    """Regions offering the pool, with a price. A declared shape is offered where its own zones
    are, the stack's region (its facts are the user's; the catalog knows no other region or
    price for it)."""
    if s.declared:
        return {region: None}
    return gcp_offer(s, catalog) if cloud == "gcp" else aws_offer(s, catalog)


def aws_offer(
    s: NodeGroupSizing, catalog: Catalog, prices: Prices | None = None
) -> dict[str, float | None]:
    """Regions offering every instance type of the group, priced as ``infra.plan`` prices it:
    the highest type x AZ, unknown if any is unpriced."""
    prices = prices or Prices.load()
    regions: set[str] | None = None
    for t in s.machine_types:
        inst = catalog.aws_instance(t)
        offered = set(inst.az_ids) if inst is not None else set()
        regions = offered if regions is None else regions & offered
    out: dict[str, float | None] = {}
    for region in sorted(regions or ()):
        azs: set[str] = set()
        for t in s.machine_types:
            inst = catalog.aws_instance(t)
            azs |= set(inst.az_ids.get(region, ())) if inst is not None else set()
        places = _zones_in(s, sorted(azs))
        per = node_price(
            (prices.aws_instance(t, az) for t in s.machine_types for az in places), s.spot
        )
        out[region] = None if per is None else round(per, 5)
    return out


def unknown_regions(cloud: str, catalog: Catalog, regions: str | None) -> list[str]:
    """The names in ``--regions`` that are no region of ``cloud`` in the catalog (typos): an
    error, not an empty table that reads as "nowhere fits"."""
    if regions in (None, "all"):
        return []
    if cloud == "gcp":
        known = {r for acc in catalog.gcp_accelerators() for r in catalog.gcp_regions_offering(acc)}
    else:
        known = {
            r for t in catalog.aws_instances() if (i := catalog.aws_instance(t)) for r in i.az_ids
        }
    return [r for r in regions.split(",") if r.strip() not in known]


# --- live reads ----------------------------------------------------------------------------------


def _concurrency() -> int:
    return max(1, int(os.environ.get("QUOTA_WHERE_CONCURRENCY", DEFAULT_CONCURRENCY)))


def _read_gcp(
    config: Any, catalog: Catalog, demands: Sequence[Demand]
) -> tuple[dict[QuotaKey, Reading], list[tuple[str, str]], Any]:
    """Readings of every region's keys, (API, reason) for required APIs not enabled, and what the
    stack's own nodes hold in its region (``quota.own``)."""
    from quota.clients.gcp import GcpQuotaService, GcpSettings

    service = GcpQuotaService(GcpSettings.from_env(config.project), catalog, _concurrency())
    keys = list(dict.fromkeys(k for d in demands for k in d.keys_to_read()))
    home = next((d for d in demands if d.marks), None)
    readings, _ = service.read(keys, home)
    return readings, service.api_problems, service.own


def _read_aws(
    catalog: Catalog, demands: Sequence[Demand], limit_of: dict[str, LimitDemand]
) -> tuple[dict[QuotaKey, Reading], dict[str, dict[str, Any]], Any]:
    """Readings of every region's quota keys and service limits, each region's Capacity
    Reservations (``AwsQuotaService.reservations``), and what the stack's own nodes hold in its
    region (the demand that carries the marks)."""
    import boto3.session

    from quota.clients.aws import AwsQuotaService, AwsSettings

    # Clients first, on one session (models load once; client creation is CPU, not network),
    # then every region's reads at once.
    session = boto3.session.Session()
    services = [
        (d, AwsQuotaService(AwsSettings.from_env(d.region), catalog, session)) for d in demands
    ]

    def read(ds: tuple[Demand, Any]) -> tuple[dict[QuotaKey, Reading], str, dict[str, Any], Any]:
        d, svc = ds
        ld = limit_of[d.region]
        cluster = ld.cluster if ld.existing_cluster else None
        codes = [r.key.quota for r in ld.rows]
        with ThreadPoolExecutor(max_workers=2) as both:  # quotas and limits in one round trip
            quotas_f = both.submit(svc.read, d.keys_to_read(), d if d.marks else None)
            limits_f = both.submit(svc.read_service_limits, codes, cluster, ld.own_groups)
            part = dict(quotas_f.result()[0])
            values, others = limits_f.result()
        part.update(limits.limit_readings(ld, values, others))
        return part, d.region, svc.reservations, svc.own

    out: dict[QuotaKey, Reading] = {}
    reservations: dict[str, dict[str, Any]] = {}
    own: Any = None
    with ThreadPoolExecutor(max_workers=min(_concurrency(), max(1, len(demands)))) as pool:
        for part, region, held, mine in pool.map(read, services):
            out.update(part)
            reservations[region] = held
            own = mine if mine is not None else own
    return out, reservations, own


def _judge(
    rows: Sequence[DemandRow],
    readings: dict[QuotaKey, Reading],
    scope: str = "region",
    apis: Sequence[tuple[str, str]] = (),
) -> tuple[bool | None, list[str], str]:
    """(fits, short quotas, reason) of the rows of ``scope``; an API not enabled is unknown."""
    short: list[str] = []
    unknown: list[str] = [f"API {api}: {why}" for api, why in apis]
    for r in rows:
        if r.key.scope != scope:
            continue
        status, why = verdict(r.needed, reading_of(readings, r.key), r.own, r.surge)
        if status == "short":
            short.append(f"{r.key.quota}: {why}")
        elif status == "unknown":
            unknown.append(f"{r.key.quota}: {why}")
    if short:
        return False, short, "; ".join(short)
    if unknown:
        return None, [], "; ".join(unknown)
    return True, [], "the whole stack fits"


def _fold(
    regional: tuple[bool | None, list[str], str], project: tuple[bool | None, list[str], str]
) -> tuple[bool | None, list[str], str]:
    """A region fits only if the project-wide rows (global quotas, required APIs) fit too."""
    (rf, rs, rr), (pf, ps, pr) = regional, project
    if rf is False or pf is False:
        return False, rs + ps, "; ".join(x for x, f in ((rr, rf), (pr, pf)) if f is False)
    if rf is None or pf is None:
        return None, [], "; ".join(x for x, f in ((rr, rf), (pr, pf)) if f is None)
    return True, [], rr


def _limits_in(cloud: Any, plan: Any, region: str, sizings: Any, home: bool) -> LimitDemand:
    """The stack's service-limit rows as they would stand in ``region``."""
    ld = limits.stack_limits(cloud, plan, region, sizings)
    return ld if home else replace(ld, existing_cluster=False)


def _pool_key(s: NodeGroupSizing, rows: Sequence[DemandRow]) -> DemandRow | None:
    """The regional row carrying the pool's GPUs (GCP) or vCPUs (AWS)."""
    unit = "GPUs" if s.gpu_type else "vCPUs"
    for r in rows:
        if (
            r.key.scope == "region"
            and r.key.unit == unit
            and any(p.startswith(f"{s.name}:") for p in r.pools)
        ):
            return r
    return None


def run(args: Any, config: Any, catalog: Catalog, plan: Any, out: TextIO, err: TextIO) -> int:
    """``--where``: print one table (or JSON) per GPU pool; exit 0 if some region fits."""
    del err  # every problem is a row's reason
    cloud, sizings = stack_sizings(config, catalog, plan)
    pools = [s for s in sizings if not s.bootstrap and s.path.startswith("gpuPools")]
    wanted = None if args.regions in (None, "all") else {r.strip() for r in args.regions.split(",")}
    offered = {s.name: _offer(s, cloud, config.region, catalog) for s in pools}
    offers = {
        name: {r: p for r, p in o.items() if wanted is None or r in wanted}
        for name, o in offered.items()
    }
    regions = sorted({r for o in offers.values() for r in o})
    fits: dict[str, list[RegionFit]] = {
        s.name: [RegionFit(r, p) for r, p in offers[s.name].items()] for s in pools
    }
    if not args.offline and regions:
        demands = {
            r: gcp_contributions(r, sizings, args.preemptible_quota)
            if cloud == "gcp"
            else aws_contributions(r, sizings)
            for r in regions
        }
        if config.region in demands:  # the stack runs here: its own nodes are told apart
            home = demands[config.region]
            demands[config.region] = replace(home, marks=plan.platform.node_marks())
        # Service limits (node groups per cluster, nodes per group or pool zone) are walls like
        # quotas: judged in every region with its quota rows. An existing cluster is the home
        # region's only: elsewhere the stack would create its own.
        limit_of = {
            r: _limits_in(cloud, plan, r, sizings, home=r == config.region) for r in regions
        }
        apis: list[tuple[str, str]] = []
        reserved: dict[str, Any] = {}
        own: Any = None
        if cloud == "gcp":
            readings, apis, own = _read_gcp(config, catalog, list(demands.values()))
            for ld in limit_of.values():
                readings.update(limits.limit_readings(ld))
        else:
            readings, held, own = _read_aws(catalog, list(demands.values()), limit_of)
            # the stack's reservations are the home region's (a pool names one by id)
            reserved = reserved_nodes(sizings, held.get(config.region, {}))
        # Global quotas (GPUS_ALL_REGIONS, CPUS_ALL_REGIONS) and required APIs are the project's,
        # the same wherever the stack goes: judged once, folded into every region's fit.
        rows_of = {
            r: [
                *demands[r].rows(
                    reading_pick(readings),
                    reserved if r == config.region else None,
                    own if r == config.region else None,
                ),
                *limit_of[r].rows,
            ]
            for r in regions
        }
        project = _judge(rows_of[regions[0]], readings, "global", apis)
        # A region's fit is the whole stack's, the same for every pool: judged once per region.
        fit_of: dict[str, tuple[bool | None, list[str], str]] = {}
        for r in regions:
            fit_of[r] = _fold(_judge(rows_of[r], readings), project)
            missing = [p.name for p in pools if r not in offered[p.name]]
            if missing:  # the stack cannot be deployed there as it stands
                fit_of[r] = (False, fit_of[r][1], f"not offered there: {', '.join(missing)}")
        for s in pools:
            for f in fits[s.name]:
                _fill(f, s, fit_of[f.region], rows_of[f.region], readings)
    order = {True: 0, None: 1, False: 2}
    for s in pools:
        fits[s.name].sort(key=lambda f: (order[f.fits], f.price is None, f.price or 0.0, f.region))
    _emit(args, config.stack, cloud, pools, fits, out)
    every = [f.fits for s in pools for f in fits[s.name]]
    if args.offline or any(x is True for x in every):
        return 0
    return 1 if any(x is False for x in every) else 3


def _fill(
    f: RegionFit,
    s: NodeGroupSizing,
    fit: tuple[bool | None, list[str], str],
    rows: Sequence[DemandRow],
    readings: dict[QuotaKey, Reading],
) -> None:
    """A pool's fit in one region: the region's verdict, and its GPU (vCPU) quota's headroom."""
    f.fits, short, f.reason = fit
    f.short = list(short)
    row = _pool_key(s, rows)
    if row is not None:
        f.gpu_quota = row.key.quota
        rd = readings.get(row.key)
        if rd is not None and rd.error is None and rd.limit is not None and rd.usage is not None:
            f.headroom = int(rd.limit - rd.usage)


def _emit(
    args: Any,
    stack: str,
    cloud: str,
    pools: Sequence[NodeGroupSizing],
    fits: dict[str, list[RegionFit]],
    out: TextIO,
) -> None:
    if args.json:
        doc = {
            "stack": stack,
            "cloud": cloud,
            "where": [
                {
                    "pool": s.name,
                    "shape": {
                        "machineType": list(s.machine_types),
                        "gpu": s.gpu_type,
                        "gpus": s.gpus_per_node,
                        "spot": s.spot,
                    },
                    "regions": [f.as_json() for f in fits[s.name]],
                }
                for s in pools
            ],
        }
        json.dump(doc, out, indent=2)
        out.write("\n")
        return
    from rich.console import Console
    from rich.table import Table

    console = Console(file=out, soft_wrap=False, width=max(120, Console(file=out).width))
    for s in pools:
        shape = f"{'/'.join(s.machine_types)}" + (
            f" + {s.gpus_per_node}x {s.gpu_type}" if s.gpu_type else ""
        )
        table = Table(
            title=f"Where: {s.name} ({shape}{', spot' if s.spot else ''})",
            caption="a declared gpuPools[].shape: only the stack's own region is known to offer it"
            if s.declared
            else None,
        )
        for col in ("region", "$/node-hour", "quota", "headroom", "stack fits", "reason"):
            table.add_column(col, no_wrap=col != "reason")
        for f in fits[s.name]:
            table.add_row(
                f.region,
                "-" if f.price is None else f"{f.price:.3f}",
                f.gpu_quota or "-",
                "-" if f.headroom is None else str(f.headroom),
                {True: "[green]yes[/]", False: "[red]no[/]", None: "?"}[f.fits],
                "offline: offering and price only" if args.offline else f.reason,
            )
        console.print(table)
