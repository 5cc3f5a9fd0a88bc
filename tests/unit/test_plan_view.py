"""The plan a person decides on: cost from catalog prices, the change table, MIG arithmetic, --stack."""

from __future__ import annotations

import pytest

from infra.cli import known_stacks, stack_file, stack_path
from infra.core.config.stack import load_stack_file, parse
from infra.core.cost import PoolCost, estimate
from infra.core.diff import changed_paths, diff, forcing_rules
from infra.core.errors import ConfigErrors
from infra.core.plan import build_plan
from infra.core.sharing import mig_instances_per_gpu
from infra.planview.table import pool_rows
from tests.conftest import eks_shape_config, gke_config
from tests.unit.gke_fixtures import a100_mig_shared

NP = "gcp:container/nodePool:NodePool"
NG = "aws:eks/nodeGroup:NodeGroup"


def _plan(raw):
    return build_plan(parse(raw, "t"))


# --- cost -----------------------------------------------------------------------------------


def test_cost_at_minimum_is_the_system_pool_alone_when_every_gpu_pool_scales_from_zero():
    cost = estimate(_plan(gke_config()))
    assert cost.system is not None
    assert cost.at_min == pytest.approx(cost.system.per_node * cost.system.min_nodes)
    # regional cluster: initialNodeCount 1 per zone x 3 default zones starts 3 e2-standard-4
    # (0.13402 in us-central1, gcp_vm_prices.csv) although totalMinNodeCount is 1
    assert cost.system.min_nodes == 3
    assert cost.at_min == pytest.approx(3 * 0.13402)


def test_regional_system_pool_at_minimum_counts_initial_node_count_per_zone_times_three_zones():
    cost = estimate(_plan(gke_config()))
    assert cost.system is not None and "initialNodeCount 1 per zone x 3 zones" in cost.system.note


def test_zonal_system_pool_at_minimum_counts_one_initial_node():
    raw = gke_config()
    raw["gpu-infra:cluster"] = {**raw["gpu-infra:cluster"], "location": "us-central1-a"}
    raw["gpu-infra:gpuPools"][0].pop("zones", None)
    cost = estimate(_plan(raw))
    assert cost.system is not None and cost.system.min_nodes == 1


def test_t4_node_price_is_the_n1_host_plus_the_attached_gpu():
    # n1-highmem-8 0.47321 (gcp_vm_prices.csv) + 1x T4 0.35 (gcp_accelerators.csv), us-central1
    cost = estimate(_plan(gke_config()))
    assert cost.pools[0].per_node == pytest.approx(0.82321)
    assert cost.at_max == pytest.approx(20 * 0.82321 + 3 * 0.13402)


def test_spot_pools_are_priced_at_the_spot_price():
    cost = estimate(_plan(gke_config({"spot": True})))
    assert cost.pools[0].spot
    assert cost.pools[0].per_node == pytest.approx(0.11922 + 0.14)


def test_an_unpriced_running_node_makes_the_total_unknown_never_zero():
    p = PoolCost("x", None, 1, 2)
    assert p.at(0) == 0.0 and p.at(1) is None


def test_cost_json_has_the_contract_shape():
    doc = estimate(_plan(gke_config())).to_json()
    assert set(doc) >= {"currency", "atMinPerHour", "atMaxPerHour", "pools", "pricesAsOf"}
    assert doc["currency"] == "USD" and doc["pricesAsOf"] == "2026-11-26"
    assert doc["pools"]["gpu-t4"]["perNodePerHour"] == 0.82321


def test_cost_json_keys_the_system_pool_apart_from_gpu_pools():
    doc = estimate(_plan(gke_config())).to_json()
    assert "system" not in doc["pools"]
    assert doc["systemPool"]["name"] == "system" and doc["systemPool"]["minNodes"] == 3


def test_gke_gpu_pool_named_system_is_refused_the_system_pool_owns_that_name():
    raw = gke_config({"name": "system"})
    with pytest.raises(ConfigErrors) as e:
        _plan(raw)
    assert "gpuPools[0].name" in str(e.value) and "system" in str(e.value)


def test_own_hardware_has_no_price():
    _, raw = load_stack_file(stack_file("onprem-containerd"))
    cost = estimate(build_plan(parse(raw, "onprem-containerd")))
    assert (cost.at_min, cost.at_max, cost.system) == (None, None, None)
    assert cost.pools[0].note == "own hardware: no price"


# --- MIG arithmetic (NVIDIA MIG User Guide, Supported MIG Profiles) --------------------------

