"""One test per GKE / Compute Engine rule on a GPU node pool, named after the rule.

Boot disks and capacity-limited machine types, zones and reservations, Dynamic Workload Scheduler,
capacity hints, gVNIC, compact placement, upgrade settings, initial node counts and the newest GPU
families. Each test cites where GKE states the rule (doc URL or the public error text); docs/gke.md's
"GKE rules we enforce" lists the same rules.
"""

from __future__ import annotations

import pytest

from infra.core.catalog.vendored import DATA_DIR, read_rows
from infra.core.config.stack import parse
from infra.core.cost import estimate
from infra.core.errors import Issues
from infra.core.gke.platform import gke_plan
from infra.core.gke.rules import check_compact
from infra.core.gke.series import compact_placement_families, load_series, series_of
from infra.core.plan import build_plan
from infra.core.sharing import mig_instances
from infra.planview.table import pool_rows
from tests.conftest import gke_config
from tests.unit.gke_fixtures import G2, a100_mig_shared, cluster, errors, plan

# GKE version gates judged while their minors were supported (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("gke_minors_supported")


# --- boot disks per machine series (https://cloud.google.com/compute/docs/accelerator-optimized-machines)


def test_g2_has_no_pd_standard_boot_disk():
    reason = errors({**G2, "diskType": "pd-standard"})["gpuPools[0].diskType"]
    assert reason.endswith("allowed: pd-balanced, pd-ssd")


def test_a3_ultra_and_a4_boot_only_from_hyperdisk_balanced():
    assert series_of("a3-ultragpu-8g", DATA_DIR).boot_disk_types == ("hyperdisk-balanced",)  # type: ignore[union-attr]
    assert series_of("a4-highgpu-8g", DATA_DIR).boot_disk_types == ("hyperdisk-balanced",)  # type: ignore[union-attr]
    reason = errors(
        {"machineType": "a3-ultragpu-8g", "gpu": None, "spot": True, "diskType": "pd-ssd"}
    )
    assert "allowed: hyperdisk-balanced" in reason["gpuPools[0].diskType"]


def test_omitted_disk_type_is_the_series_default():
    (ultra,) = plan({"machineType": "a3-ultragpu-8g", "gpu": None, "spot": True}).pools
    (g2,) = plan(G2).pools
    assert (ultra.disk_type, g2.disk_type) == ("hyperdisk-balanced", "pd-balanced")


def test_every_series_default_disk_is_a_gke_boot_disk_type():
    gke_boot = {"pd-balanced", "pd-standard", "pd-ssd", "hyperdisk-balanced"}
    for s in load_series(DATA_DIR):
        assert set(s.boot_disk_types) <= gke_boot, s.prefix


# --- capacity-limited machine types (https://cloud.google.com/compute/docs/accelerator-optimized-machines)


def test_a3_high_1g_2g_4g_are_only_spot_or_flex_start():
    for mt in ("a3-highgpu-1g", "a3-highgpu-2g", "a3-highgpu-4g"):
        reason = errors({"machineType": mt, "gpu": None})["gpuPools[0].machineType"]
        assert "only with spot, flex-start" in reason and "asks for on-demand" in reason
    assert plan({"machineType": "a3-highgpu-1g", "gpu": None, "spot": True}).pools
    assert plan({"machineType": "a3-highgpu-1g", "gpu": None, "flexStart": {}}).pools


def test_a3_ultra_on_demand_needs_a_reservation_spot_or_flex_start():
    reason = errors({"machineType": "a3-ultragpu-8g", "gpu": None})["gpuPools[0].machineType"]
    assert "only with spot, flex-start, reservation" in reason
    res = {"reservation": {"type": "specific", "name": "h200"}, "zones": ["us-central1-b"]}
    (pool,) = plan({"machineType": "a3-ultragpu-8g", "gpu": None, **res}).pools
    assert pool.reservation_type == "SPECIFIC_RESERVATION"


def test_a4x_is_reservation_only():
    assert series_of("a4x-highgpu-4g", DATA_DIR).provisioning == {"reservation"}  # type: ignore[union-attr]


# --- zones and reservations


def test_zonal_cluster_pools_default_to_the_cluster_zone():
    (pool,) = plan(cluster=cluster(location="us-central1-a")).pools
    assert pool.node_locations == ("us-central1-a",)


