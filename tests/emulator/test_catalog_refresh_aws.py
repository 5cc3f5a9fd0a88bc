"""``catalog_refresh --cloud aws``: real boto3 EC2 clients against moto's server.

moto answers DescribeInstanceTypes and DescribeInstanceTypeOfferings (by AZ ID) from its bundled
copy of AWS's data, so the refresh is exercised end to end on real responses.
"""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pytest

from infra import catalog_refresh
from infra.core.catalog.vendored import DATA_DIR, Catalog, prices_as_of, read_header, read_rows
from tests.emulator.quota_cli import aws_test_credentials

pytestmark = pytest.mark.emulator

# The file before the refresh: two priced us-west-2 rows and a region the refresh leaves alone.
PREVIOUS = """# previous
# prices as of: 2026-11-26 (skypilot-org/skypilot-catalog catalogs/v7/aws/vms.csv @ abc123)
instance_type,gpu_model,gpus,vcpus,memory_gib,region,availability_zone,price_per_hour,spot_price_per_hour
g4dn.xlarge,T4,1,4,16,us-west-2,usw2-az1,0.526,0.2
g5.xlarge,A10G,1,4,16,us-west-2,usw2-az2,1.006,0.4
g4dn.xlarge,T4,1,4,16,eu-west-1,euw1-az1,0.587,0.25
"""
REGIONS = ["us-west-2"]  # one region: moto builds a backend per region (seconds each)


@pytest.fixture(scope="module")
def refreshed(moto_url: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    data = tmp_path_factory.mktemp("data")
    for f in DATA_DIR.glob("*.csv"):
        shutil.copy(f, data / f.name)
    (data / "aws_gpu_instances.csv").write_text(PREVIOUS, encoding="utf-8")
    mp = pytest.MonkeyPatch()
    aws_test_credentials(mp, EC2=moto_url)
    try:
        _, _, added = catalog_refresh.refresh_aws(REGIONS, data, dt.date(2026, 12, 1))
    finally:
        mp.undo()
    return data, added


def test_refresh_lists_every_current_nvidia_type_from_describe_instance_types(refreshed):
    data, _ = refreshed
    cat = Catalog(data)
    for t in ("p5en.48xlarge", "p6-b200.48xlarge", "p5e.48xlarge", "g6e.xlarge", "g7e.2xlarge"):
        assert cat.aws_instance(t) is not None, t
    p6 = cat.aws_instance("p6-b200.48xlarge")
    assert p6 is not None
    assert (p6.gpu_model, p6.gpus, p6.vcpus, p6.memory_gib) == ("B200", 8, 192, 2048)
    assert p6.efa_interfaces == 8 and p6.local_storage_gb > 0


def test_offerings_are_by_az_id_per_region(refreshed):
    data, _ = refreshed
    p5en = Catalog(data).aws_instance("p5en.48xlarge")
    assert p5en is not None
    assert p5en.az_ids["us-west-2"] == frozenset({"usw2-az2", "usw2-az3", "usw2-az4"})
    assert "usw2-az1" not in p5en.az_ids["us-west-2"]


def test_fractional_gpus_are_one_logical_gpu_with_their_share(refreshed):
    data, _ = refreshed
    g6f = Catalog(data).aws_instance("g6f.large")
    assert g6f is not None and g6f.gpus == 1 and g6f.gpu_fraction == 0.125


def test_non_nvidia_types_are_left_out(refreshed):
    data, _ = refreshed
    names = {r["instance_type"] for r in read_rows("aws_gpu_instances.csv", data)}
    assert not any(n.split(".")[0] in ("m5", "c5", "inf2", "trn1", "g4ad") for n in names)


def test_prices_are_kept_from_the_previous_file_and_new_types_are_unknown(refreshed):
    data, _ = refreshed
    rows = {
        (r["instance_type"], r["region"], r["availability_zone"]): r
        for r in read_rows("aws_gpu_instances.csv", data)
    }
    assert rows[("g4dn.xlarge", "us-west-2", "usw2-az1")]["price_per_hour"] == "0.526"
    # Same type and region, another AZ: the region's price is carried over.
    assert rows[("g4dn.xlarge", "us-west-2", "usw2-az2")]["spot_price_per_hour"] == "0.2"
    # A type the previous file never priced stays unknown, never a guess.
    assert rows[("p5en.48xlarge", "us-west-2", "usw2-az2")]["price_per_hour"] == ""
    assert Catalog(data).aws_instance("p5en.48xlarge").price_per_hour is None  # type: ignore[union-attr]


def test_regions_not_refreshed_keep_their_rows(refreshed):
    data, _ = refreshed
    kept = [r for r in read_rows("aws_gpu_instances.csv", data) if r["region"] == "eu-west-1"]
    assert [(r["instance_type"], r["availability_zone"], r["price_per_hour"]) for r in kept] == [
        ("g4dn.xlarge", "euw1-az1", "0.587")
    ]


def test_families_take_architecture_from_the_api_and_keep_reviewed_facts(refreshed):
    data, added = refreshed
    fams = {r["family"]: r for r in read_rows("aws_gpu_families.csv", data)}
    assert fams["g5g"]["architecture"] == "arm64" and fams["g3s"]["eks_nvidia_ami"] == "no"
    assert added == []  # every NVIDIA family in the API is reviewed in the file
    header = " ".join(read_header("aws_gpu_instances.csv", data))
    assert "DescribeInstanceTypeOfferings" in header and "fetched: 2026-12-01" in header


def test_the_header_names_the_emulator_it_was_generated_against(refreshed):
    data, _ = refreshed
    header = read_header("aws_gpu_instances.csv", data)
    assert any(h.startswith("generated 2026-12-01 against moto ") for h in header)


def test_the_previous_prices_line_is_carried_over_with_its_source(refreshed):
    data, _ = refreshed
    header = read_header("aws_gpu_instances.csv", data)
    assert (
        "prices as of: 2026-11-26 (skypilot-org/skypilot-catalog catalogs/v7/aws/vms.csv @ abc123)"
        in header
    )
    assert prices_as_of(header) == "2026-11-26"


def test_no_endpoint_override_means_no_emulator_line(monkeypatch):
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.delenv("AWS_ENDPOINT_URL_EC2", raising=False)
    assert catalog_refresh._generated_against(dt.date(2026, 12, 1)) == []


def test_an_unreachable_endpoint_exits_1_in_one_line(monkeypatch, capsys, tmp_path):
    for k, v in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_ENDPOINT_URL_EC2": "http://127.0.0.1:9",
        "AWS_MAX_ATTEMPTS": "1",
    }.items():
        monkeypatch.setenv(k, v)
    code = catalog_refresh.main(
        ["--cloud", "aws", "--regions", "us-west-2", "--data-dir", str(tmp_path)]
    )
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and err.startswith("catalog refresh failed")


def test_regions_with_gcp_is_a_usage_error():
    with pytest.raises(SystemExit) as e:
        catalog_refresh.main(["--project", "p", "--regions", "us-central1"])
    assert e.value.code == 2
