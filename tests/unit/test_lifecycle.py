"""The lifecycle model: the replace order the real engine uses, provider identity, timeouts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from infra.core import lifecycle


def res(
    type_: str, inputs: dict[str, Any], dbr: bool | None = None, urn: str = "u"
) -> dict[str, Any]:
    return {"urn": urn, "type": type_, "inputs": inputs, "options": {"deleteBeforeReplace": dbr}}


def test_every_lifecycle_row_names_a_source_and_a_known_order():
    for row in lifecycle.table().values():
        assert row.source, row.type
        assert row.provider_order in ("", "create-first", "delete-first"), row.type
        assert row.option_order in ("", "create-first", "delete-first"), row.type


def test_bridge_name_set_by_us_makes_a_gke_pool_replace_delete_first():
    pool = res("gcp:container/nodePool:NodePool", {"name": "t4"})
    assert lifecycle.replace_order(pool, pool)[0] == "delete-first"  # type: ignore[index]


def test_bridge_without_a_name_of_ours_replaces_create_first():
    lt = res("aws:ec2/launchTemplate:LaunchTemplate", {"description": "x"})
    assert lifecycle.replace_order(lt, lt)[0] == "create-first"  # type: ignore[index]


def test_engine_option_overrides_the_bridge_for_eks_node_groups_create_first():
    ng = res("aws:eks/nodeGroup:NodeGroup", {"nodeGroupName": "t4-abcd1234"}, dbr=False)
    order, why = lifecycle.replace_order(ng, ng)  # type: ignore[misc]
    assert order == "create-first" and "deleteBeforeReplace=false" in why


def test_eks_node_group_without_the_option_would_be_delete_first_by_the_bridge():
    ng = res("aws:eks/nodeGroup:NodeGroup", {"nodeGroupName": "t4-abcd1234"})
    assert lifecycle.replace_order(ng, ng)[0] == "delete-first"  # type: ignore[index]
    assert lifecycle.lookup("aws:eks/nodeGroup:NodeGroup").delete_before_replace is False  # type: ignore[union-attr]


def test_helm_release_is_create_first_unless_the_option_says_delete_first():
    old = res("kubernetes:helm.sh/v3:Release", {"name": "gpu-operator", "namespace": "a"})
    new = res("kubernetes:helm.sh/v3:Release", {"name": "gpu-operator", "namespace": "b"})
    assert lifecycle.replace_order(old, new)[0] == "create-first"  # type: ignore[index]
    new["options"]["deleteBeforeReplace"] = True
    assert lifecycle.replace_order(old, new)[0] == "delete-first"  # type: ignore[index]
    operator = lifecycle.lookup("kubernetes:helm.sh/v3:Release", "gpu-operator")
    assert operator is not None and operator.delete_before_replace is True


def test_kubernetes_object_keeping_name_and_namespace_is_delete_first_else_create_first():
    a = res("kubernetes:core/v1:ConfigMap", {"metadata": {"name": "c", "namespace": "x"}})
    b = res("kubernetes:core/v1:ConfigMap", {"metadata": {"name": "c", "namespace": "y"}})
    assert lifecycle.replace_order(a, a)[0] == "delete-first"  # type: ignore[index]
    assert lifecycle.replace_order(a, b)[0] == "create-first"  # type: ignore[index]


def test_components_have_no_replace_order():
    assert lifecycle.replace_order(None, res("gpu-infra:k8s:GpuOperator", {})) is None


def test_rotated_endpoint_and_ca_do_not_replace_a_provider_with_a_cluster_identifier():
    old = {"kubeconfig": "server: https://10.0.0.1 ca: A", "clusterIdentifier": "gke_p_l_c"}
    new = {"kubeconfig": "server: https://10.0.0.2 ca: B", "clusterIdentifier": "gke_p_l_c"}
    assert not lifecycle.provider_replaced(old, new)
    # Without one the provider's heuristics may replace it (and every object it manages).
    assert lifecycle.provider_replaced(
        {"kubeconfig": old["kubeconfig"]}, {"kubeconfig": new["kubeconfig"]}
    )


def test_adding_a_cluster_identifier_to_a_running_stack_does_not_replace_its_provider():
    # DiffConfig ignores adding or removing the identifier ("on- and off-boarding").
    kubeconfig = {"kubeconfig": "server: https://10.0.0.1"}
    assert not lifecycle.provider_replaced(kubeconfig, {**kubeconfig, "clusterIdentifier": "x"})


def test_a_changed_cluster_identifier_replaces_the_provider():
    assert lifecycle.provider_replaced({"clusterIdentifier": "a"}, {"clusterIdentifier": "b"})


def test_cluster_identifier_follows_gcloud_context_naming():
    assert (
        lifecycle.cluster_identifier("gke", "proj", "us-central1", "ml")
        == "gke_proj_us-central1_ml"
    )


@pytest.mark.parametrize(
    ("type_", "nodes", "batch", "minutes"),
    [
        ("gcp:container/nodePool:NodePool", 1, 1, 60),  # one drain budget beats the 30m default
        ("gcp:container/nodePool:NodePool", 20, 1, 1200),
        ("gcp:container/nodePool:NodePool", 20, 4, 300),
        ("aws:eks/nodeGroup:NodeGroup", 2, 1, 60),  # the 60m provider default is the floor
        ("aws:eks/nodeGroup:NodeGroup", 20, 1, 300),
    ],
)
def test_rolling_timeout_is_a_drain_budget_per_batch_never_below_the_provider_default(
    type_, nodes, batch, minutes
):
    assert lifecycle.rolling_timeout_minutes(type_, nodes, batch) == minutes


def test_the_lifecycle_reference_table_is_the_lifecycle_model():
    page = (Path(__file__).resolve().parents[2] / "docs" / "lifecycle.md").read_text()
    assert lifecycle.markdown_table() in page
