"""A node price re-read at the cloud's price API is dated by that reading (price_checks.csv)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from infra.core.catalog import build, prices
from infra.core.catalog.vendored import DATA_DIR
from infra.core.cost import Prices, estimate
from infra.plan import load_path

ROOT = Path(__file__).resolve().parents[2]
READ = "2026-12-01"
# The rows stacks/Pulumi.gke-t4.yaml is priced from, with their catalog prices.
GKE_T4_ROWS = [
    ("gcp_vm_prices.csv", "n1-highmem-8", "0.47321"),
    ("gcp_vm_prices.csv", "e2-standard-4", "0.13402"),
    ("gcp_accelerators.csv", "nvidia-tesla-t4 x1", "0.35"),
]


@pytest.fixture(scope="module")
def gke_t4():
    return load_path(ROOT / "stacks" / "Pulumi.gke-t4.yaml")[2]


def _data(tmp_path: Path, rows: list[tuple[str, str, str]]) -> Path:
    for path in DATA_DIR.glob("*.csv"):
        shutil.copy(path, tmp_path / path.name)
    ledger = [
        {
            "cloud": "gcp",
            "file": f,
            "item": i,
            "region": "us-central1",
            "unit": "per_hour",
            "price_usd": p,
            "source": "Cloud Billing Catalog API",
            "as_of": READ,
            "quote": "q",
        }
        for f, i, p in rows
    ]
    (tmp_path / "price_checks.csv").write_text(build.render([], prices.LEDGER_COLUMNS, ledger))
    return tmp_path


def test_prices_as_of_is_the_reading_date_when_every_used_row_was_read(gke_t4, tmp_path):
    cost = estimate(gke_t4, Prices(_data(tmp_path, GKE_T4_ROWS)))
    assert cost.prices_as_of == READ


def test_one_row_not_read_keeps_its_files_date(gke_t4, tmp_path):
    cost = estimate(gke_t4, Prices(_data(tmp_path, GKE_T4_ROWS[:2])))
    assert cost.prices_as_of == "2026-11-26"


def test_a_reading_of_another_price_does_not_date_the_row(gke_t4, tmp_path):
    stale = [*GKE_T4_ROWS[:2], ("gcp_accelerators.csv", "nvidia-tesla-t4 x1", "0.36")]
    cost = estimate(gke_t4, Prices(_data(tmp_path, stale)))
    assert cost.prices_as_of == "2026-11-26"


def test_vendored_plan_is_dated_by_the_catalog_files(gke_t4):
    assert estimate(gke_t4).prices_as_of == "2026-11-26"


def test_verify_targets_are_the_node_types_each_sample_stack_runs(tmp_path):
    from infra.price_verify import stack_targets

    for name in ("gke-t4", "eks-g4dn"):
        shutil.copy(ROOT / "stacks" / f"Pulumi.{name}.yaml", tmp_path)
    t = stack_targets(tmp_path)
    assert t.gcp_machines == {("n1-highmem-8", "us-central1"), ("e2-standard-4", "us-central1")}
    assert t.gcp_gpus == {("nvidia-tesla-t4", 1, "us-central1")}
    assert t.aws_instances == {("g4dn.xlarge", "us-west-2"), ("m6i.large", "us-west-2")}
    assert t.aws_regions == {"us-west-2"}
