"""Platform prices imported from datasets generated from the clouds' price APIs
(infra/core/catalog/price_import.py, scripts/import_platform_prices.py).

Expected numbers are the datasets': Cyclenerd/google-cloud-pricing-cost-calculator pricing.yml at
fd66b26ff84fee5cdd94f341ea89206e76c06b99 ("generated: Thu Jul 30 06:13:17 2026", timestamp
1785391997) and cloudkeep-io/ebs-pricing docs/ebs_pricing.json at
d76ed2762d0a795a66285222321da0bb0aa801c3 (docs/last_updated 2022-02-10T05:01:17Z).
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

from infra.core.catalog import build, price_import
from infra.core.catalog.vendored import DATA_DIR, read_header, read_rows

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "import_platform_prices.py"
_spec = importlib.util.spec_from_file_location("import_platform_prices", SCRIPT)
assert _spec is not None and _spec.loader is not None
importer = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(importer)

GCP_COMMIT = "fd66b26ff84fee5cdd94f341ea89206e76c06b99"
AWS_COMMIT = "d76ed2762d0a795a66285222321da0bb0aa801c3"

# The dataset's values (pricing.yml compute.storage.<disk>.cost.<region>.month; ebs_pricing.json
# ebs_prices.gp3.pricePerGBMonth.USD), as the vendored file must carry them.
DATASET = {
    ("gcp", "disk-pd-balanced", "europe-west4"): ("0.11", GCP_COMMIT, "2026-07-30"),
    ("gcp", "local-ssd", "asia-northeast1"): ("0.104", GCP_COMMIT, "2026-07-30"),
    # compute.storage.local.cost.<region>.month_spot: the Spot VM's Local SSD SKU
    ("gcp", "local-ssd-spot", "us-central1"): ("0.0428", GCP_COMMIT, "2026-07-30"),
    ("gcp", "local-ssd-spot", "europe-west4"): ("0.0494", GCP_COMMIT, "2026-07-30"),
    ("gcp", "disk-pd-ssd", "me-central2"): ("0.272", GCP_COMMIT, "2026-07-30"),
    ("gcp", "disk-pd-standard", "southamerica-east1"): ("0.06", GCP_COMMIT, "2026-07-30"),
    ("aws", "ebs-gp3", "sa-east-1"): ("0.152", AWS_COMMIT, "2022-02-10"),
    ("aws", "ebs-gp3", "ap-northeast-1"): ("0.096", AWS_COMMIT, "2022-02-10"),
}


def test_vendored_rows_carry_the_datasets_prices_with_their_commit_and_generation_day():
    rows = {
        (r["cloud"], r["item"], r["region"]): r for r in read_rows("platform_prices.csv", DATA_DIR)
    }
    for key, (usd, commit, day) in DATASET.items():
        r = rows[key]
        assert (r["price_usd"], r["as_of"]) == (usd, day), key
        assert f"/blob/{commit}/" in r["source"] and "generated from" in r["source"], key


def _pricing_yml() -> dict:
    """A pricing.yml cut down to the keys the importer reads, values as the dataset has them."""
    storage = {
        "balanced": {"cost": {"europe-west4": {"month": 0.11}, "us-central1": {"month": 0.1}}},
        "hdd": {"cost": {"europe-west4": {"month": 0.044}}},
        "ssd": {"cost": {"europe-west4": {"month": 0.187}}},
        "local": {"cost": {"asia-northeast1": {"month": 0.104, "month_spot": 0.0624}}},
    }
    every = ("europe-west4", "asia-northeast1", "us-central1")
    network = {
        "ip": {"vm": {"cost": {r: {"hour": 0.005, "month": 3.65} for r in every}}},
        "nat": {
            "gateway": {"cost": {r: {"hour": 0.0448, "month": 32.704} for r in every}},
            "data": {"cost": {r: {"month": 0.045} for r in every}},
        },
    }
    # g2-standard-8 in us-central1 (no bundled Local SSD): the catalog's 0.85362 on-demand agrees,
    # its 0.34057 Spot does not
    g2 = {"cpu": 8, "l4": 1, "ram": 32,
          "cost": {"us-central1": {"hour": 0.853624271, "hour_spot": 0.479872}}}  # fmt: skip
    return {
        "about": {"timestamp": 1785391997},
        "compute": {"storage": storage, "network": network, "instance": {"g2-standard-8": g2}},
    }


def test_gcp_disk_rows_are_the_per_gb_month_price_of_each_wanted_region():
    rows = price_import.gcp_rows(_pricing_yml(), GCP_COMMIT, {"europe-west4", "asia-northeast1"})
    got = {(r["item"], r["region"]): (r["price_usd"], r["unit"], r["as_of"]) for r in rows}
    assert got[("disk-pd-balanced", "europe-west4")] == ("0.11", "per_gb_month", "2026-07-30")
    assert got[("local-ssd", "asia-northeast1")] == ("0.104", "per_gb_month", "2026-07-30")
    assert got[("local-ssd-spot", "asia-northeast1")] == ("0.0624", "per_gb_month", "2026-07-30")
    spot = next(r for r in rows if r["item"] == "local-ssd-spot")
    assert spot["quote"] == "compute.storage.local.cost.asia-northeast1.month_spot: 0.0624"
    assert ("disk-pd-balanced", "us-central1") not in got  # not a wanted region
    src = rows[0]["source"]
    assert src.startswith(
        f"https://github.com/Cyclenerd/google-cloud-pricing-cost-calculator/blob/{GCP_COMMIT}/"
    )


def test_gcp_nat_per_vm_is_the_gateway_figure_over_32_and_address_rows_are_every_region():
    # pricing.pl: the NAT gateway figure is the per-VM SKU x 32; the Cloud NAT page: "$0.0014 *
    # the number of VM instances"; VPC pricing: $0.005 an hour per in-use external IP.
    rows = {r["item"]: r for r in price_import.gcp_rows(_pricing_yml(), GCP_COMMIT, set())}
    assert (rows["cloud-nat-per-vm"]["price_usd"], rows["cloud-nat-per-vm"]["region"]) == (
        "0.0014",
        "*",
    )
    assert rows["external-ipv4"]["price_usd"] == "0.005"
    assert (rows["cloud-nat-data-processing"]["unit"], rows["cloud-nat-data-processing"]["price_usd"]) == ("per_gib", "0.045")  # fmt: skip


def test_a_global_price_that_differs_between_regions_is_an_error_not_a_guess():
    doc = _pricing_yml()
    doc["compute"]["network"]["ip"]["vm"]["cost"]["us-central1"]["hour"] = 0.004
    with pytest.raises(ValueError, match=r"compute.network.ip.vm.cost.\*.hour: .*0.004, 0.005"):
        price_import.gcp_rows(doc, GCP_COMMIT, set())


def test_aws_gp3_rows_skip_local_zones_and_regions_without_gp3():
    entries = [
        {"rzCode": "sa-east-1", "rzType": "region",
         "ebs_prices": {"gp3": {"pricePerGBMonth": {"USD": "0.1520000000"}}}},
        {"rzCode": "us-west-2-lax-1a", "rzType": "local_zone",
         "ebs_prices": {"gp3": {"pricePerGBMonth": {"USD": "0.0960000000"}}}},
        {"rzCode": "cn-north-1", "rzType": "region", "ebs_prices": {"gp2": {}}},
    ]  # fmt: skip
    wanted = {"sa-east-1", "us-west-2-lax-1a", "cn-north-1"}
    rows = price_import.aws_ebs_rows(entries, AWS_COMMIT, "2022-02-10", wanted)
    assert [(r["region"], r["price_usd"]) for r in rows] == [("sa-east-1", "0.152")]
    assert price_import.aws_generated("2022-02-10T05:01:17Z\n") == "2022-02-10"


def _row(price: str, as_of: str, quote: str = "", source: str = "s") -> dict[str, str]:
    return {"cloud": "gcp", "item": "local-ssd", "region": "r1", "unit": "per_gb_month",
            "price_usd": price, "source": source, "as_of": as_of, "quote": quote}  # fmt: skip


def test_merge_keeps_an_agreeing_quoted_row_and_replaces_an_unquoted_one():
    dataset = _row("0.08", "2026-07-30", "q", "dataset")
    kept = price_import.merge([_row("0.080", "2026-11-26", "page words")], [dataset])
    assert kept.rows[0]["quote"] == "page words" and kept.kept == ["gcp local-ssd r1"]
    replaced = price_import.merge([_row("0.08", "2026-12-07")], [dataset])
    assert replaced.rows == [dataset] and replaced.replaced == ["gcp local-ssd r1"]


def test_merge_keeps_a_quoted_row_read_after_the_dataset_and_reports_the_difference():
    dataset = _row("0.08", "2026-07-30", "q", "dataset")
    newer = price_import.merge([_row("0.09", "2026-09-04", "offer file")], [dataset])
    assert newer.rows[0]["price_usd"] == "0.09" and newer.differs
    older = price_import.merge([_row("0.09", "2026-01-01", "old page")], [dataset])
    assert older.rows == [dataset] and older.differs


def _tiny_datasets(tmp: Path) -> tuple[Path, Path]:
    yml = tmp / "pricing.yml"
    yml.write_text(json.dumps(_pricing_yml()), encoding="utf-8")  # JSON is YAML
    (tmp / "docs").mkdir()
    ebs = tmp / "docs" / "ebs_pricing.json"
    ebs.write_text(json.dumps([
        {"rzCode": "sa-east-1", "rzType": "region",
         "ebs_prices": {"gp3": {"pricePerGBMonth": {"USD": "0.1520000000"}}}},
    ]), encoding="utf-8")  # fmt: skip
    (tmp / "docs" / "last_updated").write_text("2022-02-10T05:01:17Z\n", encoding="utf-8")
    return yml, ebs


def test_import_script_writes_the_rows_and_lists_the_gpu_regions_left_unpriced(tmp_path, capsys):
    data = tmp_path / "data"
    shutil.copytree(DATA_DIR, data)
    rows = [r for r in read_rows("platform_prices.csv", data) if r["region"] != "sa-east-1"]
    header = ["source: test, read 2026-12-07"]
    (data / "platform_prices.csv").write_text(build.render(header, price_import.COLUMNS, rows))
    (data / price_import.UNPRICED).unlink()
    yml, ebs = _tiny_datasets(tmp_path)
    argv = ["--gcp", str(yml), "--gcp-commit", GCP_COMMIT, "--aws-ebs", str(ebs),
            "--aws-ebs-commit", AWS_COMMIT, "--data-dir", str(data), "--today", "2026-12-07",
            "--write"]  # fmt: skip
    assert importer.main(argv) == 0
    got = {(r["item"], r["region"]): r for r in read_rows("platform_prices.csv", data)}
    assert got[("ebs-gp3", "sa-east-1")]["price_usd"] == "0.152"
    assert got[("ebs-gp3", "sa-east-1")]["as_of"] == "2022-02-10"
    left = {(u["item"], u["region"]): u for u in read_rows(price_import.UNPRICED, data)}
    assert ("ebs-gp3", "sa-east-1") not in left
    assert left[("nat-gateway", "sa-east-1")]["as_of"] == "2026-12-07"
    assert "NatGateway-Hours" in left[("nat-gateway", "sa-east-1")]["source"]
    out = capsys.readouterr().out
    assert "without a price" in out
    (row,) = read_rows("price_disagreements.csv", data)
    assert (row["item"], row["region"], row["provisioning"]) == (
        "g2-standard-8",
        "us-central1",
        "spot",
    )
    assert (row["catalog_usd"], row["other_usd"], row["as_of"]) == (
        "0.34057",
        "0.479872",
        "2026-07-30",
    )
    assert "compared 2026-12-07: " in read_header("price_disagreements.csv", data)[2]
    assert "1 agree, 1 disagree" in out
