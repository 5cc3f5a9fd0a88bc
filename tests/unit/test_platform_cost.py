"""Cost beyond the nodes: control plane, NAT, boot disks, Local SSD; every price sourced and dated by
its own date; a partial total lists what it could not price instead of being unknown."""

from __future__ import annotations

import re

import pytest

from infra.cli import stack_file
from infra.core.catalog.vendored import read_rows
from infra.core.config.stack import load_stack_file, parse
from infra.core.cost import HOURS_PER_MONTH, estimate
from infra.core.plan import build_plan


def _cost(stack: str):
    _, raw = load_stack_file(stack_file(stack))
    return estimate(build_plan(parse(raw, stack)))


def _line(cost, prefix: str):
    (line,) = [x for x in cost.lines if x.item.startswith(prefix)]
    return line


def test_every_platform_price_has_its_own_source_url_and_date():
    rows = list(read_rows("platform_prices.csv"))
    assert rows
    for r in rows:
        assert r["source"].startswith("https://"), r
        assert re.fullmatch(r"20\d\d-\d\d-\d\d", r["as_of"]), r
        assert float(r["price_usd"]) > 0 and r["unit"] in ("per_hour", "per_gb_month")


def test_a_month_is_730_hours_as_the_clouds_price_it():
    assert HOURS_PER_MONTH == 730


def test_gke_control_plane_fee_is_10_cents_an_hour_at_minimum_and_maximum():
    # "a flat cluster management fee of $0.10 per cluster per hour" (GKE pricing)
    fee = _line(_cost("gke-t4"), "control plane")
    assert (fee.at_min, fee.at_max) == (0.10, 0.10) and fee.price is not None
    assert fee.price.source == "https://cloud.google.com/kubernetes-engine/pricing"


def test_gke_boot_disks_are_100_gb_per_node_at_the_disk_types_price():
    # gke-t4: 0-20 GPU nodes and 3 system nodes, 100 GB pd-balanced each (NodeConfig default)
    disks = _line(_cost("gke-t4"), "boot disks")
    assert disks.at_min == pytest.approx(3 * 100 * 0.10 / 730)
    assert disks.at_max == pytest.approx(23 * 100 * 0.10 / 730)


def test_eks_single_nat_gateway_is_priced_with_its_address():
    nat = _line(_cost("eks-g4dn"), "NAT")
    assert nat.at_min == pytest.approx(0.045 + 0.005)
    assert {p.item for p in nat.prices} == {"nat-gateway", "public-ipv4"}


def test_an_existing_cluster_has_no_control_plane_line():
    assert not [x for x in _cost("eks-existing").lines if x.item.startswith("control plane")]


def test_an_unpriced_pool_makes_a_partial_total_that_names_it_not_unknown():
    cost = _cost("eks-hpc")
    assert cost.at_max is None  # the nodes-only figure stays unknown, as before
    total = cost.total("max")
    assert total.per_hour > 0
    assert any("h200-odcr" in u for u in total.unpriced)
    doc = cost.to_json()["total"]
    assert doc["partial"] is True and any("b200-block" in u for u in doc["unpriced"])


def test_cost_json_pools_carry_min_and_max_nodes_and_per_month():
    pool = _cost("gke-t4").to_json()["pools"]["gpu-t4"]
    assert (pool["minNodes"], pool["maxNodes"]) == (0, 20)
    assert pool["perNodePerMonth"] == pytest.approx(0.82321 * 730, abs=0.01)


def test_usage_based_charges_are_named_never_counted():
    doc = _cost("gke-t4").to_json()["total"]
    assert "data processing" in doc["usageBased"]


def test_own_hardware_has_no_total():
    assert _cost("onprem-containerd").to_json()["total"] is None