def test_explicit_zones_widen_a_zonal_cluster_and_say_so():
    g = plan(
        {"zones": ["us-central1-a", "us-central1-b"]}, cluster=cluster(location="us-central1-a")
    )
    assert g.pools[0].node_locations == ("us-central1-a", "us-central1-b")
    assert any("beyond the zonal cluster's zone" in n for n in g.notes)


def test_reservation_affinity_is_sent_only_when_a_reservation_is_set():
    # GKE's default consumes matching reservations
    # (https://cloud.google.com/kubernetes-engine/docs/how-to/consuming-reservations).
    (pool,) = plan().pools
    assert pool.reservation_type is None


def test_reservation_may_be_shared_from_another_project():
    res = {"type": "specific", "name": "projects/owner-project/reservations/t4-res"}
    (pool,) = plan({"reservation": res, "zones": ["us-central1-a"]}).pools
    assert pool.reservation_name == "projects/owner-project/reservations/t4-res"
    bad = {"type": "specific", "name": "projects/x/t4"}
    assert "gpuPools[0].reservation.name" in errors(
        {"reservation": bad, "zones": ["us-central1-a"]}
    )


def test_flex_start_and_queued_pools_consume_no_reservation():
    (flex,) = plan({"flexStart": {}}).pools
    (queued,) = plan({"queuedProvisioning": True}).pools
    assert flex.reservation_type == queued.reservation_type == "NO_RESERVATION"


def test_spot_vms_do_not_consume_reservations():
    assert "gpuPools[0].reservation" in errors({"spot": True, "reservation": {"type": "any"}})


def test_best_effort_never_applies_to_a_pool_starting_at_zero():
    reason = errors({"bestEffort": {"minNodes": 1}})["gpuPools[0].bestEffort"]
    assert "never applies" in reason


def test_best_effort_pool_is_created_with_its_minimum_nodes():
    (pool,) = plan({"minNodes": 2, "bestEffort": {"minNodes": 1}, "zones": ["us-central1-a"]}).pools
    assert (pool.initial_node_count, pool.best_effort_min_nodes) == (2, 1)


# --- Dynamic Workload Scheduler (https://cloud.google.com/kubernetes-engine/docs/concepts/dws)


def test_flex_start_is_exclusive_with_spot_and_reservations():
    assert "gpuPools[0].flexStart" in errors({"spot": True, "flexStart": {}})
    assert "gpuPools[0].flexStart" in errors({"reservation": {"type": "any"}, "flexStart": {}})


def test_queued_provisioning_pools_start_at_zero():
    assert "gpuPools[0].queuedProvisioning" in errors({"minNodes": 1, "queuedProvisioning": True})


# --- capacity hints (https://cloud.google.com/kubernetes-engine/docs/how-to/gpus-multi)


def test_gpus_per_node_counts_mig_partitions_times_time_sharing_clients():
    (pool,) = plan(
        a100_mig_shared("time-sharing", 2),
        gpuOperator={"enabled": False},
    ).pools
    assert pool.schedulable_gpus == 14
    assert pool.accelerator_count == pool.hints.gpus_per_node == 1  # quota counts physical GPUs


@pytest.mark.parametrize(
    ("profile", "n"),
    [("1g.5gb", 7), ("2g.10gb", 3), ("3g.20gb", 2), ("7g.40gb", 1), ("1g.20gb", 4)],
)
def test_mig_partition_sizes_split_a_gpu_as_gke_documents(profile, n):
    h100 = ("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb")
    a100 = ("1g.5gb", "2g.10gb", "3g.20gb", "7g.40gb")
    assert mig_instances(profile, h100 if profile == "1g.20gb" else a100) == n


# "GKE nodes must use a Container-Optimized OS node image"
# (https://cloud.google.com/kubernetes-engine/docs/how-to/using-gvnic#requirements)
def test_gvnic_needs_container_optimized_os():
    assert plan().pools[0].gvnic
    # Ubuntu with a GKE-installed driver (operator off: the operator preset needs COS for that).
    ubuntu = {"imageType": "UBUNTU_CONTAINERD"}
    assert not plan(ubuntu, **{"gpu-infra:gpuOperator": {"enabled": False}}).pools[0].gvnic
    reason = errors({**ubuntu, "gvnic": True})["gpuPools[0].gvnic"]
    assert "COS_CONTAINERD" in reason and "UBUNTU_CONTAINERD" in reason
    assert not plan({"gvnic": False}).pools[0].gvnic


