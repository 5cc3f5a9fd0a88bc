"""Warm placeholders against the scheduling proof and the plan's priorities: each holds the GPUs
of one node of its pool (one slot of a shared or MIG one), lands there, and sits below every
priority the plan emits or implies and at or above the autoscaler's expendable cutoff.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from infra.core.config.stack import parse
from infra.core.errors import ConfigErrors
from infra.core.plan import build_plan
from infra.core.scheduling.priority import (
    BUILTIN_PRIORITIES,
    emitted_priorities,
    expendable_cutoff,
    priority_problems,
)
from infra.core.scheduling.proof import plan_workloads, pool_nodes, prove
from infra.core.scheduling.workloads import Workload
from infra.core.warm import (
    EXPENDABLE_CUTOFF_DEFAULT,
    WARM_PRIORITY,
)
from tests.unit.warm_fixtures import STACKS, _eks, _gke, _raw, warm_sample


def _gke_pool(pool: dict[str, Any], operator: bool = True) -> dict[str, Any]:
    raw = _gke({"maxNodes": 2, "warm": 1, **pool})
    if "gpu" not in pool:
        raw["gpu-infra:gpuPools"][0].pop("gpu")
    if not operator:
        raw["gpu-infra:gpuOperator"] = {"enabled": False}
    return raw


_RENAMED = {"strategy": "time-slicing", "replicas": 4, "renameByDefault": True}
_GKE_TIME_SHARING = {"strategy": "time-sharing", "maxSharedClientsPerGpu": 4}
# (stack, the resource a placeholder requests, how many)
_SHAPES: dict[str, tuple[dict[str, Any], str, int]] = {
    "whole-a100x8": (_gke_pool({"machineType": "a2-highgpu-8g"}), "nvidia.com/gpu", 8),
    "gke-time-sharing-t4x2": (
        _gke_pool(
            {"gpu": {"type": "nvidia-tesla-t4", "count": 2, "sharing": _GKE_TIME_SHARING}}, False
        ),
        "nvidia.com/gpu",
        1,
    ),
    "time-sliced-l4x2": (
        # minNodes 1 in one zone: at zero (or in an empty zone of several) the GCE template
        # would count 2 GPUs, not 8 slots (refused).
        _gke_pool(
            {
                "machineType": "g2-standard-24",
                "sharing": {"replicas": 4},
                "minNodes": 1,
                "zones": ["us-central1-a"],
            }
        ),
        "nvidia.com/gpu",
        1,
    ),
    "time-sliced-renamed-g4dn12": (
        _eks({"machineType": "g4dn.12xlarge", "sharing": _RENAMED}),
        "nvidia.com/gpu.shared",
        1,
    ),
    "operator-mig-single": (
        _gke_pool(
            {
                "machineType": "a2-highgpu-1g",
                "mig": {"config": "all-1g.5gb"},
                "minNodes": 1,
                "zones": ["us-central1-a"],
            }
        ),
        "nvidia.com/gpu",
        1,
    ),
    "operator-mig-mixed-p4d": (
        _eks(
            {
                "machineType": "p4d.24xlarge",
                "mig": {"strategy": "mixed", "config": "all-1g.5gb"},
            }
        ),
        "nvidia.com/mig-1g.5gb",
        1,
    ),
}


@pytest.mark.parametrize("shape", list(_SHAPES))
def test_placeholder_holds_every_gpu_of_a_whole_gpu_pool_and_one_slot_of_a_shared_or_mig_one(
    shape: str,
):
    raw, resource, count = _SHAPES[shape]
    plan = build_plan(parse(copy.deepcopy(raw), "t"))
    (t,) = plan.warm.targets  # type: ignore[union-attr]
    assert (t.resource, t.count) == (resource, count)
    assert prove(plan) == []


def test_gke_shared_pool_placeholder_requests_one_slot_as_gke_admits_at_most_one_per_container():
    plan = warm_sample("gke-a100-mig")  # 1g.5gb partitions x 2 time-sharing clients
    (t,) = plan.warm.targets  # type: ignore[union-attr]
    (c,) = t.deployment["spec"]["template"]["spec"]["containers"]
    assert c["resources"]["limits"]["nvidia.com/gpu"] == "1"
    assert (t.resource, t.count) == ("nvidia.com/gpu", 1)
    assert prove(plan) == []


@pytest.mark.parametrize(
    "shape", ["gke-time-sharing-t4x2", "time-sliced-l4x2", "time-sliced-renamed-g4dn12"]
)
def test_a_container_requesting_more_than_one_shared_slot_fails_the_proof(shape: str):
    from infra.core.scheduling.proof import check_fit

    raw, resource, _ = _SHAPES[shape]
    plan = build_plan(parse(copy.deepcopy(raw), "t"))
    w = next(w for w in plan_workloads(plan) if w.consumer == "warm")
    two = {**w.pod.containers[0], resource: Fraction(2)}
    broken = replace(w, pod=replace(w.pod, containers=(two,)))
    assert any(
        f"requests 2 of shared {resource}: at most 1 per container" in p
        for p in check_fit(broken, pool_nodes(plan))
    )


def test_two_mig_instances_in_one_container_are_not_refused_as_shared():
    raw, _, _ = _SHAPES["operator-mig-single"]
    plan = build_plan(parse(copy.deepcopy(raw), "t"))
    assert all(not pn.running.shared for pn in pool_nodes(plan).values())


def test_one_gpu_more_than_the_template_node_has_makes_the_proof_fail():
    plan = warm_sample("gke-t4")
    w = next(w for w in plan_workloads(plan) if w.consumer == "warm")
    greedy = {**w.pod.requests, "nvidia.com/gpu": w.pod.requests["nvidia.com/gpu"] + 1}
    broken = replace(w, pod=replace(w.pod, requests=greedy))
    nodes = pool_nodes(plan)
    from infra.core.scheduling.proof import check_fit

    assert any("Insufficient nvidia.com/gpu" in p for p in check_fit(broken, nodes))


def test_a_proof_finding_is_a_config_error_at_the_pools_warm_key_or_the_pool_it_targets():
    from infra.core.scheduling.proof import proof_issues

    plan = warm_sample("eks-g4dn")
    nodes = pool_nodes(plan)
    name = plan.config.pools[0].name
    running = nodes[name].running
    labels = {k: v for k, v in running.labels.items() if k != "gpu-infra/pool"}
    broken = {**nodes, name: replace(nodes[name], running=replace(running, labels=labels))}
    issues = proof_issues(plan, broken)
    assert {"gpuPools[0].warm", "gpuPools[0]"} <= {i.path for i in issues}
    assert any(i.path == "gpuPools[0]" and "jupyterhub" in i.reason for i in issues)
    assert proof_issues(plan) == []


def test_build_plan_runs_the_proof_and_refuses_a_stack_it_fails(monkeypatch: pytest.MonkeyPatch):
    import infra.core.plan as plan_module
    from infra.core.errors import ConfigIssue

    bad = ConfigIssue("gpuPools[0].warm", "the scheduling proof fails: x")
    monkeypatch.setattr(plan_module, "proof_issues", lambda plan: [bad])
    name, raw = _raw(STACKS[0])
    with pytest.raises(ConfigErrors) as e:
        build_plan(parse(raw, name))
    assert e.value.issues == (bad,)


def test_a_stack_the_proof_fails_exits_2_naming_the_key(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    import infra.core.plan as plan_module
    from infra import plan as plan_cli
    from infra.core.errors import ConfigIssue

    bad = ConfigIssue("gpuPools[0].warm", "the scheduling proof fails: x")
    monkeypatch.setattr(plan_module, "proof_issues", lambda plan: [bad])
    assert plan_cli.main(["--stack", "gke-t4"]) == 2
    assert "gpuPools[0].warm: the scheduling proof fails: x" in capsys.readouterr().err


def test_the_proof_checks_every_placeholder_of_a_warm_plan():
    plan = warm_sample("eks-g4dn")
    warm = [w for w in plan_workloads(plan) if w.consumer == "warm"]
    assert len(warm) == len(plan.warm.targets) == len(plan.config.pools)  # type: ignore[union-attr]
    assert all(isinstance(w, Workload) for w in warm)


# --------------------------------------------------------------------------------------------------
# Priorities across the whole plan


@pytest.mark.parametrize("path", STACKS, ids=lambda p: p.stem.removeprefix("Pulumi."))
def test_placeholder_priority_is_below_every_priority_the_plan_emits_or_implies(path: Path):
    plan = warm_sample(path.stem.removeprefix("Pulumi."))
    found = emitted_priorities(plan)
    assert ("pods without priorityClassName", 0) in found
    assert all(p is not None and p > WARM_PRIORITY for _, p in found), found
    assert priority_problems(plan) == []
    assert prove(plan) == []


def test_the_whole_plan_check_reads_the_operators_system_node_critical_operands():
    found = dict(emitted_priorities(warm_sample("gke-t4")))
    assert BUILTIN_PRIORITIES["system-node-critical"] in found.values()


def test_a_pod_at_the_placeholders_priority_or_of_an_unknown_class_fails_the_check():
    plan = warm_sample("gke-t4")
    op = plan.operator
    assert op is not None
    low = {"kind": "Job", "metadata": {"name": "x"}, "spec": {"priorityClassName": "mystery"}}
    broken = replace(plan, operator=replace(op, after_release=(*op.after_release, low)))
    assert any("mystery" in p and "no known value" in p for p in priority_problems(broken))


def test_placeholder_priority_is_not_below_the_autoscalers_expendable_cutoff():
    # IsExpendablePod: priority < cutoff never scales up; -10 is exactly the default cutoff.
    assert WARM_PRIORITY >= EXPENDABLE_CUTOFF_DEFAULT
    plan = warm_sample("eks-g4dn")
    assert expendable_cutoff(plan) == EXPENDABLE_CUTOFF_DEFAULT
    eks = plan.platform.plan
    assert eks is not None and eks.autoscaler is not None
    values = {**eks.autoscaler.values, "extraArgs": {"expendable-pods-priority-cutoff": "0"}}
    raised_eks = replace(eks, autoscaler=replace(eks.autoscaler, values=values))
    raised = replace(plan, platform=replace(plan.platform, plan=raised_eks))
    assert any("expendable-pods-priority-cutoff 0" in p for p in priority_problems(raised))
