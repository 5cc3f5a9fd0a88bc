"""The catalog's GCP node prices against a second source (infra/core/catalog/price_crosscheck.py):
the dataset's machine price without the Local SSD it bundles, the disagreements recorded as data,
and a plan priced from a disagreeing row saying so.

Expected numbers are the sources': Cyclenerd/google-cloud-pricing-cost-calculator pricing.yml at
fd66b26ff84fee5cdd94f341ea89206e76c06b99 (generated 2026-07-30) for the dataset, and the vendored
gcp_machine_types.csv / gcp_accelerators.csv rows (skypilot-catalog @ 017e2502) for the catalog.
"""

from __future__ import annotations

import shutil

import pytest

from infra.core.catalog import build, price_crosscheck
from infra.core.catalog.pricing import Prices
from infra.core.catalog.vendored import DATA_DIR, read_header, read_rows
from infra.core.config.stack import parse
from infra.core.cost import estimate
from infra.core.plan import build_plan
from infra.planview.table import print_cost
from tests.conftest import gke_config

COMMIT = "fd66b26ff84fee5cdd94f341ea89206e76c06b99"


def _pricing_yml() -> dict:
    """pricing.yml cut down to the machines and Local SSD rows compared, values as it has them."""
    instance = {
        "a3-highgpu-8g": {
            "cpu": 208, "h100-80gb": 8, "local-ssd": 6000, "ram": 1872,
            "cost": {"us-central1": {"hour": 88.4899999025753, "hour_spot": 50.6095408219178}},
        },
        "a2-ultragpu-1g": {
            "a100-80gb": 1, "cpu": 12, "local-ssd": 375, "ram": 170,
            "cost": {"asia-southeast1": {"hour": 6.24768547945206, "hour_spot": 3.24872753424658}},
        },
        "g2-standard-8": {
            "cpu": 8, "l4": 1, "ram": 32,
            "cost": {"us-central1": {"hour": 0.853624271, "hour_spot": 0.479872}},
        },
    }  # fmt: skip
    local = {
        "us-central1": {"month": 0.08, "month_spot": 0.0428},
        "asia-southeast1": {"month": 0.088, "month_spot": 0.0407},
    }
    return {
        "about": {"timestamp": 1785391997},
        "compute": {"instance": instance, "storage": {"local": {"cost": local}}},
    }


@pytest.mark.parametrize(
    ("item", "region", "prov", "expected"),
    [
        # hour - local-ssd GB x compute.storage.local.cost.<region>.month / 730 (build/pricing.pl)
        ("a3-highgpu-8g", "us-central1", "on-demand", 88.4899999025753 - 6000 * 0.08 / 730),
        ("a3-highgpu-8g", "us-central1", "spot", 50.6095408219178 - 6000 * 0.0428 / 730),
        ("a2-ultragpu-1g", "asia-southeast1", "on-demand", 6.24768547945206 - 375 * 0.088 / 730),
        # no bundled Local SSD: the machine's figure as it is
        ("g2-standard-8", "us-central1", "on-demand", 0.853624271),
    ],
)
def test_the_dataset_machine_price_is_its_hour_less_the_bundled_local_ssd(
    item, region, prov, expected
):
    got = price_crosscheck.dataset_price(_pricing_yml(), item, region, prov)
    assert got is not None and got[0] == pytest.approx(expected, abs=1e-6)


def test_a_machine_or_region_the_dataset_lacks_has_no_price_not_a_zero():
    doc = _pricing_yml()
    assert price_crosscheck.dataset_price(doc, "a4-highgpu-8g", "us-central1", "on-demand") is None
    assert price_crosscheck.dataset_price(doc, "g2-standard-8", "europe-west4", "spot") is None
    # a bundled Local SSD whose price the dataset lacks: the machine's own price is not known
    del doc["compute"]["storage"]["local"]["cost"]["us-central1"]["month_spot"]
    assert price_crosscheck.dataset_price(doc, "a3-highgpu-8g", "us-central1", "spot") is None


def _catalog_nodes() -> list[price_crosscheck.NodePrice]:
    return price_crosscheck.catalog_node_prices(
        read_rows("gcp_machine_types.csv", DATA_DIR),
        read_rows("gcp_accelerators.csv", DATA_DIR),
        read_rows("gcp_vm_prices.csv", DATA_DIR),
        {"us-central1", "asia-southeast1"},
    )


def test_a_built_in_gpu_machine_is_priced_with_its_gpus_a_host_without_attached_ones():
    nodes = {(n.item, n.region): n for n in _catalog_nodes()}
    # gcp_machine_types.csv a3-highgpu-8g us-central1 9.46006 (spot 2.17547) + gcp_accelerators.csv
    # nvidia-h100-80gb x8 us-central1 33.60609 (spot 18.024)
    a3 = nodes[("a3-highgpu-8g", "us-central1")]
    assert (a3.on_demand, a3.spot) == (round(9.46006 + 33.60609, 6), round(2.17547 + 18.024, 6))
    assert a3.covers == "vCPUs, memory and 8 nvidia-h100-80gb"
    assert nodes[("n1-standard-8", "us-central1")].covers == "vCPUs and memory"


