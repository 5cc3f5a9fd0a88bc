"""``python -m infra.catalog_refresh --verify-prices``: the sample stacks' prices against the clouds.

AWS: the Price List Query API (boto3 ``pricing``, us-east-1; ``AWS_ENDPOINT_URL_PRICING`` for an
emulator) for every (instance type, region) the sample EKS stacks use and the platform items it
identifies. GCP: the Cloud Billing Catalog API's Compute Engine SKUs over HTTPS with Application
Default Credentials (``QUOTA_ENDPOINT_CLOUDBILLING``; ``http://`` = local emulator, anonymous) for
the sample GKE stacks' machine series and GPUs. Parsing and matching are in
``infra/core/catalog/prices.py``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from infra.core.catalog import build, price_import, prices
from infra.core.catalog.prices import Check, SourcePrice
from infra.core.catalog.vendored import Catalog, forget, read_header, read_rows

ROOT = Path(__file__).resolve().parent.parent
STACKS_DIR = ROOT / "stacks"
BILLING_ENDPOINT = "https://cloudbilling.googleapis.com"
LEDGER = "price_checks.csv"
PLATFORM = "platform_prices.csv"


@dataclass
class Targets:
    """What the sample stacks run: node types per region, and the regions."""

    gcp_machines: set[tuple[str, str]] = field(default_factory=set[tuple[str, str]])
    gcp_gpus: set[tuple[str, int, str]] = field(default_factory=set[tuple[str, int, str]])
    aws_instances: set[tuple[str, str]] = field(default_factory=set[tuple[str, str]])
    gcp_regions: set[str] = field(default_factory=set[str])
    aws_regions: set[str] = field(default_factory=set[str])
    # Every region the catalog offers a GPU in: regional platform items (disks, NAT) are read
    # for each, so a stack in any of them is priced whole.
    gcp_gpu_regions: set[str] = field(default_factory=set[str])
    aws_gpu_regions: set[str] = field(default_factory=set[str])


def catalog_gpu_regions(data_dir: Path) -> tuple[set[str], set[str]]:
    """(GCP, AWS) regions with a GPU in the catalog's offer tables."""
    gcp = {r["region"] for r in read_rows("gcp_accelerators.csv", data_dir)}
    aws = {r["region"] for r in read_rows("aws_gpu_instances.csv", data_dir)}
    return gcp, aws


def stack_targets(stacks_dir: Path = STACKS_DIR) -> Targets:
    """Plan every sample stack and collect its node types and regions."""
    from infra.plan import load_path

    t = Targets()
    t.gcp_gpu_regions, t.aws_gpu_regions = catalog_gpu_regions(Catalog.load().data_dir)
    for path in sorted(stacks_dir.glob("Pulumi.*.yaml")):
        _, config, plan = load_path(path)
        cloud = plan.platform.features.cloud
        if cloud is None or not config.region:
            continue
        pools, system = plan.platform.priced_pools()
        places = [x for p in (*pools, *((system,) if system else ())) for x in p.places]
        if cloud == "gcp":
            t.gcp_regions.add(config.region)
            for x in places:
                region = x.zone.rsplit("-", 1)[0]
                t.gcp_machines.add((x.machine_type, region))
                if x.accelerator and x.count:
                    t.gcp_gpus.add((x.accelerator, x.count, region))
        else:
            t.aws_regions.add(config.region)
            t.aws_instances |= {(x.machine_type, config.region) for x in places}
    return t


def _catalog_prices(
    data_dir: Path, names: Iterable[str], key: Mapping[str, str]
) -> tuple[str, float | None] | None:
    """(file, on-demand price) of the rows matching ``key`` in the first file that has any."""
    for name in names:
        found = {
            r["price_per_hour"]
            for r in read_rows(name, data_dir)
            if all(r.get(k) == v for k, v in key.items())
        }
        if found:
            # Zone rows of one region share a price; several prices are shown as none (differs).
            only = found.pop() if len(found) == 1 else ""
            return name, float(only) if only else None
    return None


# --- AWS -----------------------------------------------------------------------------------------


def _aws_ask(client: Any, service: str, attributes: Mapping[str, str]) -> list[str] | str:
    """Every GetProducts PriceList item (all pages), or the error as text."""
    from botocore.exceptions import BotoCoreError, ClientError

    items: list[str] = []
    try:
        pages = client.get_paginator("get_products").paginate(
            ServiceCode=service,
            Filters=prices.aws_filters(attributes),
            FormatVersion="aws_v1",
        )
        for page in pages:
            items += page.get("PriceList", [])
    except (BotoCoreError, ClientError) as e:
        return f"{type(e).__name__}: {e}".splitlines()[0][:200]
    return items


