"""Contradictions inside one stack file are refused naming both sides; what Kubernetes itself
takes (a GPU quota of 0) plans."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from infra.core.config.stack import parse
from infra.core.errors import ConfigErrors
from infra.core.plan import build_plan
from tests.conftest import gke_config
from tests.unit.operator_fixtures import stack
from tests.unit.test_eks import eks_config, errors_of


def test_an_access_entry_scoped_to_no_namespace_exits_2_not_a_cluster_wide_grant():
    entry = {"principalArn": "arn:aws:iam::123456789012:role/team", "policy": "view"}
    cfg = eks_config(cluster={"accessEntries": [{**entry, "namespaces": []}]})
    reason = errors_of(cfg)["cluster.accessEntries[0].namespaces"]
    assert reason.startswith("[]: a namespace scope needs at least one namespace")


def _onprem(*selectors: dict[str, str]) -> Any:
    pools = [
        {"name": f"p{k}", "nodes": [f"node-{k}"], "nodeSelector": sel}
        for k, sel in enumerate(selectors)
    ]
    return stack("kubernetes", pools)


@pytest.mark.parametrize(
    "selectors",
    [
        ({"gpu": "a100"}, {"gpu": "a100"}),  # the same nodes, described twice
        ({"gpu": "a100"}, {"gpu": "a100", "rack": "r2"}),  # the first also selects the second's
        ({"gpu": "a100", "rack": "r2"}, {"gpu": "a100"}),
    ],
)
def test_two_onprem_pools_whose_node_selectors_overlap_are_refused(selectors):
    with pytest.raises(ConfigErrors) as e:
        build_plan(_onprem(*selectors))
    assert [i.path for i in e.value.issues] == ["gpuPools[1].nodeSelector"]


def test_onprem_pools_with_disjoint_node_selectors_plan():
    p = build_plan(_onprem({"gpu": "a100"}, {"gpu": "t4"}))
    assert [h.name for h in p.platform.pools] == ["p0", "p1"]


def _namespaces(*entries: dict[str, Any]) -> dict[str, Any]:
    raw = copy.deepcopy(gke_config())
    raw["gpu-infra:gpuNamespaces"] = list(entries)
    return raw


def test_a_namespace_with_a_gpu_quota_of_0_plans_and_keeps_its_quota():
    """gpus: 0 is a valid ResourceQuota that keeps a namespace off GPUs."""
    p = build_plan(parse(_namespaces({"name": "cpu-only", "gpus": 0}), "s"))
    assert p.operator is not None
    quotas = [m for m in p.operator.after_release if m["kind"] == "ResourceQuota"]
    hard = next(m["spec"]["hard"] for m in quotas if m["metadata"]["namespace"] == "cpu-only")
    assert hard["requests.nvidia.com/gpu"] == "0"
