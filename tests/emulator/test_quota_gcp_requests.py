"""quota.check --request on GKE stacks: a short row's increase filed once, raised with its
etag, never duplicated or filed for less than the need.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from quota.check import main
from tests.emulator import quota_gcp_fixtures
from tests.emulator.quota_cli import row, run
from tests.emulator.quota_gcp_fixtures import FIX, ROOT, P, R, spot_region
from tests.fakes import gcp as g

pytestmark = pytest.mark.emulator

# Fixtures this module shares with its siblings (quota_gcp_fixtures).
env = quota_gcp_fixtures.env


def request_t4(*extra: str) -> tuple[int, dict[str, Any]]:
    """quota.check --request on gke-t4: the exit code and the T4 row's request."""
    code, doc = run("--stack", "gke-t4", "--request", "--email", "ops@example.org", *extra)
    return code, row(doc, "NVIDIA_T4_GPUS")["request"]


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


@pytest.mark.parametrize("mode", ["--where", "--offline"])
def test_request_with_where_or_offline_is_refused(env: dict[str, Any], mode: str) -> None:
    err = io.StringIO()
    args = ["--stack", "gke-t4", mode, "--request", "--email", "a@b.c"]
    assert main(args, out=io.StringIO(), err=err) == 2
    assert "--request" in err.getvalue() and mode in err.getvalue()
    assert env["quotas"].calls["quotaPreferences.create"] == 0


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
