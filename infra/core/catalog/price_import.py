"""``platform_prices.csv`` rows from a price dataset generated from a cloud's price API: parsing and
merging only (``scripts/import_platform_prices.py`` reads the files and writes the rows).

GCP: Cyclenerd/google-cloud-pricing-cost-calculator ``pricing.yml``, built from the Cloud Billing
Catalog API SKUs by that repository's build (build/skus.sh lists the SKUs, build/pricing.pl prices
them by build/mapping.csv). ``compute.storage.<disk>.cost.<region>.month`` is the first-tier USD
price of 1 GB for a month of the disk's SKU in the region (pricing.pl: ``my $value = 1; # 1 GB per
month``; mapping.csv: hdd "Storage PD Capacity%", balanced "Balanced PD%", ssd "SSD backed PD%",
local "SSD backed Local Storage%"), ``month_spot`` that of the disk's ``.spot`` mapping (local:
gce.storage.ssd.local.spot "SSD backed Local Storage attached to Spot Preemptible%", the Local SSD
of a Spot VM). ``compute.network.ip.vm`` ("External IP Charge on a Standard
VM") and ``compute.network.nat`` ("Networking Cloud Nat Gateway Uptime%", "... Data
Processing%") are global SKUs stored under every region (pricing.pl: "Store global price for each
region"); ``nat.gateway.cost.<region>.hour`` is the per-VM SKU times 32 (pricing.pl:
``$cost = $cost * 32``), so the per-VM price is it divided by 32.

AWS: cloudkeep-io/ebs-pricing ``docs/ebs_pricing.json``, the Price List Query API's GetProducts
answers for AmazonEC2 productFamily Storage per region (get_ebs_pricing.py): one entry per
``rzCode`` with ``ebs_prices.gp3.pricePerGBMonth.USD``; its generation time is ``docs/last_updated``.

A dataset row replaces a row of the file that has no quote (entered by hand, or an older reading);
a quoted row that agrees keeps its quote, and one read at its source after the dataset was
generated stays as it is (its difference is reported). Never a guess: a global item whose regions
disagree is an error.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from infra.core.catalog.prices import (
    AWS_PLATFORM_QUERIES,
    AWS_SOURCE,
    GCP_DISK_SKUS,
    GCP_SOURCE,
    compare,
    fmt_price,
)

COLUMNS = ("cloud", "item", "region", "unit", "price_usd", "source", "as_of", "quote")
UNPRICED = "platform_unpriced.csv"
UNPRICED_COLUMNS = ("cloud", "item", "region", "reason", "source", "as_of")

GCP_REPO = "Cyclenerd/google-cloud-pricing-cost-calculator"
GCP_PATH = "pricing.yml"
GCP_API = "the Cloud Billing Catalog API"
# platform_prices.csv item -> pricing.yml compute.storage key (pricing.pl's disk -> mapping) and
# the cost key of its price (``month``, or ``month_spot`` for the Spot VM's SKU).
GCP_DISKS = {
    "disk-pd-standard": ("hdd", "month"),
    "disk-pd-balanced": ("balanced", "month"),
    "disk-pd-ssd": ("ssd", "month"),
    "local-ssd": ("local", "month"),
    "local-ssd-spot": ("local", "month_spot"),
}
# Global items: (path under compute.network, key of the cost, what the value is of the item's price).
GCP_GLOBAL = {
    "external-ipv4": ("ip.vm", "hour", "per_hour", 1),
    "cloud-nat-per-vm": ("nat.gateway", "hour", "per_hour", 32),
    "cloud-nat-data-processing": ("nat.data", "month", "per_gib", 1),
}

AWS_REPO = "cloudkeep-io/ebs-pricing"
AWS_PATH = "docs/ebs_pricing.json"
AWS_API = "the AWS Price List Query API GetProducts, AmazonEC2 productFamily Storage"

Row = dict[str, str]


def dataset_source(repo: str, path: str, commit: str, api: str) -> str:
    """A row's source: the dataset file at its commit, and the API it was generated from."""
    return f"https://github.com/{repo}/blob/{commit}/{path} (generated from {api})"


