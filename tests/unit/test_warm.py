"""Warm GPUs (``gpuPools[].warm``): placeholder pods that keep nodes ready, below every priority
the plan emits, landing on the pool's node at zero and running, counted in cost and quota."""

from __future__ import annotations

import copy
import functools
import re
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from infra.core.catalog.vendored import Catalog
from infra.core.config.stack import load_stack_file, parse
from infra.core.cost import Cost, PoolCost, estimate
from infra.core.errors import ConfigErrors
from infra.core.plan import Plan, build_plan
from infra.core.pools import idle_nodes
from infra.core.scheduling.predicates import pod_from_spec
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
    PAUSE_IMAGE,
    WARM_PRIORITY,
    warm_names,
)
from infra.planview.table import pool_rows, print_pools, print_totals
from quota.arithmetic import Reading
from quota.demand import stack_demand
from quota.report import Check
from tests.unit.operator_fixtures import CLUSTERS

STACKS = sorted(Path(__file__).resolve().parents[2].joinpath("stacks").glob("Pulumi.*.yaml"))


def _raw(path: Path, warm: int | None = 1) -> tuple[str, dict[str, Any]]:
    name, raw = load_stack_file(path)
    raw = copy.deepcopy(raw)
    if warm is not None:
        for p in raw["gpu-infra:gpuPools"]:
            # A Capacity Block pool refuses warm (EKS scales it to 0 before the block ends).
            if p.get("capacityType") != "CAPACITY_BLOCK":
                p["warm"] = min(warm, p["maxNodes"])
    return name, raw


@functools.cache
def warm_sample(stem: str) -> Plan:
    """A sample stack with warm 1 on every pool."""
    name, raw = _raw(Path(__file__).resolve().parents[2] / "stacks" / f"Pulumi.{stem}.yaml")
    return build_plan(parse(raw, name))


@functools.cache
def sample(stem: str) -> Plan:
    name, raw = load_stack_file(
        Path(__file__).resolve().parents[2] / "stacks" / f"Pulumi.{stem}.yaml"
    )
    return build_plan(parse(raw, name))


def _gke(pool: dict[str, Any]) -> dict[str, Any]:
    return {
        "gcp:project": "demo-project",
        "gcp:region": "us-central1",
        "gpu-infra:platform": "gke",
        "gpu-infra:cluster": CLUSTERS["gke"],
        "gpu-infra:gpuPools": [
            {"name": "p", "machineType": "n1-highmem-8", "gpu": {"type": "nvidia-tesla-t4"}} | pool
        ],
        "gpu-infra:gpuOperator": {},
    }


def _errors(raw: dict[str, Any]) -> dict[str, str]:
    with pytest.raises(ConfigErrors) as e:
        build_plan(parse(raw, "t"))
    return {i.path: i.reason for i in e.value.issues}


# --------------------------------------------------------------------------------------------------
# Config: default, bounds


def test_warm_defaults_to_zero_so_a_stack_without_it_plans_no_placeholders():
    plan = sample("gke-t4")
    assert all(p.warm == 0 for p in plan.config.pools)
    assert plan.warm is None


def test_warm_above_max_nodes_is_refused_naming_key_value_and_rule():
    errs = _errors(_gke({"maxNodes": 2, "warm": 3}))
    assert "gpuPools[0].warm" in errs
    reason = errs["gpuPools[0].warm"]
    assert "3" in reason and "maxNodes 2" in reason and "at most maxNodes" in reason


def test_negative_warm_is_refused_at_its_key():
    errs = _errors(_gke({"maxNodes": 2, "warm": -1}))
    assert any(k.startswith("gpuPools[0].warm") for k in errs), errs


def test_warm_is_typed_a_string_is_not_read_as_a_number():
    errs = _errors(_gke({"maxNodes": 2, "warm": "1"}))
    assert any(k.startswith("gpuPools[0].warm") for k in errs), errs


def test_idle_nodes_is_max_of_min_nodes_and_warm_because_placeholders_fill_min_nodes_first():
    assert idle_nodes(0, 1) == 1
    assert idle_nodes(2, 1) == 2
    assert idle_nodes(1, 3) == 3
    assert idle_nodes(0, 0) == 0


