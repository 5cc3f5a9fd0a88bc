"""Warm GPUs (``gpuPools[].warm``): placeholder pods that keep nodes ready, below every priority
the plan emits, landing on the pool's node at zero and running, counted in cost and quota.

The config, the objects, platforms without an autoscaler and the integrations' notes here; the
scheduling proof and priorities, and cost and quota, in the sibling modules.
"""

from __future__ import annotations

import copy
import re
from fractions import Fraction
from typing import Any

import pytest

from infra.core.catalog.pins import pin
from infra.core.catalog.vendored import DATA_DIR
from infra.core.config.stack import parse
from infra.core.cost import Cost, PoolCost
from infra.core.errors import ConfigErrors
from infra.core.plan import Plan, build_plan
from infra.core.pools import idle_nodes
from infra.core.scheduling.predicates import pod_from_spec
from infra.core.scheduling.proof import pool_nodes
from infra.core.warm import (
    PAUSE_PIN,
    WARM_PRIORITY,
    warm_names,
)
from tests.unit.warm_fixtures import STACKS, _eks, _gke, _raw, sample, warm_sample


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
    image = pin(PAUSE_PIN, DATA_DIR).image
    assert c["image"] == image and ":" in image and not image.endswith(":latest")
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