def _aws_price(
    client: Any,
    service: str,
    attributes: Mapping[str, str],
    unit: str,
    suffix: str = "",
    plus: tuple[str, ...] = (),
) -> SourcePrice:
    answer = _aws_ask(client, service, attributes)
    if isinstance(answer, str):
        return SourcePrice(None, reason=answer)
    if plus:
        return prices.aws_summed(answer, unit, (suffix, *plus))
    return prices.aws_on_demand(answer, unit, suffix)


def _reference(service: str, attributes: Mapping[str, str], suffix: str = "") -> str:
    query = " ".join(f"{k}={v}" for k, v in attributes.items())
    usage = f" usagetype=*{suffix}" if suffix else ""
    return f"{prices.AWS_SOURCE} {service} {query}{usage}".strip()


def aws_checks(t: Targets, data_dir: Path, client: Any) -> list[Check]:
    """Each sample (instance type, region) and each identifiable AWS platform row, checked."""
    checks: list[Check] = []
    for itype, region in sorted(t.aws_instances):
        key = {"instance_type": itype, "region": region}
        found = _catalog_prices(data_dir, ("aws_gpu_instances.csv", "aws_vm_prices.csv"), key)
        if found is None:
            continue  # a type the catalog lacks has no price to check (the plan says so)
        attrs = prices.ec2_instance_query(itype, region)
        source = _aws_price(client, "AmazonEC2", attrs, "Hrs")
        ref = _reference("AmazonEC2", attrs)
        checks.append(
            Check("aws", found[0], itype, region, "per_hour", found[1], source, ref, region, key)
        )
    for r in _platform_rows(data_dir, "aws", t.aws_gpu_regions):
        q = prices.AWS_PLATFORM_QUERIES.get(r["item"])
        if q is None:
            continue
        at = sorted(t.aws_regions) if r["region"] == "*" else [r["region"]]
        for region in at:
            if region not in t.aws_regions | t.aws_gpu_regions:
                continue
            attrs = {**q.attributes, "regionCode": region}
            source = _aws_price(client, q.service, attrs, q.unit, q.usagetype_suffix, q.plus)
            ref = _reference(q.service, attrs, "+*".join((q.usagetype_suffix, *q.plus)))
            checks.append(
                Check("aws", PLATFORM, r["item"], r["region"], r["unit"],
                      float(r["price_usd"]) if r.get("price_usd") else None, source, ref, region)
            )  # fmt: skip
    return checks


def _platform_rows(data_dir: Path, cloud: str, regions: Iterable[str]) -> list[dict[str, str]]:
    """``cloud``'s platform rows, plus an empty row (no price yet) for each regional item in
    each of ``regions`` the file does not list: the check reads it, ``--write`` adds it."""
    rows = [r for r in read_rows(PLATFORM, data_dir) if r["cloud"] == cloud]
    regional = {r["item"]: r["unit"] for r in rows if r["region"] != "*"}
    have = {(r["item"], r["region"]) for r in rows}
    extra = [
        {"cloud": cloud, "item": item, "region": region, "unit": unit, "price_usd": ""}
        for item, unit in sorted(regional.items())
        for region in sorted(regions)
        if (item, region) not in have
    ]
    return rows + extra


def aws_client() -> Any:
    """The Price List client: its API is served from us-east-1 whatever region is priced."""
    import boto3

    return boto3.client("pricing", region_name=prices.AWS_PRICING_REGION)


# --- GCP -----------------------------------------------------------------------------------------


def gcp_skus(endpoint: str | None) -> list[dict[str, Any]]:
    """Every Compute Engine SKU, page by page (``nextPageToken``), priced in USD."""
    base = (endpoint or BILLING_ENDPOINT).rstrip("/")
    if base.startswith("http://"):
        import requests

        session: Any = requests.Session()  # a local emulator: no credentials
    else:
        import google.auth
        from google.auth.transport.requests import AuthorizedSession

        creds, _ = google.auth.default(scopes=["https://www.googleapis.com/auth/cloud-platform"])
        session = AuthorizedSession(creds)
    url = f"{base}/v1/services/{prices.GCE_SERVICE_ID}/skus"
    skus: list[dict[str, Any]] = []
    token = ""
    while True:
        params = {"currencyCode": "USD", "pageSize": "5000"}
        if token:
            params["pageToken"] = token
        resp = session.get(url, params=params, timeout=60)
        if resp.status_code != 200:
            message = resp.text.strip().splitlines()[0] if resp.text.strip() else ""
            raise RuntimeError(f"HTTP {resp.status_code} from {url}: {message}"[:300])
        body = resp.json()
        skus += body.get("skus", [])
        token = body.get("nextPageToken", "")
        if not token:
            return skus


