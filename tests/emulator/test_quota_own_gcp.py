"""quota.check on a deployed GKE stack: its own nodes (GKE's labels) are in the usage once and
offset the demand, against the real google-cloud-compute clients and the fakes.

gke-t4: gpu-t4 is n1-highmem-8 + 1 T4, max 20 in us-central1-a/b/c/f, surge 1 (21 T4 needed); the
system pool is 3 x e2-standard-4; every node has a 100 GB pd-balanced boot disk and an external
address.
"""

from __future__ import annotations

import io
from typing import Any

import pytest

from quota.check import main
from tests.emulator.quota_cli import row, run
from tests.fakes import gcp as g

pytestmark = pytest.mark.emulator

P, R = "demo-project", "us-central1"
ZONES = ("us-central1-a", "us-central1-b", "us-central1-c", "us-central1-f")
# GKE's VM labels ("goog-k8s-cluster-name: Filter GKE resources by cluster ... goog-k8s-node-pool-
# name: Filter cluster resources by node pool", https://cloud.google.com/billing/docs/how-to/
# cost-table).
CLUSTER, LOCATION, POOL = (
    "goog-k8s-cluster-name",
    "goog-k8s-cluster-location",
    "goog-k8s-node-pool-name",
)


def node(compute: g.FakeCompute, zone: str, pool: str = "gpu-t4", **kw: Any) -> None:
    """One GKE node VM of cluster ml (us-central1): a gpu-t4 node unless ``kw`` says otherwise."""
    labels = {CLUSTER: kw.pop("cluster", "ml"), LOCATION: kw.pop("location", R), POOL: pool}
    compute.add_instance(
        zone,
        kw.pop("gpu", "nvidia-tesla-t4"),
        kw.pop("count", 1),
        machine_type=kw.pop("machine", "n1-highmem-8"),
        labels=labels,
        external_ip=kw.pop("external", True),
        boot_disk=kw.pop("disk", ("pd-balanced", 100)),
        **kw,
    )


def in_use(compute: g.FakeCompute, gpus: int, vms: int, ssd_gb: int) -> None:
    """The region's and project's usage: ``gpus`` T4 nodes of 8 vCPUs, ``vms`` VMs holding
    disks, under limits that never bind."""
    compute.set_region(P, R, NVIDIA_T4_GPUS=(32, gpus), CPUS=(400, 8 * gpus), E2_CPUS=(100, 0))
    compute.set_region(P, R, INSTANCES=(500, vms), IN_USE_ADDRESSES=(100, gpus))
    compute.set_region(P, R, SSD_TOTAL_GB=(10000, ssd_gb))
    compute.set_project(P, GPUS_ALL_REGIONS=(32, gpus), CPUS_ALL_REGIONS=(1000, 8 * gpus))


def own_usage(env: dict[str, Any], nodes: list[dict[str, Any]], gpus: int) -> dict[str, Any]:
    """gke-t4's ownUsage per quota once ``nodes`` run (``node``'s keywords each, in the zones in
    turn unless one names its ``zone``), ``gpus`` of them T4 nodes in the region's usage and each
    VM holding a 100 GB disk there."""
    compute: g.FakeCompute = env["compute"]
    for i, given in enumerate(nodes):
        kw = dict(given)
        node(compute, kw.pop("zone", ZONES[i % len(ZONES)]), **kw)
    in_use(compute, gpus=gpus, vms=len(nodes), ssd_gb=100 * len(nodes))
    _, doc = run("--stack", "gke-t4")
    return {c["quota"]: c["ownUsage"] for c in doc["checks"] if "ownUsage" in c}


def l4_spot_region(
    compute: g.FakeCompute, preemptible: tuple[int, int], l4_used: int, nodes: int
) -> None:
    """gke-l4-spot's region with ``nodes`` L4 nodes (1 GPU, an address, a 100 GB disk each) in
    use: 32 L4 GPUs (``l4_used`` in use), ``preemptible`` (limit, usage) Spot L4 GPUs, and limits
    that never bind otherwise."""
    compute.set_region(
        P,
        R,
        NVIDIA_L4_GPUS=(32, l4_used),
        PREEMPTIBLE_NVIDIA_L4_GPUS=preemptible,
        NVIDIA_T4_GPUS=(8, 0),
        CPUS=(400, 0),
        E2_CPUS=(100, 0),
        INSTANCES=(500, nodes),
        IN_USE_ADDRESSES=(100, nodes),
        SSD_TOTAL_GB=(10000, 100 * nodes),
    )
    compute.set_project(P, GPUS_ALL_REGIONS=(64, nodes), CPUS_ALL_REGIONS=(1000, 0))


