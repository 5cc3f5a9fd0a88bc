"""Checking the catalog's prices against the clouds' public price APIs: parsing and matching only.

The thin caller (``infra/price_verify.py``) asks AWS's Price List Query API and Google's Cloud
Billing Catalog API; this module turns their answers into one price per checked row, compares it
with the catalog's and says ``match``, ``differs`` or ``unknown`` (never a guess: no answer, or
two different answers, is ``unknown``). It also computes the rows ``--write`` changes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Status = Literal["match", "differs", "unknown"]

# Relative tolerance of a match: the catalog keeps 5 decimals (skypilot-org/skypilot
# sky/catalog/data_fetchers/fetch_gcp.py PRICE_ROUNDING = 5), so a price within 0.5% (or within
# half a unit of the 5th decimal for tiny prices) is the same list price.
TOLERANCE = 0.005
ABS_TOLERANCE = 0.000005

# --- AWS Price List Query API --------------------------------------------------------------------
# GetProducts (https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_pricing_GetProducts.html)
# is served in us-east-1; filters are TERM_MATCH on product attributes, PriceList items are JSON
# strings with product.attributes and terms.OnDemand.*.priceDimensions.*.pricePerUnit.USD.
AWS_PRICING_REGION = "us-east-1"
# Each a URL first: a price row written from a live read names its source as every row does.
AWS_SOURCE = "https://api.pricing.us-east-1.amazonaws.com AWS Price List Query API GetProducts"


def aws_filters(attributes: Mapping[str, str]) -> list[dict[str, str]]:
    """GetProducts ``Filters`` for exact attribute values."""
    return [{"Type": "TERM_MATCH", "Field": k, "Value": v} for k, v in attributes.items()]


def ec2_instance_query(instance_type: str, region: str) -> dict[str, str]:
    """Attributes of a Linux, shared-tenancy, on-demand EC2 instance hour in ``region``.

    capacitystatus Used is the instance-hour product (not unused reservation capacity),
    preInstalledSw NA no bundled software, licenseModel "No License required" no BYOL twin: the
    filters of the AWS provider's GetProducts example
    (https://www.pulumi.com/registry/packages/aws/api-docs/pricing/getproduct/). ``regionCode``
    stands for its ``location`` display name. marketoption OnDemand leaves out the Capacity Block
    products (operation ``RunInstances:CB``, listed at $0: their price is set at purchase) that
    share every other attribute of a p5/p4d type and would make two prices. No AWS page documents
    these attribute values; a filter the API does not know answers nothing, which is ``unknown``,
    never a match.
    """
    return {
        "instanceType": instance_type,
        "regionCode": region,
        "operatingSystem": "Linux",
        "tenancy": "Shared",
        "preInstalledSw": "NA",
        "capacitystatus": "Used",
        "licenseModel": "No License required",
        "marketoption": "OnDemand",
    }


@dataclass(frozen=True, slots=True)
class AwsPlatformQuery:
    """How a ``platform_prices.csv`` AWS item is found: service, attributes, unit, usage type."""

    service: str
    attributes: dict[str, str]
    unit: str  # the priceDimensions unit: Hrs, GB-Mo
    usagetype_suffix: str = (
        ""  # usage types carry a region prefix (USE1-, USW2-): matched by suffix
    )
    # Usage types billed on top of ``usagetype_suffix`` for the same hour: the row's price is
    # their sum (any part unread -> unknown).
    plus: tuple[str, ...] = ()


# The items the Price List identifies by product family / attributes and the usage types AWS bills
# them under (USE1-AmazonEKS-Hours:perCluster, NatGateway-Hours, volumeApiName gp3). These names
# are not confirmed by AWS documentation here: an answer without them is ``unknown``, never a
# match. public-ipv4 is left out: no product family / usage type for it could be confirmed.
AWS_PLATFORM_QUERIES: dict[str, AwsPlatformQuery] = {
    "eks-cluster-fee": AwsPlatformQuery("AmazonEKS", {}, "Hrs", "AmazonEKS-Hours:perCluster"),
    # Extended support is a surcharge on the standard fee: "charged a total of $0.60 per cluster
    # per hour" (https://aws.amazon.com/eks/pricing/) = perCluster $0.10 + extendedSupport $0.50.
    "eks-cluster-fee-extended": AwsPlatformQuery(
        "AmazonEKS",
        {},
        "Hrs",
        "AmazonEKS-Hours:perCluster",
        plus=("AmazonEKS-Hours:extendedSupport",),
    ),
    "nat-gateway": AwsPlatformQuery(
        "AmazonEC2", {"productFamily": "NAT Gateway"}, "Hrs", "NatGateway-Hours"
    ),
    "ebs-gp3": AwsPlatformQuery(
        "AmazonEC2", {"productFamily": "Storage", "volumeApiName": "gp3"}, "GB-Mo"
    ),
}


@dataclass(frozen=True, slots=True)
class SourcePrice:
    """What the source says: a price with its own wording, or why there is none."""

    usd: float | None
    quote: str = ""  # the source's description of the price (AWS priceDimension, GCP SKU)
    reason: str = ""  # why usd is None


def aws_on_demand(price_list: Iterable[str], unit: str, usagetype_suffix: str = "") -> SourcePrice:
    """The one on-demand USD price per ``unit`` in GetProducts ``PriceList`` items.

    Only the first tier (beginRange 0) counts; products whose usagetype does not end with
    ``usagetype_suffix`` are skipped. None, or several different prices, is not a price.
    """
    found: dict[float, str] = {}
    for text in price_list:
        item: dict[str, Any] = json.loads(text)
        attrs = item.get("product", {}).get("attributes", {})
        if usagetype_suffix and not str(attrs.get("usagetype", "")).endswith(usagetype_suffix):
            continue
        for term in item.get("terms", {}).get("OnDemand", {}).values():
            for dim in term.get("priceDimensions", {}).values():
                usd = dim.get("pricePerUnit", {}).get("USD")
                if dim.get("unit") != unit or usd is None or dim.get("beginRange", "0") != "0":
                    continue
                found.setdefault(float(usd), str(dim.get("description", "")))
    return _one(found, f"on-demand USD per {unit}")


def summed(parts: Iterable[tuple[str, SourcePrice]]) -> SourcePrice:
    """The sum of prices billed together for one hour; any part unread makes the sum unknown."""
    parts = list(parts)
    missing = [f"{name}: {p.reason or 'not read'}" for name, p in parts if p.usd is None]
    if missing:
        return SourcePrice(None, reason="; ".join(missing))
    usd = round(sum(p.usd or 0.0 for _, p in parts), 6)
    return SourcePrice(usd, " + ".join(f"{name} {p.quote}" for name, p in parts))


def aws_summed(
    price_list: Iterable[str], unit: str, usagetype_suffixes: Iterable[str]
) -> SourcePrice:
    """The on-demand price of each usage type in one GetProducts answer, added up."""
    items = list(price_list)
    return summed((s, aws_on_demand(items, unit, s)) for s in usagetype_suffixes)


def _one(found: Mapping[float, str], what: str) -> SourcePrice:
    if not found:
        return SourcePrice(None, reason=f"no {what} in the answer")
    if len(found) > 1:
        listed = ", ".join(f"{p:g}" for p in sorted(found))
        return SourcePrice(None, reason=f"{len(found)} different {what}: {listed}")
    ((usd, quote),) = found.items()
    return SourcePrice(usd, quote)


# --- Cloud Billing Catalog API ---------------------------------------------------------------------
# services.skus.list (https://cloud.google.com/billing/docs/reference/rest/v1/services.skus/list)
# of Compute Engine, service id 6F81-5844-456A; each SKU has description, category {resourceFamily,
# resourceGroup, usageType}, serviceRegions and pricingInfo[].pricingExpression.tieredRates[]
# .unitPrice {units, nanos}. The matching follows the fetcher the catalog's prices were built with
# (skypilot-org/skypilot sky/catalog/data_fetchers/fetch_gcp.py: SERIES_TO_DESCRIPTION,
# get_vm_price, get_gpu_price), so a match means the same list price, re-read today.
GCE_SERVICE_ID = "6F81-5844-456A"
GCP_SOURCE = f"https://cloudbilling.googleapis.com/v1/services/{GCE_SERVICE_ID}/skus Cloud Billing Catalog API"

GCP_SERIES_DESCRIPTION = {
    "a2": "A2 Instance",
    "a3": "A3 Instance",
    "e2": "E2 Instance",
    "g2": "G2 Instance",
    "n1": "N1 Predefined Instance",
    "n2": "N2 Instance",
}
# SKUs the fetcher prunes: not the plain on-demand VM (fetch_gcp.py get_skus).
_PRUNED_WORDS = ("custom", "premium", "reserved", "sole tenancy")


# PricingExpression.usageUnit, the unit a price is per ("GiBy" = gibibyte; "h" = hour,
# https://cloud.google.com/billing/docs/reference/rest/v1/services.skus/list#PricingExpression):
# a core or GPU is priced per hour, RAM per GiB-hour; a price in another unit is no price here.
GCP_HOUR = "h"
GCP_GIB_HOUR = "GiBy.h"


def gcp_unit_price(sku: Mapping[str, Any], unit: str = GCP_HOUR) -> float | None:
    """The SKU's first-tier USD price per ``unit`` (``units`` + ``nanos`` / 1e9); None in another."""
    try:
        expr = sku["pricingInfo"][0]["pricingExpression"]
        rate = expr["tieredRates"][0]["unitPrice"]
    except (KeyError, IndexError):
        return None
    if rate.get("currencyCode", "USD") != "USD" or expr.get("usageUnit") != unit:
        return None
    return int(rate.get("units") or 0) + int(rate.get("nanos") or 0) / 1e9


def _on_demand_in(sku: Mapping[str, Any], region: str) -> bool:
    cat = sku.get("category", {})
    desc = str(sku.get("description", "")).lower()
    return (
        cat.get("resourceFamily") == "Compute"
        and cat.get("usageType") == "OnDemand"
        and region in sku.get("serviceRegions", ())
        and not any(w in desc for w in _PRUNED_WORDS)
    )


def gpu_description(accelerator: str) -> str:
    """The words a GPU's SKU description holds: ``nvidia-tesla-t4`` -> ``T4 GPU``."""
    name = accelerator.removeprefix("nvidia-").removeprefix("tesla-").upper()
    special = {"A100-80GB": "A100 80GB GPU", "H100-80GB": "H100 80GB GPU", "H200": "H200 141GB GPU"}
    return special.get(name, f"{name} GPU")


def gcp_gpu_price(skus: Iterable[Mapping[str, Any]], accelerator: str, region: str) -> SourcePrice:
    """On-demand USD per GPU-hour of ``accelerator`` in ``region``."""
    words = gpu_description(accelerator)
    found: dict[float, str] = {}
    for sku in skus:
        if sku.get("category", {}).get("resourceGroup") != "GPU" or not _on_demand_in(sku, region):
            continue
        desc = str(sku.get("description", ""))
        price = gcp_unit_price(sku)
        if words in desc and price is not None:
            found.setdefault(price, desc)
    return _one(found, f"on-demand '{words}' SKU prices in {region}")


def gcp_vm_price(
    skus: Iterable[Mapping[str, Any]],
    machine_type: str,
    vcpus: float,
    memory_gib: float,
    region: str,
) -> SourcePrice:
    """On-demand USD per hour of a machine's vCPUs and memory (GPUs excluded) in ``region``."""
    series = machine_type.split("-", 1)[0]
    words = GCP_SERIES_DESCRIPTION.get(series)
    if words is None:
        return SourcePrice(None, reason=f"no SKU description known for the {series} series")
    cores: dict[float, str] = {}
    ram: dict[float, str] = {}
    for sku in skus:
        desc = str(sku.get("description", ""))
        group = sku.get("category", {}).get("resourceGroup")
        if words.lower() not in desc.lower() or not _on_demand_in(sku, region):
            continue
        is_core = group == "CPU" or (group == "N1Standard" and "Core" in desc)
        is_ram = group == "RAM" or (group == "N1Standard" and "Ram" in desc)
        price = gcp_unit_price(sku, GCP_HOUR if is_core else GCP_GIB_HOUR)
        if price is not None and (is_core or is_ram):
            (cores if is_core else ram).setdefault(price, desc)
    core = _one(cores, f"on-demand {words} core SKU prices in {region}")
    mem = _one(ram, f"on-demand {words} RAM SKU prices in {region}")
    if core.usd is None or mem.usd is None:
        return SourcePrice(None, reason=core.reason or mem.reason)
    usd = round(core.usd * vcpus + mem.usd * memory_gib, 6)
    quote = (
        f"{vcpus:g} x {core.usd:g} ({core.quote}) + {memory_gib:g} GiB x {mem.usd:g} ({mem.quote})"
    )
    return SourcePrice(usd, quote)


# Persistent Disk and Local SSD capacity SKUs by description prefix (Cloud Billing Catalog,
# resourceFamily Storage, usageUnit "GiBy.mo"; the SKU description names the region after the
# words, "Balanced PD Capacity in Netherlands"; "Regional ..." SKUs are the replicated disks).
# A Spot VM's Local SSD has a SKU of its own (Cyclenerd/google-cloud-pricing-cost-calculator
# build/mapping.csv gce.storage.ssd.local.spot), consumed as ``Preemptible`` (Category.usageType:
# "Example: "OnDemand", "Preemptible", "Commit1Mo"", services.skus.list reference); a filter the
# listing does not match answers nothing, which is unknown, never a match.
GCP_GIB_MONTH = "GiBy.mo"
GCP_DISK_SKUS = {
    "disk-pd-standard": "Storage PD Capacity",
    "disk-pd-balanced": "Balanced PD Capacity",
    "disk-pd-ssd": "SSD backed PD Capacity",
    "local-ssd": "SSD backed Local Storage",
    "local-ssd-spot": "SSD backed Local Storage attached to Spot Preemptible",
}
GCP_DISK_USAGE = {"local-ssd-spot": "Preemptible"}  # the others: OnDemand


def gcp_disk_price(skus: Iterable[Mapping[str, Any]], item: str, region: str) -> SourcePrice:
    """USD per GiB-month of a ``platform_prices.csv`` disk item in ``region`` (on-demand, or the
    Spot VM's for ``local-ssd-spot``)."""
    words, usage = GCP_DISK_SKUS[item], GCP_DISK_USAGE.get(item, "OnDemand")
    found: dict[float, str] = {}
    for sku in skus:
        cat = sku.get("category", {})
        desc = str(sku.get("description", ""))
        if (
            cat.get("resourceFamily") != "Storage"
            or cat.get("usageType") != usage
            or region not in sku.get("serviceRegions", ())
            or not desc.startswith(words)
        ):
            continue
        price = gcp_unit_price(sku, GCP_GIB_MONTH)
        if price is not None:
            found.setdefault(price, desc)
    return _one(found, f"{usage} '{words}' SKU prices in {region}")


def e2_standard_shape(machine_type: str) -> tuple[int, float] | None:
    """vCPUs and GiB of ``e2-standard-N``: N vCPUs, 4 GB each
    (https://cloud.google.com/compute/docs/general-purpose-machines#e2_machine_types)."""
    prefix = "e2-standard-"
    if not machine_type.startswith(prefix) or not machine_type[len(prefix) :].isdigit():
        return None
    n = int(machine_type[len(prefix) :])
    return n, 4.0 * n


# --- comparing and writing ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Check:
    """One catalog price checked against its source."""

    cloud: str
    file: str  # the data file holding the row
    item: str  # machine/instance type, accelerator xN, or platform item
    region: str  # the row's region (``*``: every region), checked in ``at``
    unit: str
    catalog: float | None
    source: SourcePrice
    reference: str  # the API and query that answered
    at: str = ""  # the region the source was asked about (the row's, or one of ``*``'s)
    key: dict[str, str] = field(default_factory=dict[str, str])  # row columns that select it

    @property
    def status(self) -> Status:
        return compare(self.catalog, self.source.usd)

    @property
    def reason(self) -> str:
        if self.source.usd is None:
            return self.source.reason or "not read"
        if self.catalog is None:
            return "the catalog has no price"
        return ""


def compare(catalog: float | None, source: float | None) -> Status:
    """``match`` within TOLERANCE, ``differs`` beyond it, ``unknown`` when either is missing."""
    if catalog is None or source is None:
        return "unknown" if source is None else "differs"
    if abs(catalog - source) <= max(TOLERANCE * abs(source), ABS_TOLERANCE):
        return "match"
    return "differs"


def exit_code(checks: Iterable[Check]) -> int:
    """0 every price matches; 1 some price could not be read; 3 some price differs."""
    statuses = {c.status for c in checks}
    if "unknown" in statuses:
        return 1
    return 3 if "differs" in statuses else 0


def fmt_price(usd: float | None) -> str:
    """A price as the catalog writes it (up to 6 decimals, no trailing zeros)."""
    if usd is None:
        return ""
    text = f"{usd:.6f}".rstrip("0").rstrip(".")
    return text or "0"


def written(checks: Iterable[Check]) -> list[Check]:
    """The checks ``--write`` applies: read at the source (match or differs).

    A ``*`` row is written only when every region it was checked in gave the same price.
    """
    checks = list(checks)
    out: list[Check] = []
    for c in checks:
        if c.source.usd is None:
            continue
        if c.region == "*":
            same = [
                d
                for d in checks
                if (d.cloud, d.file, d.item, d.region) == (c.cloud, c.file, c.item, "*")
            ]
            prices = {d.source.usd for d in same}
            if len(prices) != 1 or any(d.source.usd is None for d in same):
                continue
            if any((d.cloud, d.file, d.item) == (c.cloud, c.file, c.item) for d in out):
                continue
        out.append(c)
    return out


def _asked_in(c: Check, asked: Iterable[Check]) -> str:
    """The source of a row: a ``*`` row names every region that answered its (one) price."""
    if c.region != "*":
        return c.reference
    regions = sorted(
        {d.at for d in asked if (d.cloud, d.file, d.item) == (c.cloud, c.file, c.item)}
    )
    if len(regions) < 2:
        return c.reference
    return f"{c.reference} (same price in {', '.join(regions)})"


def update_platform_rows(
    rows: list[dict[str, str]],
    checks: Iterable[Check],
    today: str,
    asked: Iterable[Check] = (),
) -> tuple[list[dict[str, str]], int]:
    """``platform_prices.csv`` rows with each checked row's price, source, date and quote.

    ``asked``: every check made (a ``*`` row's source names all the regions it was read in).
    """
    asked = list(asked)
    by_key = {(c.cloud, c.item, c.region): c for c in checks if c.file == "platform_prices.csv"}
    have = {(r["cloud"], r["item"], r["region"]) for r in rows}
    # A region the file has no row for yet (a GPU region read for the first time): a new row.
    rows = rows + [
        {"cloud": c.cloud, "item": c.item, "region": c.region, "unit": c.unit}
        for k, c in sorted(by_key.items())
        if k not in have
    ]
    out: list[dict[str, str]] = []
    changed = 0
    for r in rows:
        c = by_key.get((r["cloud"], r["item"], r["region"]))
        if c is None:
            out.append(r)
            continue
        changed += 1
        out.append(
            {
                **r,
                "price_usd": fmt_price(c.source.usd),
                "source": _asked_in(c, asked),
                "as_of": today,
                "quote": c.source.quote or f"{fmt_price(c.source.usd)} USD {c.unit}",
            }
        )
    return out, changed


def update_price_rows(
    rows: list[dict[str, str]], checks: Iterable[Check], name: str
) -> tuple[list[dict[str, str]], int]:
    """Rows of the node price file ``name`` with each checked row's on-demand price."""
    mine = [c for c in checks if c.file == name]
    out: list[dict[str, str]] = []
    changed = 0
    for r in rows:
        c = next((c for c in mine if all(r.get(k) == v for k, v in c.key.items())), None)
        if c is None:
            out.append(r)
            continue
        changed += 1
        out.append({**r, "price_per_hour": fmt_price(c.source.usd)})
    return out, changed


LEDGER_COLUMNS = (
    "cloud",
    "file",
    "item",
    "region",
    "unit",
    "price_usd",
    "source",
    "as_of",
    "quote",
)


def update_ledger(
    rows: list[dict[str, str]], checks: Iterable[Check], today: str
) -> list[dict[str, str]]:
    """``price_checks.csv``: the last reading of each node price row, with its own date."""
    table = {(r["cloud"], r["file"], r["item"], r["region"]): r for r in rows}
    for c in checks:
        if c.file == "platform_prices.csv":
            continue  # those rows carry their own source and date
        table[(c.cloud, c.file, c.item, c.region)] = {
            "cloud": c.cloud,
            "file": c.file,
            "item": c.item,
            "region": c.region,
            "unit": c.unit,
            "price_usd": fmt_price(c.source.usd),
            "source": c.reference,
            "as_of": today,
            "quote": c.source.quote,
        }
    return [table[k] for k in sorted(table)]