def _shape(catalog: Catalog, machine_type: str) -> tuple[float, float] | None:
    m = catalog.gcp_machine(machine_type)
    if m is not None:
        return m.vcpus, m.memory_gib
    e2 = prices.e2_standard_shape(machine_type)
    return (float(e2[0]), e2[1]) if e2 is not None else None


def _gcp_hourly(
    found: tuple[str, float | None],
    item: str,
    region: str,
    source: SourcePrice,
    key: dict[str, str],
) -> Check:
    """One hourly GCP price: the catalog's (file, price) ``found`` against the SKU listing's."""
    return Check(
        "gcp", found[0], item, region, "per_hour", found[1], source, prices.GCP_SOURCE, region, key
    )


def gcp_checks(t: Targets, data_dir: Path, skus: list[dict[str, Any]] | str) -> list[Check]:
    """Each sample machine's vCPUs+memory and each sample GPU count, per region, checked.

    ``skus`` is the SKU listing, or why it could not be read (then every check is unknown).
    """
    catalog = Catalog(data_dir)
    checks: list[Check] = []
    failed = SourcePrice(None, reason=skus) if isinstance(skus, str) else None
    for mt, region in sorted(t.gcp_machines):
        key = {"machine_type": mt, "region": region}
        found = _catalog_prices(data_dir, ("gcp_machine_types.csv", "gcp_vm_prices.csv"), key)
        if found is None:
            continue
        shape = _shape(catalog, mt)
        source = failed or (
            prices.gcp_vm_price(skus, mt, shape[0], shape[1], region)
            if shape is not None and not isinstance(skus, str)
            else SourcePrice(None, reason=f"the catalog has no vCPU/memory shape for {mt}")
        )
        checks.append(_gcp_hourly(found, mt, region, source, key))
    for acc, count, region in sorted(t.gcp_gpus):
        key = {"accelerator": acc, "count": str(count), "region": region}
        found = _catalog_prices(data_dir, ("gcp_accelerators.csv",), key)
        if found is None:
            continue
        if failed is not None or isinstance(skus, str):
            source = failed or SourcePrice(None)
        else:
            one = prices.gcp_gpu_price(skus, acc, region)
            source = SourcePrice(
                None if one.usd is None else round(one.usd * count, 6),
                f"{count} x {one.usd:g} ({one.quote})" if one.usd is not None else "",
                one.reason,
            )
        item = f"{acc} x{count}"
        checks.append(_gcp_hourly(found, item, region, source, key))
    return checks + gcp_disk_checks(t, data_dir, skus)


def gcp_disk_checks(t: Targets, data_dir: Path, skus: list[dict[str, Any]] | str) -> list[Check]:
    """Persistent Disk and Local SSD prices in every GPU region (and the samples')."""
    checks = []
    for r in _platform_rows(data_dir, "gcp", t.gcp_gpu_regions):
        wanted = t.gcp_regions | t.gcp_gpu_regions
        if r["item"] not in prices.GCP_DISK_SKUS or r["region"] not in wanted:
            continue
        source = (
            SourcePrice(None, reason=skus)
            if isinstance(skus, str)
            else prices.gcp_disk_price(skus, r["item"], r["region"])
        )
        catalog = float(r["price_usd"]) if r.get("price_usd") else None
        checks.append(
            Check("gcp", PLATFORM, r["item"], r["region"], r["unit"], catalog, source,
                  prices.GCP_SOURCE, r["region"])
        )  # fmt: skip
    return checks


# --- report and write ---------------------------------------------------------------------------


def report(checks: list[Check], unchecked: list[str]) -> list[str]:
    """One line per check, then the rows this command does not verify."""
    lines = [
        f"prices checked against the source (match within {prices.TOLERANCE:.1%}; "
        "on-demand USD, local-ssd-spot a Spot VM's; unknown = not read, never taken as a match):"
    ]
    for c in checks:
        where = c.region if c.region == c.at else f"{c.region} (asked for {c.at})"
        line = (
            f"  {c.status:<8} {c.cloud} {c.file}: {c.item} {where} {c.unit}: "
            f"catalog {prices.fmt_price(c.catalog) or 'none'}, "
            f"source {prices.fmt_price(c.source.usd) or 'none'}"
        )
        lines.append(line + (f" ({c.reason})" if c.reason else ""))
    if unchecked:
        lines.append("not verified by this command (their own source and date stand):")
        lines += [f"  {u}" for u in unchecked]
    return lines


