"""Regenerate the disk, Local SSD, NAT and address rows of ``infra/core/data/platform_prices.csv``
from price datasets generated from the clouds' price APIs, for every region the catalog offers GPUs
in, and list in ``platform_unpriced.csv`` the GPU regions still without a price. With ``--gcp``,
also compare the catalog's GCP node prices (machine and built-in GPUs, on-demand and Spot) with the
dataset's and write where they disagree to ``price_disagreements.csv``.

    .venv/bin/python scripts/import_platform_prices.py \\
        [--gcp PRICING_YML --gcp-commit SHA] [--aws-ebs EBS_PRICING_JSON --aws-ebs-commit SHA] \\
        [--write]

PRICING_YML is ``pricing.yml`` of Cyclenerd/google-cloud-pricing-cost-calculator at commit SHA
(its generation day is the file's ``about.timestamp``); EBS_PRICING_JSON is ``docs/ebs_pricing.json``
of cloudkeep-io/ebs-pricing at SHA, with ``docs/last_updated`` beside it (its generation time).
Parsing and merging: ``infra/core/catalog/price_import.py``; the node price comparison:
``infra/core/catalog/price_crosscheck.py``. The datasets are not committed: only the rows. Without
``--write`` it prints what it would change.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from infra.core.catalog import build, price_crosscheck, price_import  # noqa: E402
from infra.core.catalog.price_import import Row  # noqa: E402
from infra.core.catalog.vendored import DATA_DIR, forget, read_header, read_rows  # noqa: E402

PLATFORM = "platform_prices.csv"
UNPRICED_HEADER = [
    "Regions the catalog offers GPUs in (gcp_accelerators.csv, aws_gpu_instances.csv) with no price "
    "for a regional platform item of platform_prices.csv, and why: a plan there lists the item as "
    "not priced (its total is partial), never as 0. Each entry has its source (the dataset or "
    "price API the price is missing from) and the day that source was read or generated (as_of).",
    "written by: scripts/import_platform_prices.py (and pruned by python -m infra.catalog_refresh "
    "--verify-prices --write as it adds rows)",
]

DISAGREEMENTS_HEADER = [
    "GCP node prices of the catalog (USD per hour: gcp_machine_types.csv plus the built-in GPUs' "
    "gcp_accelerators.csv row, or gcp_vm_prices.csv) that a second source disagrees with beyond the "
    "match tolerance (0.5%, infra/core/catalog/prices.py TOLERANCE), per machine type, GPU region "
    "and provisioning model. A plan priced from such a row shows it as not verified, with the other "
    "figure and its date; its totals stay the catalog's. A row applies while the catalog still "
    "holds catalog_usd.",
    "other_usd: the machine's hour (hour_spot) in the source dataset minus the bundled Local SSD "
    "the dataset adds to it (infra/core/catalog/price_crosscheck.py); as_of: the day the dataset "
    'was generated; quote: its keys and values. Spot prices "are dynamic and can change up to once '
    'every 30 days" (https://cloud.google.com/skus): a Spot disagreement between readings months '
    "apart may be a price change.",
]
DISAGREEMENTS_WRITER = (
    "written by: scripts/import_platform_prices.py --gcp PRICING_YML --gcp-commit SHA --write"
)


def _regions(data_dir: Path) -> dict[str, set[str]]:
    from infra.price_verify import catalog_gpu_regions

    gcp, aws = catalog_gpu_regions(data_dir)
    return {"gcp": gcp, "aws": aws}


def _load_gcp(path: Path) -> dict[str, Any]:
    import yaml

    with path.open(encoding="utf-8") as f:
        return yaml.load(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def _imported(args: argparse.Namespace, doc, regions: dict[str, set[str]], have: list[Row]):
    """Imported rows and, per (cloud, item) a dataset covers, why a region it lacks is unpriced."""
    rows: list[Row] = []
    why: dict[tuple[str, str], Row] = {}
    own = {c: regions[c] | {r["region"] for r in have if r["cloud"] == c} for c in regions}
    if doc is not None:
        got = price_import.gcp_rows(doc, args.gcp_commit, own["gcp"])
        src = price_import.dataset_source(
            price_import.GCP_REPO, price_import.GCP_PATH, args.gcp_commit, price_import.GCP_API
        )
        for item in price_import.GCP_DISKS:
            why[("gcp", item)] = _lacks(src, price_import.gcp_generated(doc))
        rows += got
    if args.aws_ebs:
        as_of = price_import.aws_generated(
            (args.aws_ebs.parent / "last_updated").read_text(encoding="utf-8")
        )
        entries = json.loads(args.aws_ebs.read_text(encoding="utf-8"))
        rows += price_import.aws_ebs_rows(entries, args.aws_ebs_commit, as_of, own["aws"])
        src = price_import.dataset_source(
            price_import.AWS_REPO, price_import.AWS_PATH, args.aws_ebs_commit, price_import.AWS_API
        )
        why[("aws", "ebs-gp3")] = _lacks(src, as_of)
    return rows, why


def _lacks(source: str, as_of: str) -> Row:
    return {"reason": "the dataset has no price for this region", "source": source, "as_of": as_of}


def _report(merged: price_import.Merged, left: list[Row]) -> list[str]:
    lines = [
        f"{len(merged.added)} rows added, {len(merged.replaced)} replaced, "
        f"{len(merged.kept)} quoted rows kept (they agree, or were read after the dataset)"
    ]
    lines += [f"  differs: {d}" for d in merged.differs]
    lines += [f"  kept: {k}" for k in merged.kept]
    lines.append(f"{len(left)} (cloud, item, GPU region) without a price:")
    lines += [f"  {u['cloud']} {u['item']} {u['region']}: {u['reason']}" for u in left]
    return lines


def _crosscheck(doc, commit: str, data_dir: Path, regions: set[str], today: str):
    """The node price rows a second source disagrees with, their file header, and a report."""
    nodes = price_crosscheck.catalog_node_prices(
        read_rows("gcp_machine_types.csv", data_dir),
        read_rows("gcp_accelerators.csv", data_dir),
        read_rows("gcp_vm_prices.csv", data_dir),
        regions,
    )
    found = price_crosscheck.crosscheck(doc, commit, price_import.gcp_generated(doc), nodes)
    counts = (
        f"compared {today}: {found.compared} prices (on-demand and Spot) of {len(nodes)} "
        f"(machine type, GPU region) pairs; {found.agree} agree, {len(found.disagreements)} "
        f"disagree; {len(found.not_compared)} not compared (no price on one side)"
    )
    header = [*DISAGREEMENTS_HEADER, counts, DISAGREEMENTS_WRITER]
    lines = [f"{price_crosscheck.DISAGREEMENTS}: {counts}"]
    lines += [
        f"  disagrees: {r['item']} {r['region']} {r['provisioning']}: catalog {r['catalog_usd']}, "
        f"dataset {r['other_usd']}"
        for r in found.disagreements
    ]
    return header, found.disagreements, lines


def _write(data_dir: Path, name: str, header: list[str], columns: tuple[str, ...], rows) -> None:
    (data_dir / name).write_text(build.render(header, columns, rows), encoding="utf-8")
    forget()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--gcp", type=Path, help="pricing.yml of " + price_import.GCP_REPO)
    ap.add_argument("--gcp-commit", help="the commit that pricing.yml is of")
    ap.add_argument(
        "--aws-ebs", type=Path, help="docs/ebs_pricing.json of " + price_import.AWS_REPO
    )
    ap.add_argument("--aws-ebs-commit", help="the commit that ebs_pricing.json is of")
    ap.add_argument("--data-dir", type=Path, default=DATA_DIR)
    ap.add_argument("--today", default=datetime.date.today().isoformat())
    ap.add_argument("--write", action="store_true", help="write the rows (else only print)")
    args = ap.parse_args(argv)
    if bool(args.gcp) != bool(args.gcp_commit) or bool(args.aws_ebs) != bool(args.aws_ebs_commit):
        ap.error(
            "each dataset needs its commit: --gcp with --gcp-commit, --aws-ebs with --aws-ebs-commit"
        )
    have = list(read_rows(PLATFORM, args.data_dir))
    regions = _regions(args.data_dir)
    doc = _load_gcp(args.gcp) if args.gcp else None
    rows, why = _imported(args, doc, regions, have)
    merged = price_import.merge(have, rows)
    wanted = {
        c: sorted({r["item"] for r in merged.rows if r["cloud"] == c and r["unit"] != "per_gib"})
        for c in regions
    }
    path = args.data_dir / price_import.UNPRICED
    listed = list(read_rows(price_import.UNPRICED, args.data_dir)) if path.exists() else []
    left = price_import.unpriced(merged.rows, wanted, regions, listed, why, args.today)
    checked = (
        _crosscheck(doc, args.gcp_commit, args.data_dir, regions["gcp"], args.today)
        if doc
        else None
    )
    for line in _report(merged, left) + (checked[2] if checked else []):
        print(line)
    if args.write and checked:
        _write(args.data_dir, price_crosscheck.DISAGREEMENTS, checked[0],
               price_crosscheck.COLUMNS, checked[1])  # fmt: skip
        print(f"wrote {price_crosscheck.DISAGREEMENTS} ({len(checked[1])} rows)")
    if args.write:
        _write(args.data_dir, PLATFORM, read_header(PLATFORM, args.data_dir),
               price_import.COLUMNS, merged.rows)  # fmt: skip
        _write(args.data_dir, price_import.UNPRICED, UNPRICED_HEADER,
               price_import.UNPRICED_COLUMNS, left)  # fmt: skip
        print(
            f"wrote {PLATFORM} ({len(merged.rows)} rows) and {price_import.UNPRICED} ({len(left)})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
