"""Stack config parsing: strict keys, all problems at once, one region per stack."""

from __future__ import annotations

import pytest

from infra.core.config.location import gcp_region_of
from infra.core.config.stack import (
    decode_engine_config,
    encode_engine_config,
    parse,
    parse_file,
)
from infra.core.errors import ConfigErrors
from tests.conftest import gke_config


def paths(excinfo: pytest.ExceptionInfo[ConfigErrors]) -> list[str]:
    return [i.path for i in excinfo.value.issues]


def test_sample_gke_t4_parses_with_region_from_location():
    cfg = parse_file("stacks/Pulumi.gke-t4.yaml")
    assert (cfg.platform, cfg.region, cfg.zone, cfg.project) == (
        "gke",
        "us-central1",
        None,
        "demo-project",
    )
    assert cfg.pools[0].zones == [
        "us-central1-a",
        "us-central1-b",
        "us-central1-c",
        "us-central1-f",
    ]


@pytest.mark.parametrize(
    ("location", "expected"),
    [
        ("us-central1", ("us-central1", None)),
        ("us-central1-f", ("us-central1", "us-central1-f")),
        ("europe-west4-a", ("europe-west4", "europe-west4-a")),
        ("northamerica-northeast2-b", ("northamerica-northeast2", "northamerica-northeast2-b")),
        ("central", None),
    ],
)
def test_zone_turns_into_its_region(location, expected):
    assert gcp_region_of(location) == expected


def test_zonal_cluster_location_gives_region_and_zone():
    cfg = parse(gke_config(cluster={"name": "ml", "location": "us-central1-c"}), "s")
    assert (cfg.region, cfg.zone) == ("us-central1", "us-central1-c")


def test_every_problem_is_reported_at_once_with_its_key_path():
    raw = gke_config(
        {"maxNodes": "20", "zone": ["us-central1-a"], "gpu": {"type": "x", "driver": "fast"}},
        cluster={"name": "ml", "location": "us-central1", "bogus": True},
        gpuPool=[],
    )
    with pytest.raises(ConfigErrors) as e:
        parse(raw, "s")
    assert set(paths(e)) == {
        "gpuPool",
        "cluster.bogus",
        "gpuPools[0].maxNodes",
        "gpuPools[0].zone",
        "gpuPools[0].gpu.driver",
    }


def test_unknown_key_names_the_allowed_keys():
    with pytest.raises(ConfigErrors) as e:
        parse(gke_config({"zone": ["us-central1-a"]}), "s")
    assert "allowed: name, machineType" in str(e.value)
    assert "zones" in str(e.value)


def test_enum_error_lists_allowed_values_and_the_value():
    with pytest.raises(ConfigErrors) as e:
        parse(gke_config({"gpu": {"type": "nvidia-tesla-t4", "driver": "latest"}}), "s")
    (issue,) = e.value.issues
    assert issue.path == "gpuPools[0].gpu.driver"
    assert "'latest'" in issue.reason and "'gke-default'" in issue.reason


def test_strings_are_not_coerced_to_numbers_or_booleans():
    with pytest.raises(ConfigErrors) as e:
        parse(gke_config({"spot": "yes", "minNodes": "0"}), "s")
    assert set(paths(e)) == {"gpuPools[0].spot", "gpuPools[0].minNodes"}


def test_gcp_region_disagreeing_with_location_is_an_error():
    with pytest.raises(ConfigErrors) as e:
        parse(gke_config(**{"gcp:region": "us-east1"}), "s")
    assert paths(e) == ["gcp:region"]
    assert "us-east1" in str(e.value) and "us-central1" in str(e.value)


def test_gcp_region_may_be_omitted_and_comes_from_location():
    cfg = parse(gke_config(**{"gcp:region": None}), "s")
    assert cfg.region == "us-central1"


def test_eks_stack_requires_matching_aws_region():
    raw = {
        "aws:region": "us-east-1",
        "gpu-infra:platform": "eks",
        "gpu-infra:cluster": {"name": "ml", "location": "us-west-2"},
    }
    with pytest.raises(ConfigErrors) as e:
        parse(raw, "s")
    assert "aws:region" in paths(e)


def test_unnamespaced_key_is_rejected():
    with pytest.raises(ConfigErrors) as e:
        parse({**gke_config(), "platform": "gke"}, "s")
    assert "platform" in paths(e)


def test_duplicate_pool_names_are_rejected():
    raw = gke_config()
    raw["gpu-infra:gpuPools"] = raw["gpu-infra:gpuPools"] * 2
    with pytest.raises(ConfigErrors) as e:
        parse(raw, "s")
    assert paths(e) == ["gpuPools[1].name"]


def test_engine_config_round_trips_structured_values():
    raw = gke_config()
    assert decode_engine_config(encode_engine_config(raw)) == raw


def test_other_provider_keys_pass_through_untouched():
    cfg = parse(gke_config(**{"gcp:impersonateServiceAccount": "x@y"}), "s")
    assert cfg.provider_config["gcp:impersonateServiceAccount"] == "x@y"


def test_mig_layout_must_be_chosen_not_assumed():
    with pytest.raises(ConfigErrors) as e:
        parse(gke_config({"mig": {"strategy": "single"}}), "s")
    assert paths(e) == ["gpuPools[0].mig.config"]


def test_region_zone_and_dns_label_rules_refuse_a_trailing_newline():
    from infra.core.config import location
    from infra.core.rules import check_pool_name

    assert location.gcp_region_of("us-central1\n") is None
    assert location._AWS_REGION.fullmatch("us-west-2\n") is None
    with pytest.raises(ValueError):
        check_pool_name("ml\n")


def test_onprem_pool_labels_take_node_role_labels_applied_by_node_patch_not_kubelet():
    from infra.core.config.stack import parse

    raw = {
        "gpu-infra:platform": "kubernetes",
        "gpu-infra:cluster": {"name": "onprem", "location": "dc1", "existing": True},
        "gpu-infra:gpuPools": [
            {
                "name": "gpu",
                "machineType": "vm",
                "gpu": {"model": "V100", "count": 1},
                "nodeSelector": {"gpu-infra/pool": "gpu"},
                "vcpus": 16,
                "memoryGib": 64,
                "maxNodes": 2,
                "labels": {"node-role.kubernetes.io/gpu": ""},
            }
        ],
    }
    assert parse(raw, "x").pools[0].labels == {"node-role.kubernetes.io/gpu": ""}