def unchecked_rows(data_dir: Path, clouds: Iterable[str], checks: list[Check]) -> list[str]:
    """Platform rows of ``clouds`` no check covered."""
    done = {(c.cloud, c.item, c.region) for c in checks if c.file == PLATFORM}
    return [
        f"{r['cloud']} {PLATFORM}: {r['item']} {r['region']} (as of {r['as_of']})"
        for r in read_rows(PLATFORM, data_dir)
        if r["cloud"] in clouds and (r["cloud"], r["item"], r["region"]) not in done
    ]


def _rewrite(data_dir: Path, name: str, rows: list[dict[str, str]]) -> None:
    columns = tuple(next(iter(read_rows(name, data_dir))).keys())
    (data_dir / name).write_text(
        build.render(read_header(name, data_dir), columns, rows), encoding="utf-8"
    )
    forget()  # the next read sees the rewritten file


def _prune_unpriced(data_dir: Path, rows: list[dict[str, str]]) -> list[str]:
    """Drop from ``platform_unpriced.csv`` the GPU regions' items that now have a price row."""
    path = data_dir / price_import.UNPRICED
    if not path.exists():
        return []
    listed = list(read_rows(price_import.UNPRICED, data_dir))
    left = price_import.still_unpriced(listed, rows)
    if len(left) == len(listed):
        return []
    header = read_header(price_import.UNPRICED, data_dir)
    path.write_text(build.render(header, price_import.UNPRICED_COLUMNS, left), encoding="utf-8")
    forget()
    return [f"removed {len(listed) - len(left)} priced entries from {price_import.UNPRICED}"]


def write(checks: list[Check], data_dir: Path, today: str) -> list[str]:
    """Apply the checks read at the source; return what was written and what was not."""
    applied = prices.written(checks)
    out: list[str] = []
    rows, n = prices.update_platform_rows(
        list(read_rows(PLATFORM, data_dir)), applied, today, checks
    )
    if n:
        _rewrite(data_dir, PLATFORM, rows)
        out.append(f"wrote {n} rows of {PLATFORM}: price, source, as_of {today}, quote")
        out += _prune_unpriced(data_dir, rows)
    for name in sorted({c.file for c in applied} - {PLATFORM}):
        rows, n = prices.update_price_rows(list(read_rows(name, data_dir)), applied, name)
        _rewrite(data_dir, name, rows)
        out.append(f"wrote the on-demand price of {n} rows of {name} (spot prices untouched)")
    ledger = list(read_rows(LEDGER, data_dir)) if (data_dir / LEDGER).exists() else []
    ledger_rows = prices.update_ledger(ledger, applied, today)
    header = read_header(LEDGER, data_dir) if (data_dir / LEDGER).exists() else []
    (data_dir / LEDGER).write_text(
        build.render(header, prices.LEDGER_COLUMNS, ledger_rows), encoding="utf-8"
    )
    forget()
    if any(c.file != PLATFORM for c in applied):
        out.append(f"recorded each node price's own source and date ({today}) in {LEDGER}")
    left = [c for c in checks if c not in applied]
    if left:
        out.append(
            f"left untouched: {len(left)} rows (not read at the source, or a * row whose regions "
            "answered different prices)"
        )
    return out


def endpoint() -> str | None:
    """``QUOTA_ENDPOINT_CLOUDBILLING``: the Cloud Billing API elsewhere (``http://`` = emulator)."""
    return os.environ.get("QUOTA_ENDPOINT_CLOUDBILLING") or None


def run(
    clouds: list[str],
    data_dir: Path,
    today: str,
    do_write: bool,
    targets: Targets | None = None,
) -> int:
    """Check, print, optionally write; returns the exit code (0 match, 1 unread, 3 differs)."""
    t = targets if targets is not None else stack_targets()
    checks: list[Check] = []
    if "aws" in clouds:
        checks += aws_checks(t, data_dir, aws_client())
    if "gcp" in clouds:
        try:
            skus: list[dict[str, Any]] | str = gcp_skus(endpoint())
        except Exception as e:  # noqa: BLE001  # credentials/HTTP errors: every GCP check unknown
            skus = f"{type(e).__name__}: {e}".splitlines()[0][:200]
        checks += gcp_checks(t, data_dir, skus)
    for line in report(checks, unchecked_rows(data_dir, clouds, checks)):
        print(line)
    if not do_write:
        return prices.exit_code(checks)
    for line in write(checks, data_dir, today):
        print(line)
    # What was written now agrees with the source; what was not keeps its status.
    applied = prices.written(checks)
    return prices.exit_code(c for c in checks if c not in applied)
