"""Pure parsing and matching of the price APIs' answers (infra/core/catalog/prices.py)."""

from __future__ import annotations

import json

import pytest

from infra.core.catalog import prices
from infra.core.catalog.prices import Check, SourcePrice
from tests.fakes.pricing import ec2_product, gcp_sku

US = ["us-central1"]


def _items(*products: dict[str, object]) -> list[str]:
    return [json.dumps(p) for p in products]


def test_getproducts_on_demand_price_is_parsed_from_the_price_dimension():
    got = prices.aws_on_demand(_items(ec2_product("S", "0.5260000000")), "Hrs")
    assert got.usd == pytest.approx(0.526)
    assert got.quote == "$0.5260000000 per Hrs (S)"


def test_getproducts_two_different_prices_are_unknown_not_a_guess():
    got = prices.aws_on_demand(_items(ec2_product("A", "0.5"), ec2_product("B", "0.6")), "Hrs")
    assert got.usd is None
    assert "2 different" in got.reason


def test_getproducts_other_units_and_usage_types_are_skipped():
    items = _items(
        ec2_product("H", "0.045", usagetype="USE1-NatGateway-Hours"),
        ec2_product("B", "0.045", unit="GB", usagetype="USE1-NatGateway-Bytes"),
        ec2_product("X", "9.0", usagetype="USE1-Other-Hours"),
    )
    assert prices.aws_on_demand(items, "Hrs", "NatGateway-Hours").usd == pytest.approx(0.045)
    assert prices.aws_on_demand([], "Hrs").reason == "no on-demand USD per Hrs in the answer"


def test_public_ipv4_has_no_price_list_query_until_its_attributes_are_confirmed():
    assert "public-ipv4" not in prices.AWS_PLATFORM_QUERIES
    assert prices.AWS_PLATFORM_QUERIES["ebs-gp3"].attributes == {
        "productFamily": "Storage",
        "volumeApiName": "gp3",
    }


def test_billing_unit_price_is_units_plus_nanos():
    assert prices.gcp_unit_price(gcp_sku("x", "GPU", 2.93391, US)) == pytest.approx(2.93391)
    assert prices.gcp_unit_price({"pricingInfo": []}) is None


def test_gpu_sku_matches_on_demand_description_in_region_only():
    skus = [
        gcp_sku("Nvidia Tesla T4 GPU running in Americas", "GPU", 0.35, US),
        gcp_sku("Nvidia Tesla T4 GPU attached to Spot VMs", "GPU", 0.07, US, "Preemptible"),
        gcp_sku("Nvidia Tesla T4 GPU running in Belgium", "GPU", 0.41, ["europe-west1"]),
        gcp_sku("Commitment v1: Nvidia Tesla T4 GPU", "GPU", 0.22, US, "Commit1Yr"),
    ]
    assert prices.gcp_gpu_price(skus, "nvidia-tesla-t4", "us-central1").usd == 0.35
    assert prices.gcp_gpu_price(skus, "nvidia-l4", "us-central1").usd is None
    assert prices.gpu_description("nvidia-a100-80gb") == "A100 80GB GPU"


def test_vm_price_is_cores_times_vcpus_plus_ram_times_gib():
    skus = [
        gcp_sku("N1 Predefined Instance Core running in Americas", "N1Standard", 0.031611, US),
        gcp_sku(
            "N1 Predefined Instance Ram running in Americas",
            "N1Standard",
            0.004237,
            US,
            unit="GiBy.h",
        ),
        gcp_sku("Custom Instance Core running in Americas", "N1Standard", 0.033174, US),
    ]
    got = prices.gcp_vm_price(skus, "n1-highmem-8", 8, 52, "us-central1")
    assert got.usd == pytest.approx(0.473212)
    missing = prices.gcp_vm_price(skus[:1], "n1-highmem-8", 8, 52, "us-central1")
    assert missing.usd is None and "RAM" in missing.reason


def test_e2_standard_has_4_gb_per_vcpu():
    assert prices.e2_standard_shape("e2-standard-4") == (4, 16.0)
    assert prices.e2_standard_shape("e2-highmem-4") is None


@pytest.mark.parametrize(
    ("catalog", "source", "status"),
    [
        (0.526, 0.526, "match"),
        (0.47321, 0.473212, "match"),
        (1.0, 1.004, "match"),  # within 0.5%
        (1.0, 1.006, "differs"),
        (None, 0.5, "differs"),
        (0.5, None, "unknown"),
    ],
)
def test_match_tolerance_is_half_a_percent_and_unread_is_unknown(catalog, source, status):
    assert prices.compare(catalog, source) == status


def _check(item: str, region: str, usd: float | None, at: str = "", catalog: float = 0.1) -> Check:
    return Check(
        "aws", "platform_prices.csv", item, region, "per_hour", catalog, SourcePrice(usd), "API", at
    )


def test_exit_code_unknown_beats_differs_beats_match():
    assert prices.exit_code([_check("a", "r", 0.1)]) == 0
    assert prices.exit_code([_check("a", "r", 0.2)]) == 3
    assert prices.exit_code([_check("a", "r", 0.2), _check("b", "r", None)]) == 1


def test_star_row_is_written_only_when_every_region_agrees():
    agree = [_check("fee", "*", 0.1, "us-east-1"), _check("fee", "*", 0.1, "us-west-2")]
    assert len(prices.written(agree)) == 1
    split = [_check("fee", "*", 0.1, "us-east-1"), _check("fee", "*", 0.2, "us-west-2")]
    assert prices.written(split) == []
    assert prices.written([_check("nat", "us-east-1", None)]) == []


def test_platform_row_write_sets_price_source_date_and_quote_only_on_checked_rows():
    rows = [
        {"cloud": "aws", "item": "nat", "region": "r", "price_usd": "0.045", "as_of": "d0"},
        {"cloud": "aws", "item": "ip", "region": "*", "price_usd": "0.005", "as_of": "d0"},
    ]
    c = Check(
        "aws", "platform_prices.csv", "nat", "r", "per_hour", 0.045, SourcePrice(0.05, "q"), "API"
    )
    out, n = prices.update_platform_rows(rows, [c], "2026-12-01")
    assert n == 1
    assert out[0] | {} == {
        "cloud": "aws",
        "item": "nat",
        "region": "r",
        "price_usd": "0.05",
        "as_of": "2026-12-01",
        "source": "API",
        "quote": "q",
    }
    assert out[1] == rows[1]


def test_ledger_keeps_one_dated_reading_per_node_row():
    c = Check(
        "gcp",
        "gcp_vm_prices.csv",
        "e2-standard-4",
        "us-central1",
        "per_hour",
        0.13402,
        SourcePrice(0.134012, "quote"),
        "Billing",
    )
    first = prices.update_ledger([], [c], "2026-12-01")
    again = prices.update_ledger(first, [c], "2026-12-02")
    assert len(again) == 1
    assert (again[0]["as_of"], again[0]["price_usd"]) == ("2026-12-02", "0.134012")
