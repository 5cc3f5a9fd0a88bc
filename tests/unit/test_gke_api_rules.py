"""One test per GKE / Compute Engine rule the planner encodes, named after the rule.

Each test cites where GKE states the rule (doc URL or the public error text). docs/gke.md's
"GKE rules we enforce" lists the same rules.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from infra.core.catalog.build import MachineOffer, machine_rows
from infra.core.catalog.vendored import DATA_DIR, read_rows
from infra.core.config.stack import parse
from infra.core.diff import diff
from infra.core.plan import build_plan
from tests.conftest import gke_config
from tests.unit.gke_fixtures import (
    CHANNEL_CLUSTER,
    NO_CHANNEL,
    cluster,
    errors,
    plan,
    window_errors,
)

# GKE version gates judged while their minors were supported (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("gke_minors_supported")


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
    reason = window_errors("2026-01-03T00:00:00Z", "2026-01-03T03:00:00Z")
    assert "at least 4 contiguous hours" in reason["cluster.maintenance.window.end"]


def test_maintenance_window_allows_48_hours_per_32_days():
    reason = window_errors("2026-01-03T00:00:00Z", "2026-01-03T05:00:00Z", "FREQ=WEEKLY;BYDAY=SA")
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
    older = plan(
        gpuOperator={"enabled": False},
        cluster=cluster(minMasterVersion="1.31", releaseChannel="EXTENDED"),
    )
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


# --- version gates (infra/core/data/gke_feature_versions.csv, one GKE page per row) and formats


def test_every_feature_version_gate_is_a_gke_version_with_a_gke_source():
    rows = list(read_rows("gke_feature_versions.csv", DATA_DIR))
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
    reason = window_errors(t, "2026-01-03T08:00:00Z")
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
    reason = window_errors("2026-01-03T00:00:00Z", "2026-01-03T08:00:00Z", rule)
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
