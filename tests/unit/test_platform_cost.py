"""Cost beyond the nodes: control plane, NAT, boot disks, Local SSD; every price sourced and dated by
its own date; a partial total lists what it could not price instead of being unknown."""

from __future__ import annotations

import re

import pytest

from infra.cli import stack_file
from infra.core.catalog.pricing import Prices
from infra.core.catalog.vendored import DATA_DIR, read_rows
from infra.core.config.stack import load_stack_file, parse
from infra.core.cost import HOURS_PER_MONTH, estimate
from infra.core.plan import build_plan


def _cost(stack: str, **cluster: str):
    """The cost of sample ``stack``, its ``gpu-infra:cluster`` keys replaced by ``cluster``."""
    _, raw = load_stack_file(stack_file(stack))
    raw["gpu-infra:cluster"] = {**raw["gpu-infra:cluster"], **cluster}
    return estimate(build_plan(parse(raw, stack)))


def _line(cost, prefix: str):
    (line,) = [x for x in cost.lines if x.item.startswith(prefix)]
    return line


def test_every_platform_price_has_its_own_source_url_and_date():
    rows = list(read_rows("platform_prices.csv", DATA_DIR))
    assert rows
    for r in rows:
        assert r["source"].startswith("https://"), r
        assert re.fullmatch(r"20\d\d-\d\d-\d\d", r["as_of"]), r
        assert float(r["price_usd"]) > 0 and r["unit"] in ("per_hour", "per_gb_month", "per_gib")


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


def test_cloud_nat_data_processing_is_quoted_at_its_price_row_never_counted():
    # "$0.045 per GiB" of data processed by the gateway (https://cloud.google.com/nat/pricing)
    (row,) = [
        r
        for r in read_rows("platform_prices.csv", DATA_DIR)
        if r["item"] == "cloud-nat-data-processing"
    ]
    assert (row["unit"], float(row["price_usd"])) == ("per_gib", 0.045)
    cost = _cost("gke-t4")
    assert "Cloud NAT data processing ($0.045/GiB)" in cost.to_json()["total"]["usageBased"]
    assert all(p.item != "cloud-nat-data-processing" for x in cost.lines for p in x.prices)


def test_own_hardware_has_no_total():
    assert _cost("onprem-containerd").to_json()["total"] is None


# --- EKS control plane: standard or extended support by the Kubernetes version ----------------


def test_eks_control_plane_past_end_of_standard_support_is_billed_the_extended_rate():
    # "Billing for extended support starts at the beginning of the day that the version reaches
    # end of standard support" (EKS release calendar); 1.33 left standard support on 2026-07-29.
    from infra.core.catalog.eks_versions import eks_standard_support_ends
    from infra.core.platform_cost import price_of

    fee = _line(_cost("eks-g4dn", kubernetesVersion="1.33"), "control plane")
    assert eks_standard_support_ends(DATA_DIR)["1.33"] == "2026-07-29"
    assert price_of(Prices.load(), "aws", "eks-cluster-fee", "us-east-1").as_of >= "2026-07-29"
    assert (fee.at_min, fee.at_max) == (0.60, 0.60) and "extended support" in fee.item
    assert fee.price is not None and fee.price.source == "https://aws.amazon.com/eks/pricing/"


def test_eks_control_plane_in_standard_support_is_billed_10_cents():
    fee = _line(_cost("eks-zonal-spot"), "control plane")  # 1.35: standard support to 2027-03-27
    assert (fee.at_min, fee.at_max) == (0.10, 0.10) and "standard support" in fee.item


def test_no_sample_stack_creates_an_eks_control_plane_billed_the_extended_rate():
    # A sample is copied as it is: one on a version past standard support bills whoever copies it
    # the extended rate (eks_standard_support.csv, judged on the tests' day, 2026-11-27).
    from infra.cli import known_stacks

    fees = {
        s: x.item
        for s in known_stacks()
        for x in _cost(s).lines
        if x.item.startswith("control plane (EKS fee")
    }
    assert {"eks-g4dn", "eks-device-plugin", "eks-hpc"} <= set(fees)
    assert all("in standard support" in item for item in fees.values()), fees


def test_eks_version_without_a_support_date_is_unpriced_not_guessed():
    from infra.core.eks.cost import eks_control_plane

    fee = eks_control_plane("1.99", "us-east-1", Prices.load())
    assert fee.at_min is None and "1.99" in fee.missing


def test_every_eks_support_date_has_a_source_and_read_date():
    rows = list(read_rows("eks_standard_support.csv", DATA_DIR))
    assert {r["version"] for r in rows} >= {"1.33", "1.34", "1.35"}
    for r in rows:
        assert r["source"].startswith("https://") and re.fullmatch(r"20\d\d-\d\d-\d\d", r["as_of"])
        assert re.fullmatch(r"20\d\d-\d\d-\d\d", r["end_of_standard_support"]), r


# --- price dates that say whether the price was read; GKE node addresses ------------------------


def test_a_price_row_without_a_quote_is_shown_as_not_re_read_at_its_source():
    from infra.core.platform_cost import unit_prices

    for p in unit_prices(Prices.load()).values():
        assert p.dated == p.as_of if p.verified else p.dated.endswith("not re-read at the source")
    nat = _line(_cost("eks-g4dn"), "NAT")  # nat-gateway us-west-2: no quote in the file
    assert nat.price is not None and nat.price.item == "nat-gateway" and not nat.price.verified
    assert "not re-read" in nat.price.dated


