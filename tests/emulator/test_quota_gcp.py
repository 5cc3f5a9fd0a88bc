"""quota.check on GKE stacks: the real google-cloud-* REST clients against local fakes.

Endpoints come from the contract's QUOTA_ENDPOINT_* variables; retries are shortened through
QUOTA_RETRY_* so fault cases stay fast.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from quota.check import main
from tests.emulator.quota_cli import row, run
from tests.fakes import gcp as g

pytestmark = pytest.mark.emulator

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures" / "quota"
P = "demo-project"
R = "us-central1"


@pytest.fixture
def env(gcp_env: dict[str, Any]) -> dict[str, Any]:
    """The shared GCP fakes (tests/emulator/conftest.py), with gke-t4's region well stocked."""
    compute = gcp_env["compute"]
    assert isinstance(compute, g.FakeCompute)
    # gke-t4 peak: 21 T4 GPUs, 168 CPUS (n1 pool), 16 E2_CPUS (system pool), 24 VMs with external
    # IPs and 100 GB pd-balanced each; globally 21 GPUs and 180 vCPUs.
    compute.set_region(P, R, **AMPLE)
    compute.set_project(P, GPUS_ALL_REGIONS=(32, 0), CPUS_ALL_REGIONS=(1000, 10))
    return gcp_env


AMPLE: dict[str, tuple[float, float]] = {
    "NVIDIA_T4_GPUS": (32, 0),
    "CPUS": (400, 10),
    "E2_CPUS": (100, 0),
    "PREEMPTIBLE_CPUS": (200, 0),
    "INSTANCES": (500, 3),
    "IN_USE_ADDRESSES": (100, 2),
    "SSD_TOTAL_GB": (10000, 500),
    "LOCAL_SSD_TOTAL_GB": (30000, 0),  # a3-highgpu-8g bundles 16 x 375 GB
}


def request_t4(*extra: str) -> tuple[int, dict[str, Any]]:
    """quota.check --request on gke-t4: the exit code and the T4 row's request."""
    code, doc = run("--stack", "gke-t4", "--request", "--email", "ops@example.org", *extra)
    return code, row(doc, "NVIDIA_T4_GPUS")["request"]


def h100_family(env: dict[str, Any]) -> None:
    """The project with 64 NVIDIA_H100 GPUs of family quota in R and room for them globally."""
    env["compute"].set_project(P, GPUS_ALL_REGIONS=(64, 0), CPUS_ALL_REGIONS=(2000, 0))
    env["quotas"].set_family(P, [({"region": R, "gpu_family": "NVIDIA_H100"}, 64)])


def run_h100(*extra: str) -> tuple[int, dict[str, Any]]:
    """quota.check on the gke-h100 fixture: the exit code and its NVIDIA_H100_GPUS family row."""
    code, doc = run("--config", str(FIX / "Pulumi.gke-h100.yaml"), *extra)
    return code, row(doc, "NVIDIA_H100_GPUS")


