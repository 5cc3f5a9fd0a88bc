"""``--verify-prices``: the real boto3 ``pricing`` client and a plain HTTPS client against fakes of
the AWS Price List Query API and the Cloud Billing Catalog API."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from infra import catalog_refresh, price_verify
from infra.core.catalog import build, price_import, vendored
from infra.core.catalog.vendored import DATA_DIR, read_header, read_rows
from tests.fakes.aws import aws_error
from tests.fakes.pricing import FakeBillingCatalog, FakePriceList, ec2_product, gcp_sku

TODAY = "2026-12-01"
EC2 = {
    "operatingSystem": "Linux",
    "tenancy": "Shared",
    "preInstalledSw": "NA",
    "licenseModel": "No License required",
    "marketoption": "OnDemand",
}


def _instance(sku: str, itype: str, region: str, usd: str, **more: str) -> dict[str, object]:
    attrs = {**EC2, "instanceType": itype, "regionCode": region, "capacitystatus": "Used", **more}
    return ec2_product(sku, usd, **attrs)


def _aws_products() -> dict[str, list[dict[str, object]]]:
    return {
        "AmazonEC2": [
            _instance("A1", "g4dn.xlarge", "us-west-2", "0.5260000000"),
            # Same type and region, other capacity status / software: the query filters them out.
            _instance(
                "A2", "g4dn.xlarge", "us-west-2", "0.0", capacitystatus="UnusedCapacityReservation"
            ),
            _instance("A3", "g4dn.xlarge", "us-west-2", "0.6500000000", preInstalledSw="SQL Web"),
            # A Capacity Block twin: same type, region, OS, tenancy and software, listed at $0.
            _instance(
                "A4",
                "g4dn.xlarge",
                "us-west-2",
                "0.0000000000",
                marketoption="CapacityBlock",
                operation="RunInstances:CB",
            ),
            _instance(
                "A5", "g4dn.xlarge", "us-west-2", "0.7", licenseModel="Bring your own license"
            ),
            _instance("B1", "m6i.large", "us-east-1", "0.0960000000"),
            ec2_product(
                "N1",
                "0.045",
                family="NAT Gateway",
                regionCode="us-east-1",
                usagetype="NatGateway-Hours",
            ),
            ec2_product(
                "N2",
                "0.045",
                unit="GB",
                family="NAT Gateway",
                regionCode="us-east-1",
                usagetype="NatGateway-Bytes",
            ),
            ec2_product(
                "E1",
                "0.08",
                unit="GB-Mo",
                family="Storage",
                regionCode="us-east-1",
                volumeApiName="gp3",
                usagetype="EBS:VolumeUsage.gp3",
            ),
        ],
        "AmazonEKS": [
            ec2_product(
                "K1",
                "0.10",
                family="Compute",
                regionCode="us-east-1",
                usagetype="USE1-AmazonEKS-Hours:perCluster",
                servicecode="AmazonEKS",
            ),
            # The extended-support usage type is the surcharge alone, billed on top of perCluster.
            ec2_product(
                "K2",
                "0.50",
                family="Compute",
                regionCode="us-east-1",
                usagetype="USE1-AmazonEKS-Hours:extendedSupport",
                servicecode="AmazonEKS",
            ),
        ],
    }


def _gcp_skus() -> list[dict[str, object]]:
    us = ["us-central1", "us-east1"]
    core, ram = "N1 Predefined Instance Core", "N1 Predefined Instance Ram"
    return [
        gcp_sku(f"{core} running in Americas", "N1Standard", 0.031611, us),
        gcp_sku(f"{ram} running in Americas", "N1Standard", 0.004237, us, unit="GiBy.h"),
        gcp_sku(
            f"Spot Preemptible {core} running in Americas", "N1Standard", 0.0066, us, "Preemptible"
        ),
        gcp_sku("Nvidia Tesla T4 GPU running in Americas", "GPU", 0.35, us),
        gcp_sku(
            "Nvidia Tesla T4 GPU attached to Spot Preemptible VMs", "GPU", 0.07, us, "Preemptible"
        ),
        gcp_sku("E2 Instance Core running in Americas", "CPU", 0.021811, us),
        gcp_sku("E2 Instance Ram running in Americas", "RAM", 0.002923, us, unit="GiBy.h"),
        *_disk_skus("Iowa", ["us-central1"], (0.04, 0.10, 0.17, 0.08, 0.0428)),
        # A replicated disk's SKU shares the words after "Regional": never the zonal price.
        gcp_sku(
            "Regional Balanced PD Capacity in Iowa",
            "SSD",
            0.2,
            ["us-central1"],
            unit="GiBy.mo",
            family="Storage",
        ),
        *_disk_skus("Netherlands", ["europe-west4"], (0.044, 0.11, 0.187, 0.088, 0.0494)),
    ]


def _disk_skus(where: str, regions: list[str], usd: tuple[float, ...]) -> list[dict[str, object]]:
    """Storage SKUs of pd-standard, pd-balanced, pd-ssd, Local SSD and a Spot VM's Local SSD
    (per GiB-month; the last one's description starts like the on-demand one's)."""
    words = ("Storage PD Capacity", "Balanced PD Capacity", "SSD backed PD Capacity",
             "SSD backed Local Storage", "SSD backed Local Storage attached to Spot Preemptible VMs")  # fmt: skip
    usage = ("OnDemand",) * 4 + ("Preemptible",)
    return [
        gcp_sku(f"{w} in {where}", "SSD", p, regions, u, unit="GiBy.mo", family="Storage")
        for w, p, u in zip(words, usd, usage, strict=True)
    ]


# One server per module (stopping one waits out its poll interval); state is reset per test.
@pytest.fixture(scope="module")
def _pricelist_server() -> Iterator[FakePriceList]:
    fake = FakePriceList(page_size=1)  # every product on its own page: NextToken is followed
    fake.start()
    yield fake
    fake.stop()


@pytest.fixture(scope="module")
def _billing_server() -> Iterator[FakeBillingCatalog]:
    fake = FakeBillingCatalog(page_size=2)
    fake.start()
    yield fake
    fake.stop()


@pytest.fixture
def pricelist(_pricelist_server: FakePriceList, monkeypatch: pytest.MonkeyPatch) -> FakePriceList:
    fake = _pricelist_server
    fake.reset()
    fake.requests.clear()
    fake.products = _aws_products()
    monkeypatch.setenv("AWS_ENDPOINT_URL_PRICING", fake.url)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    return fake


@pytest.fixture
def billing(
    _billing_server: FakeBillingCatalog, monkeypatch: pytest.MonkeyPatch
) -> FakeBillingCatalog:
    fake = _billing_server
    fake.reset()
    fake.skus = _gcp_skus()
    monkeypatch.setenv("QUOTA_ENDPOINT_CLOUDBILLING", fake.url)
    return fake


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    for path in DATA_DIR.glob("*.csv"):
        shutil.copy(path, tmp_path / path.name)
    return tmp_path


AWS_TARGETS = price_verify.Targets(
    aws_instances={("g4dn.xlarge", "us-west-2"), ("m6i.large", "us-east-1")},
    aws_regions={"us-east-1"},
)
# What verifying AWS_TARGETS against the fake Price List reports (the * row: asked in us-east-1).
AWS_MATCHES = (
    "match    aws aws_gpu_instances.csv: g4dn.xlarge us-west-2 per_hour: catalog 0.526, source 0.526",
    "match    aws platform_prices.csv: nat-gateway us-east-1",
    "match    aws platform_prices.csv: ebs-gp3 us-east-1 per_gb_month",
    "eks-cluster-fee-extended * (asked for us-east-1)",
)
GCP_TARGETS = price_verify.Targets(
    gcp_machines={("n1-highmem-8", "us-central1"), ("e2-standard-4", "us-central1")},
    gcp_gpus={("nvidia-tesla-t4", 1, "us-central1")},
    gcp_regions={"us-central1"},
)
# What verifying GCP_TARGETS against the fake Cloud Billing catalog reports.
GCP_MATCHES = (
    "match    gcp gcp_vm_prices.csv: n1-highmem-8 us-central1 per_hour: catalog 0.47321, source 0.473212",
    "match    gcp gcp_vm_prices.csv: e2-standard-4 us-central1",
    "match    gcp gcp_accelerators.csv: nvidia-tesla-t4 x1 us-central1 per_hour: catalog 0.35, source 0.35",
    "match    gcp platform_prices.csv: disk-pd-balanced us-central1 per_gb_month: catalog 0.1, source 0.1",
)


def _run(data_dir: Path, cloud: str, targets: price_verify.Targets, write: bool = False) -> int:
    return price_verify.run([cloud], data_dir, TODAY, write, targets)


def test_aws_prices_matching_the_price_list_across_pages_exit_0(pricelist, data_dir, capsys):
    assert _run(data_dir, "aws", AWS_TARGETS) == 0
    out = capsys.readouterr().out
    assert [line for line in AWS_MATCHES if line not in out] == []
    # public-ipv4 has no confirmed Price List query: named as not verified, never as a match.
    assert "aws platform_prices.csv: public-ipv4 * (as of" in out.split("not verified")[1]
    assert pricelist.calls["GetProducts"] > len(pricelist.requests) - 1 >= 6  # pages followed


def test_aws_query_sends_the_documented_ec2_filters(pricelist, data_dir):
    _run(data_dir, "aws", AWS_TARGETS)
    first = next(r for r in pricelist.requests if r["ServiceCode"] == "AmazonEC2")
    fields = {f["Field"]: f["Value"] for f in first["Filters"]}
    assert fields == {
        "instanceType": "g4dn.xlarge",
        "regionCode": "us-west-2",
        "operatingSystem": "Linux",
        "tenancy": "Shared",
        "preInstalledSw": "NA",
        "capacitystatus": "Used",
        "licenseModel": "No License required",
        "marketoption": "OnDemand",
    }
    assert {f["Type"] for f in first["Filters"]} == {"TERM_MATCH"}


def test_ec2_query_leaves_out_capacity_block_and_byol_twins_so_one_price_remains(
    pricelist, data_dir, capsys
):
    # Without marketoption/licenseModel, A4 ($0) and A5 would join A1: three prices -> unknown.
    assert _run(data_dir, "aws", AWS_TARGETS) == 0
    assert "g4dn.xlarge us-west-2 per_hour: catalog 0.526, source 0.526" in capsys.readouterr().out


def test_aws_price_differing_beyond_tolerance_exits_3(pricelist, data_dir, capsys):
    pricelist.products["AmazonEC2"][0] = _instance("A1", "g4dn.xlarge", "us-west-2", "0.54")
    assert _run(data_dir, "aws", AWS_TARGETS) == 3
    assert (
        "differs  aws aws_gpu_instances.csv: g4dn.xlarge us-west-2 per_hour: catalog 0.526, source 0.54"
        in capsys.readouterr().out
    )


def test_aws_api_error_is_unknown_and_exits_1(pricelist, data_dir, capsys):
    pricelist.inject(
        "GetProducts",
        aws_error("AccessDeniedException", "not authorized to perform: pricing:GetProducts"),
    )
    assert _run(data_dir, "aws", AWS_TARGETS) == 1
    out = capsys.readouterr().out
    assert "\n  match" not in out
    assert "unknown  aws aws_gpu_instances.csv: g4dn.xlarge us-west-2" in out
    assert "pricing:GetProducts" in out


def test_aws_write_dates_each_verified_row_and_leaves_others(pricelist, data_dir, capsys):
    pricelist.products["AmazonEC2"][0] = _instance("A1", "g4dn.xlarge", "us-west-2", "0.5400000000")
    assert _run(data_dir, "aws", AWS_TARGETS, write=True) == 0
    out = capsys.readouterr().out
    g4 = [
        r
        for r in read_rows("aws_gpu_instances.csv", data_dir)
        if r["instance_type"] == "g4dn.xlarge"
    ]
    assert {r["price_per_hour"] for r in g4 if r["region"] == "us-west-2"} == {"0.54"}
    assert {r["price_per_hour"] for r in g4 if r["region"] == "us-east-1"} == {"0.526"}
    ledger = {
        (r["file"], r["item"], r["region"]): r for r in read_rows("price_checks.csv", data_dir)
    }
    row = ledger[("aws_gpu_instances.csv", "g4dn.xlarge", "us-west-2")]
    assert (row["price_usd"], row["as_of"]) == ("0.54", TODAY)
    assert "GetProducts AmazonEC2 instanceType=g4dn.xlarge" in row["source"]
    platform = {(r["item"], r["region"]): r for r in read_rows("platform_prices.csv", data_dir)}
    nat = platform[("nat-gateway", "us-east-1")]
    assert (nat["as_of"], nat["quote"]) == (TODAY, "$0.045 per Hrs (N1)")
    # Not asked (us-west-2 is not among the targets' regions) / not verifiable: untouched.
    assert platform[("nat-gateway", "us-west-2")]["as_of"] == "2026-11-26"
    assert platform[("public-ipv4", "*")]["quote"] == ""
    assert read_header("platform_prices.csv", data_dir) == read_header(
        "platform_prices.csv", DATA_DIR
    )
    assert "wrote" in out


def test_eks_extended_fee_is_per_cluster_plus_extended_support_surcharge(
    pricelist, data_dir, capsys
):
    assert _run(data_dir, "aws", AWS_TARGETS) == 0
    out = capsys.readouterr().out
    assert (
        "match    aws platform_prices.csv: eks-cluster-fee-extended * (asked for us-east-1) "
        "per_hour: catalog 0.6, source 0.6" in out
    )


def test_eks_extended_fee_write_keeps_the_total_not_the_surcharge(pricelist, data_dir, capsys):
    targets = price_verify.Targets(aws_regions={"us-east-1", "us-west-2"})
    for p in list(pricelist.products["AmazonEKS"]):
        attrs = {**p["product"]["attributes"], "regionCode": "us-west-2"}  # type: ignore[index]
        attrs["usagetype"] = attrs["usagetype"].replace("USE1-", "USW2-")
        usd = "0.10" if attrs["usagetype"].endswith("perCluster") else "0.50"
        pricelist.products["AmazonEKS"].append(
            ec2_product(p["product"]["sku"] + "w", usd, family="Compute", **attrs)  # type: ignore[index]
        )
    assert _run(data_dir, "aws", targets, write=True) == 1  # us-west-2 NAT/EBS not served
    assert "match    aws platform_prices.csv: eks-cluster-fee-extended * (asked for us-west-2)" in (
        capsys.readouterr().out
    )
    platform = {(r["item"], r["region"]): r for r in read_rows("platform_prices.csv", data_dir)}
    ext = platform[("eks-cluster-fee-extended", "*")]
    assert (ext["price_usd"], ext["as_of"]) == ("0.6", TODAY)
    assert "perCluster" in ext["quote"] and "extendedSupport" in ext["quote"]
    # A * row read in two regions says so in its source.
    assert ext["source"].endswith("(same price in us-east-1, us-west-2)")
    assert platform[("eks-cluster-fee", "*")]["price_usd"] == "0.1"


def test_eks_extended_fee_is_unknown_when_the_surcharge_is_not_read(pricelist, data_dir, capsys):
    pricelist.products["AmazonEKS"] = pricelist.products["AmazonEKS"][:1]
    assert _run(data_dir, "aws", AWS_TARGETS, write=True) == 1
    out = capsys.readouterr().out
    assert "unknown  aws platform_prices.csv: eks-cluster-fee-extended" in out
    assert "AmazonEKS-Hours:extendedSupport: no on-demand USD per Hrs" in out
    platform = {(r["item"], r["region"]): r for r in read_rows("platform_prices.csv", data_dir)}
    assert platform[("eks-cluster-fee-extended", "*")]["price_usd"] == "0.60"


def test_gcp_prices_from_paged_skus_match_exit_0(billing, data_dir, capsys):
    assert _run(data_dir, "gcp", GCP_TARGETS) == 0
    out = capsys.readouterr().out
    assert [line for line in GCP_MATCHES if line not in out] == []
    assert billing.calls["skus.list"] == 9  # 18 SKUs, 2 a page


def test_gcp_write_adds_disk_rows_for_a_gpu_region_the_file_lacks(billing, data_dir, capsys):
    targets = price_verify.Targets(
        gcp_regions={"us-central1"}, gcp_gpu_regions={"us-central1", "europe-west4"}
    )
    assert _run(data_dir, "gcp", targets, write=True) == 0
    platform = {(r["item"], r["region"]): r for r in read_rows("platform_prices.csv", data_dir)}
    row = platform[("disk-pd-balanced", "europe-west4")]
    assert (row["price_usd"], row["unit"], row["as_of"]) == ("0.11", "per_gb_month", TODAY)
    assert row["quote"] == "Balanced PD Capacity in Netherlands"
    assert platform[("local-ssd", "europe-west4")]["price_usd"] == "0.088"
    # The Spot VM's Local SSD: its own Preemptible SKU, never the on-demand one's price.
    spot = platform[("local-ssd-spot", "europe-west4")]
    assert (spot["price_usd"], spot["quote"]) == (
        "0.0494",
        "SSD backed Local Storage attached to Spot Preemptible VMs in Netherlands",
    )
    # Written like every row: a source URL (the rule test_platform_cost checks on the file).
    assert all(r["source"].startswith("https://") for r in platform.values())


def test_gcp_write_removes_the_regions_it_priced_from_the_unpriced_list(billing, data_dir, capsys):
    # europe-west4 without its disk rows, listed as unpriced: the reading adds them and the list
    # keeps only what is still unpriced.
    rows = [r for r in read_rows("platform_prices.csv", data_dir) if r["region"] != "europe-west4"]
    header = read_header("platform_prices.csv", data_dir)
    (data_dir / "platform_prices.csv").write_text(
        build.render(header, price_import.COLUMNS, rows), encoding="utf-8"
    )
    listed = [
        {"cloud": "gcp", "item": i, "region": "europe-west4", "reason": "r", "source": "s",
         "as_of": "2026-01-01"}
        for i in ("disk-pd-balanced", "local-ssd")
    ] + [{"cloud": "aws", "item": "nat-gateway", "region": "me-central-1", "reason": "r",
          "source": "s", "as_of": "2026-01-01"}]  # fmt: skip
    (data_dir / price_import.UNPRICED).write_text(
        build.render(["source: test"], price_import.UNPRICED_COLUMNS, listed), encoding="utf-8"
    )
    vendored.forget()
    targets = price_verify.Targets(
        gcp_regions={"us-central1"}, gcp_gpu_regions={"us-central1", "europe-west4"}
    )
    assert _run(data_dir, "gcp", targets, write=True) == 0
    left = [(u["item"], u["region"]) for u in read_rows(price_import.UNPRICED, data_dir)]
    assert left == [("nat-gateway", "me-central-1")]
    assert "removed 2 priced entries from platform_unpriced.csv" in capsys.readouterr().out


def test_gcp_ram_priced_per_hour_not_gib_hour_is_unknown(billing, data_dir, capsys):
    # RAM is priced per GiB-hour (usageUnit GiBy.h); a price in another unit is no RAM price.
    billing.skus[6] = gcp_sku(
        "E2 Instance Ram running in Americas", "RAM", 0.002923, ["us-central1"]
    )
    assert _run(data_dir, "gcp", GCP_TARGETS) == 1
    out = capsys.readouterr().out
    assert "unknown  gcp gcp_vm_prices.csv: e2-standard-4 us-central1" in out
    assert "no on-demand E2 Instance RAM SKU prices" in out


def test_gcp_gpu_priced_in_another_unit_than_hours_is_unknown(billing, data_dir, capsys):
    billing.skus[3] = gcp_sku(
        "Nvidia Tesla T4 GPU running in Americas", "GPU", 0.35, ["us-central1"], unit="mo"
    )
    assert _run(data_dir, "gcp", GCP_TARGETS) == 1
    assert "unknown  gcp gcp_accelerators.csv: nvidia-tesla-t4 x1" in capsys.readouterr().out


def test_gcp_gpu_price_differing_exits_3_and_write_records_it(billing, data_dir, capsys):
    billing.skus[3] = gcp_sku(
        "Nvidia Tesla T4 GPU running in Americas", "GPU", 0.40, ["us-central1"]
    )
    assert _run(data_dir, "gcp", GCP_TARGETS) == 3
    assert (
        "differs  gcp gcp_accelerators.csv: nvidia-tesla-t4 x1 us-central1"
        in capsys.readouterr().out
    )
    assert _run(data_dir, "gcp", GCP_TARGETS, write=True) == 0
    t4 = [
        r
        for r in read_rows("gcp_accelerators.csv", data_dir)
        if (r["accelerator"], r["count"], r["region"]) == ("nvidia-tesla-t4", "1", "us-central1")
    ]
    assert t4 and {r["price_per_hour"] for r in t4} == {"0.4"}
    ledger = [
        r for r in read_rows("price_checks.csv", data_dir) if r["item"] == "nvidia-tesla-t4 x1"
    ]
    assert (
        ledger[0]["as_of"] == TODAY
        and "Nvidia Tesla T4 GPU running in Americas" in ledger[0]["quote"]
    )


def test_gcp_unreadable_catalog_is_unknown_and_exits_1(billing, data_dir, capsys):
    billing.inject(
        "skus.list",
        (403, {"error": {"code": 403, "message": "Cloud Billing API has not been used"}}, {}),
    )
    assert _run(data_dir, "gcp", GCP_TARGETS, write=True) == 1
    out = capsys.readouterr().out
    assert "unknown  gcp gcp_accelerators.csv: nvidia-tesla-t4 x1 us-central1" in out
    assert "HTTP 403" in out
    assert "left untouched: 8 rows" in out  # 3 node prices, 5 disk prices
    assert list(read_rows("price_checks.csv", data_dir)) == []


def test_cli_verify_prices_exit_code_and_write_needs_verify(
    pricelist, data_dir, monkeypatch, capsys
):
    monkeypatch.setattr(price_verify, "stack_targets", lambda: AWS_TARGETS)
    code = catalog_refresh.main(["--verify-prices", "--cloud", "aws", "--data-dir", str(data_dir)])
    assert code == 0
    with pytest.raises(SystemExit) as e:
        catalog_refresh.main(["--write", "--data-dir", str(data_dir)])
    assert e.value.code == 2
    assert "--write is for --verify-prices" in capsys.readouterr().err