def _row(
    cloud: str, item: str, region: str, unit: str, usd: float, source: str, as_of: str, quote: str
) -> Row:
    return {
        "cloud": cloud,
        "item": item,
        "region": region,
        "unit": unit,
        "price_usd": fmt_price(usd),
        "source": source,
        "as_of": as_of,
        "quote": quote,
    }


def gcp_generated(doc: Mapping[str, Any]) -> str:
    """The UTC day ``pricing.yml`` was generated (``about.timestamp``, seconds since the epoch)."""
    stamp = int(doc["about"]["timestamp"])
    return datetime.datetime.fromtimestamp(stamp, datetime.UTC).date().isoformat()


def gcp_rows(doc: Mapping[str, Any], commit: str, regions: Iterable[str]) -> list[Row]:
    """Disk and Local SSD rows for ``regions`` (those the dataset has), and the global rows."""
    as_of, wanted = gcp_generated(doc), set(regions)
    src = dataset_source(GCP_REPO, GCP_PATH, commit, GCP_API)
    rows: list[Row] = []
    for item, (key, per) in GCP_DISKS.items():
        for region, cost in sorted(doc["compute"]["storage"][key]["cost"].items()):
            usd = cost.get(per)
            if region in wanted and usd is not None:
                quote = f"compute.storage.{key}.cost.{region}.{per}: {usd}"
                rows.append(
                    _row("gcp", item, region, "per_gb_month", float(usd), src, as_of, quote)
                )
    for item, (path, key, unit, per) in GCP_GLOBAL.items():
        node: Mapping[str, Any] = doc["compute"]["network"]
        for part in path.split("."):
            node = node[part]
        usd = _one_value(f"compute.network.{path}.cost.*.{key}", node["cost"], key)
        quote = f"compute.network.{path}.cost.<each of {len(node['cost'])} regions>.{key}: {usd:g}"
        if per != 1:
            quote += f" (the per-VM SKU x {per})"
        rows.append(_row("gcp", item, "*", unit, round(usd / per, 6), src, as_of, quote))
    return rows


def _one_value(where: str, cost: Mapping[str, Mapping[str, Any]], key: str) -> float:
    """The one value every region has under ``key``; regions that disagree are an error."""
    found = {float(c[key]) for c in cost.values() if key in c}
    if len(found) != 1:
        listed = ", ".join(f"{v:g}" for v in sorted(found)) or "none"
        raise ValueError(f"{where}: one price in every region expected, found {listed}")
    return found.pop()


def aws_ebs_rows(
    entries: Iterable[Mapping[str, Any]], commit: str, as_of: str, regions: Iterable[str]
) -> list[Row]:
    """gp3 rows for ``regions`` (those the dataset has)."""
    src, wanted = dataset_source(AWS_REPO, AWS_PATH, commit, AWS_API), set(regions)
    rows: list[Row] = []
    for e in entries:
        region = str(e.get("rzCode", ""))
        usd = e.get("ebs_prices", {}).get("gp3", {}).get("pricePerGBMonth", {}).get("USD")
        if e.get("rzType") != "region" or region not in wanted or usd is None:
            continue
        quote = f"rzCode {region}: ebs_prices.gp3.pricePerGBMonth.USD {usd}"
        rows.append(_row("aws", "ebs-gp3", region, "per_gb_month", float(usd), src, as_of, quote))
    return sorted(rows, key=lambda r: r["region"])


def aws_generated(last_updated: str) -> str:
    """The UTC day of ``docs/last_updated`` (``2022-02-10T05:01:17Z``)."""
    return (
        datetime.datetime.fromisoformat(last_updated.strip().replace("Z", "+00:00"))
        .date()
        .isoformat()
    )


# --- merging ---------------------------------------------------------------------------------------


@dataclass
class Merged:
    """The file's rows after an import, and what happened to each imported row."""

    rows: list[Row]
    added: list[str] = field(default_factory=list[str])
    replaced: list[str] = field(default_factory=list[str])
    kept: list[str] = field(default_factory=list[str])  # a quoted row that agrees
    differs: list[str] = field(default_factory=list[str])  # the file's and the dataset's prices


