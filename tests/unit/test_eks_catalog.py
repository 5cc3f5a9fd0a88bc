"""Cross-check the vendored AWS catalog against moto's bundled copy of AWS EC2 data.

moto ships AWS ``DescribeInstanceTypeOfferings`` results per region keyed by AZ ID
(``moto/ec2/resources/instance_type_offerings/availability-zone-id/<region>.json.gz``) and
``DescribeInstanceTypes`` (``instance_types.json.gz``): an independent snapshot of the same facts.
"""

from __future__ import annotations

import functools
import gzip
import json
from pathlib import Path

import moto
import pytest

from infra.core.catalog.vendored import AwsInstance, Catalog
from infra.core.eks.placement import offered_az_ids

MOTO_EC2 = Path(moto.__file__).parent / "ec2" / "resources"


def aws(catalog: Catalog, name: str) -> AwsInstance:
    inst = catalog.aws_instance(name)
    assert inst is not None, name
    return inst


@functools.cache
def moto_offerings(region: str) -> dict[str, set[str]]:
    """instance type -> AZ IDs offering it in ``region``, per moto."""
    path = MOTO_EC2 / "instance_type_offerings" / "availability-zone-id" / f"{region}.json.gz"
    out: dict[str, set[str]] = {}
    with gzip.open(path) as f:
        for o in json.load(f):
            out.setdefault(o["InstanceType"], set()).add(o["Location"])
    return out


@functools.cache
def moto_instance_types() -> dict[str, dict]:
    with gzip.open(MOTO_EC2 / "instance_types.json.gz") as f:
        return json.load(f)


def catalog_rows(catalog: Catalog) -> list[tuple[str, str, frozenset[str]]]:
    return [
        (t, region, azs)
        for t in catalog.aws_instances()
        for region, azs in aws(catalog, t).az_ids.items()
    ]


def test_moto_ships_offerings_by_az_id_for_every_catalog_region(catalog: Catalog):
    regions = {region for _, region, _ in catalog_rows(catalog)}
    assert regions, "the catalog has AWS rows"
    missing = [
        r
        for r in regions
        if not (
            MOTO_EC2 / "instance_type_offerings" / "availability-zone-id" / f"{r}.json.gz"
        ).exists()
    ]
    assert missing == []


def test_catalog_never_claims_an_az_that_aws_does_not_offer(catalog: Catalog):
    """The direction that matters: a subnet in a non-offering AZ fails the whole node group."""
    wrong = []
    for t, region, azs in catalog_rows(catalog):
        offered = moto_offerings(region).get(t, set())
        if not azs <= offered:
            wrong.append(f"{t} {region}: {sorted(azs - offered)} not offered per moto")
    assert wrong == []


def test_every_catalog_type_is_in_moto_the_catalog_was_generated_from(catalog: Catalog):
    # infra.catalog_refresh --cloud aws ran against moto's server; p3 (V100, no longer listed by
    # DescribeInstanceTypes) dropped out then.
    known = set(moto_instance_types())
    assert {t for t in catalog.aws_instances() if t not in known} == set()


@pytest.mark.parametrize(
    ("instance_type", "region", "missing"),
    [
        ("g4dn.xlarge", "us-west-2", {"usw2-az4"}),  # eksctl-io/eksctl#6461
        ("g4dn.xlarge", "us-east-1", {"use1-az3"}),
        ("g5.xlarge", "us-west-2", {"usw2-az4"}),
    ],
)
def test_seed_types_match_moto_exactly_including_the_az_they_lack(
    catalog: Catalog, instance_type, region, missing
):
    ours = aws(catalog, instance_type).az_ids[region]
    theirs = moto_offerings(region)[instance_type]
    assert ours == theirs
    all_azs = set().union(*moto_offerings(region).values())
    assert all_azs - theirs == missing


def test_planned_group_azs_are_offered_per_moto(catalog: Catalog):
    inst = aws(catalog, "g4dn.xlarge")
    planned = offered_az_ids([inst], "us-west-2")
    assert planned <= moto_offerings("us-west-2")["g4dn.xlarge"]


def test_family_architecture_matches_moto_instance_types(catalog: Catalog):
    types = moto_instance_types()
    checked = 0
    for name in catalog.aws_families():
        fam = catalog.aws_family(name)
        assert fam is not None
        archs = {
            a
            for name, it in types.items()
            if name.split(".", 1)[0] == fam.family
            for a in it["ProcessorInfo"]["SupportedArchitectures"]
        }
        if archs:  # families kept by hand without a listed type (e.g. g3, g3s, p2) are not in moto
            assert archs == {fam.architecture}, fam.family
            checked += 1
    assert checked >= 8


def test_catalog_gpu_shapes_match_moto(catalog: Catalog):
    types = moto_instance_types()
    for t in catalog.aws_instances():
        it = types[t]
        inst = aws(catalog, t)
        assert it["VCpuInfo"]["DefaultVCpus"] == inst.vcpus, t
        # Fractional types (g6f) report Count 0 and one logical GPU.
        assert sum(g["Count"] or g.get("LogicalGpuCount", 0) for g in it["GpuInfo"]["Gpus"]) == (
            inst.gpus
        ), t
        assert it["GpuInfo"]["Gpus"][0]["Manufacturer"] == "NVIDIA", t
