"""Every sample GKE stack, run on the mock engine, satisfies the GKE API rules.

The unit suite (tests/unit/test_gke_api_rules.py) proves each rule in the planner; these tests prove
the registered inputs of every stacks/Pulumi.gke-*.yaml obey them too.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from infra import mockengine
from infra.core.catalog.vendored import DATA_DIR
from infra.core.config.stack import load_stack_file
from infra.core.gke.series import series_of
from tests.conftest import gke_config
from tests.stack.harness import ignore_changes_seen, run_stack, sample, sample_stacks

ROOT = Path(__file__).resolve().parents[2]
GKE_STACKS = sample_stacks("gke-*")
CLUSTER = "gcp:container/cluster:Cluster"
NODE_POOL = "gcp:container/nodePool:NodePool"


@pytest.fixture(scope="module")
def recs() -> dict[str, mockengine.Recording]:
    return {s: sample(s) for s in GKE_STACKS}


def pools(rec: mockengine.Recording) -> list[mockengine.Registered]:
    return rec.of_type(NODE_POOL)


def gpu_pools(rec: mockengine.Recording) -> list[mockengine.Registered]:
    return [p for p in pools(rec) if p.inputs["nodeConfig"].get("guestAccelerators")]


def test_there_are_gke_sample_stacks():
    assert {"gke-t4", "gke-l4-spot", "gke-a100-mig"} <= set(GKE_STACKS)


@pytest.mark.parametrize("stack", GKE_STACKS)
def test_no_pool_turns_auto_upgrade_off_on_a_channel_cluster(recs, stack):
    # "Auto_upgrade cannot be false when release_channel REGULAR is set." (nkoson/gke-tutorial#8)
    cluster = recs[stack].one(CLUSTER).inputs
    if cluster["releaseChannel"]["channel"] != "UNSPECIFIED":
        assert all(p.inputs["management"]["autoUpgrade"] is True for p in pools(recs[stack]))


@pytest.mark.parametrize("stack", GKE_STACKS)
def test_cluster_has_a_maintenance_window_of_48_hours_per_32_days(recs, stack):
    window = recs[stack].one(CLUSTER).inputs["maintenancePolicy"]["recurringWindow"]
    assert window["recurrence"].startswith("FREQ=")
    assert window["startTime"] < window["endTime"]


@pytest.mark.parametrize("stack", GKE_STACKS)
def test_bootstrap_node_config_uses_the_stacks_node_sa_not_the_default_account(recs, stack):
    rec = recs[stack]
    sa = rec.one("gcp:serviceaccount/account:Account")
    node_config = rec.one(CLUSTER).inputs["nodeConfig"]
    assert node_config["serviceAccount"].startswith(sa.inputs["accountId"] + "@")
    assert node_config["shieldedInstanceConfig"]["enableSecureBoot"] is True


@pytest.mark.parametrize("stack", GKE_STACKS)
def test_system_pool_is_hardened_like_gpu_pools_and_starts_with_one_node(recs, stack):
    system = next(p for p in pools(recs[stack]) if p.inputs["name"] == "system").inputs
    nc = system["nodeConfig"]
    assert system["initialNodeCount"] == 1
    assert nc["shieldedInstanceConfig"] == {
        "enableIntegrityMonitoring": True,
        "enableSecureBoot": True,
    }
    assert nc["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}
    assert nc["serviceAccount"].endswith(".iam.gserviceaccount.com")


@pytest.mark.parametrize("stack", GKE_STACKS)
def test_gpu_pools_and_kubernetes_objects_do_not_wait_for_the_system_pool(recs, stack):
    rec = recs[stack]
    system = next(p for p in pools(rec) if p.inputs["name"] == "system")
    waiting = [r.name for r in rec.resources if system.urn in r.depends_on]
    assert waiting == []


@pytest.mark.parametrize("stack", GKE_STACKS)
def test_boot_disk_is_one_the_machine_series_supports(recs, stack):
    for p in pools(recs[stack]):
        nc = p.inputs["nodeConfig"]
        series = series_of(nc["machineType"], DATA_DIR)
        assert series is not None and nc["diskType"] in series.boot_disk_types


@pytest.mark.parametrize("stack", GKE_STACKS)
def test_capacity_limited_machine_types_are_not_planned_on_demand(recs, stack):
    for p in gpu_pools(recs[stack]):
        nc = p.inputs["nodeConfig"]
        series = series_of(nc["machineType"], DATA_DIR)
        assert series is not None
        if "on-demand" not in series.provisioning:
            assert nc.get("spot") or nc.get("flexStart") or nc.get("reservationAffinity")


@pytest.mark.parametrize("stack", GKE_STACKS)
def test_reservation_affinity_only_with_a_reservation(recs, stack):
    for p in gpu_pools(recs[stack]):
        nc = p.inputs["nodeConfig"]
        aff = nc.get("reservationAffinity")
        dws = nc.get("flexStart") or p.inputs.get("queuedProvisioning")
        assert aff is None or aff["consumeReservationType"] != "NO_RESERVATION" or dws


@pytest.mark.parametrize("stack", GKE_STACKS)
def test_class_bound_pool_hints_select_the_class_only(recs, stack):
    rec = recs[stack]
    for cc in rec.of_type("kubernetes:cloud.google.com/v1:ComputeClass"):
        name = cc.inputs["metadata"]["name"]
        entry = rec.outputs["gpuPools"][name]
        assert entry["nodeSelector"] == {"cloud.google.com/compute-class": name}
        bound = [p.inputs["name"] for p in gpu_pools(rec)]
        fixed = [n for n in bound if n == name or re.fullmatch(rf"{name}-[0-9a-f]{{6}}", n)]
        spec = cc.inputs["spec"]
        if spec["nodePoolAutoCreation"]["enabled"]:
            # Auto-created: the priorities are the pools (by their pool label), none is a NodePool.
            labels = [p["nodeLabels"]["gpu-infra/pool"] for p in spec["priorities"]]
            assert sorted(entry["pools"]) == sorted(labels) and fixed == []
        else:
            assert sorted(entry["pools"]) == sorted(fixed)


def test_l4_spot_gpu_pools_output_falls_back_across_all_three_pools(recs):
    entry = recs["gke-l4-spot"].outputs["gpuPools"]["l4-spot"]
    assert entry["pools"] == ["l4-spot", "l4-spot-0a12e4", "l4-spot-a31395"]
    assert "cloud.google.com/gke-accelerator" not in entry["nodeSelector"]
    assert {t["key"] for t in entry["tolerations"]} == {
        "nvidia.com/gpu",
        "cloud.google.com/compute-class",
    }


def test_a100_mig_output_counts_schedulable_gpus(recs):
    assert recs["gke-a100-mig"].outputs["gpuPools"]["a100-mig"]["gpusPerNode"] == 14


def test_private_nodes_and_authorized_networks_reach_the_cluster():
    raw = gke_config(
        cluster={
            "name": "ml",
            "location": "us-central1",
            "privateNodes": True,
            "cloudNat": True,
            "authorizedNetworks": [{"cidr": "203.0.113.0/24", "name": "office"}],
        }
    )
    rec = run_stack(raw)
    c = rec.one(CLUSTER).inputs
    assert c["privateClusterConfig"] == {"enablePrivateNodes": True}
    assert c["masterAuthorizedNetworksConfig"]["cidrBlocks"] == [
        {"cidrBlock": "203.0.113.0/24", "displayName": "office"}
    ]
    assert c["datapathProvider"] == "ADVANCED_DATAPATH"
    nat = rec.one("gcp:compute/routerNat:RouterNat").inputs
    assert nat["natIpAllocateOption"] == "AUTO_ONLY"


def test_dcgm_metrics_are_sent_when_gke_owns_the_gpu_stack():
    c = sample("gke-a100-mig").one(CLUSTER).inputs
    assert c["monitoringConfig"]["enableComponents"][-1] == "DCGM"
    assert c["monitoringConfig"]["managedPrometheus"] == {"enabled": True}


# enableComponents is authoritative: GKE's default packages must stay in it
# (https://cloud.google.com/kubernetes-engine/docs/how-to/configure-metrics).
@pytest.mark.parametrize("stack", GKE_STACKS)
def test_monitoring_components_keep_gkes_default_packages(recs, stack):
    components = recs[stack].one(CLUSTER).inputs["monitoringConfig"]["enableComponents"]
    assert {"SYSTEM_COMPONENTS", "POD", "DEPLOYMENT", "CADVISOR", "KUBELET", "JOBSET"} <= set(
        components
    )


@pytest.mark.parametrize("stack", ["gke-t4", "gke-l4-spot"])
def test_operator_clusters_send_gkes_default_packages_without_dcgm(recs, stack):
    # The operator's dcgm-exporter runs; GKE's managed DCGM would be a second exporter.
    components = recs[stack].one(CLUSTER).inputs["monitoringConfig"]["enableComponents"]
    assert "DCGM" not in components and "KUBELET" in components


# "GKE nodes must use a Container-Optimized OS node image"
# (https://cloud.google.com/kubernetes-engine/docs/how-to/using-gvnic#requirements)
@pytest.mark.parametrize("stack", GKE_STACKS)
def test_gvnic_needs_container_optimized_os(recs, stack):
    for p in gpu_pools(recs[stack]):
        nc = p.inputs["nodeConfig"]
        if nc.get("gvnic", {}).get("enabled"):
            assert nc["imageType"] == "COS_CONTAINERD"


# "SHORT_LIVED is the dedicated upgrade strategy for QueuedProvisioning and flex start node pools"
# (NodePoolUpdateStrategy, GKE REST v1)
def test_flex_start_and_queued_pools_leave_upgrade_settings_to_gke_short_lived():
    (pool,) = gpu_pools(run_stack(gke_config({"flexStart": {}})))
    assert "upgradeSettings" not in pool.inputs
    (plain,) = gpu_pools(run_stack(gke_config()))
    assert plain.inputs["upgradeSettings"] == {"maxSurge": 1, "maxUnavailable": 0}


def test_flex_start_pools_ignore_the_upgrade_settings_gke_fills_in(monkeypatch):
    # GKE fills in SHORT_LIVED settings; without ignoreChanges every refresh would show a diff
    # (crossplane-contrib/provider-upjet-gcp#1028).
    by_type = ignore_changes_seen(monkeypatch, {NODE_POOL})
    run_stack(gke_config({"name": "flex", "flexStart": {}}))
    run_stack(gke_config({"name": "plain"}))
    seen = by_type[NODE_POOL]
    flex = next(v for k, v in seen.items() if k.endswith("-flex"))
    plain = next(v for k, v in seen.items() if k.endswith("-plain"))
    assert "upgradeSettings" in flex and "upgradeSettings" not in plain
    assert "initialNodeCount" in flex and "initialNodeCount" in plain


# Surge nodes need reservation capacity for SPECIFIC affinity
# (https://cloud.google.com/kubernetes-engine/docs/how-to/node-upgrades-quota)
def test_specific_reservation_pools_upgrade_without_surge_nodes():
    res = {"reservation": {"type": "specific", "name": "t4-res"}, "zones": ["us-central1-a"]}
    (pool,) = gpu_pools(run_stack(gke_config(res)))
    assert pool.inputs["upgradeSettings"] == {"maxSurge": 0, "maxUnavailable": 1}


# "You must enable the Container File System API"
# (https://cloud.google.com/kubernetes-engine/docs/how-to/image-streaming#requirements)
def test_image_streaming_enables_the_container_file_system_api():
    rec = run_stack(gke_config({"imageStreaming": True}))
    svc = rec.one("gcp:projects/service:Service")
    assert svc.inputs["service"] == "containerfilesystem.googleapis.com"
    assert svc.inputs["disableOnDestroy"] is False
    (pool,) = gpu_pools(rec)
    assert svc.urn in pool.depends_on


def test_a3_ultra_pool_boots_from_hyperdisk_with_its_local_ssds():
    raw = gke_config({"machineType": "a3-ultragpu-8g", "gpu": None, "spot": True})
    (pool,) = gpu_pools(run_stack(raw))
    nc = pool.inputs["nodeConfig"]
    assert nc["diskType"] == "hyperdisk-balanced"
    assert nc["ephemeralStorageLocalSsdConfig"] == {"localSsdCount": 32}


# --- project-scoped names: two stacks in one project never share one (IAM account ids are
# project-unique: CreateServiceAccountRequest.account_id; routers per project and region)
SA = "gcp:serviceaccount/account:Account"


def _project_scoped(rec: mockengine.Recording) -> set[tuple[str, str]]:
    names = {("account", r.inputs["accountId"]) for r in rec.of_type(SA)}
    names |= {("router", r.inputs["name"]) for r in rec.of_type("gcp:compute/router:Router")}
    names |= {("nat", r.inputs["name"]) for r in rec.of_type("gcp:compute/routerNat:RouterNat")}
    names |= {
        ("iam", f"{r.inputs['role']} {r.inputs['member']}")
        for r in rec.of_type("gcp:projects/iAMMember:IAMMember")
    }
    return names


def test_two_copies_of_gke_t4_in_two_regions_share_no_project_scoped_name():
    _, raw = load_stack_file(ROOT / "stacks" / "Pulumi.gke-t4.yaml")
    copies = []
    for region in ("us-central1", "us-east1"):
        cfg = copy.deepcopy(raw)
        cfg["gcp:region"] = region
        cfg["gpu-infra:cluster"].update(location=region, privateNodes=True, cloudNat=True)
        cfg["gpu-infra:gpuPools"][0].pop("zones")  # zones are per region
        copies.append(_project_scoped(run_stack(cfg, "gke-t4")))
    central, east = copies
    assert {k for k, _ in central} == {"account", "router", "nat", "iam"}
    assert not central & east


def test_brought_node_service_account_runs_every_pool_and_gets_no_bindings():
    email = "gke-nodes@demo-project.iam.gserviceaccount.com"
    rec = run_stack(
        gke_config(cluster={"name": "ml", "location": "us-central1", "nodeServiceAccount": email})
    )
    assert rec.of_type(SA) == [] and rec.of_type("gcp:projects/iAMMember:IAMMember") == []
    assert {p.inputs["nodeConfig"]["serviceAccount"] for p in pools(rec)} == {email}
    assert rec.one(CLUSTER).inputs["nodeConfig"]["serviceAccount"] == email


def test_cloud_nat_lists_only_the_clusters_subnetwork_and_pools_are_private_too():
    cluster = {"name": "ml", "location": "us-central1", "privateNodes": True, "cloudNat": True}
    rec = run_stack(gke_config(cluster=cluster))
    nat = rec.one("gcp:compute/routerNat:RouterNat").inputs
    assert nat["sourceSubnetworkIpRangesToNat"] == "LIST_OF_SUBNETWORKS"
    assert nat["subnetworks"] == [
        {
            "name": "projects/demo-project/regions/us-central1/subnetworks/default",
            "sourceIpRangesToNats": ["ALL_IP_RANGES"],
        }
    ]
    # The cluster-level switch reaches only pools created after it (NodeNetworkConfig, REST v1).
    assert all(p.inputs["networkConfig"] == {"enablePrivateNodes": True} for p in pools(rec))


def test_diff_of_gke_t4_with_private_nodes_reports_updates_not_a_replace(tmp_path, capsys):
    from infra.plan import main

    text = (ROOT / "stacks" / "Pulumi.gke-t4.yaml").read_text()
    new = tmp_path / "Pulumi.gke-t4.yaml"
    new.write_text(
        text.replace(
            "    location: us-central1\n", "    location: us-central1\n    privateNodes: true\n", 1
        )
    )
    assert (
        main(["--stack", str(new), "--diff", str(ROOT / "stacks" / "Pulumi.gke-t4.yaml"), "--json"])
        == 0
    )
    changes = json.loads(capsys.readouterr().out)["changes"]
    assert changes and {c["op"] for c in changes} == {"update"}
    pool = next(c for c in changes if c["urn"].endswith("ml-gpu-gpu-t4"))
    assert "re-creates every node" in (pool["disruptive"] or "")


# A stack created before project-scoped names carried the stack hash keeps its live names: the
# engine sends the old value of an ignored property, so no replace (the account's would re-create
# every node pool; https://www.pulumi.com/docs/iac/concepts/resources/options/ignorechanges/).
def test_node_account_router_and_nat_keep_their_live_names_on_a_running_stack(monkeypatch):
    kinds = {
        "gcp:serviceaccount/account:Account": "account",
        "gcp:compute/router:Router": "router",
        "gcp:compute/routerNat:RouterNat": "nat",
    }
    by_type = ignore_changes_seen(monkeypatch, kinds)
    cluster = {"name": "ml", "location": "us-central1", "privateNodes": True, "cloudNat": True}
    run_stack(gke_config(cluster=cluster))
    seen = {kinds[t]: ignored for t, by_name in by_type.items() for ignored in by_name.values()}
    assert seen == {"account": ["accountId"], "router": ["name"], "nat": ["name"]}


def test_gke_l4_spot_warm_registers_namespace_priority_class_and_deployment_in_its_component(
    recs,
):
    rec = recs["gke-l4-spot"]
    types = {r.type: r for r in rec.resources}
    comp = types["gpu-infra:k8s:WarmGpus"]
    for t in (
        "kubernetes:core/v1:Namespace",
        "kubernetes:scheduling.k8s.io/v1:PriorityClass",
        "kubernetes:apps/v1:Deployment",
    ):
        mine = [r for r in rec.resources if r.type == t and r.parent == comp.urn]
        assert len(mine) == 1, t
    pc = next(r for r in rec.resources if r.type.endswith(":PriorityClass"))
    assert pc.inputs["value"] == -10 and pc.inputs["preemptionPolicy"] == "Never"
    dep = next(r for r in rec.resources if r.type.endswith(":Deployment"))
    assert dep.inputs["metadata"]["annotations"]["pulumi.com/skipAwait"] == "true"
    assert dep.inputs["spec"]["replicas"] == 1