A100_40 = ("1g.5gb", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb")


@pytest.mark.parametrize(
    ("profile", "count"),
    [("1g.5gb", 7), ("1g.10gb", 4), ("2g.10gb", 3), ("3g.20gb", 2), ("4g.20gb", 1), ("7g.40gb", 1)],
)
def test_mig_instances_per_a100_40gb_match_nvidias_table(profile, count):
    assert mig_instances_per_gpu(profile, A100_40) == count


def test_mig_instances_per_a30_match_nvidias_table():
    a30 = ("1g.6gb", "2g.12gb", "4g.24gb")
    assert [mig_instances_per_gpu(p, a30) for p in a30] == [4, 2, 1]


def test_a_profile_the_gpu_lacks_has_no_count():
    assert mig_instances_per_gpu("1g.5gb", ("1g.6gb", "4g.24gb")) is None


def test_gke_mig_with_time_sharing_multiplies_allocatable_gpus():
    raw = gke_config(
        {**a100_mig_shared("time-sharing", 2), "maxNodes": 4},
        **{"gpu-infra:gpuOperator": {"enabled": False}},
    )
    raw["gpu-infra:cluster"]["location"] = "us-central1-a"
    row = pool_rows(_plan(raw))[0]
    assert (row.alloc, row.max_gpus) == (14, 4)


def test_the_table_row_shows_zones_and_capacity():
    row = pool_rows(_plan(gke_config({"spot": True})))[0]
    assert row.zones == ("us-central1-a", "us-central1-b", "us-central1-c", "us-central1-f")
    assert row.capacity == "spot"


# --- change preview -------------------------------------------------------------------------


def _res(inputs, type_=NP, name="ml-gpu-gpu-t4"):
    return {
        "urn": f"urn:pulumi:s::p::{type_}::{name}",
        "type": type_,
        "name": name,
        "inputs": inputs,
    }


def test_accelerator_count_change_forces_replacement_gke_refuses_accelerator_updates():
    # GKE: "Accelerator count: 1 should not be updated." (GoogleCloudPlatform/magic-modules#18493)
    old = _res({"nodeConfig": {"guestAccelerators": [{"type": "nvidia-tesla-t4", "count": 1}]}})
    new = _res({"nodeConfig": {"guestAccelerators": [{"type": "nvidia-tesla-t4", "count": 2}]}})
    (c,) = diff([old], [new])
    assert c.op == "replace"
    assert c.replace_because[0][0] == "nodeConfig.guestAccelerators[0].count"
    assert "should not be updated" in c.replace_because[0][1]
    assert "GPU pool" in c.disruptive


@pytest.mark.parametrize("prop", ["machineType", "diskType", "diskSizeGb"])
def test_machine_type_disk_type_and_size_update_in_place_magic_modules_9575(prop):
    old = _res({"nodeConfig": {prop: "a"}})
    new = _res({"nodeConfig": {prop: "b"}})
    (c,) = diff([old], [new])
    assert (c.op, c.properties) == ("update", (f"nodeConfig.{prop}",))
    assert "re-creates every node" in c.disruptive  # GKE migrates the nodes: pods are drained


def test_autoscaling_limits_update_in_place():
    # A raised maximum takes nothing down; a lowered one is judged as removing the nodes above it
    # (node_disruption.csv: GKE documents no rule either way).
    (c,) = diff(
        [_res({"autoscaling": {"totalMaxNodeCount": 10}})],
        [_res({"autoscaling": {"totalMaxNodeCount": 20}})],
    )
    assert c.op == "update" and not c.disruptive


@pytest.mark.parametrize("prop", ["instanceTypes", "capacityType", "amiType", "subnetIds"])
def test_eks_node_group_instance_types_capacity_ami_and_subnets_force_replacement(prop):
    (c,) = diff([_res({prop: ["a"]}, NG, "ml-gpu-ng")], [_res({prop: ["b"]}, NG, "ml-gpu-ng")])
    assert c.op == "replace"


def test_eks_node_group_scaling_labels_and_taints_update_in_place():
    old = _res({"scalingConfig": {"maxSize": 2}, "labels": {"a": "1"}}, NG, "ml-gpu-ng")
    new = _res({"scalingConfig": {"maxSize": 3}, "labels": {"a": "2"}}, NG, "ml-gpu-ng")
    assert diff([old], [new])[0].op == "update"


def test_replacing_the_cluster_or_the_system_pool_is_flagged_disruptive():
    cl = "gcp:container/cluster:Cluster"
    (c,) = diff([_res({"name": "a"}, cl, "ml-cluster")], [_res({"name": "b"}, cl, "ml-cluster")])
    assert c.op == "replace" and "cluster" in c.disruptive
    old = _res({"name": "system", "nodeConfig": {"oauthScopes": ["a"]}}, NP, "ml-system")
    new = _res({"name": "system", "nodeConfig": {"oauthScopes": ["b"]}}, NP, "ml-system")
    assert "system pool" in diff([old], [new])[0].disruptive


def test_created_deleted_and_unchanged_resources():
    a, b, c = _res({}, name="a"), _res({}, name="b"), _res({}, name="c")
    ops = {ch.name: ch.op for ch in diff([a, b], [b, c])}
    assert ops == {"a": "delete", "c": "create"}


def test_kubernetes_object_rename_forces_replacement_pulumi_kubernetes_force_new():
    ns = "kubernetes:core/v1:Namespace"
    old = _res({"metadata": {"name": "a"}}, ns, "x")
    new = _res({"metadata": {"name": "b"}}, ns, "x")
    assert diff([old], [new])[0].op == "replace"


def test_changed_paths_reports_leaves_and_list_items():
    assert changed_paths({"a": {"b": 1, "c": [1]}}, {"a": {"b": 2, "c": [1, 2]}}) == ["a.b", "a.c"]


def test_every_forcing_rule_names_its_source():
    rules = forcing_rules()
    assert len(rules) > 40
    assert all(r.source and ":" in r.type for r in rules)
    assert all(r.property or "no ForceNew" in r.source for r in rules)
    props = {(r.type, r.property) for r in rules}
    assert (NP, "nodeConfig.machineType") not in props  # updatable since provider 5.10.0


# --- --stack --------------------------------------------------------------------------------


def test_unknown_stack_lists_the_stacks_that_exist():
    with pytest.raises(ConfigErrors) as e:
        stack_file("gke-t5")
    msg = str(e.value)
    assert msg.startswith("--stack: no stack 'gke-t5'")
    assert all(s in msg for s in ("gke-t4", "eks-g4dn"))
    assert "gke-t4" in known_stacks()


def test_stack_accepts_a_path(tmp_path):
    f = tmp_path / "mine.yaml"
    f.write_text("config: {}\n")
    assert stack_path(str(f)) == f and stack_file(str(f)) == f


# --- catalog escape hatch: gpuPools[].shape -----------------------------------------------------

SHAPE = {"gpuModel": "nvidia-b300", "gpus": 8, "vcpus": 224, "memoryGb": 3968}


def test_a_declared_gke_shape_is_planned_with_a_note_that_the_facts_are_the_users():
    raw = gke_config(
        {"machineType": "a5-highgpu-8g", "gpu": None, "shape": SHAPE, "zones": ["us-central1-b"]}
    )
    plan = _plan(raw)
    (pool,) = plan.platform.plan.pools
    assert (pool.accelerator, pool.accelerator_count, pool.vcpus) == ("nvidia-b300", 8, 224)
    assert pool.node_locations == ("us-central1-b",)
    assert "these facts are yours" in plan.notes[0]
    assert estimate(plan).pools[0].per_node is None  # no catalog price for a declared type


def test_a_declared_shape_still_checks_zones_against_the_region():
    raw = gke_config(
        {"machineType": "a5-highgpu-8g", "gpu": None, "shape": SHAPE, "zones": ["us-east1-b"]}
    )
    with pytest.raises(ConfigErrors) as e:
        _plan(raw)
    assert "gpuPools[0].zones" in str(e.value)


def test_a_declared_eks_shape_is_planned_in_its_az_ids():
    plan = _plan(eks_shape_config("g9.2xlarge"))
    (g,) = plan.platform.plan.groups
    assert (g.instance_types, g.az_ids) == (("g9.2xlarge",), ("usw2-az1", "usw2-az2"))
    assert "assumed x86_64" in plan.notes[0]


def test_a_property_under_ignore_changes_is_no_change_the_engine_keeps_the_old_value():
    old = _res({"initialNodeCount": 0, "autoscaling": {"totalMaxNodeCount": 20}})
    new = _res({"initialNodeCount": 1, "autoscaling": {"totalMaxNodeCount": 20}})
    assert diff([old], [new], ignored={new["urn"]: ["initialNodeCount"]}) == []
    assert diff([old], [new])[0].op == "replace"  # initialNodeCount is ForceNew otherwise


def test_eks_cost_at_minimum_is_the_system_group_at_its_minimum():
    # m6i.large 0.096 in every us-west-2 AZ (aws_vm_prices.csv), system group min 2
    _, raw = load_stack_file(stack_file("eks-g4dn"))
    cost = estimate(build_plan(parse(raw, "eks-g4dn")))
    assert cost.at_min == pytest.approx(2 * 0.096)
    assert cost.pools[1].spot and cost.pools[1].per_node < cost.pools[0].per_node


def test_eks_system_group_is_priced_over_its_own_azs_not_every_network_az():
    # eks-zonal-spot: the network spans AZs where m6i.large has no catalog price; the system group
    # runs in the control-plane subnets only (m6i.large 0.096 there, aws_vm_prices.csv).
    _, raw = load_stack_file(stack_file("eks-zonal-spot"))
    plan = build_plan(parse(raw, "eks-zonal-spot"))
    cost = estimate(plan)
    assert (
        plan.platform.name == "eks"
        and plan.platform.plan.system is not None
        and plan.platform.plan.network is not None
    )
    assert set(plan.platform.plan.system.az_ids) < set(plan.platform.plan.network.az_ids)
    assert cost.system is not None and cost.system.per_node == pytest.approx(0.096)
    assert cost.at_min == pytest.approx(2 * 0.096)


def test_prices_as_of_is_the_kept_prices_date_not_the_regeneration_date():
    from infra.core.catalog.vendored import prices_as_of

    kept = ["source: moto; fetched: 2027-01-02", "prices as of: 2026-11-26 (previous file)"]
    assert prices_as_of(kept) == "2026-11-26"
    undated = ["source: moto; fetched: 2027-01-02", "prices kept from the previous file"]
    assert prices_as_of(undated) == "unknown"
    assert prices_as_of(["source: x", "fetched: 2026-11-26"]) == "2026-11-26"