def test_disagreements_beyond_the_tolerance_are_rows_agreements_are_counted():
    wanted = {("a3-highgpu-8g", "us-central1"), ("a2-ultragpu-1g", "asia-southeast1"),
              ("g2-standard-8", "us-central1")}  # fmt: skip
    nodes = [n for n in _catalog_nodes() if (n.item, n.region) in wanted]
    found = price_crosscheck.crosscheck(_pricing_yml(), COMMIT, "2026-07-30", nodes)
    got = {
        (r["item"], r["provisioning"]): (r["catalog_usd"], r["other_usd"])
        for r in found.disagreements
    }
    # a3-highgpu-8g: catalog 43.06615 against 87.832466 (on-demand), 20.19947 against 50.25776
    # (spot); g2-standard-8 spot 0.11747 + 0.2231 against 0.479872; a2-ultragpu-1g Spot
    # 0.5425 + 1.6476 against 3.24872753424658 - 375 x 0.0407 / 730.
    assert got == {
        ("a3-highgpu-8g", "on-demand"): ("43.06615", "87.832466"),
        ("a3-highgpu-8g", "spot"): ("20.19947", "50.25776"),
        ("g2-standard-8", "spot"): ("0.34057", "0.479872"),
        ("a2-ultragpu-1g", "spot"): ("2.1901", "3.22782"),
    }
    # g2-standard-8 0.29358 + 0.56004 = 0.85362 against 0.853624271; a2-ultragpu-1g 1.35641 +
    # 4.84607 = 6.20248 against 6.24768547945206 - 375 x 0.088 / 730 = 6.20248
    assert (found.agree, found.compared, found.not_compared) == (2, 6, [])
    row = found.disagreements[0]
    assert row["as_of"] == "2026-07-30" and f"/blob/{COMMIT}/pricing.yml" in row["source"]
    assert "6000 GB bundled Local SSD" in next(
        r["quote"] for r in found.disagreements if r["item"] == "a3-highgpu-8g"
    )


def test_the_vendored_disagreements_carry_the_datasets_figures_and_its_generation_day():
    rows = {
        (r["item"], r["region"], r["provisioning"]): r
        for r in read_rows(price_crosscheck.DISAGREEMENTS, DATA_DIR)
    }
    a3 = rows[("a3-highgpu-8g", "us-central1", "on-demand")]
    assert (a3["catalog_usd"], a3["other_usd"], a3["as_of"]) == (
        "43.06615",
        "87.832466",
        "2026-07-30",
    )
    # a2-highgpu-1g in europe-west4: 0.81406 + 1.61365 against the dataset's 3.747972
    a2 = rows[("a2-highgpu-1g", "europe-west4", "on-demand")]
    assert (a2["catalog_usd"], a2["other_usd"]) == ("2.42771", "3.747972")
    # rows that agree (g2-standard-8 on-demand in us-central1) are not listed
    assert ("g2-standard-8", "us-central1", "on-demand") not in rows
    assert all(f"/blob/{COMMIT}/" in r["source"] for r in rows.values())


def _a3_cost(data_dir=DATA_DIR):
    pool = {"name": "h100", "machineType": "a3-highgpu-8g", "gpu": None, "zones": None,
            "minNodes": 0, "maxNodes": 2}  # fmt: skip
    plan = build_plan(parse(gke_config(pool), "test"))
    return estimate(plan, Prices(data_dir) if data_dir != DATA_DIR else None)


def test_a_pool_priced_from_a_disagreeing_row_is_shown_not_verified_and_keeps_the_catalog_price():
    cost = _a3_cost()
    pool = cost.pools[0]
    assert pool.per_node == pytest.approx(43.06615)  # the catalog's, not the other source's
    doc = cost.to_json()["pools"]["h100"]
    assert doc["unverified"] is True and doc["perNodePerHour"] == pytest.approx(43.06615)
    (d,) = doc["disagreements"]
    assert (d["otherPerHour"], d["asOf"], d["provisioning"]) == (
        87.832466,
        "2026-07-30",
        "on-demand",
    )
    assert cost.unverified == ("h100",)
    lines: list[str] = []
    print_cost(cost, lines.append)
    text = "\n".join(lines)
    assert "h100: price not verified: on-demand a3-highgpu-8g in us-central1" in text
    assert "$43.0662/h in the catalog, $87.8325/h in https://github.com/Cyclenerd" in text
    assert "as of 2026-07-30" in text and "not verified: the node prices of h100" in text


def test_a_pool_whose_rows_agree_carries_no_verification_mark():
    # a2-highgpu-1g on-demand in us-central1: 0.73948 + 2.93391 = 3.67339, the dataset 3.673385
    pool = {"machineType": "a2-highgpu-1g", "gpu": None, "zones": None}
    cost = estimate(build_plan(parse(gke_config(pool), "test")))
    assert cost.unverified == () and "unverified" not in cost.to_json()["pools"]["gpu-t4"]


def test_a_disagreement_no_longer_applies_once_the_catalog_row_changes(tmp_path):
    for path in DATA_DIR.glob("*.csv"):
        shutil.copy(path, tmp_path / path.name)
    name = "gcp_machine_types.csv"
    rows = list(read_rows(name, tmp_path))
    for r in rows:
        if (r["machine_type"], r["region"]) == ("a3-highgpu-8g", "us-central1"):
            r["price_per_hour"] = "54.22643"  # 87.832466 - 33.60609, read again
    (tmp_path / name).write_text(
        build.render(read_header(name, tmp_path), build.MACHINE_COLUMNS, rows)
    )
    cost = _a3_cost(tmp_path)
    assert cost.pools[0].per_node == pytest.approx(54.22643 + 33.60609)  # the copy's price
    assert cost.unverified == ()
