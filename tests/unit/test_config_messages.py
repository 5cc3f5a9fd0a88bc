"""Config problems are one actionable ``<key path>: <reason>`` line each: exact path, short value."""

from __future__ import annotations

from typing import Any

import pytest

from infra.core.config.stack import parse
from infra.core.errors import ConfigErrors
from tests.conftest import gke_config

ONPREM: dict[str, Any] = {
    "gpu-infra:platform": "kubernetes",
    "gpu-infra:cluster": {"name": "onprem", "location": "dc1"},
    "gpu-infra:gpuPools": [
        {
            "name": "gpu",
            "machineType": "vm",
            "gpu": {"model": "T4"},
            "nodeSelector": {"gpu": "t4"},
            "vcpus": 8,
            "memoryGib": 32,
            "maxNodes": 2,
        }
    ],
}


def problems(raw: dict[str, Any]) -> dict[str, str]:
    with pytest.raises(ConfigErrors) as e:
        parse(raw, "t")
    return {i.path: i.reason for i in e.value.issues}


def onprem(pool: dict[str, Any] | None = None, **top: Any) -> dict[str, Any]:
    cfg = dict(ONPREM)
    cfg["gpu-infra:gpuPools"] = [{**ONPREM["gpu-infra:gpuPools"][0], **(pool or {})}]
    cfg.update({f"gpu-infra:{k}": v for k, v in top.items()})
    return cfg


def test_toolkit_env_type_error_keeps_the_variable_name_in_one_line():
    got = problems(onprem(gpuOperator={"toolkitEnv": {"CONTAINERD_SOCKET": ["a"]}}))
    assert list(got) == ["gpuOperator.toolkitEnv.CONTAINERD_SOCKET"]
    assert got["gpuOperator.toolkitEnv.CONTAINERD_SOCKET"].startswith(
        "input should be a valid string, a valid boolean or a valid integer"
    )


def test_toolkit_env_path_with_shell_characters_is_named_by_variable():
    got = problems(onprem(gpuOperator={"toolkitEnv": {"CONTAINERD_CONFIG": "/etc/c; curl x|sh"}}))
    assert "contains ';'" in got["gpuOperator.toolkitEnv.CONTAINERD_CONFIG"]


def test_a_100kb_value_is_shortened_in_the_message():
    got = problems(onprem(gpuOperator={"toolkitEnv": {"CONTAINERD_CONFIG": "/" + "a" * 100_000}}))
    (reason,) = got.values()
    assert len(reason) < 200


def test_a_100kb_wrong_typed_value_is_shortened_in_the_message():
    got = problems(onprem({"vcpus": "8" * 100_000}))
    (line,) = [f"{p}: {r}" for p, r in got.items()]
    assert line.startswith("gpuPools[0].vcpus: ")
    assert len(line) < 200 and "(100000 characters)" in line


def test_label_errors_name_the_label_key_in_the_path():
    got = problems(gke_config({"labels": {"team": "<x>"}}))
    assert "is not a valid label value" in got["gpuPools[0].labels.team"]


def test_operator_namespace_default_is_refused_as_shared():
    got = problems(onprem(gpuOperator={"namespace": "default"}))
    assert "shared by other workloads" in got["gpuOperator.namespace"]


def test_gpu_namespace_cannot_label_itself_privileged():
    ns = [{"name": "ml", "gpus": 1, "labels": {"pod-security.kubernetes.io/enforce": "privileged"}}]
    got = problems(onprem(gpuNamespaces=ns))
    assert (
        "must not make itself privileged"
        in got["gpuNamespaces[0].labels.pod-security.kubernetes.io/enforce"]
    )


def test_onprem_nodes_cannot_exceed_max_nodes():
    got = problems(onprem({"nodes": ["n1", "n2", "n3"], "maxNodes": 2}))
    assert got["gpuPools[0].nodes"] == "lists 3 nodes, more than maxNodes 2"


def test_onprem_node_listed_twice_is_named():
    got = problems(onprem({"nodes": ["n1", "n1"]}))
    assert got["gpuPools[0].nodes[1]"] == "'n1' is listed twice"


def test_onprem_node_names_are_dns_subdomains():
    got = problems(onprem({"nodes": ["GPU_1"]}))
    assert "DNS-1123 subdomain" in got["gpuPools[0].nodes[0]"]


def test_system_pool_min_above_max_is_refused_like_gpu_pools():
    got = problems(
        gke_config(
            cluster={
                "name": "ml",
                "location": "us-central1",
                "systemPool": {"minNodes": 5, "maxNodes": 2},
            }
        )
    )
    assert got["cluster.systemPool.minNodes"] == "5 is above maxNodes 2"


def test_gcp_project_display_name_is_refused():
    cfg = gke_config()
    cfg["gcp:project"] = "My Project!"
    got = problems(cfg)
    assert "is not a project ID" in got["gcp:project"]


