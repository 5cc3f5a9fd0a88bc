"""quota.check --where on GKE stacks: the regions where the whole stack fits, ranked, and no
region called a fit on an unknown.
"""

from __future__ import annotations

import io
from typing import Any

import pytest

from quota.check import main
from tests.emulator import quota_gcp_fixtures
from tests.emulator.quota_cli import run
from tests.emulator.quota_gcp_fixtures import AMPLE, FIX, P, R
from tests.fakes import gcp as g

pytestmark = pytest.mark.emulator

# Fixtures this module shares with its siblings (quota_gcp_fixtures).
env = quota_gcp_fixtures.env

# --- --where -----------------------------------------------------------------------------------


def test_where_offline_lists_offering_regions_by_price_without_calls(env: dict[str, Any]) -> None:
    code, doc = run("--stack", "gke-t4", "--where", "--offline")
    regions = doc["where"][0]["regions"]
    assert code == 0 and doc["where"][0]["pool"] == "gpu-t4"
    assert "us-central1" in {r["region"] for r in regions} and len(regions) > 5
    prices = [r["pricePerNodeHour"] for r in regions if r["pricePerNodeHour"] is not None]
    assert prices == sorted(prices) and all(r["fits"] is None for r in regions)
    assert sum(env["compute"].calls.values()) == 0


def test_where_ranks_regions_where_the_whole_stack_fits_first(env: dict[str, Any]) -> None:
    env["compute"].set_region(P, R, NVIDIA_T4_GPUS=(4, 0))  # too few T4s at home
    env["compute"].set_region(P, "us-east1", **AMPLE)
    code, doc = run("--stack", "gke-t4", "--where", "--regions", f"{R},us-east1")
    regions = doc["where"][0]["regions"]
    assert code == 0 and [r["region"] for r in regions] == ["us-east1", R]
    east, home = regions
    assert (east["fits"], east["quota"], east["headroom"]) == (True, "NVIDIA_T4_GPUS", 32)
    assert home["fits"] is False and "NVIDIA_T4_GPUS" in home["reason"] and home["headroom"] == 4
    assert env["compute"].calls["regions.get"] == 2


def test_where_unreadable_region_is_unknown_not_fitting(env: dict[str, Any]) -> None:
    code, doc = run("--stack", "gke-t4", "--where", "--regions", "us-east1")  # not in the fake
    (east,) = doc["where"][0]["regions"]
    assert code == 3 and east["fits"] is None and "404" in east["reason"]


def test_regions_needs_where(env: dict[str, Any]) -> None:
    err = io.StringIO()
    assert main(["--stack", "gke-t4", "--regions", "all"], out=io.StringIO(), err=err) == 2
    assert "--regions" in err.getvalue()


def test_where_global_quota_short_means_no_region_fits(env: dict[str, Any]) -> None:
    env["compute"].set_region(P, "us-east1", **AMPLE)
    env["compute"].set_project(P, GPUS_ALL_REGIONS=(4, 0))  # gke-t4 needs 21 GPUs in any region
    code, doc = run("--stack", "gke-t4", "--where", "--regions", f"{R},us-east1")
    regions = doc["where"][0]["regions"]
    assert code == 1 and all(r["fits"] is False for r in regions)
    assert all("GPUS_ALL_REGIONS" in r["reason"] for r in regions)


def test_where_global_quota_unknown_means_no_region_is_known_to_fit(env: dict[str, Any]) -> None:
    env["compute"].projects.clear()  # projects.get fails: global quotas unreadable
    code, doc = run("--stack", "gke-t4", "--where", "--regions", R)
    (home,) = doc["where"][0]["regions"]
    assert code == 3 and home["fits"] is None and "CPUS_ALL_REGIONS" in home["reason"]


def test_where_disabled_api_means_no_region_is_known_to_fit(env: dict[str, Any]) -> None:
    env["usage"].enabled = set(g.ALL_REQUIRED_APIS) - {"container.googleapis.com"}
    code, doc = run("--stack", "gke-t4", "--where", "--regions", R)
    (home,) = doc["where"][0]["regions"]
    assert code == 3 and home["fits"] is None and "container.googleapis.com" in home["reason"]


def test_where_region_missing_another_pools_gpu_does_not_fit_for_any_pool(
    env: dict[str, Any],
) -> None:
    # us-west2 offers T4 but neither L4 nor A100 (gcp_accelerators.csv): the stack cannot go there.
    code, doc = run(
        "--config", str(FIX / "Pulumi.gke-bench.yaml"), "--where", "--regions", "us-west2"
    )
    t4 = next(w for w in doc["where"] if w["pool"] == "t4")
    (west,) = t4["regions"]
    assert code == 1 and west["fits"] is False
    assert west["reason"] == "not offered there: l4, l4-spot, a100"


def test_where_for_a_declared_shape_judges_its_own_region_and_cannot_call_it_a_fit(
    env: dict[str, Any],
) -> None:
    code, doc = run("--config", str(FIX / "Pulumi.gke-declared-shape.yaml"), "--where")
    (pool,) = doc["where"]
    (region,) = pool["regions"]  # the catalog knows no other region for a5-highgpu-8g
    assert (region["region"], region["quota"], region["fits"]) == (R, "unknown:nvidia-b300", None)
    assert "declared gpuPools[].shape" in region["reason"] and code == 3


def test_mistyped_regions_is_a_usage_error_not_an_empty_table(env: dict[str, Any]) -> None:
    err = io.StringIO()
    args = ["--stack", "gke-t4", "--where", "--offline", "--regions", "us-centrl1"]
    assert main(args, out=io.StringIO(), err=err) == 2
    assert "us-centrl1" in err.getvalue()