def deployed(env: dict[str, Any], t4_limit: int, gpus: int = 20) -> None:
    """gke-t4 running ``gpus`` gpu-t4 nodes and its 3 system nodes; the region's usage is theirs
    (plus 10 vCPUs of something else)."""
    compute: g.FakeCompute = env["compute"]
    for i in range(gpus):
        node(compute, ZONES[i % 4])
    for z in ZONES[:3]:
        node(compute, z, "system", gpu=None, count=0, machine="e2-standard-4")
    compute.set_region(
        P,
        R,
        NVIDIA_T4_GPUS=(t4_limit, gpus),
        CPUS=(400, 8 * gpus + 10),
        E2_CPUS=(100, 12),
        INSTANCES=(500, gpus + 3),
        IN_USE_ADDRESSES=(100, gpus + 3),
        SSD_TOTAL_GB=(10000, 100 * (gpus + 3)),
    )
    compute.set_project(
        P, GPUS_ALL_REGIONS=(t4_limit, gpus), CPUS_ALL_REGIONS=(1000, 8 * gpus + 22)
    )


def test_gke_t4_running_20_nodes_under_a_limit_of_21_is_ok_and_requests_nothing(
    gcp_env: dict[str, Any],
) -> None:
    # 21 needed, 20 of them running already: 1 more fits in 21 - 20 (usage - own + needed <= 21)
    deployed(gcp_env, t4_limit=21)
    code, doc = run("--stack", "gke-t4", "--request", "--email", "ops@example.org")
    t4 = row(doc, "NVIDIA_T4_GPUS")
    assert (t4["status"], t4["usage"], t4["ownUsage"], t4["surge"]) == ("ok", 20, 20, 1), t4
    assert row(doc, "GPUS_ALL_REGIONS")["ownUsage"] == 20
    assert row(doc, "CPUS")["ownUsage"] == 160 and row(doc, "E2_CPUS")["ownUsage"] == 12
    assert row(doc, "SSD_TOTAL_GB")["ownUsage"] == 2300
    assert code == 0 and all(c["request"] is None for c in doc["checks"])
    assert gcp_env["quotas"].calls["quotaPreferences.create"] == 0


def test_gke_t4_running_20_nodes_under_a_limit_of_15_requests_what_the_stack_adds(
    gcp_env: dict[str, Any],
) -> None:
    # usage - own + needed = 20 - 20 + 21 = 21, not usage + peak (41)
    deployed(gcp_env, t4_limit=15)
    code, doc = run("--stack", "gke-t4", "--request", "--email", "ops@example.org")
    t4, glob = row(doc, "NVIDIA_T4_GPUS"), row(doc, "GPUS_ALL_REGIONS")
    assert code == 1 and t4["status"] == "short" and glob["status"] == "short"
    assert (t4["request"]["desired"], glob["request"]["desired"]) == (21, 21)
    pref = gcp_env["quotas"].prefs[t4["request"]["id"]]
    assert pref["quotaConfig"]["preferredValue"] == "21"


def test_vms_of_another_cluster_pool_or_location_stay_in_usage_as_others(
    gcp_env: dict[str, Any],
) -> None:
    compute: g.FakeCompute = gcp_env["compute"]
    node(compute, ZONES[0], cluster="other")
    node(compute, ZONES[0], "not-ours")
    node(compute, ZONES[0], location="us-central1-a")  # a zonal cluster ml, not this one
    compute.set_region(P, R, NVIDIA_T4_GPUS=(21, 3), CPUS=(400, 24), E2_CPUS=(100, 0))
    compute.set_region(P, R, INSTANCES=(500, 3), IN_USE_ADDRESSES=(100, 3))
    compute.set_region(P, R, SSD_TOTAL_GB=(10000, 300))
    compute.set_project(P, GPUS_ALL_REGIONS=(32, 3), CPUS_ALL_REGIONS=(1000, 24))
    code, doc = run("--stack", "gke-t4")
    t4 = row(doc, "NVIDIA_T4_GPUS")
    assert (t4["ownUsage"], t4["status"]) == (0, "short") and code == 1  # 21 > 21 - 3


def test_a_node_of_another_shape_than_its_pool_now_plans_is_not_the_stacks_own(
    gcp_env: dict[str, Any],
) -> None:
    # A node still of the pool's old machine type is being replaced: it holds its quota beside
    # the new ones until it goes.
    own = own_usage(gcp_env, [{"machine": "n1-standard-8"}, {}], gpus=2)
    assert own["NVIDIA_T4_GPUS"] == 1


def test_a_boot_disk_of_another_type_or_size_counts_the_node_but_not_its_disk(
    gcp_env: dict[str, Any],
) -> None:
    disks = [
        {"disk": ("pd-standard", 100)},  # DISKS_TOTAL_GB, not SSD_TOTAL_GB
        {"disk": ("pd-balanced", 200)},
        {},
    ]
    own = own_usage(gcp_env, disks, gpus=3)
    assert own["NVIDIA_T4_GPUS"] == 3
    assert own["SSD_TOTAL_GB"] == 100  # the one disk listed as planned


