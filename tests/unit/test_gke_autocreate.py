"""GKE node pool auto-creation (``gpuPools[].autoCreate``), one test per rule, named after it.

Sources: https://cloud.google.com/kubernetes-engine/docs/how-to/node-auto-provisioning
(Limitations), the ComputeClass CRD (https://cloud.google.com/kubernetes-engine/docs/reference/crds/computeclass)
and https://cloud.google.com/kubernetes-engine/docs/concepts/node-auto-provisioning.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import Any

import pytest

from infra.core.catalog.vendored import DATA_DIR, Catalog, read_rows
from infra.core.cost import estimate
from infra.core.diff import diff
from infra.core.gke import nodes
from infra.core.gke.autocreate import BOOT_DISK_TYPES, priority
from infra.core.gke.planner import gke_pool_outputs
from infra.core.labels import GKE_COMPUTE_CLASS_LABEL
from infra.core.plan import Plan
from infra.core.scheduling.proof import plan_workloads, pool_nodes, prove
from infra.planview.table import print_cost
from quota import limits
from quota.demand import stack_demand, stack_sizings
from tests.unit.gke_autocreate_fixtures import ABOVE, build, errors

# GKE version gates judged while their minors were supported (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("gke_minors_supported")


@functools.cache
def sample() -> Plan:
    return build()


def manifest() -> dict[str, Any]:
    g = sample().platform.plan
    assert g is not None
    (cc,) = g.compute_classes
    return cc.manifest("nodes@demo-project.iam.gserviceaccount.com")


def test_auto_create_plans_a_compute_class_with_node_pool_auto_creation_in_fallback_order():
    spec = manifest()
    assert spec["nodePoolAutoCreation"] == {"enabled": True}
    assert spec["whenUnsatisfiable"] == "DoNotScaleUp"
    first, second = spec["priorities"]
    assert first["machineType"] == "g2-standard-8" and first["spot"] is True
    assert first["gpu"] == {"type": "nvidia-l4", "count": 1, "driverVersion": "default"}
    assert second["machineType"] == "n1-standard-8" and second["spot"] is False
    assert second["gpu"]["type"] == "nvidia-tesla-t4"
    # No priority names a fixed pool: "Nodepool field cannot be set along with other fields".
    assert all("nodepools" not in p for p in spec["priorities"])


def test_every_auto_created_pool_is_in_the_plan_marked_auto_created():
    g = sample().platform.plan
    assert g is not None
    assert [p.auto_create for p in g.pools] == [True, True]
    assert all(p.compute_class == "gpu-t4" for p in g.pools)


def test_auto_created_pools_run_as_the_stack_node_sa_named_by_the_compute_class():
    assert manifest()["nodePoolConfig"]["serviceAccount"].startswith("nodes@")


def test_surge_blue_green_and_shielded_settings_are_never_sent_per_auto_created_pool():
    # "The following settings aren't supported by ComputeClasses: Surge upgrades or blue-green
    # upgrades; Node integrity and secure boot" (node-auto-provisioning#limitations).
    text = repr(manifest())
    for key in ("upgradeSettings", "maxSurge", "blueGreen", "shielded", "SecureBoot", "integrity"):
        assert key not in text


def test_auto_created_nodes_carry_the_pool_labels_and_user_taints_not_gke_own_taints():
    spec = manifest()
    assert spec["priorities"][0]["nodeLabels"] == {"team": "ml", "gpu-infra/pool": "gpu-t4"}
    assert GKE_COMPUTE_CLASS_LABEL not in spec["priorities"][0]["nodeLabels"]
    assert spec["nodePoolConfig"]["taints"] == [
        {"key": "dedicated", "value": "ml", "effect": "NoSchedule"}
    ]
    assert spec["nodePoolConfig"]["imageType"] == "cos_containerd"  # the CRD's lowercase enum


def test_auto_created_pool_driver_version_is_gke_driver_mode():
    g = build({"gpu": {"driver": "gke-latest"}}).platform.plan
    assert g is not None
    assert g.compute_classes[0].manifest()["priorities"][0]["gpu"]["driverVersion"] == "latest"


def test_auto_create_is_refused_with_the_gpu_operator_as_compute_class_driver_is_default_or_latest():
    reason = errors(gpuOperator={"enabled": True})["gpuPools[0].autoCreate"]
    assert "gpuOperator.enabled" in reason and "'default' or 'latest'" in reason


def test_auto_created_pools_have_no_minimum_node_count():
    assert "no minimum" in errors({"minNodes": 1})["gpuPools[0].minNodes"]


@pytest.mark.parametrize(
    ("pool", "key"),
    [
        ({"queuedProvisioning": True, "spot": False, "fallback": None}, "queuedProvisioning"),
        ({"bestEffort": {"minNodes": 1}}, "bestEffort"),
        ({"compactPlacement": True, "zones": ["us-central1-a"]}, "compactPlacement"),
        (
            {
                "machineType": "n1-standard-8",
                "gpu": {
                    "type": "nvidia-tesla-t4",
                    "sharing": {"strategy": "time-sharing", "maxSharedClientsPerGpu": 2},
                },
            },
            "gpu.sharing",
        ),
        (
            {"fallback": [{"machineType": "g2-standard-8", "flexStart": {}}]},
            "fallback[0].flexStart",
        ),
    ],
)
def test_settings_a_compute_class_priority_cannot_carry_are_refused_naming_the_key(pool, key):
    reason = errors(pool)[f"gpuPools[0].{key}"]
    assert "autoCreate" in reason


@pytest.mark.parametrize(
    ("pool", "key", "crd_field"),
    [
        (
            {
                "machineType": "n1-standard-8",
                "gpu": {
                    "type": "nvidia-tesla-t4",
                    "sharing": {"strategy": "mps", "maxSharedClientsPerGpu": 2},
                },
            },
            "gpu.sharing",
            "priorities[].gpu.gpuSharing",
        ),
        (
            {"fallback": [{"machineType": "g2-standard-8", "flexStart": {}}]},
            "fallback[0].flexStart",
            "priorities[].flexStart",
        ),
    ],
)
def test_sharing_and_flex_start_refusals_say_the_crd_has_the_field_and_gpu_infra_does_not_map_it(
    pool, key, crd_field
):
    # The ComputeClass CRD has gpu.gpuSharing and flexStart: a refusal claiming otherwise is false.
    reason = errors(pool)[f"gpuPools[0].{key}"]
    assert crd_field in reason and "gpu-infra does not map" in reason


def test_every_boot_disk_the_planner_picks_is_in_the_compute_class_boot_disk_enum():
    # priorities[].storage.bootDiskType: pd-balanced, pd-standard, pd-ssd, hyperdisk-balanced.
    series = read_rows("gcp_machine_series.csv", DATA_DIR)
    assert {d for r in series for d in r["boot_disk_types"].split("|")} <= set(BOOT_DISK_TYPES)


def test_specific_shared_reservation_becomes_a_specific_affinity_with_its_project():
    pool = {
        "spot": False,
        "zones": ["us-central1-a"],
        "reservation": {"type": "specific", "name": "projects/other-project/reservations/l4-res"},
    }
    g = build(pool).platform.plan
    assert g is not None
    rule = g.compute_classes[0].manifest()["priorities"][0]
    assert rule["reservations"] == {
        "affinity": "Specific",
        "specific": [{"name": "l4-res", "project": "other-project", "zones": ["us-central1-a"]}],
    }


@pytest.mark.parametrize("name", ["l4-res", "projects/other-project/reservations/l4-res"])
def test_specific_reservation_priority_has_no_location_zones_its_zones_go_on_the_reservation(name):
    # GKE: "compute-class NAME contains priorities using location config with specific
    # reservations enabled"; reservations.specific[].zones carries them instead.
    pool = {
        "spot": False,
        "zones": ["us-central1-a"],
        "reservation": {"type": "specific", "name": name},
    }
    g = build(pool).platform.plan
    assert g is not None
    main, fallback = g.compute_classes[0].manifest()["priorities"]
    assert "location" not in main
    assert main["reservations"]["specific"][0]["zones"] == list(g.pools[0].node_locations)
    assert fallback["location"] == {"zones": list(g.pools[1].node_locations)}  # no reservation


def test_any_reservation_priority_keeps_location_zones():
    g = build({"spot": False, "reservation": {"type": "any"}}).platform.plan
    assert g is not None
    rule = g.compute_classes[0].manifest()["priorities"][0]
    assert rule["reservations"] == {"affinity": "AnyBestEffort"} and "location" in rule


def test_fixed_pool_fallback_class_priorities_name_node_pools_only_even_with_a_reservation():
    # The reservation is the fixed NodePool's reservationAffinity; the class's rule holds
    # `nodepools` alone, so the location/specific-reservation conflict cannot arise there.
    pool = {
        "autoCreate": False,
        "spot": False,
        "zones": ["us-central1-a"],
        "reservation": {"type": "specific", "name": "r"},
    }
    g = build(pool, gpuOperator={"enabled": True}).platform.plan
    assert g is not None
    rules = g.compute_classes[0].manifest()["priorities"]
    assert all(set(r) == {"nodepools"} for r in rules)


def test_no_cluster_autoscaling_block_is_sent_the_compute_class_names_the_node_identity():
    # flattenClusterAutoscaling reads autoProvisioningDefaults back only with node
    # auto-provisioning on (hashicorp/terraform-provider-google#25307): sent with it off, a
    # permanent diff. nodePoolConfig.serviceAccount sets the identity instead.
    for cluster in (ABOVE, {**ABOVE, "existing": True, "cpuNodes": 3}):
        g = build(cluster=cluster).platform.plan
        assert g is not None
        assert any("nodePoolConfig.serviceAccount" in n for n in g.notes)
        assert any("maxNodes is what cost and quota plan for" in n for n in g.notes)
    assert (
        manifest()["nodePoolConfig"]["serviceAccount"]
        == "nodes@demo-project.iam.gserviceaccount.com"
    )


def test_removing_cluster_autoscaling_from_a_running_cluster_is_no_change_terraform_keeps_it():
    # cluster_autoscaling is Optional+Computed (resource_container_cluster.go): a running stack
    # that sent the block shows no change on its cluster, nothing is sent, GKE keeps the defaults.
    block = {
        "enabled": False,
        "autoProvisioningDefaults": {"serviceAccount": "a", "oauthScopes": ["s"]},
    }
    urn = "urn:pulumi:s::p::gcp:container/cluster:Cluster::c"
    old = {"urn": urn, "type": "gcp:container/cluster:Cluster", "name": "c", "custom": True}
    new = {**old, "inputs": {"name": "ml"}}
    assert diff([{**old, "inputs": {"name": "ml", "clusterAutoscaling": block}}], [new]) == []
    changed = {"name": "ml", "clusterAutoscaling": {**block, "enabled": True}}
    (c,) = diff(
        [{**old, "inputs": {"name": "ml", "clusterAutoscaling": block}}],
        [{**new, "inputs": changed}],
    )
    assert c.op == "update"  # a value sent is still an in-place update, never a replacement


def test_fixed_compute_class_manifest_has_no_node_pool_config_and_no_auto_creation():
    fixed = build({"autoCreate": False}, gpuOperator={"enabled": True}).platform.plan
    assert fixed is not None
    spec = fixed.compute_classes[0].manifest("ignored@x.iam.gserviceaccount.com")
    assert spec["nodePoolAutoCreation"] == {"enabled": False} and "nodePoolConfig" not in spec


def test_auto_created_node_is_modelled_without_a_stack_named_gke_nodepool_label():
    g = sample().platform.plan
    assert g is not None
    node = nodes.gke_template_node(g.pools[0])
    assert nodes.GKE_NODEPOOL not in node.labels
    assert node.labels[GKE_COMPUTE_CLASS_LABEL] == "gpu-t4"
    assert {
        "key": GKE_COMPUTE_CLASS_LABEL,
        "value": "gpu-t4",
        "effect": "NoSchedule",
    } in node.taints


def test_every_priority_node_fits_every_workload_and_breaking_one_fails_the_proof():
    plan = sample()
    assert prove(plan) == []
    pools = pool_nodes(plan)
    name = plan.platform.plan.pools[1].name  # type: ignore[union-attr]
    broken = pools[name].running
    labels = {k: v for k, v in broken.labels.items() if k != GKE_COMPUTE_CLASS_LABEL}
    pools[name] = replace(pools[name], running=replace(broken, labels=labels))
    assert prove(plan, pools) != []


def test_integrations_select_the_compute_class_only():
    g = sample().platform.plan
    assert g is not None
    per_pool = {
        p.name: {
            "gpuType": p.accelerator,
            "gpuModel": p.hints.gpu_model,
            "nodeSelector": p.hints.node_selector,
            "tolerations": p.hints.tolerations(),
            "maxNodes": p.total_max,
        }
        for p in g.pools
    }
    out = gke_pool_outputs(g, per_pool)
    assert out["gpu-t4"]["nodeSelector"] == {GKE_COMPUTE_CLASS_LABEL: "gpu-t4"}
    assert {
        "key": GKE_COMPUTE_CLASS_LABEL,
        "operator": "Equal",
        "value": "gpu-t4",
        "effect": "NoSchedule",
    } in out["gpu-t4"]["tolerations"]
    assert out["gpu-t4"]["maxNodes"] == 8


def test_cost_at_maximum_counts_every_priority_at_its_max_nodes():
    cost = estimate(sample())
    assert {p.name: p.max_nodes for p in cost.pools} == {"gpu-t4": 4, "gpu-t4-a31395": 4}


def test_cost_summary_says_an_auto_created_pool_maximum_is_not_a_cap_gke_enforces():
    # A ComputeClass has no node limit and node auto-provisioning (whose limits would) is off.
    lines: list[str] = []
    print_cost(estimate(sample()), lines.append)
    (line,) = [x for x in lines if "not a cap GKE enforces" in x]
    assert "gpu-t4" in line
    fixed: list[str] = []
    print_cost(estimate(build({"autoCreate": False}, gpuOperator={"enabled": True})), fixed.append)
    assert not any("not a cap GKE enforces" in x for x in fixed)


def test_with_node_auto_provisioning_on_the_cost_summary_prints_its_limits_as_the_cap():
    # "The cluster autoscaler does not create new nodes if doing so would exceed one of the
    # defined limits" (https://cloud.google.com/kubernetes-engine/docs/concepts/node-auto-provisioning#resource_limits).
    plan = build(cluster={**ABOVE, "minMasterVersion": "1.32"})
    lines: list[str] = []
    print_cost(estimate(plan), lines.append)
    (line,) = [x for x in lines if "at maximum:" in x]
    assert "node auto-provisioning limits cap the cluster's totals:" in line
    assert "nvidia-tesla-t4 " in line and "not a cap GKE enforces" not in line
    table = plan.platform.table_notes()
    assert table and table[0].startswith("node auto-provisioning: on")
    assert sample().platform.table_notes() == []


def quota_rows(plan: Plan) -> dict[str, int]:
    catalog = Catalog.load()
    _, rows = stack_demand(plan.config, catalog, plan)
    _, sizings = stack_sizings(plan.config, catalog, plan)
    ld = limits.stack_limits("gcp", plan, "us-central1", sizings)
    return {r.key.quota: r.needed for r in (*rows, *ld.rows)}


def test_auto_created_pool_needs_its_max_nodes_in_one_zone_and_the_gpu_quota_of_a_fixed_pool():
    auto = quota_rows(sample())
    assert auto["GKE_NODES_PER_POOL_ZONE"] == 4  # all 4 may land in one zone
    fixed = quota_rows(build({"autoCreate": False}, gpuOperator={"enabled": True}))
    assert fixed["GKE_NODES_PER_POOL_ZONE"] < 4  # a fixed pool's total spreads over its zones
    for metric in ("PREEMPTIBLE_NVIDIA_L4_GPUS", "NVIDIA_T4_GPUS", "GPUS_ALL_REGIONS"):
        assert auto[metric] == fixed[metric] > 0, metric


# Property names of the ComputeClass CRD (cloud.google.com/v1, spec.priorities[].* and
# spec.nodePoolConfig.*; https://cloud.google.com/kubernetes-engine/docs/reference/crds/computeclass).
CRD_PRIORITY_FIELDS = {
    "capacityCheckWaitTimeSeconds", "flexStart", "gpu", "location", "machineFamily",
    "machineType", "maxPodsPerNode", "maxRunDurationSeconds", "minCores", "minCpuPlatform",
    "minMemoryGb", "nodeLabels", "nodeSystemConfig", "nodepools", "placement", "podFamily",
    "reservations", "spot", "storage", "taints", "tpu",
}  # fmt: skip
CRD_NODE_POOL_CONFIG_FIELDS = {
    "autoRepair", "autoUpgrade", "confidentialNodeType", "gvnic", "imageStreaming", "imageType",
    "ipType", "loggingConfig", "nodeLabels", "resourceManagerTags", "serviceAccount", "taints",
    "workloadType",
}  # fmt: skip


def test_every_field_sent_is_a_compute_class_crd_field():
    spec = manifest()
    for rule in spec["priorities"]:
        assert set(rule) <= CRD_PRIORITY_FIELDS
        assert set(rule["gpu"]) <= {"count", "driverVersion", "type"}
        assert set(rule["storage"]) <= {"bootDiskSize", "bootDiskType", "localSSDCount"}
    assert set(spec["nodePoolConfig"]) <= CRD_NODE_POOL_CONFIG_FIELDS


def test_each_priority_carries_its_pools_zones_boot_disk_and_bundled_local_ssds():
    g = sample().platform.plan
    assert g is not None
    spec = manifest()
    for pool, rule in zip(g.pools, spec["priorities"], strict=True):
        assert rule["location"] == {"zones": list(pool.node_locations)}
        assert rule["storage"] == {"bootDiskType": pool.disk_type, "bootDiskSize": 100}
    assert priority(replace(g.pools[0], local_ssd_count=2))["storage"]["localSSDCount"] == 2
    config = spec["nodePoolConfig"]
    assert config["autoUpgrade"] is True and config["autoRepair"] is True
    assert config["gvnic"] == {"enabled": True}  # COS: on, as for fixed pools


def test_an_auto_creating_pool_without_fallbacks_is_reached_through_its_class_taint_tolerated():
    # Its nodes carry the class taint like any class pool (gke/pools.py _bind), so every workload
    # the plan describes must go through the class: the plan (which runs the proof) succeeds and
    # each workload aimed at the pool tolerates the taint.
    plan = build({"fallback": []})
    assert prove(plan) == []
    assert plan.platform.name == "gke"
    pool = plan.platform.plan.pools[0].name
    aimed = [w for w in plan_workloads(plan) if pool in w.pools]
    assert aimed
    for w in aimed:
        assert any(t.get("key") == GKE_COMPUTE_CLASS_LABEL for t in w.pod.tolerations), w.pod.name
