"""A second source for the catalog's GCP node prices: each machine type's on-demand and Spot price
in every GPU region against the same machine in a price dataset generated from the Cloud Billing
Catalog API; where they disagree, a ``price_disagreements.csv`` row (parsing and comparing only:
``scripts/import_platform_prices.py`` reads the files and writes the rows).

The dataset (Cyclenerd/google-cloud-pricing-cost-calculator ``pricing.yml``, ``price_import``)
prices a machine as ``compute.instance.<machine>.cost.<region>.hour`` (``hour_spot`` for Spot): its
vCPU, memory and GPU SKUs summed, plus the Local SSD it comes with (build/pricing.pl:
``add_gcp_compute_instance_cost('hour', ..., $costs+$upgrade_costs+$costs_local_ssd_hour)``, and
for Spot ``$costs_spot+$costs_local_ssd_hour_spot``, where ``$costs_local_ssd_hour`` is the
machine's ``local-ssd`` GB x ``compute.storage.local.cost.<region>.month`` (``month_spot``) /
``$hours_month``, 730 by default: "same as Google Cloud Pricing Calculator"). The catalog prices
Local SSD as a line of its own (``infra.core.gke.cost``), so the figure compared is the dataset's
minus that Local SSD.

The catalog's node price: a built-in-GPU machine's ``gcp_machine_types.csv`` row (vCPUs and
memory) plus the ``gcp_accelerators.csv`` row of its GPUs and count in the same zone; a CPU or N1
host's ``gcp_vm_prices.csv`` row (vCPUs and memory: an attached GPU is not compared, the dataset
has no price of a GPU alone). The zones of a region share one price in these files, so a node
price is one per (machine type, region).

Never a guess: a machine or region the dataset lacks is counted as not compared, never as agreeing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from infra.core.catalog.price_import import GCP_API, GCP_PATH, GCP_REPO, dataset_source
from infra.core.catalog.prices import compare, fmt_price

Provisioning = Literal["on-demand", "spot"]
DISAGREEMENTS = "price_disagreements.csv"
COLUMNS = (
    "cloud",
    "item",
    "region",
    "provisioning",
    "covers",
    "catalog_usd",
    "other_usd",
    "source",
    "as_of",
    "quote",
)
# build/pricing.pl option ``hours``: "Hours per month [DEFAULT: 730, same as Google Cloud
# Pricing Calculator]", the hours a month-priced Local SSD is spread over in an hourly figure.
DATASET_HOURS_PER_MONTH = 730
# (cost key of the machine, cost key of the Local SSD) per provisioning model.
_KEYS: dict[Provisioning, tuple[str, str]] = {
    "on-demand": ("hour", "month"),
    "spot": ("hour_spot", "month_spot"),
}

Row = dict[str, str]


@dataclass(frozen=True, slots=True)
class NodePrice:
    """The catalog's hourly price of one machine type in one region (``None``: no price)."""

    item: str
    region: str
    covers: str  # what the price is of: "vCPUs, memory and 8 nvidia-h100-80gb" / "vCPUs and memory"
    on_demand: float | None
    spot: float | None

    def of(self, provisioning: Provisioning) -> float | None:
        return self.on_demand if provisioning == "on-demand" else self.spot


def _float(text: str) -> float | None:
    return float(text) if text else None