def test_stopped_vms_hold_no_quota_but_pending_stop_and_deprovisioning_still_do(
    gcp_env: dict[str, Any],
) -> None:
    # Instance.Status: PENDING_STOP "gracefully shutting down", DEPROVISIONING "releasing
    # quota" (google-cloud-compute); TERMINATED and STOPPED hold none.
    statuses = ("PENDING_STOP", "DEPROVISIONING", "TERMINATED", "STOPPED", "RUNNING")
    own = own_usage(gcp_env, [{"zone": ZONES[0], "status": s} for s in statuses], gpus=3)
    assert own["NVIDIA_T4_GPUS"] == 3


def test_the_stacks_own_nodes_never_offset_more_than_the_usage_reports(
    gcp_env: dict[str, Any],
) -> None:
    # usage lags the VMs: 20 own listed, the region reports 5 in use: 16 more > 20 - 5 free
    # (counting all 20 would leave 1 more, and read ok)
    deployed(gcp_env, t4_limit=21)
    gcp_env["compute"].set_region(P, R, NVIDIA_T4_GPUS=(20, 5))
    _, doc = run("--stack", "gke-t4")
    t4 = row(doc, "NVIDIA_T4_GPUS")
    assert t4["status"] == "short" and "5 already running in this stack" in t4["reason"]


def test_own_nodes_unreadable_are_counted_as_others_and_said_so_never_ok_by_omission(
    gcp_env: dict[str, Any],
) -> None:
    deployed(gcp_env, t4_limit=21)
    gcp_env["compute"].inject("instances.list", g.permission_denied("compute.instances.list"))
    code, doc = run("--stack", "gke-t4")
    t4 = row(doc, "NVIDIA_T4_GPUS")
    assert t4["status"] == "short" and t4["ownUsage"] is None and code == 1
    assert "compute.instances.list" in t4["reason"] and "counted as others'" in t4["reason"]


def test_the_live_table_says_why_spot_demand_sits_on_the_standard_row(
    gcp_env: dict[str, Any],
) -> None:
    # create-use-spot: without preemptible quota, Spot VMs consume standard quota
    l4_spot_region(gcp_env["compute"], preemptible=(0, 0), l4_used=0, nodes=0)
    out = io.StringIO()
    main(["--stack", "gke-l4-spot"], out=out, err=io.StringIO())
    text = " ".join(out.getvalue().split())
    assert "counted here: PREEMPTIBLE_NVIDIA_L4_GPUS not granted: Spot counts against" in text


def test_where_counts_the_stacks_own_nodes_once_in_its_own_region(
    gcp_env: dict[str, Any],
) -> None:
    deployed(gcp_env, t4_limit=21)
    code, doc = run("--stack", "gke-t4", "--where", "--regions", R)
    (home,) = doc["where"][0]["regions"]
    assert (home["region"], home["fits"], code) == (R, True, 0), home


@pytest.mark.parametrize(
    ("preemptible", "row_of_own"),
    [((0, 0), "NVIDIA_L4_GPUS"), ((16, 3), "PREEMPTIBLE_NVIDIA_L4_GPUS")],
    ids=["not-granted", "granted"],
)
def test_a_spot_pools_running_nodes_count_on_the_row_its_demand_sits_on(
    gcp_env: dict[str, Any], preemptible: tuple[int, int], row_of_own: str
) -> None:
    # create-use-spot: Spot VMs draw on standard quota until preemptible quota is granted
    compute: g.FakeCompute = gcp_env["compute"]
    for z in ZONES[:3]:
        node(
            compute,
            z,
            "l4-spot",
            cluster="inference",
            gpu="nvidia-l4",
            machine="g2-standard-8",
            model="SPOT",
        )
    l4_used = 3 if preemptible == (0, 0) else 0
    l4_spot_region(compute, preemptible=preemptible, l4_used=l4_used, nodes=3)
    _, doc = run("--stack", "gke-l4-spot")
    assert row(doc, row_of_own)["ownUsage"] == 3


def test_own_usage_is_capped_per_pool_at_its_own_demand_before_rows_sum(
    gcp_env: dict[str, Any],
) -> None:
    # Day 2: gpu-t4's maxNodes lowered 23 -> 20 while 23 of its VMs run; the system pool does not
    # exist yet. INSTANCES (one per VM, Compute "INSTANCES" regional quota): 20 + 3 system +
    # 1 surge = 24 needed. gpu-t4 offsets at most its own 20 nodes (the 3 beyond go with the
    # scale-down): 4 more against 24 - 23 = 1 free is short (23 own would read 1 more: ok).
    compute: g.FakeCompute = gcp_env["compute"]
    for i in range(23):
        node(compute, ZONES[i % 4])
    in_use(compute, gpus=23, vms=23, ssd_gb=2300)
    compute.set_region(P, R, INSTANCES=(24, 23))
    code, doc = run("--stack", "gke-t4")
    inst = row(doc, "INSTANCES")
    assert (inst["needed"], inst["ownUsage"], inst["status"]) == (24, 20, "short"), inst
    assert "20 already running in this stack: 4 more" in inst["reason"] and code == 1
