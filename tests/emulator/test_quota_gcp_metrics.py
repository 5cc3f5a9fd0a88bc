"""quota.check on GKE stacks: which quota each VM draws on (E2 and family CPUs, spot and
preemptible, GPU families and their reservations, addresses, SSD), against the real clients.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.emulator import quota_gcp_fixtures
from tests.emulator.quota_cli import row, run
from tests.emulator.quota_gcp_fixtures import FIX, P, R, spot_region
from tests.fakes import gcp as g

pytestmark = pytest.mark.emulator

# Fixtures this module shares with its siblings (quota_gcp_fixtures).
env = quota_gcp_fixtures.env


def h100_family(env: dict[str, Any]) -> None:
    """The project with 64 NVIDIA_H100 GPUs of family quota in R and room for them globally."""
    env["compute"].set_project(P, GPUS_ALL_REGIONS=(64, 0), CPUS_ALL_REGIONS=(2000, 0))
    env["quotas"].set_family(P, [({"region": R, "gpu_family": "NVIDIA_H100"}, 64)])


def run_h100(*extra: str) -> tuple[int, dict[str, Any]]:
    """quota.check on the gke-h100 fixture: the exit code and its NVIDIA_H100_GPUS family row."""
    code, doc = run("--config", str(FIX / "Pulumi.gke-h100.yaml"), *extra)
    return code, row(doc, "NVIDIA_H100_GPUS")


def test_spot_pool_reads_preemptible_quota_not_on_demand(env: dict[str, Any]) -> None:
    env["compute"].set_region(
        P, R, NVIDIA_L4_GPUS=(5, 0), PREEMPTIBLE_NVIDIA_L4_GPUS=(4, 0), NVIDIA_T4_GPUS=(5, 0)
    )
    _, doc = run("--stack", "gke-l4-spot")
    spot = row(doc, "PREEMPTIBLE_NVIDIA_L4_GPUS")
    assert spot["status"] == "short" and spot["needed"] == 9  # 8 max + 1 surge, spot only
    assert row(doc, "NVIDIA_L4_GPUS")["status"] == "ok"  # the on-demand fallback pool: 5
    # spot G2 draws no vCPU quota (https://cloud.google.com/compute/resource-usage#gpu_quota)
    assert all(c["quota"] != "PREEMPTIBLE_CPUS" for c in doc["checks"])


def test_h100_family_quota_short_from_the_limit_alone(env: dict[str, Any]) -> None:
    env["compute"].set_project(P, GPUS_ALL_REGIONS=(64, 0), CPUS_ALL_REGIONS=(2000, 0))
    env["quotas"].set_family(P, [({"region": R, "gpu_family": "NVIDIA_H100"}, 16)])
    code, fam = run_h100()
    assert code == 1 and fam["status"] == "short" and (fam["limit"], fam["usage"]) == (16, 0)
    assert fam["gpuFamily"] == "NVIDIA_H100"


def test_h100_family_quota_counts_running_vms_as_usage(env: dict[str, Any]) -> None:
    h100_family(env)
    code, fam = run_h100()
    assert code == 0 and (fam["status"], fam["usage"]) == ("ok", 0)
    compute = env["compute"]
    compute.add_instance("us-central1-a", "nvidia-h100-80gb", 8)
    compute.add_instance("us-central1-b", "nvidia-h100-80gb", 8, status="STAGING")
    compute.set_region(P, R, PREEMPTIBLE_NVIDIA_H100_GPUS=(8, 8))  # granted: Spot counts there
    compute.add_instance("us-central1-b", "nvidia-h100-80gb", 8, spot=True)  # preemptible quota
    compute.add_instance("us-central1-c", "nvidia-h100-80gb", 8, status="TERMINATED")
    compute.add_instance("us-east4-a", "nvidia-h100-80gb", 8)  # another region
    compute.add_instance("us-central1-a", "nvidia-tesla-t4", 4)  # another family
    _, fam = run_h100()
    assert (fam["usage"], fam["status"]) == (16, "ok")  # 48 free >= 24
    for _ in range(3):
        compute.add_instance("us-central1-f", "nvidia-h100-80gb", 8)
    _, doc = run("--config", str(FIX / "Pulumi.gke-h100.yaml"))
    assert row(doc, "NVIDIA_H100_GPUS")["status"] == "ok"  # 64 - 40 = 24 free, exactly enough
    compute.add_instance("us-central1-f", "nvidia-h100-80gb", 1)
    _, doc = run("--config", str(FIX / "Pulumi.gke-h100.yaml"))
    assert row(doc, "NVIDIA_H100_GPUS")["status"] == "short"  # 23 free < 24


def test_h100_usage_unreadable_is_unknown(env: dict[str, Any]) -> None:
    h100_family(env)
    env["compute"].inject("instances.list", g.permission_denied("compute.instances.list"))
    code, fam = run_h100()
    assert code == 3 and fam["status"] == "unknown" and "compute.instances.list" in fam["reason"]


# --- which quota a VM consumes, against the real clients --------------------------------------


def test_e2_cpus_at_zero_makes_the_system_pool_short(env: dict[str, Any]) -> None:
    env["compute"].set_region(P, R, E2_CPUS=(0, 0))  # "Quota 'E2_CPUS' exceeded. Limit: 0.0"
    code, doc = run("--stack", "gke-t4")
    e2 = row(doc, "E2_CPUS")
    assert code == 1 and e2["status"] == "short" and e2["needed"] == 16
    assert row(doc, "CPUS")["needed"] == 168  # E2 vCPUs are not counted under CPUS


def test_region_without_e2_cpus_counts_e2_under_cpus(env: dict[str, Any]) -> None:
    del env["compute"].regions[(P, R)]["E2_CPUS"]
    code, doc = run("--stack", "gke-t4")
    cpus = row(doc, "CPUS")
    assert code == 0 and cpus["needed"] == 168 + 16 - 4  # one surge: the larger pool's (8)
    assert all(c["quota"] != "E2_CPUS" for c in doc["checks"])


def test_spot_with_preemptible_at_zero_uses_ample_standard_quota_and_is_ok(
    env: dict[str, Any],
) -> None:
    spot_region(env["compute"], 0)
    code, doc = run("--stack", "gke-l4-spot")
    l4 = row(doc, "NVIDIA_L4_GPUS")
    assert code == 0 and l4["status"] == "ok"
    assert l4["needed"] == 8 + 4 + 1  # spot pool + on-demand fallback + one pool's surge
    assert any("not granted" in p for p in l4["pools"])
    assert all(not c["quota"].startswith("PREEMPTIBLE_") for c in doc["checks"])
    # G2 draws on no vCPU quota (https://cloud.google.com/compute/resource-usage#gpu_quota)
    assert all(c["quota"] != "CPUS_PER_VM_FAMILY" for c in doc["checks"])


def test_spot_with_granted_preemptible_quota_is_judged_there(env: dict[str, Any]) -> None:
    spot_region(env["compute"], 4)
    code, doc = run("--stack", "gke-l4-spot")
    spot = row(doc, "PREEMPTIBLE_NVIDIA_L4_GPUS")
    assert code == 1 and spot["status"] == "short" and spot["needed"] == 9
    assert row(doc, "NVIDIA_L4_GPUS")["needed"] == 5  # the on-demand fallback pool only


def test_vm_family_quota_unreadable_is_unknown_not_skipped(env: dict[str, Any]) -> None:
    code, doc = run("--config", str(FIX / "Pulumi.gke-c4-system.yaml"))
    c4 = row(doc, "CPUS_PER_VM_FAMILY")
    assert code == 3 and c4["status"] == "unknown" and "vm_family=C4" in c4["reason"]


def test_vm_family_quota_counts_on_demand_c4_vcpus(env: dict[str, Any]) -> None:
    env["quotas"].set_family(
        P, [({"region": R, "vm_family": "C4"}, 200)], qid="CPUS-PER-VM-FAMILY-per-project-region"
    )
    _, doc = run("--config", str(FIX / "Pulumi.gke-c4-system.yaml"))
    c4 = row(doc, "CPUS_PER_VM_FAMILY")
    assert (c4["vmFamily"], c4["status"], c4["usage"]) == ("C4", "ok", 0)
    assert c4["quotaId"] == "CPUS-PER-VM-FAMILY-per-project-region"


def test_flex_start_and_queued_pools_consume_preemptible_quota(env: dict[str, Any]) -> None:
    env["compute"].set_region(
        P, R, PREEMPTIBLE_NVIDIA_L4_GPUS=(8, 0), PREEMPTIBLE_NVIDIA_T4_GPUS=(0, 0)
    )
    code, doc = run("--config", str(FIX / "Pulumi.gke-flex.yaml"))
    assert row(doc, "PREEMPTIBLE_NVIDIA_L4_GPUS")["status"] == "ok"
    t4 = row(doc, "PREEMPTIBLE_NVIDIA_T4_GPUS")  # 0 granted: flex/queued never use standard
    assert code == 1 and t4["status"] == "short" and t4["needed"] == 2
    assert row(doc, "PREEMPTIBLE_CPUS")["needed"] == 8 * 2  # the n1 pool; G2 draws no vCPU quota
    assert all(c["quota"] not in ("NVIDIA_L4_GPUS", "NVIDIA_T4_GPUS") for c in doc["checks"])
    assert all(c["quota"] != "IN_USE_ADDRESSES" for c in doc["checks"])  # privateNodes


def test_in_use_addresses_short_is_short(env: dict[str, Any]) -> None:
    env["compute"].set_region(P, R, IN_USE_ADDRESSES=(8, 0))  # the common default
    code, doc = run("--stack", "gke-t4")
    ips = row(doc, "IN_USE_ADDRESSES")
    assert code == 1 and ips["status"] == "short" and ips["needed"] == 24


def test_instances_and_ssd_rows_are_judged(env: dict[str, Any]) -> None:
    env["compute"].set_region(P, R, SSD_TOTAL_GB=(2000, 0))
    code, doc = run("--stack", "gke-t4")
    assert code == 1 and row(doc, "SSD_TOTAL_GB")["status"] == "short"
    assert row(doc, "INSTANCES")["status"] == "ok"


@pytest.mark.parametrize(
    ("preemptible", "usage", "status", "exit_code"),
    [((0, 0), 8, "short", 1), ((16, 8), 0, "ok", 0)],
    ids=["preemptible-not-granted", "preemptible-granted"],
)
def test_spot_vms_count_as_family_usage_only_while_preemptible_quota_is_not_granted(
    env: dict[str, Any], preemptible: tuple[int, int], usage: int, status: str, exit_code: int
) -> None:
    # https://cloud.google.com/compute/docs/instances/create-use-spot: without preemptible quota,
    # Spot VMs consume the standard quotas; once it is granted they draw on it instead.
    env["compute"].set_project(P, GPUS_ALL_REGIONS=(64, 0), CPUS_ALL_REGIONS=(2000, 0))
    env["compute"].set_region(P, R, PREEMPTIBLE_NVIDIA_H100_GPUS=preemptible)
    env["quotas"].set_family(P, [({"region": R, "gpu_family": "NVIDIA_H100"}, 16)])
    env["compute"].add_instance("us-central1-a", "nvidia-h100-80gb", 8, spot=True)
    code, doc = run("--config", str(FIX / "Pulumi.gke-h100-one.yaml"))
    fam = row(doc, "NVIDIA_H100_GPUS")
    assert (fam["needed"], fam["limit"], fam["usage"]) == (16, 16, usage)
    assert (code, fam["status"]) == (exit_code, status)


def _global_gpu_info(env: dict[str, Any], value: int) -> None:
    qid = "GPUS-ALL-REGIONS-per-project"
    env["quotas"].infos[qid] = {
        "name": f"projects/{P}/locations/global/services/compute.googleapis.com/quotaInfos/{qid}",
        "quotaId": qid,
        "metric": "compute.googleapis.com/gpus_all_regions",
        "service": "compute.googleapis.com",
        "dimensionsInfos": [
            {"dimensions": {}, "details": {"value": str(value)}, "applicableLocations": ["global"]}
        ],
    }


def test_gpus_all_regions_missing_falls_back_to_cloud_quotas_and_can_be_short(
    env: dict[str, Any],
) -> None:
    env["compute"].projects[P].pop("GPUS_ALL_REGIONS")  # a new project: not in projects.get
    _global_gpu_info(env, 1)
    code, doc = run("--stack", "gke-t4")
    g = row(doc, "GPUS_ALL_REGIONS")
    assert code == 1 and g["status"] == "short" and g["limit"] == 1
    assert g["quotaId"] == "GPUS-ALL-REGIONS-per-project"


def test_gpus_all_regions_fallback_with_headroom_is_ok_on_the_regions_usage(
    env: dict[str, Any],
) -> None:
    env["compute"].projects[P].pop("GPUS_ALL_REGIONS")
    _global_gpu_info(env, 64)
    code, doc = run("--stack", "gke-t4")
    g = row(doc, "GPUS_ALL_REGIONS")
    assert code == 0 and (g["status"], g["limit"], g["usage"]) == ("ok", 64, 0)


def test_a_declared_shape_without_quota_rows_is_unknown_while_its_other_draws_are_judged(
    env: dict[str, Any],
) -> None:
    code, doc = run("--config", str(FIX / "Pulumi.gke-declared-shape.yaml"))
    gpus, vcpus = row(doc, "unknown:nvidia-b300"), row(doc, "unknown:a5")
    assert code == 3  # some quota could not be determined: not ok, and not an invalid config
    assert (gpus["status"], gpus["needed"], vcpus["status"]) == ("unknown", 24, "unknown")
    assert "declared gpuPools[].shape" in gpus["reason"] and "quotaId" not in gpus
    assert (gpus["limit"], gpus["usage"]) == (None, None)
    # The pool's draws on quotas this project can name are read and judged as usual.
    assert row(doc, "GPUS_ALL_REGIONS")["status"] == "ok"
    assert row(doc, "INSTANCES")["status"] == "ok"


def test_g2_stack_on_a_32_vcpu_global_default_exits_0_and_requests_no_cpu_quota(
    env: dict[str, Any],
) -> None:
    # https://cloud.google.com/compute/resource-usage#gpu_quota: G2 VMs need GPU quota only.
    env["compute"].set_region(P, R, NVIDIA_L4_GPUS=(40, 0))
    env["compute"].set_project(P, GPUS_ALL_REGIONS=(64, 0), CPUS_ALL_REGIONS=(32, 0))
    code, doc = run("--config", str(FIX / "Pulumi.gke-g2.yaml"), "--request", "--email", "a@b.c")
    assert code == 0, doc
    cpus = row(doc, "CPUS_ALL_REGIONS")
    assert cpus["needed"] == 16 and cpus["status"] == "ok"  # the e2 system pool only
    assert all(c["request"] is None for c in doc["checks"])
    assert env["quotas"].calls["quotaPreferences.create"] == 0


def test_h100_reservations_count_as_family_usage_beyond_the_vms_running_in_them(
    env: dict[str, Any],
) -> None:
    # Compute Engine holds reserved resources whether used or not; VMs in them count once.
    h100_family(env)
    compute = env["compute"]
    compute.add_instance("us-central1-a", "nvidia-h100-80gb", 8)  # runs in the reservation
    compute.add_reservation("us-central1-a", "a3-highgpu-8g", count=3, in_use=1)  # 2 unused
    compute.add_reservation("us-central1-b", "a3-highgpu-8g", count=4, status="DELETING")
    compute.add_reservation("us-east4-a", "a3-highgpu-8g", count=4)  # another region
    _, fam = run_h100()
    assert fam["usage"] == 8 + 2 * 8  # the running VM + two unused reserved VMs of 8 H100s


def test_h100_reservations_unreadable_make_family_usage_unknown(env: dict[str, Any]) -> None:
    h100_family(env)
    env["compute"].inject(
        "reservations.aggregatedList", g.permission_denied("compute.reservations.list")
    )
    code, fam = run_h100()
    assert code == 3 and fam["status"] == "unknown"
    assert "compute.reservations.list" in fam["reason"]


def test_family_usage_lists_every_zone_at_once_and_a_zone_the_catalog_lacks(
    env: dict[str, Any],
) -> None:
    h100_family(env)
    compute = env["compute"]
    compute.zones[R] = [f"{R}-a", f"{R}-b", f"{R}-c", f"{R}-f", f"{R}-z"]  # -z: not in the catalog
    for _ in range(3):  # two pages in -a
        compute.add_instance(f"{R}-a", "nvidia-h100-80gb", 1)
    compute.add_instance(f"{R}-z", "nvidia-h100-80gb", 8)
    _, doc = run("--config", str(FIX / "Pulumi.gke-h100.yaml"))
    assert row(doc, "NVIDIA_H100_GPUS")["usage"] == 3 + 8
    assert compute.calls["instances.aggregatedList"] == 0
    assert compute.calls["instances.list"] >= 5  # every zone on its own (-a twice: two pages)


def test_family_usage_is_unknown_when_the_regions_zones_are_unknown(env: dict[str, Any]) -> None:
    h100_family(env)
    env["compute"].inject("regions.get", g.INTERNAL)
    code, fam = run_h100()
    assert code == 3 and fam["status"] == "unknown" and "zones of region" in fam["reason"]


def test_spot_on_an_unverified_preemptible_metric_the_region_lacks_is_unknown_not_on_demand(
    env: dict[str, Any],
) -> None:
    # PREEMPTIBLE_NVIDIA_H200_GPUS is not a member of google-cloud-compute 1.57.0 Quota.Metric:
    # a region not reporting it may still grant it under another name, so the Spot demand is
    # not moved onto the (ample) on-demand NVIDIA_H200 family quota.
    env["compute"].set_region(P, R, HDB_TOTAL_GB=(10000, 0))
    env["compute"].set_project(P, GPUS_ALL_REGIONS=(64, 0), CPUS_ALL_REGIONS=(2000, 0))
    env["quotas"].set_family(P, [({"region": R, "gpu_family": "NVIDIA_H200"}, 64)])
    code, doc = run("--config", str(FIX / "Pulumi.gke-h200-spot.yaml"))
    pre = row(doc, "PREEMPTIBLE_NVIDIA_H200_GPUS")
    assert (pre["status"], pre["needed"], code) == ("unknown", 16, 3), pre
    assert not [c for c in doc["checks"] if c["quota"] == "NVIDIA_H200_GPUS"]
    # a verified metric the region lacks (PREEMPTIBLE_LOCAL_SSD_GB) still means not granted
    assert row(doc, "LOCAL_SSD_TOTAL_GB")["status"] == "ok"


def test_family_usage_counts_gpus_bundled_in_the_machine_type_not_only_guest_accelerators(
    env: dict[str, Any],
) -> None:
    # a3-highgpu-8g comes with 8 x nvidia-h100-80gb attached ("A3 High ... 8 GPUs", Compute
    # GPU machine types): a VM listing no guestAccelerators still holds 8 of the family quota.
    h100_family(env)
    for zone in ("us-central1-a", "us-central1-b", "us-central1-c") * 2:
        env["compute"].add_instance(zone, None, 0, machine_type="a3-highgpu-8g")
    code, fam = run_h100()
    assert (fam["usage"], fam["needed"], fam["status"], code) == (48, 24, "short", 1), fam


@pytest.mark.parametrize("order", [(64, 16), (16, 64)], ids=["larger-first", "smaller-first"])
def test_equally_specific_family_rows_give_the_smaller_limit_whatever_their_order(
    env: dict[str, Any], order: tuple[int, int]
) -> None:
    # Two DimensionsInfo rows of QuotaInfo naming the same region and family: the order of
    # dimensions_infos is not documented, so the smaller value (16 < 24 needed) judges.
    env["compute"].set_project(P, GPUS_ALL_REGIONS=(64, 0), CPUS_ALL_REGIONS=(2000, 0))
    dims = {"region": R, "gpu_family": "NVIDIA_H100"}
    env["quotas"].set_family(P, [(dims, order[0]), (dict(dims), order[1])])
    code, fam = run_h100()
    assert (fam["limit"], fam["status"], code) == (16, "short", 1), fam
