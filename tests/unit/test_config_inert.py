"""Keys that would not apply with the other keys as given, and snake_case spellings, are refused."""

from __future__ import annotations

import json
from typing import Any

import pytest

from infra.core.config.stack import parse
from infra.core.errors import ConfigErrors
from tests.conftest import gke_config

GKE = gke_config()
EKS: dict[str, Any] = {
    "aws:region": "us-west-2",
    "gpu-infra:platform": "eks",
    "gpu-infra:cluster": {
        "name": "shared",
        "location": "us-west-2",
        "existing": True,
        "vpc": {"privateSubnets": {"usw2-az1": "subnet-0a1b2c3d4e5f60001"}},
    },
    "gpu-infra:gpuPools": [{"name": "gpu", "machineType": "g4dn.xlarge", "maxNodes": 2}],
}


def _lines(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigErrors) as e:
        parse(raw, "t")
    return str(e.value).splitlines()


def _with(base: dict[str, Any], key: str, **extra: Any) -> dict[str, Any]:
    return {**base, f"gpu-infra:{key}": {**base.get(f"gpu-infra:{key}", {}), **extra}}


@pytest.mark.parametrize(
    ("raw", "path", "other"),
    [
        (
            _with(GKE, "gpuOperator", enabled=False, values={"nfd": {"enabled": False}}),
            "gpuOperator.values",
            "gpuOperator.enabled is false",
        ),
        (
            _with(GKE, "gpuOperator", enabled=False, timeout=600),
            "gpuOperator.timeout",
            "gpuOperator.enabled is false",
        ),
        (
            _with(GKE, "cluster", existing=True, systemPool={"machineType": "e2-standard-4"}),
            "cluster.systemPool",
            "cluster.existing is true",
        ),
        (
            _with(EKS, "cluster", systemPool={"machineType": "m6i.large"}),
            "cluster.systemPool",
            "cluster.existing is true",
        ),
        (
            _with(EKS, "cluster", publicAccessCidrs=["203.0.113.0/24"]),
            "cluster.publicAccessCidrs",
            "cluster.existing is true",
        ),
        (
            _with(EKS, "cluster", autoscaler={"enabled": False, "scaleDownUnneededTime": "5m"}),
            "cluster.autoscaler.scaleDownUnneededTime",
            "cluster.autoscaler.enabled is false",
        ),
    ],
)
def test_key_that_would_not_apply_is_an_error_naming_both_keys(raw, path, other):
    assert any(ln.startswith(f"{path}: would not apply: {other}") for ln in _lines(raw))


def test_vpc_cidr_next_to_a_given_vpc_id_is_an_error_naming_both_keys():
    vpc = {**EKS["gpu-infra:cluster"]["vpc"], "id": "vpc-0a1b2c3d", "cidr": "10.1.0.0/16"}
    raw = _with(EKS, "cluster", vpc=vpc)
    assert any(
        ln.startswith("cluster.vpc.cidr: would not apply: cluster.vpc.id is given")
        for ln in _lines(raw)
    )


def test_the_same_keys_apply_when_their_condition_does_not_hold():
    parse(_with(GKE, "gpuOperator", enabled=True, values={"nfd": {"enabled": False}}), "t")
    parse(_with(GKE, "cluster", systemPool={"machineType": "e2-standard-4"}), "t")


@pytest.mark.parametrize(
    ("key", "meant"), [("max_nodes", "maxNodes"), ("machine_type", "machineType")]
)
def test_snake_case_key_is_unknown_with_did_you_mean_and_no_required_line(key, meant):
    pool = dict(GKE["gpu-infra:gpuPools"][0])
    pool[key] = pool.pop(meant)
    lines = _lines({**GKE, "gpu-infra:gpuPools": [pool]})
    assert lines == [
        next(ln for ln in lines if ln.startswith(f"gpuPools[0].{key}: unknown key; did you mean"))
    ]
    assert f"did you mean '{meant}'?" in lines[0]


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("deletionProtection", False),
        ("dataplaneV2", False),
        ("dcgmMetrics", False),
        ("maintenance", {"exclusions": []}),
    ],
)
def test_gke_cluster_creation_settings_on_an_existing_cluster_are_errors_naming_both_keys(
    key, value
):
    raw = _with(GKE, "cluster", existing=True, **{key: value})
    assert any(
        ln.startswith(f"cluster.{key}: would not apply: cluster.existing is true")
        for ln in _lines(raw)
    )


def test_release_channel_applies_on_an_existing_gke_cluster_where_pool_auto_upgrade_reads_it():
    # gke.rules.auto_upgrade: GKE refuses autoUpgrade false on a channel cluster, existing or not.
    parse(_with(GKE, "cluster", existing=True, releaseChannel="STABLE"), "t")


def test_autoscaler_identity_applies_without_the_autoscaler_it_picks_the_add_on_roles_trust():
    # infra/components/eks.py: plan.identity also decides the EBS CSI add-on's role (IRSA or Pod
    # Identity) and whether the OIDC provider is created, autoscaler or not.
    parse(_with(EKS, "cluster", autoscaler={"enabled": False, "identity": "pod-identity"}), "t")


def _defaulted_rows() -> list[tuple[str, str, str, Any, str]]:
    """(platform, block, condition key, value, inert key) of every inert rule whose condition
    value is the condition key's default: the cases a rule read off the written keys missed."""
    from infra.core.config.entry import platform_config
    from infra.core.config.inert import EVERY_PLATFORM
    from infra.core.config.operator import GpuOperatorSpec
    from infra.core.platforms import PLATFORMS

    out = []
    for platform in PLATFORMS:
        config = platform_config(platform)
        for block, when, value, keys, _ in (*EVERY_PLATFORM, *config.inert):
            first, *rest = block.split(".")
            model: Any = config.cluster if first == "cluster" else GpuOperatorSpec
            for part in rest:
                model = next(
                    f.annotation for n, f in model.model_fields.items() if (f.alias or n) == part
                )
            default = next(
                f.default for n, f in model.model_fields.items() if (f.alias or n) == when
            )
            if value != "*" and default == value:
                out.extend((platform, block, when, value, k) for k in keys)
    return out


DEFAULTED = _defaulted_rows()


def test_some_inert_rule_has_its_condition_at_a_default():
    assert (
        "eks",
        "cluster.autoscaler",
        "kind",
        "cluster-autoscaler",
        "terminationGracePeriod",
    ) in DEFAULTED


@pytest.mark.parametrize(("platform", "block", "when", "value", "key"), DEFAULTED)
def test_inert_key_is_refused_when_its_condition_key_is_left_at_its_default(
    platform, block, when, value, key
):
    """The inert check reads the validated model: an omitted condition key is its default."""
    samples = {"terminationGracePeriod": "1h"}  # a valid value of each such key
    raw: dict[str, Any] = {**(GKE if platform == "gke" else EKS)}
    first, *rest = block.split(".")
    cluster = {**raw["gpu-infra:cluster"], "existing": False, "vpc": {}}
    raw["gpu-infra:cluster"] = cluster
    node: dict[str, Any] = (
        cluster if first == "cluster" else raw.setdefault("gpu-infra:gpuOperator", {})
    )
    for part in rest:
        node = node.setdefault(part, {})
    node[key] = samples[key]
    assert when not in node
    lines = _lines(raw)
    assert (
        f"{block}.{key}: would not apply: {block}.{when} is {json.dumps(value)} (its default)"
        in " ".join(lines)
    ), lines