def test_enum_typo_gets_did_you_mean():
    got = problems(gke_config({"gpu": {"type": "nvidia-tesla-t4", "driver": "gke-lates"}}))
    assert got["gpuPools[0].gpu.driver"].endswith("did you mean 'gke-latest'?")


def test_unknown_pool_key_gets_did_you_mean_and_the_allowed_keys():
    got = problems(gke_config({"maxNode": 3}))
    assert got["gpuPools[0].maxNode"].startswith("unknown key; did you mean 'maxNodes'?; allowed:")


def test_missing_provider_key_suggests_a_misspelt_one():
    got = problems(gke_config(**{"gcp:project": None, "gcp:projet": "demo-project"}))
    assert got["gcp:project"].endswith("did you mean 'gcp:projet'?")


def test_az_name_where_an_az_id_is_expected_is_explained():
    raw = {
        "aws:region": "us-west-2",
        "gpu-infra:platform": "eks",
        "gpu-infra:cluster": {"name": "ml", "location": "us-west-2"},
        "gpu-infra:gpuPools": [
            {"name": "g", "machineType": "g4dn.xlarge", "maxNodes": 2, "zones": ["us-west-2a"]}
        ],
    }
    got = problems(raw)
    assert "is an AZ name; give AZ IDs such as usw2-az1" in got["gpuPools[0].zones[0]"]


def test_41_public_access_cidrs_are_refused():
    raw = {
        "aws:region": "us-west-2",
        "gpu-infra:platform": "eks",
        "gpu-infra:cluster": {
            "name": "ml",
            "location": "us-west-2",
            "publicAccessCidrs": [f"198.51.100.{i}/32" for i in range(41)],
        },
    }
    got = problems(raw)
    assert got["cluster.publicAccessCidrs"] == "41 CIDR blocks; EKS allows at most 40"


def test_gke_region_missing_from_the_catalog_gets_did_you_mean():
    got = problems(gke_config(cluster={"name": "ml", "location": "us-central9"}))
    assert got["cluster.location"].endswith("did you mean 'us-central1'?")


def test_gke_zonal_cluster_in_a_zone_that_does_not_exist_is_refused():
    got = problems(gke_config(cluster={"name": "ml", "location": "us-central1-z"}))
    assert "'us-central1-z' is not a zone of us-central1" in got["cluster.location"]


def test_existing_gke_cluster_location_is_not_checked_against_the_catalog():
    cfg = parse(
        gke_config(cluster={"name": "ml", "location": "us-central1-z", "existing": True}), "t"
    )
    assert (cfg.region, cfg.zone) == ("us-central1", "us-central1-z")


def test_shown_cuts_nested_mappings_and_lists_to_the_limit():
    from infra.core.errors import MAX_VALUE, shown

    nested: Any = "x" * 1000
    for _ in range(4):
        nested = [nested] * 8
    for value in ({"k": nested}, [nested], {"a": [1, 2]}):
        text = shown(value)
        assert len(text) <= MAX_VALUE
    assert shown({"a": [1, 2]}) == "{'a': [1, 2]}"
    assert shown({"k": nested}).startswith("{'k': [[[[") and shown([nested]).endswith("\u2026")


_ODD_VALUES: list[Any] = [None, [], {}, "x" * 300, -1, 10**30, 1e308, True, {"a": [1]}, "日本", ""]


def _paths(v: Any, p: tuple[Any, ...] = ()) -> Any:
    yield p
    if isinstance(v, dict):
        for k, x in v.items():
            yield from _paths(x, (*p, k))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from _paths(x, (*p, i))


def test_any_value_of_any_type_at_any_key_of_the_samples_is_planned_or_a_config_error():
    import copy
    from pathlib import Path

    from infra.core.config.stack import load_stack_file
    from infra.core.plan import build_plan

    root = Path(__file__).resolve().parents[2]
    for stack in sorted((root / "stacks").glob("Pulumi.*.yaml")):
        name, raw = load_stack_file(stack)
        for path in list(_paths(raw))[1:]:
            for value in _ODD_VALUES:
                cfg = copy.deepcopy(raw)
                target = cfg
                for k in path[:-1]:
                    target = target[k]
                target[path[-1]] = value
                try:
                    build_plan(parse(cfg, name))
                except ConfigErrors as e:
                    assert all(len(str(i)) <= 400 for i in e.issues), (path, value)


def test_printed_problems_are_capped_at_50_with_a_count_of_the_rest():
    from infra.core.errors import MAX_SHOWN_ISSUES, ConfigErrors, ConfigIssue

    e = ConfigErrors([ConfigIssue(f"gpuPools[{i}].name", "bad") for i in range(120)])
    lines = str(e).splitlines()
    assert len(e.issues) == 120 and len(lines) == MAX_SHOWN_ISSUES + 1
    assert lines[-1] == "\u2026 and 70 more problems"
