"""The kube-scheduler filter predicates themselves (infra.core.scheduling.predicates), each case
from the documented semantics of node affinity, taints/tolerations, resource fit and quota."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from infra.core.scheduling.predicates import (
    Node,
    affinity_problem,
    fit_problems,
    pod_from_spec,
    quantity,
    quota_problem,
    requirement_matches,
    resource_problem,
    shared_request_problem,
    taint_problem,
    term_matches,
    tolerates,
)

GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}


def node(labels: dict[str, str] | None = None, taints: Any = (), **alloc: int) -> Node:
    res = {k.replace("_", "/"): Fraction(v) for k, v in alloc.items()}
    return Node("n", labels or {}, tuple(taints), res)


def pod(**spec: Any) -> Any:
    spec.setdefault("containers", [{}])
    return pod_from_spec("p", spec)


@pytest.mark.parametrize(
    ("text", "value"),
    [("1", 1), ("500m", Fraction(1, 2)), ("2Gi", 2 * 2**30), ("1k", 1000), ("1.5", Fraction(3, 2))],
)
def test_quantities_parse_as_kubernetes_spells_them(text: str, value: Fraction):
    assert quantity(text) == value


def test_a_malformed_quantity_is_an_error_not_zero():
    with pytest.raises(ValueError):
        quantity("one")


def test_node_selector_needs_every_pair_equal():
    p = pod(nodeSelector={"a": "1", "b": "2"})
    assert affinity_problem(p, node({"a": "1", "b": "2", "c": "3"})) is None
    assert affinity_problem(p, node({"a": "1"})) is not None
    assert affinity_problem(p, node({"a": "1", "b": "x"})) is not None


@pytest.mark.parametrize(
    ("op", "values", "labels", "ok"),
    [
        ("In", ["x", "y"], {"k": "y"}, True),
        ("In", ["x"], {}, False),
        ("NotIn", ["x"], {"k": "y"}, True),
        ("NotIn", ["x"], {}, True),  # absent label satisfies NotIn
        ("NotIn", ["x"], {"k": "x"}, False),
        ("Exists", [], {"k": ""}, True),
        ("Exists", [], {}, False),
        ("DoesNotExist", [], {}, True),
        ("DoesNotExist", [], {"k": "v"}, False),
        ("Gt", ["3"], {"k": "4"}, True),
        ("Gt", ["3"], {"k": "3"}, False),
        ("Lt", ["3"], {"k": "2"}, True),
        ("Gt", ["3"], {"k": "abc"}, False),
    ],
)
def test_node_selector_requirement_operators_follow_assign_pod_node(
    op: str, values: list[str], labels: dict[str, str], ok: bool
):
    assert requirement_matches({"key": "k", "operator": op, "values": values}, labels) is ok


def test_expressions_of_a_term_are_anded_and_an_empty_term_matches_nothing():
    term = {
        "matchExpressions": [
            {"key": "a", "operator": "In", "values": ["1"]},
            {"key": "b", "operator": "Exists"},
        ]
    }
    assert term_matches(term, {"a": "1", "b": ""})
    assert not term_matches(term, {"a": "1"})
    assert not term_matches({"matchExpressions": []}, {"a": "1"})


def test_required_affinity_terms_are_ored():
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "a", "operator": "In", "values": ["1"]}]},
                    {"matchExpressions": [{"key": "b", "operator": "In", "values": ["2"]}]},
                ]
            }
        }
    }
    p = pod(affinity=affinity)
    assert affinity_problem(p, node({"b": "2"})) is None
    assert affinity_problem(p, node({"a": "2"})) is not None


def test_selector_and_affinity_must_both_hold():
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "a", "operator": "In", "values": ["1"]}]}
                ]
            }
        }
    }
    p = pod(nodeSelector={"b": "2"}, affinity=affinity)
    assert affinity_problem(p, node({"a": "1"})) is not None
    assert affinity_problem(p, node({"a": "1", "b": "2"})) is None


@pytest.mark.parametrize(
    ("toleration", "ok"),
    [
        ({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}, True),
        ({"key": "nvidia.com/gpu", "operator": "Exists"}, True),  # empty effect: all effects
        ({"operator": "Exists"}, True),  # empty key + Exists: every taint
        ({"key": "nvidia.com/gpu", "operator": "Equal", "value": "present"}, True),
        ({"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}, True),  # Equal
        ({"key": "nvidia.com/gpu", "operator": "Equal", "value": "true"}, False),
        ({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoExecute"}, False),
        ({"key": "other", "operator": "Exists"}, False),
        ({"operator": "Equal", "value": "present"}, False),  # Equal needs a key
    ],
)
def test_toleration_matching_follows_tolerates_taint(toleration: dict[str, str], ok: bool):
    assert tolerates(toleration, GPU_TAINT) is ok


def test_every_noschedule_and_noexecute_taint_must_be_tolerated_prefer_only_scores():
    taints = [GPU_TAINT, {"key": "x", "value": "y", "effect": "NoExecute"}]
    soft = [{"key": "z", "value": "", "effect": "PreferNoSchedule"}]
    gpu_only = pod(tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists"}])
    assert taint_problem(gpu_only, node(taints=taints)) is not None
    assert taint_problem(gpu_only, node(taints=[GPU_TAINT, *soft])) is None
    assert taint_problem(pod(tolerations=[{"operator": "Exists"}]), node(taints=taints)) is None


def test_limits_alone_count_as_requests_and_containers_add_up():
    p = pod(
        containers=[
            {"resources": {"limits": {"nvidia.com/gpu": "1"}}},
            {"resources": {"limits": {"nvidia.com/gpu": "2"}, "requests": {"memory": "1Gi"}}},
        ]
    )
    assert p.requests == {"nvidia.com/gpu": 3, "memory": 2**30}


def test_extended_resource_the_node_lacks_does_not_fit():
    p = pod(containers=[{"resources": {"limits": {"nvidia.com/mig-1g.5gb": "1"}}}])
    assert resource_problem(p, node(nvidia_com_gpu=8)) is not None
    assert resource_problem(p, node(**{"nvidia.com/mig-1g.5gb": 1})) is None


def test_a_request_above_allocatable_does_not_fit_and_equal_does():
    p = pod(containers=[{"resources": {"limits": {"nvidia.com/gpu": "4"}}}])
    assert resource_problem(p, node(**{"nvidia.com/gpu": 3})) is not None
    assert resource_problem(p, node(**{"nvidia.com/gpu": 4})) is None


def test_a_container_requests_at_most_1_of_a_shared_resource_summed_over_containers_is_fine():
    shared = Node("n", {}, (), {"nvidia.com/gpu": Fraction(8)}, frozenset({"nvidia.com/gpu"}))
    one_each = pod(
        containers=[{"resources": {"limits": {"nvidia.com/gpu": "1"}}} for _ in range(2)]
    )
    two = pod(containers=[{"resources": {"limits": {"nvidia.com/gpu": "2"}}}])
    assert shared_request_problem(one_each, shared) is None
    assert "at most 1 per container" in str(shared_request_problem(two, shared))
    assert shared_request_problem(two, node(nvidia_com_gpu=8)) is None  # not shared: 2 is fine
    assert any("shared nvidia.com/gpu" in p for p in fit_problems(two, shared))


def test_fit_reports_every_failed_filter():
    p = pod(
        nodeSelector={"a": "1"}, containers=[{"resources": {"limits": {"nvidia.com/gpu": "1"}}}]
    )
    assert len(fit_problems(p, node(taints=[GPU_TAINT]))) == 3


def test_quota_admits_within_hard_and_refuses_above_it():
    p = pod(containers=[{"resources": {"limits": {"nvidia.com/gpu": "2"}}}])
    gpu = ["nvidia.com/gpu"]
    assert quota_problem(p, {"requests.nvidia.com/gpu": "2"}, gpu) is None
    assert quota_problem(p, {"requests.nvidia.com/gpu": "1"}, gpu) is not None


def test_a_gpu_resource_without_quota_item_is_reported_unlimited():
    p = pod(containers=[{"resources": {"limits": {"nvidia.com/mig-1g.5gb": "1"}}}])
    problem = quota_problem(p, {"requests.nvidia.com/gpu": "4"}, ["nvidia.com/mig-1g.5gb"])
    assert problem is not None and "does not limit" in problem