def _sum(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else round(a + b, 6)


def catalog_node_prices(
    machines: Iterable[Mapping[str, str]],
    accelerators: Iterable[Mapping[str, str]],
    vms: Iterable[Mapping[str, str]],
    regions: Iterable[str],
) -> list[NodePrice]:
    """One price per (machine type, region in ``regions``) of the three node price files."""
    wanted = set(regions)
    gpus = {(r["accelerator"], r["count"], r["zone"]): r for r in accelerators}
    out: dict[tuple[str, str], NodePrice] = {}
    for r in machines:
        if r["region"] not in wanted:
            continue
        g = gpus.get((r["accelerator"], r["accelerator_count"], r["zone"]))
        gpu = (None, None) if g is None else (g["price_per_hour"], g["spot_price_per_hour"])
        out.setdefault(
            (r["machine_type"], r["region"]),
            NodePrice(
                r["machine_type"],
                r["region"],
                f"vCPUs, memory and {r['accelerator_count']} {r['accelerator']}",
                _sum(_float(r["price_per_hour"]), _float(gpu[0] or "")),
                _sum(_float(r["spot_price_per_hour"]), _float(gpu[1] or "")),
            ),
        )
    for r in vms:
        if r["region"] in wanted:
            out.setdefault(
                (r["machine_type"], r["region"]),
                NodePrice(
                    r["machine_type"],
                    r["region"],
                    "vCPUs and memory",
                    _float(r["price_per_hour"]),
                    _float(r["spot_price_per_hour"]),
                ),
            )
    return [out[k] for k in sorted(out)]


def dataset_price(
    doc: Mapping[str, Any], item: str, region: str, provisioning: Provisioning
) -> tuple[float, str] | None:
    """The dataset's hourly price of machine ``item`` in ``region`` without its bundled Local SSD,
    and how it was read; ``None`` when the dataset has no such price."""
    machines = doc["compute"].get("instance")
    if not machines:
        raise ValueError("pricing.yml: no compute.instance, no machine price to compare")
    machine = machines.get(item)
    hour_key, ssd_key = _KEYS[provisioning]
    cost = (machine or {}).get("cost", {}).get(region, {})
    if hour_key not in cost:
        return None
    where = f"compute.instance.{item}.cost.{region}.{hour_key}"
    usd, quote = float(cost[hour_key]), f"{where}: {cost[hour_key]}"
    gb = float(machine.get("local-ssd") or 0) if machine else 0.0
    if gb:
        per = doc["compute"]["storage"]["local"]["cost"].get(region, {}).get(ssd_key)
        if per is None:
            return None  # the Local SSD it includes is not known: no machine price
        usd -= gb * float(per) / DATASET_HOURS_PER_MONTH
        quote += (
            f" - {gb:g} GB bundled Local SSD x compute.storage.local.cost.{region}.{ssd_key} "
            f"{per} / {DATASET_HOURS_PER_MONTH} h"
        )
    return round(usd, 6), quote


@dataclass
class Crosscheck:
    """What comparing the catalog with the dataset found."""

    disagreements: list[Row] = field(default_factory=list[Row])
    agree: int = 0
    not_compared: list[str] = field(default_factory=list[str])  # "item region provisioning: why"

    @property
    def compared(self) -> int:
        return self.agree + len(self.disagreements)


def crosscheck(
    doc: Mapping[str, Any], commit: str, as_of: str, nodes: Iterable[NodePrice]
) -> Crosscheck:
    """Each node price (on-demand and Spot) against the dataset's: agreeing within the catalog's
    match tolerance (``prices.compare``), or a disagreement row."""
    src = dataset_source(GCP_REPO, GCP_PATH, commit, GCP_API)
    out = Crosscheck()
    for n in nodes:
        for prov in _KEYS:
            mine = n.of(prov)
            other = dataset_price(doc, n.item, n.region, prov)
            if mine is None or other is None:
                why = "the catalog has no price" if mine is None else "the dataset has no price"
                out.not_compared.append(f"{n.item} {n.region} {prov}: {why}")
                continue
            if compare(mine, other[0]) == "match":
                out.agree += 1
                continue
            out.disagreements.append(
                {
                    "cloud": "gcp",
                    "item": n.item,
                    "region": n.region,
                    "provisioning": prov,
                    "covers": n.covers,
                    "catalog_usd": fmt_price(mine),
                    "other_usd": fmt_price(other[0]),
                    "source": src,
                    "as_of": as_of,
                    "quote": other[1],
                }
            )
    return out