# https://cloud.google.com/kubernetes-engine/docs/how-to/compact-placement (one zone)
def test_compact_placement_keeps_a_pool_in_one_zone():
    a3 = {"machineType": "a3-highgpu-8g", "gpu": None}
    reason = errors({**a3, "compactPlacement": True})["gpuPools[0].compactPlacement"]
    assert "one zone" in reason
    (pool,) = plan({**a3, "compactPlacement": True, "zones": ["us-central1-a"]}).pools
    assert pool.compact_placement


# "Placement policy is not applicable to machine type n1-standard-1" (dstackai/dstack#2591);
# the families that take one: gce_compact_placement.csv (PerfKitBenchmarker gce_network.py).
@pytest.mark.parametrize(
    ("pool", "ok"),
    [
        ({"zones": ["us-central1-a"]}, False),  # the default n1-highmem-8 with a T4
        ({**G2, "zones": ["us-central1-a"]}, True),
        ({"machineType": "a2-highgpu-1g", "gpu": None, "zones": ["us-central1-a"]}, True),
    ],
)
def test_compact_placement_only_on_a_family_that_takes_a_compact_policy(pool, ok):
    cfg = {**pool, "compactPlacement": True}
    if ok:
        assert plan(cfg).pools[0].compact_placement
    else:
        assert (
            "does not take a compact placement policy"
            in errors(cfg)["gpuPools[0].compactPlacement"]
        )


def test_every_compact_placement_row_names_its_source():
    rows = list(read_rows("gce_compact_placement.csv", DATA_DIR))
    assert rows and all(r["compact"] in ("yes", "no") and r["source"] for r in rows)


# "Compact placement with DWS Flex Start is only supported for A3 Ultra, A4, and H4D machine types."
# (GoogleCloudPlatform/cluster-toolkit#5737)
def test_compact_placement_with_flex_start_only_on_a3_ultra_a4_h4d():
    flex = {"flexStart": {}, "compactPlacement": True}
    a3 = {"machineType": "a3-highgpu-8g", "gpu": None, "zones": ["us-central1-a"]}
    assert "A3 Ultra, A4 and H4D" in errors({**a3, **flex})["gpuPools[0].compactPlacement"]
    ultra = {"machineType": "a3-ultragpu-8g", "gpu": None, "zones": ["us-central1-b"]}
    (pool,) = plan({**ultra, **flex}).pools
    assert pool.compact_placement and pool.flex_start


# "SHORT_LIVED is the dedicated upgrade strategy for QueuedProvisioning and flex start node pools"
# (NodePoolUpdateStrategy, GKE REST v1); crossplane-contrib/provider-upjet-gcp#1028 (perpetual diff)
@pytest.mark.parametrize("dws", [{"flexStart": {}}, {"queuedProvisioning": True, "minNodes": 0}])
def test_flex_start_and_queued_pools_leave_upgrade_settings_to_gke_short_lived(dws):
    (pool,) = plan(dws).pools
    assert (pool.max_surge, pool.max_unavailable) == (None, None)


# "All nodes that GKE creates, including nodes used for upgrades, are subject to ... reservation
# capacity, for node pools with specific reservation affinity"
# (https://cloud.google.com/kubernetes-engine/docs/how-to/node-upgrades-quota)
def test_specific_reservation_pools_upgrade_without_surge_nodes():
    res = {"reservation": {"type": "specific", "name": "t4-res"}, "zones": ["us-central1-a"]}
    (pool,) = plan(res).pools
    assert (pool.max_surge, pool.max_unavailable) == (0, 1)
    assert (plan().pools[0].max_surge, plan().pools[0].max_unavailable) == (1, 0)


# "To run GPUs, use GKE version 1.32.2-gke.1652000 or later"
# (https://cloud.google.com/kubernetes-engine/docs/concepts/dws#requirements)
def test_flex_start_needs_gke_1_32_2_gke_1652000():
    old = cluster(minMasterVersion="1.31")
    reason = errors({"flexStart": {}}, cluster=old)["gpuPools[0].flexStart"]
    assert "1.32.2-gke.1652000" in reason and "1.31" in reason
    assert plan({"flexStart": {}}, cluster=cluster(minMasterVersion="1.32.2-gke.1652000")).pools
    assert plan({"flexStart": {}}, cluster=cluster(minMasterVersion="1.33")).pools
    # "1.32" picks the highest 1.32 patch; "1.32.1" the highest gke.N of 1.32.1 (too old).
    assert plan({"flexStart": {}}, cluster=cluster(minMasterVersion="1.32")).pools
    assert "gpuPools[0].flexStart" in errors(
        {"flexStart": {}}, cluster=cluster(minMasterVersion="1.32.1")
    )