# --------------------------------------------------------------------------------------------------
# The objects


def test_sample_gke_l4_spot_plans_one_warm_placeholder_for_its_jupyterhub_class():
    plan = sample("gke-l4-spot")
    assert plan.warm is not None
    (t,) = plan.warm.targets
    assert (t.pool, t.replicas, t.resource, t.count) == ("l4-spot", 1, "nvidia.com/gpu", 1)
    profiles = plan.operator.integrations["jupyterhub"]["singleuser"]["profileList"]  # type: ignore[union-attr]
    assert t.pool in {p["slug"] for p in profiles}


def test_priority_class_is_minus_10_never_preempts_and_is_not_the_global_default():
    pc = warm_sample("gke-t4").warm.priority_class  # type: ignore[union-attr]
    assert pc["value"] == WARM_PRIORITY == -10
    assert pc["preemptionPolicy"] == "Never"
    assert pc["globalDefault"] is False


def test_placeholder_pod_is_a_pinned_pause_image_with_no_grace_period_one_per_node():
    t = warm_sample("gke-t4").warm.targets[0]  # type: ignore[union-attr]
    d = t.deployment
    spec = d["spec"]["template"]["spec"]
    assert d["metadata"]["namespace"] == "gpu-warm-gke-t4"
    (c,) = spec["containers"]
    assert c["image"] == PAUSE_IMAGE and ":" in PAUSE_IMAGE and not PAUSE_IMAGE.endswith(":latest")
    assert spec["terminationGracePeriodSeconds"] == 0
    assert spec["priorityClassName"] == "gpu-infra-warm-gke-t4"
    (term,) = spec["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term["topologyKey"] == "kubernetes.io/hostname"
    assert term["labelSelector"]["matchLabels"] == d["spec"]["selector"]["matchLabels"]
    assert d["spec"]["strategy"] == {"type": "Recreate"}  # no surge pod, no surge node
    assert c["securityContext"]["runAsNonRoot"] is True


def test_placeholders_select_the_pools_labels_and_tolerate_every_taint_of_it():
    plan = warm_sample("gke-t4")
    t = plan.warm.targets[0]  # type: ignore[union-attr]
    spec = t.deployment["spec"]["template"]["spec"]
    h = plan.pools[0]
    assert h.node_selector.items() <= spec["nodeSelector"].items()
    for taint in h.taints:
        assert taint.toleration() in spec["tolerations"]


def test_a_compute_class_pool_warms_the_class_so_any_of_its_priorities_may_serve():
    plan = sample("gke-l4-spot")
    (t,) = plan.warm.targets  # type: ignore[union-attr]
    sel = t.deployment["spec"]["template"]["spec"]["nodeSelector"]
    assert sel == {"cloud.google.com/compute-class": t.pool}
    assert len(t.members) > 1


def _eks(pool: dict[str, Any]) -> dict[str, Any]:
    return {
        "aws:region": "us-west-2",
        "gpu-infra:platform": "eks",
        "gpu-infra:cluster": CLUSTERS["eks"],
        "gpu-infra:gpuPools": [{"name": "p", "maxNodes": 2, "warm": 1, **pool}],
        "gpu-infra:gpuOperator": {},
    }


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


# --------------------------------------------------------------------------------------------------
# Platforms without an autoscaler gpu-infra runs


def test_onprem_warm_is_planned_with_a_note_that_gpu_infra_runs_no_autoscaler_there():
    plan = warm_sample("onprem-containerd")
    assert plan.warm is not None
    assert any("no autoscaler on platform kubernetes" in n for n in plan.notes)


def test_eks_warm_with_the_autoscaler_disabled_notes_that_nothing_adds_nodes():
    name, raw = _raw(STACKS[[p.stem for p in STACKS].index("Pulumi.eks-g4dn")])
    raw["gpu-infra:cluster"] = {**raw["gpu-infra:cluster"], "autoscaler": {"enabled": False}}
    plan = build_plan(parse(raw, name))
    assert any("cluster.autoscaler.enabled is false" in n for n in plan.notes)


def _user_texts(plan: Plan) -> list[str]:
    op = plan.operator
    assert op is not None
    texts = [p["description"] for p in op.integrations["jupyterhub"]["singleuser"]["profileList"]]
    defaults = op.integrations["kubeflow"]["spawnerFormDefaults"]
    return texts + [o["displayName"] for o in defaults["tolerationGroup"]["options"]]


def test_no_autoscaler_means_the_jupyterhub_and_kubeflow_choices_promise_no_warm_node():
    onprem = warm_sample("onprem-containerd")
    assert onprem.warm is not None and not any("warm" in t for t in _user_texts(onprem))
    name, raw = _raw(STACKS[[p.stem for p in STACKS].index("Pulumi.eks-g4dn")])
    raw["gpu-infra:cluster"] = {**raw["gpu-infra:cluster"], "autoscaler": {"enabled": False}}
    off = build_plan(parse(raw, name))
    assert not any("warm" in t for t in _user_texts(off))
    assert any("warm" in t for t in _user_texts(warm_sample("eks-g4dn")))


def test_placeholder_requests_fit_in_the_running_nodes_cpu_and_memory():
    plan = warm_sample("gke-t4")
    t = plan.warm.targets[0]  # type: ignore[union-attr]
    pod = pod_from_spec("p", t.deployment["spec"]["template"]["spec"])
    node = pool_nodes(plan)[t.pool].running
    assert pod.requests["cpu"] <= node.allocatable["cpu"]
    assert pod.requests["memory"] < Fraction(64 * 2**20)


# --------------------------------------------------------------------------------------------------
# Cost, quota and the plan table count warm nodes as running nodes


def test_cost_at_minimum_pays_for_warm_nodes_and_at_maximum_is_unchanged():
    cold, hot = estimate(sample("gke-t4")), estimate(warm_sample("gke-t4"))
    (p,) = hot.pools
    assert (p.warm, p.idle_nodes) == (1, 1)
    assert p.per_node is not None and cold.at_min is not None and hot.at_min is not None
    assert hot.at_min - cold.at_min == pytest.approx(p.per_node)
    assert hot.at_max == cold.at_max
    assert hot.to_json()["pools"]["gpu-t4"]["warmNodes"] == 1
    assert cold.to_json()["pools"]["gpu-t4"]["warmNodes"] == 0


def test_boot_disks_and_public_addresses_at_minimum_count_warm_nodes():
    def line(cost: Any, prefix: str) -> Any:
        return next(x for x in cost.lines if x.item.startswith(prefix))

    cold, hot = estimate(sample("gke-t4")), estimate(warm_sample("gke-t4"))
    disk = line(hot, "boot disks").at_min - line(cold, "boot disks").at_min
    assert disk == pytest.approx(100 * 0.10 / 730)  # one 100 GB pd-balanced disk
    ip = line(hot, "external IPv4").at_min - line(cold, "external IPv4").at_min
    assert ip == pytest.approx(0.005)
    eks_cold, eks_hot = estimate(sample("eks-g4dn")), estimate(warm_sample("eks-g4dn"))
    assert line(eks_hot, "boot disks").at_min > line(eks_cold, "boot disks").at_min


def test_warm_at_or_below_min_nodes_adds_nothing_at_minimum():
    p = PoolCost("p", 1.0, 2, 5, warm=1)
    assert p.idle_nodes == 2
    assert Cost((p,), None, "x").at_min == pytest.approx(2.0)


def _rows(plan: Plan) -> dict[str, Any]:
    return {r.key.quota: r for r in stack_demand(plan.config, Catalog.load(), plan)[1]}


def test_quota_needed_at_minimum_counts_warm_nodes_and_the_peak_is_unchanged():
    cold, hot = _rows(sample("gke-t4")), _rows(warm_sample("gke-t4"))
    t4 = "NVIDIA_T4_GPUS"
    assert (cold[t4].at_min, hot[t4].at_min) == (0, 1)
    assert cold[t4].needed == hot[t4].needed
    assert any("1 of them warm" in why for why in hot[t4].pools)
    row = Check.judged(hot[t4], Reading(None, None, "offline")).as_json()
    assert row["neededAtMinimum"] == 1 and row["needed"] == hot[t4].needed  # extended, not renamed


def test_eks_quota_at_minimum_counts_each_warm_nodes_vcpus():
    hot = warm_sample("eks-g4dn")
    rows = stack_demand(hot.config, Catalog.load(), hot)[1]
    gpu_rows = [r for r in rows if any("warm" in why for why in r.pools)]
    assert gpu_rows and all(r.at_min >= 4 for r in gpu_rows)  # g4dn.xlarge: 4 vCPUs a node


def _limit_rows(plan: Plan) -> dict[str, Any]:
    from quota.demand import stack_contributions
    from quota.limits import stack_limits

    demand = stack_contributions(plan.config, Catalog.load(), plan)
    sizings = list(dict.fromkeys(c.pool for c in demand.contributions))
    rows = stack_limits(demand.cloud, plan, plan.config.region, sizings).rows
    return {r.key.quota: r for r in rows}


def test_node_count_limit_rows_count_warm_nodes_at_minimum_as_the_instance_rows_do():
    cold, hot = _limit_rows(sample("gke-t4")), _limit_rows(warm_sample("gke-t4"))
    assert set(cold) == set(hot) and len(hot) == 2
    cluster, zone = "GKE_NODES_PER_CLUSTER", "GKE_NODES_PER_POOL_ZONE"
    assert hot[cluster].at_min == cold[cluster].at_min + 1  # the one warm T4 node
    assert hot[zone].at_min >= max(1, cold[zone].at_min)  # the largest pool zone's, warm included
    assert all(hot[q].needed == cold[q].needed for q in hot)
    eks = _limit_rows(warm_sample("eks-g4dn"))
    per_group = eks["L-BD136A63"]
    assert 1 <= per_group.at_min <= per_group.needed
    assert all(r.at_min <= r.needed for r in eks.values())


def test_plan_table_shows_warm_nodes_in_the_nodes_cell_and_counts_them_at_minimum():
    plan = warm_sample("gke-t4")
    rows = pool_rows(plan)
    lines: list[str] = []
    print_pools(plan, estimate(plan), rows, lines.append)
    print_totals(rows, lines.append)
    text = "\n".join(lines)
    assert "0-20 (1 warm)" in text
    assert "1 GPU nodes at minimum (warm nodes included: 1)" in text
    cold: list[str] = []
    print_totals(pool_rows(sample("gke-t4")), cold.append)
    assert "0 GPU nodes at minimum" in cold[0] and "warm" not in cold[0]


# --------------------------------------------------------------------------------------------------
# Integration notes: users see how many warm nodes a choice keeps ready


def test_jupyterhub_profile_and_kubeflow_option_say_how_many_warm_nodes_the_pool_keeps():
    op = sample("gke-l4-spot").operator
    assert op is not None
    (profile,) = op.integrations["jupyterhub"]["singleuser"]["profileList"]
    assert "1 warm node kept ready" in profile["description"]
    defaults = op.integrations["kubeflow"]["spawnerFormDefaults"]
    (option,) = defaults["affinityConfig"]["options"]
    assert option["displayName"].endswith("(1 warm node)")
    cold = sample("gke-t4").operator
    assert cold is not None
    (plain,) = cold.integrations["jupyterhub"]["singleuser"]["profileList"]
    assert "warm" not in plain["description"]


def test_warm_on_a_gke_queued_provisioning_pool_is_refused_because_only_provisioning_requests_get_nodes():
    errs = _errors(_gke({"maxNodes": 2, "warm": 1, "queuedProvisioning": True}))
    assert "gpuPools[0].warm" in errs
    assert "ProvisioningRequest" in errs["gpuPools[0].warm"]


def test_placeholders_pass_pod_security_restricted_enforced_on_their_own_namespace():
    plan = warm_sample("gke-t4")
    assert plan.warm is not None
    labels = plan.warm.namespace["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "restricted"
    spec = plan.warm.targets[0].deployment["spec"]["template"]["spec"]
    (c,) = spec["containers"]
    sc = c["securityContext"]
    # The restricted profile's container rules (pod-security-standards, "Restricted").
    assert sc["runAsNonRoot"] is True and sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"] == {"drop": ["ALL"]}
    assert sc["seccompProfile"] == {"type": "RuntimeDefault"}
    assert spec["automountServiceAccountToken"] is False  # the pause container calls no API


def test_changing_warm_updates_the_placeholder_deployment_in_place():
    from infra.core.diff import diff

    def res(replicas: int) -> dict[str, Any]:
        d = copy.deepcopy(warm_sample("gke-t4").warm.targets[0].deployment)  # type: ignore[union-attr]
        d["spec"]["replicas"] = replicas
        t = "kubernetes:apps/v1:Deployment"
        return {
            "urn": f"urn:pulumi:s::p::{t}::warm-gpus-gpu-t4",
            "id": "warm_id",
            "type": t,
            "name": "warm-gpus-gpu-t4",
            "custom": True,
            "inputs": d,
            "dependsOn": [],
        }

    (change,) = diff([res(1)], [res(2)])
    assert change.op == "update"


def test_a_gpu_namespace_named_like_the_warm_namespace_is_refused_naming_both_keys():
    raw = _gke({"maxNodes": 2, "warm": 1})
    raw["gpu-infra:gpuNamespaces"] = [{"name": warm_names("t")[0], "gpus": 1}]
    errs = _errors(raw)
    assert "gpuPools[0].warm" in errs and "gpuNamespaces[0].name" in errs["gpuPools[0].warm"]


def test_warm_is_refused_on_a_capacity_block_pool_that_eks_scales_to_zero_before_it_ends():
    block = {
        "machineType": "p5.48xlarge",
        "capacityType": "CAPACITY_BLOCK",
        "capacityReservation": {"id": "cr-0123456789abcdef0"},
        "zones": ["usw2-az2"],
    }
    errs = _errors(_eks(block))
    assert "gpuPools[0].warm" in errs
    assert "40 minutes before it ends" in errs["gpuPools[0].warm"]
    cold = _eks(block)
    cold["gpu-infra:gpuPools"][0]["warm"] = 0
    assert build_plan(parse(cold, "t")).warm is None


@pytest.mark.parametrize(
    ("stack", "namespace", "klass"),
    [
        ("gke-t4", "gpu-warm-gke-t4", "gpu-infra-warm-gke-t4"),
        ("Prod_EU", "gpu-warm-prod-eu-", "gpu-infra-warm-prod-eu-"),
        ("x" * 80, "gpu-warm-xxx", "gpu-infra-warm-" + "x" * 80),
    ],
    ids=["plain", "renamed-gets-a-hash", "long-namespace-cut-to-63"],
)
def test_warm_namespace_and_priority_class_are_per_stack_dns1123_names(
    stack: str, namespace: str, klass: str
):
    ns, pc = warm_names(stack)
    assert ns.startswith(namespace) and pc.startswith(klass)
    label = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
    assert len(ns) <= 63 and label.fullmatch(ns)
    assert len(pc) <= 253 and all(label.fullmatch(part) for part in pc.split("."))


def test_two_stacks_on_one_cluster_get_different_warm_objects():
    a, b = warm_names("Prod_EU"), warm_names("prod-eu")
    assert a[0] != b[0] and a[1] != b[1]
    assert warm_names("x" * 80 + "a") != warm_names("x" * 80 + "b")


def test_cost_warm_note_counts_nodes_at_minimum_without_calling_them_the_minnodes_key():
    from infra.planview.table import print_cost

    # A best-effort GKE pool: minNodes 1, started with 1 node in each of 3 zones.
    p = PoolCost("p", 1.0, 3, 8, warm=1)
    lines: list[str] = []
    print_cost(Cost((p,), None, "x"), lines.append)
    (line,) = [ln for ln in lines if "placeholder-held" in ln]
    assert "minNodes" not in line
    assert "at minimum 3 nodes: warm 1 placeholder-held (paid while idle), 3 without" in line
