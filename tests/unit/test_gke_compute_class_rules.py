"""One test per GKE ComputeClass rule the planner encodes, named after the rule.

Fallback pools bound to a class, its priorities each with their own capacity, active migration.
Each test cites where GKE states the rule; docs/gke.md's "GKE rules we enforce" lists the same.
"""

from __future__ import annotations

from infra.core.diff import diff
from infra.core.gke.planner import gke_pool_outputs
from tests.unit.gke_fixtures import G2, errors, plan

# --- ComputeClass (https://cloud.google.com/kubernetes-engine/docs/concepts/about-custom-compute-classes)

FALLBACK = {
    **G2,
    "spot": True,
    "fallback": [
        {"machineType": "g2-standard-8"},
        {"machineType": "n1-standard-8", "gpu": {"type": "nvidia-tesla-t4"}},
    ],
}


def test_compute_class_hints_select_the_class_only_so_pods_fall_back():
    g = plan(FALLBACK)
    for p in g.pools:
        assert p.hints.node_selector == {"cloud.google.com/compute-class": "gpu-t4"}
    per_pool = {
        p.name: {
            "gpuType": p.accelerator,
            "gpuModel": p.hints.gpu_model,
            "gpusPerNode": p.hints.gpus_per_node,
            "physicalGpusPerNode": p.accelerator_count,
            "nodeSelector": {"cloud.google.com/gke-accelerator": p.accelerator},
            "tolerations": p.hints.tolerations(),
        }
        for p in g.pools
    }
    out = gke_pool_outputs(g, per_pool)
    assert list(out) == ["gpu-t4"]  # one entry per class
    assert out["gpu-t4"]["nodeSelector"] == {"cloud.google.com/compute-class": "gpu-t4"}
    assert out["gpu-t4"]["pools"] == ["gpu-t4", "gpu-t4-0a12e4", "gpu-t4-a31395"]


def test_every_pool_of_a_class_names_its_gpupools_entry_and_is_reached_through_the_class():
    # A pod selects the class by its label and GKE picks the priority; the class taint keeps other
    # pods off (https://cloud.google.com/kubernetes-engine/docs/how-to/use-node-pools-compute-class).
    g = plan(FALLBACK)
    for p in g.pools:
        assert p.hints.spec == "gpu-t4"
        assert p.hints.group is not None and p.hints.group.name == "gpu-t4"
        assert p.hints.group.selector == {"cloud.google.com/compute-class": "gpu-t4"}
        taint = p.hints.group.taint
        assert taint is not None and taint in p.hints.taints
        assert (taint.key, taint.value, taint.effect) == (
            "cloud.google.com/compute-class",
            "gpu-t4",
            "NoSchedule",
        )
    (alone,) = plan(G2).pools
    assert alone.hints.spec is None and alone.hints.group is None


def test_compute_class_active_migration_is_off_unless_asked_as_it_evicts_running_gpu_pods():
    # about-custom-compute-classes#active-migration: GKE moves running pods to a higher priority;
    # a Spot-first GPU class would evict Jobs and notebooks whenever Spot returns.
    (cc,) = plan(FALLBACK).compute_classes
    assert "activeMigration" not in cc.manifest()  # the CRD default: optimizeRulePriority false
    (opted,) = plan({**FALLBACK, "activeMigration": True}).compute_classes
    assert opted.manifest()["activeMigration"] == {"optimizeRulePriority": True}


def test_active_migration_without_a_compute_class_is_refused_naming_the_key():
    reason = errors({**G2, "activeMigration": True})["gpuPools[0].activeMigration"]
    assert "no ComputeClass" in reason


def test_dropping_active_migration_from_a_running_class_is_an_in_place_update():
    # pulumi-kubernetes replaces a ComputeClass only for a new metadata.name (lifecycle.csv); a
    # running gke-l4-spot's class loses spec.activeMigration on the next `pulumi up`, in place.
    (cc,) = plan(FALLBACK).compute_classes
    urn = "urn:pulumi:s::p::kubernetes:cloud.google.com/v1:ComputeClass::c"
    base = {"urn": urn, "type": "kubernetes:cloud.google.com/v1:ComputeClass", "name": "c"}
    new_spec = cc.manifest()
    old_spec = {**new_spec, "activeMigration": {"optimizeRulePriority": True}}
    meta = {"name": cc.name}
    (c,) = diff(
        [{**base, "inputs": {"metadata": meta, "spec": old_spec}}],
        [{**base, "inputs": {"metadata": meta, "spec": new_spec}}],
    )
    assert c.op == "update" and c.properties == ("spec.activeMigration",)


def test_compute_class_does_not_scale_up_other_pools_when_unsatisfiable():
    (cc,) = plan(FALLBACK).compute_classes
    spec = cc.manifest()
    assert spec["whenUnsatisfiable"] == "DoNotScaleUp"
    assert all(list(rule) == ["nodepools"] for rule in spec["priorities"])


# --- ComputeClass priorities each with their own capacity
# (https://cloud.google.com/kubernetes-engine/docs/concepts/about-custom-compute-classes)

A3 = {"machineType": "a3-highgpu-8g", "gpu": None}


def test_compute_class_chain_reservation_then_spot_then_on_demand_has_capacity_per_priority():
    reserved = {
        **A3,
        "reservation": {"type": "specific", "name": "h100"},
        "zones": ["us-central1-a"],
    }
    fallback = [{**A3, "spot": True}, {**A3, "zones": ["us-central1-c"]}]
    g = plan({**reserved, "fallback": fallback})
    main, spot, on_demand = g.pools
    assert (main.reservation_type, main.reservation_name, main.spot) == (
        "SPECIFIC_RESERVATION",
        "h100",
        False,
    )
    assert (spot.reservation_type, spot.spot) == (None, True)
    assert (on_demand.reservation_type, on_demand.spot, on_demand.flex_start) == (
        None,
        False,
        False,
    )
    assert on_demand.node_locations == ("us-central1-c",)
    assert g.compute_classes[0].pools == (main.name, spot.name, on_demand.name)


def test_fallback_does_not_inherit_flex_start_or_queued_provisioning():
    g = plan({**A3, "flexStart": {}, "fallback": [{**A3, "spot": True}]})
    main, fb = g.pools
    assert main.flex_start and not fb.flex_start and not fb.queued_provisioning
    assert fb.auto_repair is True and fb.max_surge == 1


def test_fallback_capacity_rules_apply_per_entry():
    bad = [{**A3, "spot": True, "reservation": {"type": "any"}}]
    assert "gpuPools[0].fallback[0].reservation" in errors({**A3, "spot": True, "fallback": bad})