def test_public_gke_nodes_pay_for_one_external_ipv4_each_private_nodes_none():
    # gke-t4: public nodes, 3-23 of them (3 system + 0-20 GPU); $0.005/h per in-use address
    # (https://cloud.google.com/vpc/network-pricing#ipaddress).
    ip = _line(_cost("gke-t4"), "external IPv4")
    assert ip.at_min == pytest.approx(3 * 0.005) and ip.at_max == pytest.approx(23 * 0.005)
    _, raw = load_stack_file(stack_file("gke-t4"))
    raw["gpu-infra:cluster"]["privateNodes"] = True
    private = estimate(build_plan(parse(raw, "gke-t4")))
    assert not [x for x in private.lines if x.item.startswith("external IPv4")]


def test_a_pool_with_an_az_lacking_a_spot_price_is_priced_as_a_floor_not_unknown():
    # aws_gpu_instances.csv: g6.xlarge in us-west-2 has Spot prices in usw2-az1 (0.399), az3
    # (0.5341) and az4 (0.4128), none in az2; the floor is the highest priced, 0.5341.
    from tests.unit.test_eks import eks_config

    cfg = eks_config(pool={"machineType": "g6.xlarge", "spot": True, "zones": None})
    cost = estimate(build_plan(parse(cfg, "test")))
    pool = cost.pools[0]
    assert pool.floor and pool.per_node == pytest.approx(0.5341)
    assert "none for g6.xlarge in usw2-az2" in pool.note
    assert cost.at_max is not None  # the headline is a number
    hi = cost.total("max")
    assert any("beyond the floor" in u for u in hi.unpriced)  # and the total says partial
    assert cost.to_json()["pools"][pool.name]["floor"] is True


def test_a_europe_west4_gke_stack_total_is_not_partial():
    # platform_prices.csv: pd-balanced in europe-west4 ($0.11/GB-month), the GKE fee, addresses
    from tests.conftest import gke_config

    cfg = gke_config(
        {"zones": None},
        **{"gcp:region": "europe-west4", "cluster": {"name": "ml", "location": "europe-west4"}},
    )
    cost = estimate(build_plan(parse(cfg, "test")))
    lo, hi = cost.total("min"), cost.total("max")
    assert lo.unpriced == () and hi.unpriced == ()
    (disks,) = [x for x in cost.lines if "boot disks" in x.item]
    assert {p.usd for p in disks.prices} == {0.11}


def _a2_ultra(region: str, spot: bool):
    from tests.conftest import gke_config

    pool = {"machineType": "a2-ultragpu-1g", "gpu": None, "spot": spot, "zones": None,
            "minNodes": 1, "maxNodes": 2}  # fmt: skip
    cfg = gke_config(pool, **{"gcp:region": region, "cluster": {"name": "ml", "location": region}})
    return _line(estimate(build_plan(parse(cfg, "test"))), "local SSD")


@pytest.mark.parametrize(
    ("region", "spot_usd", "on_demand_usd"),
    # pricing.yml compute.storage.local.cost.<region>: month_spot (the Spot VM's Local SSD SKU,
    # "SSD backed Local Storage attached to Spot Preemptible") and month.
    [("us-central1", 0.0428, 0.08), ("europe-west4", 0.0494, 0.088)],
)
def test_a_spot_pool_pays_the_spot_local_ssd_rate_an_on_demand_pool_the_on_demand_one(
    region, spot_usd, on_demand_usd
):
    # a2-ultragpu-1g comes with one 375 GiB Local SSD (gcp_machine_series.csv); 1-2 nodes.
    spot, on_demand = _a2_ultra(region, True), _a2_ultra(region, False)
    assert [(p.item, p.usd) for p in spot.prices] == [("local-ssd-spot", spot_usd)]
    assert spot.at_min == pytest.approx(375 * spot_usd / 730)
    assert spot.at_max == pytest.approx(2 * 375 * spot_usd / 730)
    assert [(p.item, p.usd) for p in on_demand.prices] == [("local-ssd", on_demand_usd)]
    assert on_demand.at_max == pytest.approx(2 * 375 * on_demand_usd / 730)


def test_an_auto_created_spot_priority_pays_the_spot_local_ssd_rate_its_on_demand_fallback_not():
    _, raw = load_stack_file(stack_file("gke-autocreate"))
    (pool,) = raw["gpu-infra:gpuPools"]
    pool.update(machineType="a2-ultragpu-1g", maxNodes=2)
    pool["fallback"] = [{"machineType": "a2-ultragpu-1g", "spot": False, "maxNodes": 2}]
    ssd = _line(estimate(build_plan(parse(raw, "gke-autocreate"))), "local SSD")
    # us-central1: month_spot 0.0428 and month 0.08 per GB-month, 375 GB a node, 2 nodes each
    assert {(p.item, p.usd) for p in ssd.prices} == {
        ("local-ssd-spot", 0.0428),
        ("local-ssd", 0.08),
    }
    assert ssd.at_max == pytest.approx(2 * 375 * (0.0428 + 0.08) / 730)
