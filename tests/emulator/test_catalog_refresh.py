"""The catalog refresh reads the real Compute client's aggregated lists from a local fake."""

from __future__ import annotations

import datetime as dt
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from infra import catalog_refresh
from infra.core.catalog.vendored import DATA_DIR, Catalog, read_header, read_rows
from tests.fakes.gcp import FakeCompute, permission_denied


@pytest.fixture
def compute() -> Iterator[FakeCompute]:
    fake = FakeCompute()
    fake.start()
    fake.accelerator_types = {
        "us-central1-a": [
            {"name": "nvidia-tesla-t4", "maximumCardsPerInstance": 4},
            {"name": "nvidia-l4", "maximumCardsPerInstance": 8},
            {"name": "ct5lp", "maximumCardsPerInstance": 8},
        ],  # a TPU: ignored
        "us-central1-b": [{"name": "nvidia-tesla-t4", "maximumCardsPerInstance": 4}],
    }
    fake.machine_types = {
        "us-central1-a": [
            {
                "name": "g2-standard-24",
                "guestCpus": 24,
                "memoryMb": 98304,
                "accelerators": [{"guestAcceleratorType": "nvidia-l4", "guestAcceleratorCount": 2}],
            },
            {"name": "n1-standard-8", "guestCpus": 8, "memoryMb": 30720},
        ],
    }
    yield fake
    fake.stop()


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    for name in (
        "gcp_accelerators.csv",
        "gcp_machine_types.csv",
        "gcp_n1_machine_types.csv",
        "gcp_gpu_attach_limits.csv",
        "gcp_accelerator_models.csv",
        "gcp_machine_series.csv",
        "aws_gpu_instances.csv",
        "aws_gpu_families.csv",
    ):
        shutil.copy(DATA_DIR / name, tmp_path / name)
    return tmp_path


def test_refresh_rewrites_the_gcp_catalog_from_the_api(compute, data_dir):
    n_acc, n_mt, new_types = catalog_refresh.refresh(
        "demo-project", data_dir, compute.url, dt.date(2026, 12, 1)
    )
    assert (n_acc, n_mt) == (3 + 4 + 3, 1)  # T4 1/2/4 in two zones, L4 1/2/4/8, one g2 type
    assert new_types == []
    cat = Catalog(data_dir)
    assert cat.gcp_zones_offering("nvidia-tesla-t4", "us-central1") == [
        "us-central1-a",
        "us-central1-b",
    ]
    assert cat.gcp_counts("nvidia-l4") == [1, 2, 4, 8]
    g2 = cat.gcp_machine("g2-standard-24")
    assert g2 is not None
    assert (g2.accelerator, g2.accelerator_count, g2.vcpus, g2.memory_gib) == (
        "nvidia-l4",
        2,
        24,
        96,
    )
    assert "ct5lp" not in cat.gcp_accelerators()
    header = " ".join(read_header("gcp_accelerators.csv", data_dir))
    assert "fetched: 2026-12-01" in header and "aggregatedList" in header


def test_refresh_keeps_known_prices_and_leaves_new_rows_unpriced(compute, data_dir):
    compute.accelerator_types["us-central1-d"] = [
        {"name": "nvidia-tesla-t4", "maximumCardsPerInstance": 1}
    ]
    catalog_refresh.refresh("demo-project", data_dir, compute.url, dt.date(2026, 12, 1))
    rows = {
        (r["accelerator"], r["count"], r["zone"]): r
        for r in read_rows("gcp_accelerators.csv", data_dir)
    }
    assert rows[("nvidia-tesla-t4", "1", "us-central1-a")]["price_per_hour"] == "0.35"
    new = rows[("nvidia-tesla-t4", "1", "us-central1-d")]
    assert (new["price_per_hour"], new["spot_price_per_hour"]) == ("", "")
    assert Catalog(data_dir).gcp_price("nvidia-tesla-t4", 1, "us-central1-d") == (None, None)


def test_refresh_failure_is_one_line_exit_1_and_leaves_files_untouched(
    compute, data_dir, capsys, monkeypatch
):
    compute.inject(
        "acceleratorTypes.aggregatedList", permission_denied("compute.acceleratorTypes.list")
    )
    before = (data_dir / "gcp_accelerators.csv").read_text()
    monkeypatch.setenv("QUOTA_ENDPOINT_COMPUTE", compute.url)
    code = catalog_refresh.main(["--project", "demo-project", "--data-dir", str(data_dir)])
    err = capsys.readouterr().err
    assert code == 1 and err.startswith("catalog refresh failed: ") and len(err.splitlines()) == 1
    assert (data_dir / "gcp_accelerators.csv").read_text() == before


def test_refresh_regenerates_which_series_carry_their_gpus_from_the_listing(compute, data_dir):
    """machineTypes[].accelerators says a type carries its GPUs: its series row becomes built-in,
    a TPU type's accelerators do not count, and a GPU series the table lacks is named."""
    rows = list(read_rows("gcp_machine_series.csv", data_dir))
    g2 = next(r for r in rows if r["prefix"] == "g2-")
    g2["gpus"] = ""  # as if the table had not known it
    (data_dir / "gcp_machine_series.csv").write_text(
        catalog_refresh.build.render(
            read_header("gcp_machine_series.csv", data_dir),
            catalog_refresh.build.SERIES_COLUMNS,
            rows,
        ),
        encoding="utf-8",
    )
    compute.machine_types["us-central1-b"] = [
        {
            "name": "a9-megagpu-8g",
            "guestCpus": 208,
            "memoryMb": 1_900_000,
            "accelerators": [{"guestAcceleratorType": "nvidia-x9", "guestAcceleratorCount": 8}],
        },
        {
            "name": "ct5lp-hightpu-4t",
            "guestCpus": 112,
            "memoryMb": 196608,
            "accelerators": [
                {"guestAcceleratorType": "tpu-v5-lite-podslice", "guestAcceleratorCount": 4}
            ],
        },
    ]
    _, n_mt, new_types = catalog_refresh.refresh(
        "demo-project", data_dir, compute.url, dt.date(2026, 12, 1)
    )
    after = {r["prefix"]: r["gpus"] for r in read_rows("gcp_machine_series.csv", data_dir)}
    assert after["g2-"] == "built-in"  # listed with its L4s
    assert after["n1-"] == "attached" and after["a2-highgpu-"] == "built-in"  # unlisted: kept
    assert new_types == ["a9-megagpu-8g"] and n_mt == 2  # the TPU type is no GPU machine
    assert "gpus regenerated from" in " ".join(read_header("gcp_machine_series.csv", data_dir))