def test_bundled_local_ssds_become_ephemeral_storage():
    (pool,) = plan({"machineType": "a3-highgpu-8g", "gpu": None}).pools
    assert pool.local_ssd_count == 16
    assert plan().pools[0].local_ssd_count == 0


def test_every_catalog_machine_type_has_series_disk_and_provisioning_facts(catalog):
    bundled = {m.name for a in catalog.gcp_accelerators() for m in catalog.gcp_machines_with(a)}
    n1 = {r["machine_type"] for r in read_rows("gcp_n1_machine_types.csv", DATA_DIR)}
    assert bundled and n1
    assert (
        sorted(m for m in bundled | n1 | {"e2-standard-4"} if series_of(m, DATA_DIR) is None) == []
    )


# --- initialNodeCount is per zone (terraform-provider-google container_node_pool docs: "In
# regional or multi-zonal clusters, this is the number of nodes per zone")


def test_best_effort_zones_times_initial_nodes_may_not_exceed_max_nodes():
    four = ["us-central1-a", "us-central1-b", "us-central1-c", "us-central1-f"]
    pool = {"minNodes": 2, "maxNodes": 2, "bestEffort": {"minNodes": 1}, "zones": four}
    reason = errors(pool)["gpuPools[0].zones"]
    assert "4 zones x 1 = 4 nodes, above maxNodes 2" in reason
    (ok,) = plan({**pool, "zones": four[:2]}).pools
    assert ok.initial_node_count * len(ok.node_locations) <= ok.total_max


def test_best_effort_cost_and_table_count_the_initial_nodes_of_every_zone_at_minimum():
    two = ["us-central1-a", "us-central1-b"]
    # minNodes 3 over 2 zones: ceil(3 / 2) = 2 per zone, so GKE creates 4 nodes, not 3.
    pool = {"minNodes": 3, "maxNodes": 8, "bestEffort": {"minNodes": 1}, "zones": two}
    full = build_plan(parse(gke_config(pool), "s"))
    (p,) = gke_plan(full.platform).pools
    assert (p.total_min, p.nodes_at_creation, p.nodes_at_min) == (3, 4, 4)
    cost = estimate(full)
    (pc,) = cost.pools
    assert pc.min_nodes == 4 and "initialNodeCount 2 per zone x 2 zones" in pc.note
    (row,) = pool_rows(full)
    assert row.min_nodes == 4
    # The per-node lines count the same 4 GPU nodes besides the 3 system nodes.
    (ips,) = [x for x in cost.lines if x.item.startswith("external IPv4")]
    assert ips.price is not None and ips.at_min == pytest.approx((4 + 3) * ips.price.usd)


def test_a_pool_without_best_effort_starts_empty_and_counts_its_autoscaler_minimum():
    (p,) = plan({"minNodes": 1, "maxNodes": 4}).pools
    assert (p.nodes_at_creation, p.nodes_at_min) == (0, 1)


# --- newest GPU families (https://cloud.google.com/compute/docs/accelerator-optimized-machines)


@pytest.mark.parametrize(
    ("machine", "accelerator", "count"),
    [
        ("a4-highgpu-8g", "nvidia-b200", 8),
        ("a4x-highgpu-4g", "nvidia-gb200", 4),
        ("g4-standard-48", "nvidia-rtx-pro-6000", 1),
        ("g4-standard-384", "nvidia-rtx-pro-6000", 8),
    ],
)
def test_newest_gpu_machine_types_are_in_the_catalog_with_their_gke_accelerator(
    catalog, machine, accelerator, count
):
    m = catalog.gcp_machine(machine)
    assert m is not None and (m.accelerator, m.accelerator_count) == (accelerator, count)
    assert m.zones and accelerator in catalog.gcp_accelerators()
    assert catalog.gcp_model(accelerator).memory_mib > 0


def test_a4_with_a_reservation_plans_without_shape():
    a4 = {"machineType": "a4-highgpu-8g", "gpu": None, "zones": ["us-central1-b"]}
    (pool,) = plan({**a4, "reservation": {"type": "specific", "name": "b200-res"}}).pools
    assert (pool.accelerator, pool.accelerator_count) == ("nvidia-b200", 8)
    assert pool.disk_type == "hyperdisk-balanced"


