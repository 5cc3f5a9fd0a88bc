"""Every region the catalog offers GPUs in has a price for each platform item a stack there pays
for (boot disks, Local SSD, NAT, public addresses), or is listed in platform_unpriced.csv with why:
a stack in a GPU region is never partial for a price nobody looked for."""

from __future__ import annotations

import copy
import re

import pytest

from infra.cli import stack_file
from infra.core.catalog.vendored import DATA_DIR, Catalog, read_rows
from infra.core.config.stack import load_stack_file, parse
from infra.core.cost import estimate
from infra.core.plan import build_plan
from infra.price_verify import catalog_gpu_regions

# The items the platforms' cost lines price per region (infra/core/gke/cost.py: boot disks by
# disk type, Local SSD of on-demand and of Spot VMs, external IPv4, Cloud NAT per VM / cap / address; infra/core/eks/cost.py:
# gp3 boot volumes, NAT gateway and its public IPv4). An item priced alike in every region has a
# "*" row (GCP's NAT and address SKUs are global; AWS bills public IPv4 at one rate).
ITEMS = {
    "gcp": (
        "disk-pd-standard",
        "disk-pd-balanced",
        "disk-pd-ssd",
        "local-ssd",
        "local-ssd-spot",
        "external-ipv4",
        "cloud-nat-per-vm",
        "cloud-nat-max",
        "cloud-nat-ip",
    ),
    "aws": ("ebs-gp3", "nat-gateway", "public-ipv4"),
}


@pytest.fixture(scope="module")
def gpu_regions() -> dict[str, set[str]]:
    gcp, aws = catalog_gpu_regions(Catalog.load().data_dir)
    return {"gcp": gcp, "aws": aws}


def _unpriced() -> dict[tuple[str, str, str], dict[str, str]]:
    return {
        (u["cloud"], u["item"], u["region"]): u
        for u in read_rows("platform_unpriced.csv", DATA_DIR)
    }


def test_every_gpu_region_has_each_platform_price_or_is_listed_unpriced(gpu_regions):
    prices, listed = Catalog.load().prices, _unpriced()
    assert len(gpu_regions["gcp"]) >= 30 and len(gpu_regions["aws"]) >= 28
    wrong = []
    for cloud, items in ITEMS.items():
        for item in items:
            for region in sorted(gpu_regions[cloud]):
                priced = prices.unit(cloud, item, region) is not None
                if priced == ((cloud, item, region) in listed):
                    wrong.append(
                        f"{cloud} {item} {region}: {'priced and' if priced else 'not'} listed"
                    )
    assert not wrong, wrong


def test_every_gcp_gpu_region_is_priced_whole(gpu_regions):
    # Cyclenerd/google-cloud-pricing-cost-calculator pricing.yml has every GCP GPU region.
    assert not [k for k in _unpriced() if k[0] == "gcp"]


def test_an_unpriced_entry_is_a_gpu_region_with_a_reason_a_source_and_a_date(gpu_regions):
    for (cloud, item, region), u in _unpriced().items():
        assert item in ITEMS[cloud] and region in gpu_regions[cloud], u
        assert u["reason"] and u["source"], u
        assert re.fullmatch(r"20\d\d-\d\d-\d\d", u["as_of"]), u


def _gke_t4_in(region: str):
    """stacks/Pulumi.gke-t4.yaml moved to ``region``, its T4 pool in the zones offering T4 there."""
    _, raw = load_stack_file(stack_file("gke-t4"))
    raw = copy.deepcopy(raw)
    zones = Catalog.load().gcp_zones_offering("nvidia-tesla-t4", region, 1)
    raw["gcp:region"] = region
    raw["gpu-infra:cluster"]["location"] = region
    raw["gpu-infra:gpuPools"][0]["zones"] = zones
    return estimate(build_plan(parse(raw, "gke-t4"))), zones


def test_a_europe_west4_gke_stack_total_is_whole_not_partial():
    cost, zones = _gke_t4_in("europe-west4")
    assert zones == ["europe-west4-a", "europe-west4-b", "europe-west4-c"]
    assert not cost.total("min").unpriced and not cost.total("max").unpriced
    assert cost.to_json()["total"]["partial"] is False
    disks = next(x for x in cost.lines if x.item.startswith("boot disks"))
    # pd-balanced in europe-west4: compute.storage.balanced.cost.europe-west4.month 0.11
    assert disks.price is not None and disks.price.usd == 0.11 and disks.price.verified


def test_a_gke_stack_in_any_gpu_region_with_t4s_has_every_platform_line_priced(gpu_regions):
    checked = 0
    for region in sorted(gpu_regions["gcp"]):
        if not Catalog.load().gcp_zones_offering("nvidia-tesla-t4", region, 1):
            continue
        cost, _ = _gke_t4_in(region)
        assert [x.missing for x in cost.lines if x.missing] == [], region
        checked += 1
    assert checked >= 20
