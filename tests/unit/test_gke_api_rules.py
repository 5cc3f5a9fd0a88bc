"""One test per GKE / Compute Engine rule the planner encodes, named after the rule.

Each test cites where GKE states the rule (doc URL or the public error text). docs/gke.md's
"GKE rules we enforce" lists the same rules.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from infra.core.catalog.build import MachineOffer, machine_rows
from infra.core.catalog.vendored import read_rows
from infra.core.config.stack import parse
from infra.core.cost import estimate
from infra.core.diff import diff
from infra.core.errors import ConfigErrors
from infra.core.gke.planner import GkePlan, gke_pool_outputs
from infra.core.gke.series import load_series, series_of
from infra.core.plan import build_plan
from infra.core.sharing import mig_instances
from infra.planview.table import pool_rows
from tests.conftest import gke_config

CHANNEL_CLUSTER = {"name": "ml", "location": "us-central1", "releaseChannel": "REGULAR"}
NO_CHANNEL = {"name": "ml", "location": "us-central1", "releaseChannel": "UNSPECIFIED"}
G2: dict[str, Any] = {"machineType": "g2-standard-8", "gpu": None}


def plan(pool: dict[str, Any] | None = None, **top: Any) -> GkePlan:
    p = build_plan(parse(gke_config(pool, **top), "s"))
    assert p.platform.name == "gke"
    return p.platform.plan


def errors(pool: dict[str, Any] | None = None, **top: Any) -> dict[str, str]:
    with pytest.raises(ConfigErrors) as e:
        build_plan(parse(gke_config(pool, **top), "s"))
    return {i.path: i.reason for i in e.value.issues}


def cluster(**extra: Any) -> dict[str, Any]:
    return {"name": "ml", "location": "us-central1", **extra}


# --- release channel and node auto-upgrade ---------------------------------------------------
# "Auto_upgrade cannot be false when release_channel REGULAR is set., badRequest"
# (nkoson/gke-tutorial#8; https://cloud.google.com/kubernetes-engine/docs/concepts/release-channels)


def test_auto_upgrade_cannot_be_false_when_release_channel_is_set():
    reason = errors({"autoUpgrade": False}, cluster=CHANNEL_CLUSTER)["gpuPools[0].autoUpgrade"]
    assert "Auto_upgrade cannot be false when release_channel REGULAR is set." in reason
    assert "cluster.releaseChannel" in reason


def test_auto_upgrade_defaults_on_for_channel_clusters():
    (pool,) = plan(cluster=CHANNEL_CLUSTER).pools
    assert pool.auto_upgrade is True


def test_auto_upgrade_may_be_off_only_without_a_release_channel():
    (pool,) = plan({"autoUpgrade": False}, cluster=NO_CHANNEL).pools
    assert pool.auto_upgrade is False


# --- maintenance policy (https://cloud.google.com/kubernetes-engine/docs/how-to/maintenance-windows-and-exclusions)


def test_maintenance_window_is_always_planned_weekend_nights_utc():
    c = plan().cluster
    assert (c.maintenance_start, c.maintenance_end) == (
        "2026-01-03T00:00:00Z",
        "2026-01-03T08:00:00Z",
    )
    assert c.maintenance_recurrence == "FREQ=WEEKLY;BYDAY=SA,SU"


def test_maintenance_window_counts_only_contiguous_four_hours():
    window = {"start": "2026-01-03T00:00:00Z", "end": "2026-01-03T03:00:00Z"}
    reason = errors(cluster=cluster(maintenance={"window": window}))
    assert "at least 4 contiguous hours" in reason["cluster.maintenance.window.end"]


def test_maintenance_window_allows_48_hours_per_32_days():
    window = {
        "start": "2026-01-03T00:00:00Z",
        "end": "2026-01-03T05:00:00Z",
        "recurrence": "FREQ=WEEKLY;BYDAY=SA",
    }
    reason = errors(cluster=cluster(maintenance={"window": window}))
    assert "at least 48 h" in reason["cluster.maintenance.window.recurrence"]


def exclusion(**kw: Any) -> dict[str, Any]:
    return {"name": "freeze", "start": "2026-12-01T00:00:00Z", "end": "2026-12-20T00:00:00Z", **kw}


def test_no_upgrades_exclusion_lasts_at_most_30_days():
    ex = exclusion(end="2027-01-15T00:00:00Z")
    reason = errors(cluster=cluster(maintenance={"exclusions": [ex]}))
    assert "at most 30 days" in reason["cluster.maintenance.exclusions[0].end"]


def test_at_most_three_no_upgrades_exclusions():
    exs = [exclusion(name=f"f{i}") for i in range(4)]
    reason = errors(cluster=cluster(maintenance={"exclusions": exs}))
    assert "at most 3" in reason["cluster.maintenance.exclusions"]


def test_at_most_twenty_maintenance_exclusions():
    exs = [exclusion(name=f"f{i}", scope="NO_MINOR_UPGRADES") for i in range(21)]
    reason = errors(cluster=cluster(maintenance={"exclusions": exs}))
    assert "at most 20" in reason["cluster.maintenance.exclusions"]


def test_minor_upgrade_exclusion_scopes_need_a_release_channel():
    ex = exclusion(scope="NO_MINOR_OR_NODE_UPGRADES")
    reason = errors(cluster={**NO_CHANNEL, "maintenance": {"exclusions": [ex]}})
    assert "needs a release channel" in reason["cluster.maintenance.exclusions[0].scope"]


def test_maintenance_exclusion_ends_after_it_starts():
    ex = exclusion(end="2026-11-01T00:00:00Z")
    assert (
        "not after start"
        in errors(cluster=cluster(maintenance={"exclusions": [ex]}))[
            "cluster.maintenance.exclusions[0].end"
        ]
    )


def test_long_driver_hold_uses_no_minor_or_node_upgrades_on_a_channel_cluster():
    ex = exclusion(end="2027-03-01T00:00:00Z", scope="NO_MINOR_OR_NODE_UPGRADES")
    (planned,) = plan(
        cluster=cluster(maintenance={"exclusions": [ex]})
    ).cluster.maintenance_exclusions
    assert planned.scope == "NO_MINOR_OR_NODE_UPGRADES"


# --- boot disks per machine series (https://cloud.google.com/compute/docs/accelerator-optimized-machines)


def test_g2_has_no_pd_standard_boot_disk():
    reason = errors({**G2, "diskType": "pd-standard"})["gpuPools[0].diskType"]
    assert reason.endswith("allowed: pd-balanced, pd-ssd")


def test_a3_ultra_and_a4_boot_only_from_hyperdisk_balanced():
    assert series_of("a3-ultragpu-8g").boot_disk_types == ("hyperdisk-balanced",)  # type: ignore[union-attr]
    assert series_of("a4-highgpu-8g").boot_disk_types == ("hyperdisk-balanced",)  # type: ignore[union-attr]
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
    for s in load_series():
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
    assert series_of("a4x-highgpu-4g").provisioning == {"reservation"}  # type: ignore[union-attr]


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


# --- capacity hints (https://cloud.google.com/kubernetes-engine/docs/how-to/gpus-multi)


def test_gpus_per_node_counts_mig_partitions_times_time_sharing_clients():
    (pool,) = plan(
        {
            "machineType": "a2-highgpu-1g",
            "gpu": {
                "partitionSize": "1g.5gb",
                "sharing": {"strategy": "time-sharing", "maxSharedClientsPerGpu": 2},
            },
        },
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


# --- cluster options


def test_private_nodes_without_nat_say_that_nvcr_io_needs_cloud_nat():
    g = plan(cluster=cluster(privateNodes=True))
    assert g.cluster.private_nodes
    assert any("Cloud NAT" in n and "nvcr.io" in n for n in g.notes)
    assert not any(
        "Cloud NAT" in n for n in plan(cluster=cluster(privateNodes=True, cloudNat=True)).notes
    )


def test_cloud_nat_is_only_for_private_nodes():
    assert "cluster.cloudNat" in errors(cluster=cluster(cloudNat=True))


def test_authorized_networks_take_cidr_blocks():
    nets = [{"cidr": "203.0.113.0/24", "name": "office"}]
    planned = plan(cluster=cluster(authorizedNetworks=nets)).cluster.authorized_networks
    assert planned is not None
    (net,) = planned
    assert (net.cidr_block, net.display_name) == ("203.0.113.0/24", "office")
    bad = [{"cidr": "10.0.0.0/33"}]
    assert "cluster.authorizedNetworks[0].cidr" in errors(cluster=cluster(authorizedNetworks=bad))


def test_dataplane_v2_is_on_by_default():
    assert plan().cluster.dataplane_v2


def test_gke_dcgm_metrics_only_when_gke_owns_the_gpu_stack():
    assert plan(gpuOperator={"enabled": False}).cluster.dcgm_metrics
    assert not plan().cluster.dcgm_metrics  # the operator ships dcgm-exporter


def test_asking_for_gke_dcgm_beside_the_operator_is_noted_not_sent():
    asked = plan(cluster=cluster(dcgmMetrics=True))
    assert not asked.cluster.dcgm_metrics
    assert "DCGM" not in asked.cluster.monitoring_components
    assert any(n.startswith("cluster.dcgmMetrics:") for n in asked.notes)
    assert not any(n.startswith("cluster.dcgmMetrics:") for n in plan().notes)


def test_image_streaming_needs_cos_and_the_service_usage_role():
    g = plan({"imageStreaming": True})
    assert g.pools[0].image_streaming
    assert "roles/serviceusage.serviceUsageConsumer" in g.node_sa_roles
    assert "roles/serviceusage.serviceUsageConsumer" not in plan().node_sa_roles
    reason = errors({"imageStreaming": True, "imageType": "UBUNTU_CONTAINERD"})
    assert "COS_CONTAINERD" in reason["gpuPools[0].imageStreaming"]


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


GKE_DEFAULT_PACKAGES = [
    "SYSTEM_COMPONENTS",
    "STORAGE",
    "HPA",
    "POD",
    "DAEMONSET",
    "DEPLOYMENT",
    "STATEFULSET",
    "CADVISOR",
    "KUBELET",
    "JOBSET",
]


# enableComponents replaces GKE's defaults: kube state (1.29.2-gke.2000), JobSet (1.32.1-gke.1357001)
# (https://cloud.google.com/kubernetes-engine/docs/how-to/kube-state-metrics), cAdvisor/Kubelet
# (1.29.3-gke.1093000; https://cloud.google.com/kubernetes-engine/docs/how-to/cadvisor-kubelet-metrics)
def test_monitoring_components_keep_gkes_default_packages():
    gke_owned = plan(gpuOperator={"enabled": False}).cluster.monitoring_components
    assert list(gke_owned) == [*GKE_DEFAULT_PACKAGES, "DCGM"]
    no_dcgm = plan(gpuOperator={"enabled": False}, cluster=cluster(dcgmMetrics=False))
    assert list(no_dcgm.cluster.monitoring_components) == GKE_DEFAULT_PACKAGES


# "latest", "1.X" (highest patch), "1.X.Y" (highest gke.N), "1.X.Y-gke.N" or "-"
# (UpdateMasterRequest.master_version, GKE API v1)
def test_min_master_version_is_a_gke_version():
    assert "cluster.minMasterVersion" in errors(cluster=cluster(minMasterVersion="v1.33"))
    latest = plan(gpuOperator={"enabled": False}, cluster=cluster(minMasterVersion="latest"))
    assert "JOBSET" in latest.cluster.monitoring_components


def test_monitoring_components_follow_the_clusters_minimum_version():
    older = plan(gpuOperator={"enabled": False}, cluster=cluster(minMasterVersion="1.31"))
    assert "JOBSET" not in older.cluster.monitoring_components
    assert "KUBELET" in older.cluster.monitoring_components


# The operator's dcgm-exporter already exports DCGM; GKE's managed DCGM would be a second exporter
# (https://cloud.google.com/kubernetes-engine/docs/how-to/dcgm-metrics)
def test_operator_clusters_send_gkes_default_packages_without_dcgm():
    assert list(plan().cluster.monitoring_components) == GKE_DEFAULT_PACKAGES


# "You must enable the Container File System API"
# (https://cloud.google.com/kubernetes-engine/docs/how-to/image-streaming#requirements)
def test_image_streaming_enables_the_container_file_system_api():
    assert plan({"imageStreaming": True}).services == ("containerfilesystem.googleapis.com",)
    assert plan().services == ()


# "Not enrolling your cluster in a release channel ... is a deprecated configuration option, only
# allowed for existing customers, and will be removed on June 14, 2027."
# (https://cloud.google.com/kubernetes-engine/docs/concepts/release-channels#no_channel)
def test_no_release_channel_is_deprecated_and_noted_in_the_plan():
    notes = plan(cluster=NO_CHANNEL).notes
    assert any("June 14, 2027" in n and "cluster.releaseChannel" in n for n in notes)
    assert not any("June 14, 2027" in n for n in plan(cluster=CHANNEL_CLUSTER).notes)


def test_bundled_local_ssds_become_ephemeral_storage():
    (pool,) = plan({"machineType": "a3-highgpu-8g", "gpu": None}).pools
    assert pool.local_ssd_count == 16
    assert plan().pools[0].local_ssd_count == 0


def test_every_catalog_machine_type_has_series_disk_and_provisioning_facts(catalog):
    bundled = {m.name for a in catalog.gcp_accelerators() for m in catalog.gcp_machines_with(a)}
    n1 = {r["machine_type"] for r in read_rows("gcp_n1_machine_types.csv")}
    assert bundled and n1
    assert sorted(m for m in bundled | n1 | {"e2-standard-4"} if series_of(m) is None) == []


# --- project-scoped names (IAM CreateServiceAccountRequest.account_id: "unique within a project,
# must be 6-30 characters long, and match the regular expression [a-z]([-a-z0-9]*[a-z0-9])")


def _names(stack: str, **top: Any) -> tuple[str, str, str]:
    c = build_plan(parse(gke_config(**top), stack)).platform.plan
    assert c is not None
    return c.cluster.node_sa_id, c.cluster.router_name, c.cluster.nat_name


def test_project_scoped_names_differ_per_stack_and_location_and_are_deterministic():
    east = {"gcp:region": "us-east1", "cluster": {"name": "ml", "location": "us-east1"}}
    base = _names("s")
    assert base == _names("s")  # deterministic: a second `pulumi up` renames nothing
    for other in (_names("s", **east), _names("t")):
        assert not set(base) & set(other)


@pytest.mark.parametrize(
    "name", ["a", "ml", "a" * 40, "abcdefghijklmno-qrstuvwxyz", "x-" * 19 + "z"]
)
def test_node_service_account_id_is_6_to_30_chars_of_the_iam_pattern(name):
    sa, router, nat = _names("s", cluster={"name": name, "location": "us-central1"})
    assert 6 <= len(sa) <= 30
    assert re.fullmatch(r"[a-z]([-a-z0-9]*[a-z0-9])", sa)
    # Router and NAT names: RFC 1035, at most 63 characters (Compute API routers).
    assert all(
        len(n) <= 63 and re.fullmatch(r"[a-z]([-a-z0-9]*[a-z0-9])", n) for n in (router, nat)
    )


def test_node_service_account_brought_is_used_and_no_account_is_created():
    email = "gke-nodes@demo-project.iam.gserviceaccount.com"
    g = plan(cluster=cluster(nodeServiceAccount=email))
    assert g.cluster.node_sa_email == email
    assert any("cluster.nodeServiceAccount" in n and "grants" in n for n in g.notes)


@pytest.mark.parametrize(
    ("email", "why"),
    [
        ("123456789-compute@developer.gserviceaccount.com", "Compute Engine default account"),
        ("gke-nodes", "ACCOUNT_ID@PROJECT_ID.iam.gserviceaccount.com"),
        ("ab@demo-project.iam.gserviceaccount.com", "ACCOUNT_ID@PROJECT_ID"),  # id < 6 chars
    ],
)
def test_node_service_account_must_be_a_user_managed_account(email, why):
    reason = errors(cluster=cluster(nodeServiceAccount=email))["cluster.nodeServiceAccount"]
    assert email in reason and why in reason


# --- Cloud NAT on the cluster's subnetwork only (RouterNat.sourceSubnetworkIpRangesToNat)


def test_cloud_nat_serves_the_clusters_subnetwork_in_its_region():
    g = plan(cluster=cluster(privateNodes=True, cloudNat=True, subnetwork="gpu-subnet"))
    assert g.cluster.nat_subnetwork == (
        "projects/demo-project/regions/us-central1/subnetworks/gpu-subnet"
    )
    assert plan().cluster.nat_subnetwork.endswith("/regions/us-central1/subnetworks/default")


def test_cloud_nat_on_a_shared_vpc_host_network_is_refused_router_belongs_to_the_host_project():
    host = "projects/host-proj/global/networks/shared"
    reason = errors(
        cluster=cluster(privateNodes=True, cloudNat=True, network=host, subnetwork="gpu")
    )["cluster.cloudNat"]
    assert host in reason and "host-proj" in reason and "Shared VPC" in reason


def test_cloud_nat_on_a_network_other_than_default_requires_the_subnetwork():
    reason = errors(cluster=cluster(privateNodes=True, cloudNat=True, network="gpu-vpc"))[
        "cluster.subnetwork"
    ]
    assert "gpu-vpc" in reason and "auto-mode" in reason
    own = "projects/demo-project/global/networks/gpu-vpc"
    g = plan(cluster=cluster(privateNodes=True, cloudNat=True, network=own, subnetwork="gpu"))
    assert g.cluster.nat_subnetwork.endswith("/regions/us-central1/subnetworks/gpu")


def test_subnetwork_path_must_be_in_the_clusters_region():
    sub = "projects/demo-project/regions/us-east1/subnetworks/gpu"
    reason = errors(cluster=cluster(subnetwork=sub))["cluster.subnetwork"]
    assert "us-east1" in reason and "us-central1" in reason


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
    assert full.platform.name == "gke"
    (p,) = full.platform.plan.pools
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


# --- day 2: what `--diff` says GKE does (provider schema, terraform-provider-google-beta
# resource_container_cluster.go: private_cluster_config is not ForceNew, ip_allocation_policy is)

CLUSTER_T = "gcp:container/cluster:Cluster"
POOL_T = "gcp:container/nodePool:NodePool"


def _change(type_: str, old: dict[str, Any], new: dict[str, Any]) -> Any:
    def res(inputs: dict[str, Any]) -> dict[str, Any]:
        return {"urn": "urn:x", "type": type_, "name": "x", "inputs": inputs}

    (c,) = diff([res(old)], [res(new)])
    return c


def test_private_nodes_on_an_existing_cluster_is_an_update_not_a_replace():
    c = _change(CLUSTER_T, {}, {"privateClusterConfig": {"enablePrivateNodes": True}})
    assert c.op == "update"


def test_a_block_forces_replacement_only_when_a_force_new_child_in_it_is_set():
    cidr = {"enablePrivateNodes": True, "masterIpv4CidrBlock": "172.16.0.0/28"}
    assert _change(CLUSTER_T, {}, {"privateClusterConfig": cidr}).op == "replace"
    pool_net = {"networkConfig": {"enablePrivateNodes": True}}
    assert _change(POOL_T, {}, pool_net).op == "update"
    assert _change(POOL_T, {}, {"networkConfig": {"podRange": "pods"}}).op == "replace"


def test_pool_private_nodes_and_gvnic_changes_are_node_recreating_updates():
    # https://cloud.google.com/kubernetes-engine/docs/concepts/managing-clusters#manual-changes-strategy
    for old, new in (
        ({}, {"networkConfig": {"enablePrivateNodes": True}}),
        ({"nodeConfig": {"gvnic": {"enabled": True}}}, {"nodeConfig": {}}),
        ({}, {"nodeConfig": {"gcfsConfig": {"enabled": True}}}),
    ):
        c = _change(POOL_T, old, new)
        assert c.op == "update" and "re-creates every node" in c.disruptive


def test_pool_label_change_recreates_no_node():
    c = _change(POOL_T, {"nodeConfig": {"labels": {"a": "1"}}}, {"nodeConfig": {"labels": {}}})
    assert c.op == "update" and c.disruptive == ""


# --- authorized networks (https://cloud.google.com/kubernetes-engine/docs/how-to/authorized-networks)


def test_authorized_networks_refuse_an_empty_list():
    reason = errors(cluster=cluster(authorizedNetworks=[]))["cluster.authorizedNetworks"]
    assert "must not be empty" in reason


def test_authorized_networks_count_is_at_most_100():
    nets = [{"cidr": f"10.0.{i}.0/24"} for i in range(101)]
    reason = errors(cluster=cluster(authorizedNetworks=nets))["cluster.authorizedNetworks"]
    assert "101 CIDR blocks" in reason and "at most 100" in reason
    assert plan(cluster=cluster(authorizedNetworks=nets[:100])).cluster.authorized_networks


def test_authorized_networks_note_says_the_deploying_machine_must_be_inside():
    g = plan(cluster=cluster(authorizedNetworks=[{"cidr": "203.0.113.0/24"}]))
    assert any("`pulumi up` must reach the control plane" in n for n in g.notes)


# --- "placement_policy cannot be COMPACT when enable_queued_provisioning is true."
# (GoogleCloudPlatform/cluster-toolkit modules/compute/gke-node-pool/main.tf)


def test_queued_provisioning_with_compact_placement_is_refused():
    pool = {**G2, "queuedProvisioning": True, "compactPlacement": True, "zones": ["us-central1-a"]}
    reason = errors(pool)["gpuPools[0].compactPlacement"]
    assert "queued provisioning" in reason


# --- version gates (infra/core/data/gke_feature_versions.csv, one GKE page per row) and formats


def test_every_feature_version_gate_is_a_gke_version_with_a_gke_source():
    rows = list(read_rows("gke_feature_versions.csv"))
    assert {r["feature"] for r in rows} >= {
        "flex-start",
        "mps",
        "time-sharing",
        "compute-class",
        "queued-provisioning",
    }
    for r in rows:
        assert re.fullmatch(r"1\.\d+\.\d+-gke\.\d+", r["min_version"]), r
        assert r["source"].startswith("https://cloud.google.com/kubernetes-engine/docs/"), r


@pytest.mark.parametrize(
    ("pool", "key", "floor"),
    [
        (
            {
                "gpu": {
                    "type": "nvidia-tesla-t4",
                    "sharing": {"strategy": "mps", "maxSharedClientsPerGpu": 2},
                }
            },
            "gpu.sharing",
            "1.27.7-gke.1088000",
        ),
        (
            {
                "gpu": {
                    "type": "nvidia-tesla-t4",
                    "sharing": {"strategy": "time-sharing", "maxSharedClientsPerGpu": 2},
                }
            },
            "gpu.sharing",
            "1.23.7-gke.1400",
        ),
        ({"fallback": [{"machineType": "g2-standard-8"}]}, "fallback", "1.30.3-gke.1451000"),
        ({"queuedProvisioning": True}, "queuedProvisioning", "1.28.3-gke.1098000"),
    ],
)
def test_features_need_their_minimum_gke_version(pool, key, floor):
    off = {"enabled": False}  # GKE's own sharing runs only without the GPU Operator
    old = cluster(minMasterVersion="1.22")
    reason = errors(pool, cluster=old, gpuOperator=off)[f"gpuPools[0].{key}"]
    assert floor in reason and "cluster.minMasterVersion is 1.22" in reason
    assert plan(pool, cluster=cluster(minMasterVersion="1.33"), gpuOperator=off).pools


@pytest.mark.parametrize(
    "t", ["2026-01-03", "20260103T000000Z", "2026-01-03 00:00:00Z", "2026-01-03T00:00Z"]
)
def test_maintenance_times_are_rfc3339_date_times_not_any_iso_8601(t):
    window = {"start": t, "end": "2026-01-03T08:00:00Z"}
    reason = errors(cluster=cluster(maintenance={"window": window}))
    assert "RFC 3339" in reason["cluster.maintenance.window.start"]


@pytest.mark.parametrize(
    ("rule", "why"),
    [
        ("FREQ=WEEKLY;BYDAY=SA;BYDAY=SU", "given twice"),
        ("FREQ=WEEKLY;BYDAY=SAT", "BYDAY takes"),
        ("FREQ=DAILY;COUNT=3;UNTIL=20270101T000000Z", "UNTIL and COUNT"),
        ("FREQ=WEEKLY;DAYS=SA", "DAYS is not an RFC 5545 rule part"),
    ],
)
def test_maintenance_recurrence_is_parsed_as_an_rfc5545_rrule(rule, why):
    window = {"start": "2026-01-03T00:00:00Z", "end": "2026-01-03T08:00:00Z", "recurrence": rule}
    reason = errors(cluster=cluster(maintenance={"window": window}))
    assert why in reason["cluster.maintenance.window.recurrence"]


def test_regional_system_pool_max_nodes_covers_one_initial_node_per_zone():
    # initialNodeCount 1 is per zone; a regional cluster's pools span three zones by default
    # (https://cloud.google.com/kubernetes-engine/docs/concepts/regional-clusters).
    small = {"minNodes": 1, "maxNodes": 2}
    reason = errors(cluster=cluster(systemPool=small))["cluster.systemPool.maxNodes"]
    assert "3 nodes" in reason
    zonal = {"name": "ml", "location": "us-central1-a", "systemPool": small}
    assert plan(cluster=zonal).cluster.system_max == 2


def test_cloud_nat_note_warns_about_an_existing_nat_on_the_subnetwork():
    g = plan(cluster=cluster(privateNodes=True, cloudNat=True))
    assert any(n.startswith("cluster.cloudNat:") and "already serves" in n for n in g.notes)


def test_catalog_refresh_keeps_a4x_machine_types_from_the_compute_api():
    # machineTypes.aggregatedList lists a4x-highgpu-4g with guestAccelerators nvidia-gb200 x4.
    offer = MachineOffer("us-east1-d", "a4x-highgpu-4g", 140, 884 * 1024, "nvidia-gb200", 4)
    (row,) = machine_rows([offer], {})
    assert (row["machine_type"], row["accelerator"], row["memory_gib"]) == (
        "a4x-highgpu-4g",
        "nvidia-gb200",
        "884",
    )