def test_shape_gpu_model_must_be_a_gke_accelerator_type():
    shape = {"gpuModel": "B200", "gpus": 8, "vcpus": 224, "memoryGb": 3968}
    new = {"machineType": "a4-highgpu-16g", "gpu": None, "zones": ["us-central1-b"]}
    reason = errors({**new, "shape": shape})["gpuPools[0].shape.gpuModel"]
    assert "'B200' is not a GKE accelerator type" in reason and "'nvidia-b200'" in reason
    (pool,) = plan({**new, "shape": {**shape, "gpuModel": "nvidia-b200"}, "spot": True}).pools
    assert pool.accelerator == "nvidia-b200"


def test_a4x_pool_is_refused_reservation_bound_workload_policy_and_rdma_are_not_modelled():
    a4x = {"machineType": "a4x-highgpu-4g", "gpu": None, "zones": ["us-east1-d"]}
    reason = errors({**a4x, "reservation": {"type": "specific", "name": "gb200-res"}})[
        "gpuPools[0].machineType"
    ]
    assert "a4x-highgpu-4g" in reason
    assert all(w in reason for w in ("reservation-bound", "workload policy", "RDMA"))


def test_shape_gpu_model_marketing_name_is_refused_before_remove_shape():
    # a4-highgpu-8g is in the catalog: the wrong accelerator name is still the first thing said.
    shape = {"gpuModel": "B200", "gpus": 8, "vcpus": 224, "memoryGb": 3968}
    a4 = {"machineType": "a4-highgpu-8g", "gpu": None, "zones": ["us-central1-b"]}
    errs = errors({**a4, "shape": shape})
    reason = errs["gpuPools[0].shape.gpuModel"]
    assert "not a GKE accelerator type (did you mean 'nvidia-b200'?)" in reason
    assert "gpuPools[0].shape" not in errs


def test_unknown_gpu_machine_type_error_points_to_shape():
    reason = errors({"machineType": "a4-highgpu-16g", "gpu": None})["gpuPools[0].machineType"]
    assert "gpuPools[].shape" in reason and "nvidia-b200" in reason


# --- "placement_policy cannot be COMPACT when enable_queued_provisioning is true."
# (GoogleCloudPlatform/cluster-toolkit modules/compute/gke-node-pool/main.tf)


def test_queued_provisioning_with_compact_placement_is_refused():
    pool = {**G2, "queuedProvisioning": True, "compactPlacement": True, "zones": ["us-central1-a"]}
    reason = errors(pool)["gpuPools[0].compactPlacement"]
    assert "queued provisioning" in reason


# The families a compact placement policy takes: GKE's compact-placement how-to (C4A, C4N, Z4D)
# and the AI Hypercomputer placement-policy overview ("A4X Max, A4X, A4, A3 Ultra, A3 Mega,
# A3 High, A3 Edge, A2, G4, G2").
@pytest.mark.parametrize("family", ["g4", "a4x", "c4a", "c4n", "z4d", "a2", "a3", "a4", "g2"])
def test_compact_placement_families_the_receivers_list_are_yes(family):
    assert compact_placement_families(DATA_DIR)[family] is True


def test_compact_placement_on_a_g4_pool_in_one_zone_plans():
    g4 = {"machineType": "g4-standard-48", "gpu": None, "zones": ["us-central1-b"]}
    (pool,) = plan({**g4, "compactPlacement": True}).pools
    assert pool.compact_placement


# gce_compact_placement.csv: "A family not listed is not known either way: the plan notes it
# instead of deciding"; only a `no` row is refused.
def test_compact_placement_on_an_unlisted_family_is_a_note_not_a_refusal():
    spec = parse(gke_config({"compactPlacement": True}), "t").pools[0]
    issues, notes = Issues(), []
    check_compact(spec, "x9-standard-8", ["us-central1-a"], "gpuPools[0]", issues, notes, DATA_DIR)
    assert not issues
    (note,) = notes
    assert note.startswith("gpuPools[0].compactPlacement: the x9 family is not in")
    issues, notes = Issues(), []
    check_compact(spec, "n1-highmem-8", ["us-central1-a"], "gpuPools[0]", issues, notes, DATA_DIR)
    assert issues.count() == 1 and not notes