def quota_rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows read from the cloud (not the documented GKE node limits, which carry a source)."""
    return [c for c in doc["checks"] if "source" not in c]


def test_ample_quota_is_ok_everywhere_and_exits_0(env: dict[str, Any]) -> None:
    code, doc = run("--stack", "gke-t4")
    assert code == 0
    assert {c["status"] for c in doc["checks"]} == {"ok"}
    t4 = row(doc, "NVIDIA_T4_GPUS")
    assert (t4["region"], t4["needed"], t4["limit"], t4["usage"]) == (R, 21, 32, 0)


def test_regional_shortfall_is_short_and_dry_run_files_nothing(env: dict[str, Any]) -> None:
    env["compute"].set_region(P, R, NVIDIA_T4_GPUS=(16, 2))
    code, doc = run("--stack", "gke-t4")
    assert code == 1
    t4 = row(doc, "NVIDIA_T4_GPUS")
    assert t4["status"] == "short" and t4["request"] is None
    assert env["quotas"].calls["quotaPreferences.create"] == 0


def test_usage_counts_against_the_limit(env: dict[str, Any]) -> None:
    env["compute"].set_region(P, R, NVIDIA_T4_GPUS=(32, 12))  # 20 free < 21 needed
    _, doc = run("--stack", "gke-t4")
    assert row(doc, "NVIDIA_T4_GPUS")["status"] == "short"


def test_permission_denied_is_unknown_naming_the_permission(env: dict[str, Any]) -> None:
    env["compute"].inject("regions.get", g.permission_denied("compute.regions.get"))
    code, doc = run("--stack", "gke-t4")
    assert code == 3
    t4 = row(doc, "NVIDIA_T4_GPUS")
    assert t4["status"] == "unknown" and "compute.regions.get" in t4["reason"]
    assert row(doc, "GPUS_ALL_REGIONS")["status"] == "ok"  # other reads still judged


def test_disabled_compute_api_is_unknown_with_the_enable_command(env: dict[str, Any]) -> None:
    env["compute"].inject("*", g.service_disabled("compute.googleapis.com"))
    env["usage"].enabled.discard("compute.googleapis.com")
    code, doc = run("--stack", "gke-t4")
    assert code == 3
    assert all(c["status"] == "unknown" for c in quota_rows(doc))
    assert "gcloud services enable compute.googleapis.com" in row(doc, "CPUS")["reason"]
    api = row(doc, "compute.googleapis.com")
    assert api["unit"] == "API" and "compute.googleapis.com is disabled" in api["reason"]


def test_disabled_container_api_is_an_unknown_row_and_exits_3(env: dict[str, Any]) -> None:
    env["usage"].enabled.discard("container.googleapis.com")
    code, doc = run("--stack", "gke-t4")
    api = row(doc, "container.googleapis.com")
    assert code == 3 and api["status"] == "unknown" and api["scope"] == "global"
    assert "gcloud services enable container.googleapis.com --project demo-project" in api["reason"]
    assert row(doc, "NVIDIA_T4_GPUS")["status"] == "ok"  # the quotas are still judged


def test_every_required_api_is_checked(env: dict[str, Any]) -> None:
    env["usage"].enabled.clear()
    _, doc = run("--stack", "gke-t4")
    apis = {c["quota"] for c in doc["checks"] if c["unit"] == "API"}
    assert apis == set(g.ALL_REQUIRED_APIS) - {"cloudquotas.googleapis.com"}  # no row reads it


def test_429_storm_is_unknown_throttled_after_retries(env: dict[str, Any]) -> None:
    env["compute"].inject("regions.get", g.THROTTLED)
    code, doc = run("--stack", "gke-t4")
    assert code == 3
    assert "throttled" in row(doc, "NVIDIA_T4_GPUS")["reason"]
    assert env["compute"].calls["regions.get"] > 1  # it was retried


def test_transient_429_is_retried_to_success(env: dict[str, Any]) -> None:
    env["compute"].inject("regions.get", g.THROTTLED, times=2)
    code, doc = run("--stack", "gke-t4")
    assert code == 0 and row(doc, "NVIDIA_T4_GPUS")["status"] == "ok"


def test_persistent_5xx_is_unknown(env: dict[str, Any]) -> None:
    env["compute"].inject("projects.get", g.UNAVAILABLE)
    code, doc = run("--stack", "gke-t4")
    assert code == 3
    assert row(doc, "GPUS_ALL_REGIONS")["status"] == "unknown"
    assert row(doc, "NVIDIA_T4_GPUS")["status"] == "ok"


def test_timeout_is_unknown_not_ok(env: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QUOTA_CALL_TIMEOUT", "0.5")
    env["compute"].inject("regions.get", delay=1.0)
    code, doc = run("--stack", "gke-t4")
    assert code == 3
    assert "timed out" in row(doc, "NVIDIA_T4_GPUS")["reason"]


def test_quota_status_warning_is_unknown_not_zero(env: dict[str, Any]) -> None:
    env["compute"].quota_warning[(P, R)] = "quota backend unreachable"
    _, doc = run("--stack", "gke-t4")
    assert row(doc, "NVIDIA_T4_GPUS")["status"] == "unknown"


def test_request_requires_a_contact_email(env: dict[str, Any]) -> None:
    err = io.StringIO()
    assert main(["--stack", "gke-t4", "--request"], out=io.StringIO(), err=err) == 2
    assert "--email" in err.getvalue()


def test_request_filed_once_when_run_twice(env: dict[str, Any]) -> None:
    env["compute"].set_region(P, R, NVIDIA_T4_GPUS=(4, 1))
    args = ("--stack", "gke-t4", "--request", "--email", "ops@example.org")
    code, doc = run(*args)
    assert code == 1
    req = row(doc, "NVIDIA_T4_GPUS")["request"]
    assert req["action"] == "created" and req["desired"] == 22  # ceil(1 + 21)
    assert req["id"] == "gpu-infra-nvidia-t4-gpus-per-project-region-us-central1"
    pref = env["quotas"].prefs[req["id"]]
    assert pref["dimensions"] == {"region": R} and pref["quotaConfig"]["preferredValue"] == "22"
    code, doc = run(*args)
    assert code == 1
    assert row(doc, "NVIDIA_T4_GPUS")["request"]["action"] == "pending"
    assert env["quotas"].calls["quotaPreferences.create"] == 1
    assert env["quotas"].calls["quotaPreferences.patch"] == 0


def test_no_request_for_ok_rows(env: dict[str, Any]) -> None:
    code, doc = run("--stack", "gke-t4", "--request", "--email", "ops@example.org")
    assert code == 0
    assert all(c["request"] is None for c in doc["checks"])
    assert env["quotas"].calls["quotaPreferences.get"] == 0


def test_larger_demand_raises_an_existing_preference(env: dict[str, Any]) -> None:
    env["compute"].set_region(P, R, NVIDIA_T4_GPUS=(4, 0))
    quotas = env["quotas"]
    pid = "gpu-infra-nvidia-t4-gpus-per-project-region-us-central1"
    quotas.prefs[pid] = {
        "name": f"projects/{P}/locations/global/quotaPreferences/{pid}",
        "quotaId": "NVIDIA-T4-GPUS-per-project-region",
        "service": "compute.googleapis.com",
        "dimensions": {"region": R},
        "quotaConfig": {"preferredValue": "10", "grantedValue": "4"},
        "reconciling": False,
    }
    _, req = request_t4()
    assert req["action"] == "updated" and quotas.prefs[pid]["quotaConfig"]["preferredValue"] == "21"
    assert quotas.calls["quotaPreferences.create"] == 0


def test_partial_grant_is_reported_and_not_refiled(env: dict[str, Any]) -> None:
    env["compute"].set_region(P, R, NVIDIA_T4_GPUS=(4, 0))
    env["quotas"].policy = ("partial", 10)
    args = ("--stack", "gke-t4", "--request", "--email", "ops@example.org")
    _, doc = run(*args)
    first = row(doc, "NVIDIA_T4_GPUS")["request"]
    assert first["action"] == "created" and first["granted"] == 10
    code, doc = run(*args)
    t4 = row(doc, "NVIDIA_T4_GPUS")
    assert code == 1 and t4["limit"] == 10 and t4["status"] == "short"
    assert t4["request"]["action"] == "partially-granted" and t4["request"]["granted"] == 10
    assert env["quotas"].calls["quotaPreferences.create"] == 1
    assert env["quotas"].calls["quotaPreferences.patch"] == 0


def test_full_grant_makes_the_next_run_ok(env: dict[str, Any]) -> None:
    env["compute"].set_region(P, R, NVIDIA_T4_GPUS=(4, 0))
    env["quotas"].policy = "grant"
    args = ("--stack", "gke-t4", "--request", "--email", "ops@example.org")
    assert run(*args)[0] == 1
    code, doc = run(*args)
    assert code == 0 and row(doc, "NVIDIA_T4_GPUS")["limit"] == 21


def test_global_gpu_quota_short_while_regional_fine(env: dict[str, Any]) -> None:
    env["compute"].set_project(P, GPUS_ALL_REGIONS=(0, 0))  # new projects start at 0
    code, doc = run("--stack", "gke-t4", "--request", "--email", "ops@example.org")
    assert code == 1
    assert row(doc, "NVIDIA_T4_GPUS")["status"] == "ok"
    glob = row(doc, "GPUS_ALL_REGIONS")
    assert glob["status"] == "short" and glob["scope"] == "global" and glob["region"] is None
    pref = env["quotas"].prefs[glob["request"]["id"]]
    assert pref["quotaId"] == "GPUS-ALL-REGIONS-per-project" and not pref.get("dimensions")


def test_global_gpu_quota_is_requested_with_the_regional_one_when_it_lacks_room(
    env: dict[str, Any],
) -> None:
    args = ("--stack", "gke-t4", "--request", "--email", "ops@example.org")
    env["compute"].set_region(P, R, NVIDIA_T4_GPUS=(4, 0))
    _, doc = run(*args)  # 32 global GPUs cover the 21: only the regional quota is raised
    assert row(doc, "NVIDIA_T4_GPUS")["request"]["action"] == "created"
    assert row(doc, "GPUS_ALL_REGIONS")["request"] is None
    env["compute"].set_project(P, GPUS_ALL_REGIONS=(8, 0))
    _, doc = run(*args)
    glob = row(doc, "GPUS_ALL_REGIONS")["request"]
    assert (glob["action"], glob["desired"]) == ("created", 21)
    assert row(doc, "NVIDIA_T4_GPUS")["request"]["action"] == "pending"
    assert set(env["quotas"].prefs) == {
        "gpu-infra-nvidia-t4-gpus-per-project-region-us-central1",
        "gpu-infra-gpus-all-regions-per-project",
    }


def test_zonal_cluster_reads_its_region(env: dict[str, Any]) -> None:
    code, doc = run("--config", str(FIX / "Pulumi.gke-zonal.yaml"))
    assert code == 0
    t4 = row(doc, "NVIDIA_T4_GPUS")
    assert t4["region"] == R and t4["needed"] == 8  # 2 GPUs x (3 max + 1 surge)
    assert env["compute"].calls["regions.get"] == 1


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


def test_missing_metric_is_unknown_not_zero(env: dict[str, Any]) -> None:
    _, doc = run("--stack", "gke-l4-spot")  # no L4 metrics in the region at all
    l4 = row(doc, "NVIDIA_L4_GPUS")  # spot falls back to it: no preemptible L4 quota reported
    assert l4["status"] == "unknown" and "quota missing" in l4["reason"]
    assert l4["needed"] == 9 + 4  # the spot pool (8 + its surge) and the on-demand fallback (4)


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


def test_module_entry_point_honours_endpoint_variables(env: dict[str, Any]) -> None:
    import os
    import subprocess
    import sys

    p = subprocess.run(
        [sys.executable, "-m", "quota.check", "--stack", "gke-t4", "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=dict(os.environ),
        check=False,
        timeout=60,
    )
    assert p.returncode == 0, p.stderr
    assert row(json.loads(p.stdout), "NVIDIA_T4_GPUS")["limit"] == 32


def test_ineligible_quota_is_reported_not_requested(env: dict[str, Any]) -> None:
    env["compute"].set_region(P, R, NVIDIA_T4_GPUS=(4, 0))
    qid = "NVIDIA-T4-GPUS-per-project-region"
    env["quotas"].infos[qid] = {
        "name": f"projects/{P}/locations/global/services/compute.googleapis.com/quotaInfos/{qid}",
        "quotaId": qid,
        "quotaIncreaseEligibility": {
            "isEligible": False,
            "ineligibilityReason": "NO_VALID_BILLING_ACCOUNT",
        },
    }
    _, req = request_t4()
    assert req["action"] == "ineligible" and "NO_VALID_BILLING_ACCOUNT" in req["status"]
    assert env["quotas"].calls["quotaPreferences.create"] == 0


def test_unknown_quota_id_fails_the_request_instead_of_guessing(env: dict[str, Any]) -> None:
    env["compute"].set_region(P, R, NVIDIA_T4_GPUS=(4, 0))
    env["quotas"].absent.add("NVIDIA-T4-GPUS-per-project-region")
    _, req = request_t4()
    assert req["action"] == "failed" and "quotaInfos.get" in req["status"]
    assert env["quotas"].calls["quotaPreferences.create"] == 0


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


def spot_region(compute: g.FakeCompute, preemptible_gpus: float) -> None:
    compute.set_region(
        P,
        R,
        NVIDIA_L4_GPUS=(32, 0),
        PREEMPTIBLE_NVIDIA_L4_GPUS=(preemptible_gpus, 0),
        NVIDIA_T4_GPUS=(8, 0),
        PREEMPTIBLE_CPUS=(0, 0),
    )


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


def test_spot_request_files_standard_quota_unless_preemptible_quota_is_asked(
    env: dict[str, Any],
) -> None:
    spot_region(env["compute"], 0)
    env["compute"].set_region(P, R, NVIDIA_L4_GPUS=(4, 0))
    args = ("--stack", "gke-l4-spot", "--request", "--email", "ops@example.org")
    _, doc = run(*args)
    assert row(doc, "NVIDIA_L4_GPUS")["request"]["action"] == "created"
    assert not any(p.startswith("gpu-infra-preemptible") for p in env["quotas"].prefs)
    _, doc = run(*args, "--preemptible-quota")
    pre = row(doc, "PREEMPTIBLE_NVIDIA_L4_GPUS")
    assert pre["needed"] == 9 and pre["request"]["action"] == "created"


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


def test_unreachable_endpoint_is_reported_once(env: dict[str, Any], monkeypatch: Any) -> None:
    for var in ("COMPUTE", "CLOUDQUOTAS", "SERVICEUSAGE"):
        monkeypatch.setenv(f"QUOTA_ENDPOINT_{var}", "http://127.0.0.1:9")
    code, doc = run("--stack", "gke-t4")
    assert code == 3 and all(c["status"] == "unknown" for c in quota_rows(doc))
    assert len(doc["notes"]) == 1
    assert doc["notes"][0].startswith("cannot connect to http://127.0.0.1:9")
    assert all(c["reason"] == "not read: endpoint unreachable (see below)" for c in quota_rows(doc))


# --- requests that cannot collide -------------------------------------------------------------


def console_pref(pid: str, preferred: int, reconciling: bool) -> dict[str, Any]:
    return {
        "name": f"projects/{P}/locations/global/quotaPreferences/{pid}",
        "quotaId": "NVIDIA-T4-GPUS-per-project-region",
        "service": "compute.googleapis.com",
        "dimensions": {"region": R},
        "quotaConfig": {"preferredValue": str(preferred)},
        "reconciling": reconciling,
        "etag": "console-etag-1",
    }


def console_t4(
    env: dict[str, Any], limit: int, preferred: int, reconciling: bool
) -> g.FakeCloudQuotas:
    """gke-t4's region with ``limit`` T4 GPUs, none in use, and a console-made preference
    ``console-t4`` for ``preferred`` of them; returns the Cloud Quotas fake."""
    env["compute"].set_region(P, R, NVIDIA_T4_GPUS=(limit, 0))
    quotas = env["quotas"]
    quotas.prefs["console-t4"] = console_pref("console-t4", preferred, reconciling)
    return quotas


def test_console_made_preference_is_updated_with_its_etag_not_duplicated(
    env: dict[str, Any],
) -> None:
    env["compute"].set_region(P, R, NVIDIA_T4_GPUS=(4, 0))
    quotas = env["quotas"]
    for i in range(3):  # other quotas' preferences on earlier list pages
        quotas.prefs[f"a-other-{i}"] = {**console_pref(f"a-other-{i}", 1, False), "quotaId": "X"}
    quotas.prefs["console-t4"] = console_pref("console-t4", 8, reconciling=False)
    _, req = request_t4()
    assert req["action"] == "updated" and req["id"] == "console-t4"
    assert quotas.prefs["console-t4"]["quotaConfig"]["preferredValue"] == "21"
    assert quotas.calls["quotaPreferences.create"] == 0
    assert not any(k.startswith("gpu-infra-nvidia-t4") for k in quotas.prefs)


def test_reconciling_console_preference_asking_enough_is_reported_pending_and_left_alone(
    env: dict[str, Any],
) -> None:
    quotas = console_t4(env, 4, 24, reconciling=True)  # >= 21
    code, req = request_t4()
    assert code == 1 and (req["action"], req["id"], req["preferred"]) == (
        "pending",
        "console-t4",
        24,
    )
    assert quotas.calls["quotaPreferences.create"] == 0
    assert quotas.calls["quotaPreferences.patch"] == 0


def test_fake_rejects_a_stale_etag(env: dict[str, Any]) -> None:
    import urllib.error
    import urllib.request

    quotas = env["quotas"]
    quotas.prefs["console-t4"] = console_pref("console-t4", 8, reconciling=False)
    url = f"{quotas.url}/v1/projects/{P}/locations/global/quotaPreferences/console-t4"
    body = json.dumps({"etag": "stale", "contactEmail": "a@b.c"}).encode()
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(urllib.request.Request(url, data=body, method="PATCH"))
    assert e.value.code == 409


# --- --where -----------------------------------------------------------------------------------


def test_where_offline_lists_offering_regions_by_price_without_calls(env: dict[str, Any]) -> None:
    code, doc = run("--stack", "gke-t4", "--where", "--offline")
    regions = doc["where"][0]["regions"]
    assert code == 0 and doc["where"][0]["pool"] == "gpu-t4"
    assert "us-central1" in {r["region"] for r in regions} and len(regions) > 5
    prices = [r["pricePerNodeHour"] for r in regions if r["pricePerNodeHour"] is not None]
    assert prices == sorted(prices) and all(r["fits"] is None for r in regions)
    assert sum(env["compute"].calls.values()) == 0


def test_where_ranks_regions_where_the_whole_stack_fits_first(env: dict[str, Any]) -> None:
    env["compute"].set_region(P, R, NVIDIA_T4_GPUS=(4, 0))  # too few T4s at home
    env["compute"].set_region(P, "us-east1", **AMPLE)
    code, doc = run("--stack", "gke-t4", "--where", "--regions", f"{R},us-east1")
    regions = doc["where"][0]["regions"]
    assert code == 0 and [r["region"] for r in regions] == ["us-east1", R]
    east, home = regions
    assert (east["fits"], east["quota"], east["headroom"]) == (True, "NVIDIA_T4_GPUS", 32)
    assert home["fits"] is False and "NVIDIA_T4_GPUS" in home["reason"] and home["headroom"] == 4
    assert env["compute"].calls["regions.get"] == 2


def test_where_unreadable_region_is_unknown_not_fitting(env: dict[str, Any]) -> None:
    code, doc = run("--stack", "gke-t4", "--where", "--regions", "us-east1")  # not in the fake
    (east,) = doc["where"][0]["regions"]
    assert code == 3 and east["fits"] is None and "404" in east["reason"]


def test_regions_needs_where(env: dict[str, Any]) -> None:
    err = io.StringIO()
    assert main(["--stack", "gke-t4", "--regions", "all"], out=io.StringIO(), err=err) == 2
    assert "--regions" in err.getvalue()


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


def test_where_global_quota_short_means_no_region_fits(env: dict[str, Any]) -> None:
    env["compute"].set_region(P, "us-east1", **AMPLE)
    env["compute"].set_project(P, GPUS_ALL_REGIONS=(4, 0))  # gke-t4 needs 21 GPUs in any region
    code, doc = run("--stack", "gke-t4", "--where", "--regions", f"{R},us-east1")
    regions = doc["where"][0]["regions"]
    assert code == 1 and all(r["fits"] is False for r in regions)
    assert all("GPUS_ALL_REGIONS" in r["reason"] for r in regions)


def test_where_global_quota_unknown_means_no_region_is_known_to_fit(env: dict[str, Any]) -> None:
    env["compute"].projects.clear()  # projects.get fails: global quotas unreadable
    code, doc = run("--stack", "gke-t4", "--where", "--regions", R)
    (home,) = doc["where"][0]["regions"]
    assert code == 3 and home["fits"] is None and "CPUS_ALL_REGIONS" in home["reason"]


def test_where_disabled_api_means_no_region_is_known_to_fit(env: dict[str, Any]) -> None:
    env["usage"].enabled = set(g.ALL_REQUIRED_APIS) - {"container.googleapis.com"}
    code, doc = run("--stack", "gke-t4", "--where", "--regions", R)
    (home,) = doc["where"][0]["regions"]
    assert code == 3 and home["fits"] is None and "container.googleapis.com" in home["reason"]


def test_short_row_with_unknown_usage_files_no_request(env: dict[str, Any]) -> None:
    env["compute"].set_project(P, GPUS_ALL_REGIONS=(64, 0), CPUS_ALL_REGIONS=(2000, 0))
    env["compute"].quota_warning[(P, R)] = "quota backend unreachable"  # preemptible unknown
    env["quotas"].set_family(P, [({"region": R, "gpu_family": "NVIDIA_H100"}, 8)])
    env["compute"].add_instance("us-central1-a", "nvidia-h100-80gb", 8, spot=True)
    args = ("--config", str(FIX / "Pulumi.gke-h100.yaml"), "--request", "--email", "o@x.org")
    code, doc = run(*args)
    fam = row(doc, "NVIDIA_H100_GPUS")
    assert fam["status"] == "short" and fam["usage"] is None, fam
    assert code == 1
    assert fam["request"]["action"] == "skipped" and "usage unknown" in fam["request"]["status"]
    assert not env["quotas"].prefs


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


def test_where_region_missing_another_pools_gpu_does_not_fit_for_any_pool(
    env: dict[str, Any],
) -> None:
    # us-west2 offers T4 but neither L4 nor A100 (gcp_accelerators.csv): the stack cannot go there.
    code, doc = run(
        "--config", str(FIX / "Pulumi.gke-bench.yaml"), "--where", "--regions", "us-west2"
    )
    t4 = next(w for w in doc["where"] if w["pool"] == "t4")
    (west,) = t4["regions"]
    assert code == 1 and west["fits"] is False
    assert west["reason"] == "not offered there: l4, l4-spot, a100"


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


def test_where_for_a_declared_shape_judges_its_own_region_and_cannot_call_it_a_fit(
    env: dict[str, Any],
) -> None:
    code, doc = run("--config", str(FIX / "Pulumi.gke-declared-shape.yaml"), "--where")
    (pool,) = doc["where"]
    (region,) = pool["regions"]  # the catalog knows no other region for a5-highgpu-8g
    assert (region["region"], region["quota"], region["fits"]) == (R, "unknown:nvidia-b300", None)
    assert "declared gpuPools[].shape" in region["reason"] and code == 3


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


def test_reconciling_preference_below_the_need_is_raised_with_its_etag(env: dict[str, Any]) -> None:
    quotas = console_t4(env, 0, 5, reconciling=True)  # usage 0: the request is for 21
    etag = quotas.prefs["console-t4"]["etag"]
    code, req = request_t4()
    assert code == 1 and (req["action"], req["id"], req["preferred"], req["was"]) == (
        "updated",
        "console-t4",
        21,
        5,
    )
    assert (
        quotas.calls["quotaPreferences.patch"] == 1 and quotas.calls["quotaPreferences.create"] == 0
    )
    assert quotas.patched_etags == [etag]  # written over its etag, not duplicated


def test_reconciling_preference_that_cannot_be_raised_reads_pending_for_less_than_needed(
    env: dict[str, Any],
) -> None:
    from quota.report import _request_text

    quotas = console_t4(env, 0, 5, reconciling=True)
    quotas.inject("quotaPreferences.patch", g.INTERNAL)
    _, req = request_t4()
    assert req["action"] == "pending" and req["preferred"] == 5
    assert _request_text(req).startswith("pending for 5 (needs 21)")


def test_an_api_missing_from_service_usages_answer_is_not_enabled(env: dict[str, Any]) -> None:
    env["usage"].omitted = {"container.googleapis.com"}
    code, doc = run("--stack", "gke-t4")
    api = row(doc, "container.googleapis.com")
    assert (
        code == 3 and api["status"] == "unknown" and "missing from Service Usage" in api["reason"]
    )


def test_mistyped_regions_is_a_usage_error_not_an_empty_table(env: dict[str, Any]) -> None:
    err = io.StringIO()
    args = ["--stack", "gke-t4", "--where", "--offline", "--regions", "us-centrl1"]
    assert main(args, out=io.StringIO(), err=err) == 2
    assert "us-centrl1" in err.getvalue()


@pytest.mark.parametrize("mode", ["--where", "--offline"])
def test_request_with_where_or_offline_is_refused(env: dict[str, Any], mode: str) -> None:
    err = io.StringIO()
    args = ["--stack", "gke-t4", mode, "--request", "--email", "a@b.c"]
    assert main(args, out=io.StringIO(), err=err) == 2
    assert "--request" in err.getvalue() and mode in err.getvalue()
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


def test_two_stacks_in_one_project_never_absorb_each_others_pending_preference(
    env: dict[str, Any], tmp_path: Path
) -> None:
    # One QuotaPreference per quota and region serves the project (Cloud Quotas
    # quotaPreferences); its QuotaConfig.annotations name the stacks it carries. gke-t4 asks
    # 0 - 0 + 21 = 21 T4 (limit 4, usage 0), pending; a copy of it as stack gke-t4-b needs 21
    # more: refused without --force, and with it 21 + (21 - 0) = 42, naming both.
    env["compute"].set_region(P, R, NVIDIA_T4_GPUS=(4, 0))
    quotas = env["quotas"]
    _, doc = run("--stack", "gke-t4", "--request", "--email", "ops@example.org")
    pid = row(doc, "NVIDIA_T4_GPUS")["request"]["id"]
    assert quotas.prefs[pid]["quotaConfig"]["annotations"] == {"gpu-infra-stacks": "gke-t4"}
    other = tmp_path / "Pulumi.gke-t4-b.yaml"
    stack = (ROOT / "stacks" / "Pulumi.gke-t4.yaml").read_text()
    other.write_text(stack.replace("name: ml\n", "name: ml-b\n"))
    args = ("--config", str(other), "--request", "--email", "ops@example.org")
    code, doc = run(*args)
    req = row(doc, "NVIDIA_T4_GPUS")["request"]
    assert (req["action"], req["preferred"], code) == ("held", 21, 1), req
    assert "gke-t4" in req["status"] and quotas.prefs[pid]["quotaConfig"]["preferredValue"] == "21"
    _, doc = run(*args, "--force")
    req = row(doc, "NVIDIA_T4_GPUS")["request"]
    assert (req["action"], req["desired"], req["id"]) == ("updated", 42, pid), req
    qc = quotas.prefs[pid]["quotaConfig"]
    assert qc["preferredValue"] == "42"
    assert qc["annotations"] == {"gpu-infra-stacks": "gke-t4,gke-t4-b"}
    assert "gke-t4-b" in quotas.prefs[pid]["justification"]


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


def test_a_settled_preference_with_no_grant_reads_not_granted_and_force_files_it_again(
    env: dict[str, Any],
) -> None:
    # QuotaConfig.grantedValue is output only and absent when nothing was granted: a settled
    # (not reconciling) preference for 24 without it left the limit at 4.
    quotas = console_t4(env, 4, 24, reconciling=False)
    args = ("--stack", "gke-t4", "--request", "--email", "ops@example.org")
    _, doc = run(*args)
    req = row(doc, "NVIDIA_T4_GPUS")["request"]
    assert (req["action"], req["hint"]) == ("not-granted", "--force files it again"), req
    assert quotas.calls["quotaPreferences.patch"] == 0
    _, doc = run(*args, "--force")
    req = row(doc, "NVIDIA_T4_GPUS")["request"]
    assert (req["action"], req["preferred"]) == ("updated", 21), req


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
