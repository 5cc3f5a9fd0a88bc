"""The vendored catalog: provenance on every file, shapes that match the cloud's facts."""

from __future__ import annotations

import pytest

from infra.core.catalog.vendored import DATA_DIR, read_header


@pytest.mark.parametrize("name", sorted(p.name for p in DATA_DIR.glob("*.csv")))
def test_every_catalog_file_names_its_source_and_date(name):
    header = " ".join(read_header(name, DATA_DIR)).lower()
    assert "source" in header, name
    assert "2026" in header or "fetched" in header or "read" in header, name


def test_seed_t4_zones_of_us_central1(catalog):
    assert catalog.gcp_zones_offering("nvidia-tesla-t4", "us-central1", 1) == [
        "us-central1-a",
        "us-central1-b",
        "us-central1-c",
        "us-central1-f",
    ]


def test_n1_shapes_follow_the_series_formula(catalog):
    m = catalog.gcp_machine("n1-highmem-8")
    assert (m.vcpus, m.memory_gib, m.accelerator, m.zones) == (8, 52.0, None, None)


def test_bundled_machine_types_carry_their_gpu(catalog):
    m = catalog.gcp_machine("g2-standard-24")
    assert (m.accelerator, m.accelerator_count, m.vcpus) == ("nvidia-l4", 2, 24)


def test_t4_attaches_to_n1_in_counts_1_2_4(catalog):
    assert sorted(catalog.gcp_attach_limits("nvidia-tesla-t4")) == [1, 2, 4]
    assert catalog.gcp_attach_limits("nvidia-l4") == {}


def test_mig_profiles_only_on_mig_capable_gpus(catalog):
    assert catalog.gcp_model("nvidia-tesla-t4").mig_profiles == ()
    assert "1g.5gb" in catalog.gcp_model("nvidia-tesla-a100").mig_profiles


def test_g4dn_xlarge_is_one_t4_with_four_vcpus_in_us_west_2(catalog):
    t = catalog.aws_instance("g4dn.xlarge")
    assert (t.gpu_model, t.gpus, t.vcpus) == ("T4", 1, 4)
    assert t.az_ids["us-west-2"] >= {"usw2-az1", "usw2-az2"}


def test_catalog_reads_a_clouds_tables_only_when_asked_about_that_cloud():
    from infra.core.catalog.vendored import Catalog

    cat = Catalog()
    assert cat.gcp_machine("g2-standard-4") is not None
    assert "_aws" not in vars(cat)  # a GKE plan never reads the AWS rows
    assert cat.aws_instance("g4dn.xlarge") is not None
    assert "_aws" in vars(cat) and "_acc" in vars(cat)


def test_user_shapes_copy_of_an_unread_catalog_leaves_the_original_unchanged():
    from infra.core.catalog.vendored import Catalog, UserShape

    cat = Catalog()  # nothing read yet: the copy must not share tables it then edits
    gke = UserShape("gcp", "x9-gpu-1", "nvidia-x9", 1, 8, 32.0, "us-central1", ("us-central1-a",))
    eks = UserShape("aws", "zz9.xlarge", "X9", 1, 4, 16.0, "us-west-2", ("usw2-az1",))
    new = cat.with_user_shapes([gke, eks])
    assert new.gcp_machine("x9-gpu-1") is not None and new.aws_instance("zz9.xlarge") is not None
    assert cat.gcp_machine("x9-gpu-1") is None and cat.aws_instance("zz9.xlarge") is None
    assert cat.gcp_zones_offering("nvidia-x9", "us-central1") == []


def test_a_user_declared_aws_type_has_an_unknown_price_never_zero():
    from infra.core.catalog.vendored import Catalog, UserShape

    eks = UserShape("aws", "zz9.xlarge", "X9", 1, 4, 16.0, "us-west-2", ("usw2-az1",))
    inst = Catalog().with_user_shapes([eks]).aws_instance("zz9.xlarge")
    assert inst is not None and inst.price_per_hour is None