def _key(r: Mapping[str, str]) -> tuple[str, str, str]:
    return r["cloud"], r["item"], r["region"]


def _name(r: Mapping[str, str]) -> str:
    return f"{r['cloud']} {r['item']} {r['region']}"


def order(r: Mapping[str, str]) -> tuple[str, bool, str, str]:
    """The file's row order: per cloud, the every-region rows first, then by item and region."""
    return r["cloud"], r["region"] != "*", r["item"], r["region"]


def merge(existing: Iterable[Row], imported: Iterable[Row]) -> Merged:
    """``existing`` rows with ``imported`` ones applied (module docstring), in the file's order."""
    new = {_key(r): r for r in imported}
    out = Merged([])
    for r in existing:
        d = new.pop(_key(r), None)
        if d is None or d == r:
            out.rows.append(r)
            continue
        same = compare(float(r["price_usd"]), float(d["price_usd"])) == "match"
        if not same:
            out.differs.append(
                f"{_name(r)}: file {r['price_usd']} ({r['as_of']}), dataset {d['price_usd']} "
                f"({d['as_of']})"
            )
        if r.get("quote", "").strip() and (same or r["as_of"] > d["as_of"]):
            out.rows.append(r)
            out.kept.append(_name(r))
        else:
            out.rows.append(d)
            out.replaced.append(_name(r))
    out.rows += new.values()
    out.added += [_name(r) for r in new.values()]
    out.rows.sort(key=order)
    return out


# --- what stays unpriced ---------------------------------------------------------------------------


def unpriced(
    rows: Iterable[Mapping[str, str]],
    wanted: Mapping[str, Iterable[str]],
    regions: Mapping[str, Iterable[str]],
    listed: Iterable[Mapping[str, str]],
    why: Mapping[tuple[str, str], Row],
    today: str,
) -> list[Row]:
    """One entry per (cloud, item in ``wanted[cloud]``, region in ``regions[cloud]``) without a
    price row (its own, or the item's every-region row).

    Its reason is ``why[(cloud, item)]`` (the dataset imported for the item: it lacks the region),
    else the entry ``listed`` before, else that no price was read for it (dated ``today``).
    """
    have = {_key(r) for r in rows}
    before = {_key(r): r for r in listed}
    out: list[Row] = []
    for cloud, items in sorted(wanted.items()):
        for item in items:
            for region in sorted(regions.get(cloud, ())):
                k = (cloud, item, region)
                if k in have or (cloud, item, "*") in have:
                    continue
                base = why.get((cloud, item)) or before.get(k) or not_read(cloud, item, today)
                where = {"cloud": cloud, "item": item, "region": region}
                out.append({**where, **{c: base[c] for c in UNPRICED_COLUMNS[3:]}})
    return out


def not_read(cloud: str, item: str, today: str) -> Row:
    """Why an item of a GPU region has no row when no dataset says more: its price API was not read
    for it (``python -m infra.catalog_refresh --verify-prices --write`` reads it and adds the row)."""
    if cloud == "aws":
        q = AWS_PLATFORM_QUERIES.get(item)
        query = (
            f" {q.service} " + " ".join(f"{k}={v}" for k, v in q.attributes.items()) if q else ""
        )
        usage = f" usagetype=*{q.usagetype_suffix}" if q and q.usagetype_suffix else ""
        source = f"{AWS_SOURCE}{query}{usage}"
    else:
        sku = GCP_DISK_SKUS.get(item)
        source = GCP_SOURCE + (f" '{sku}'" if sku else "")
    reason = "no price read at the source for this region; --verify-prices --write reads it"
    return {"reason": reason, "source": source, "as_of": today}


def still_unpriced(
    listed: Iterable[Mapping[str, str]], rows: Iterable[Mapping[str, str]]
) -> list[dict[str, str]]:
    """The ``listed`` unpriced entries that still have no price row (a reading added the rest)."""
    have = {_key(r) for r in rows}
    return [
        dict(u) for u in listed if _key(u) not in have and (u["cloud"], u["item"], "*") not in have
    ]
