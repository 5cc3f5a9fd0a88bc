"""quota.check reads Cloud Quotas answers as Google documents them and files requests an approver
accepts: the real google-cloud-* REST clients against the fakes."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from quota.check import main
from tests.emulator.quota_cli import row, run
from tests.fakes import gcp as g

pytestmark = pytest.mark.emulator

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures" / "quota"
P, R = "demo-project", "us-central1"
H100 = {"gpu_family": "NVIDIA_H100"}
AMPLE: dict[str, tuple[float, float]] = {
    "NVIDIA_T4_GPUS": (32, 0),
    "CPUS": (400, 0),
    "E2_CPUS": (100, 0),
    "INSTANCES": (500, 0),
    "IN_USE_ADDRESSES": (100, 0),
    "SSD_TOTAL_GB": (10000, 0),
    "LOCAL_SSD_TOTAL_GB": (30000, 0),
}


@pytest.fixture
def env(gcp_env: dict[str, Any]) -> dict[str, Any]:
    gcp_env["compute"].set_region(P, R, **AMPLE)
    gcp_env["compute"].set_project(P, GPUS_ALL_REGIONS=(64, 0), CPUS_ALL_REGIONS=(2000, 0))
    return gcp_env


# --- DimensionsInfo.applicable_locations --------------------------------------------------------


@pytest.mark.parametrize(
    "rows",
    [
        [(H100, 64, ["us-east4"])],  # a family row without region, for us-east4 only
        [({**H100, "region": "us-east4"}, 64)],
        [({}, 64, ["us-east4", "us-west1"])],  # the default row, listing other regions
    ],
    ids=["family-row-us-east4", "region-row-us-east4", "default-row-elsewhere"],
)
def test_an_h100_grant_for_us_east4_is_never_read_as_us_central1s(
    env: dict[str, Any], rows: list[Any]
) -> None:
    # DimensionsInfo.applicable_locations: "the list of locations this dimension info is
    # applicable to" (google-cloud-quotas); a default row lists its locations
    # (https://cloud.google.com/docs/quotas/view-ongoing-rollouts).
    env["quotas"].set_family(P, rows)
    code, doc = run("--config", str(FIX / "Pulumi.gke-h100.yaml"))
    fam = row(doc, "NVIDIA_H100_GPUS")
    assert fam["status"] in ("unknown", "short") and code in (1, 3)
    assert fam["limit"] is None and "quota missing" in fam["reason"]


def test_a_default_row_listing_us_central1_applies_there(env: dict[str, Any]) -> None:
    env["quotas"].set_family(P, [({}, 64, ["us-central1", "us-east4"])])
    code, doc = run("--config", str(FIX / "Pulumi.gke-h100.yaml"))
    fam = row(doc, "NVIDIA_H100_GPUS")
    assert (fam["status"], fam["limit"]) == ("ok", 64) and code == 0


# --- provisioning models ------------------------------------------------------------------------


def test_flex_start_h100_vms_are_not_on_demand_family_usage(env: dict[str, Any]) -> None:
    # Scheduling.ProvisioningModel FLEX_START: flex-start VMs consume preemptible quota
    # (PREEMPTIBLE_NVIDIA_H100_GPUS), never the on-demand family's.
    env["quotas"].set_family(P, [({**H100, "region": R}, 16)])
    env["compute"].add_instance("us-central1-a", "nvidia-h100-80gb", 8, model="FLEX_START")
    code, doc = run("--config", str(FIX / "Pulumi.gke-h100-one.yaml"))
    fam = row(doc, "NVIDIA_H100_GPUS")
    assert (fam["usage"], fam["status"], code) == (0, "ok", 0)
    env["compute"].add_instance("us-central1-a", "nvidia-h100-80gb", 8, model="RESERVATION_BOUND")
    _, doc = run("--config", str(FIX / "Pulumi.gke-h100-one.yaml"))
    assert row(doc, "NVIDIA_H100_GPUS")["usage"] == 8  # a reservation's VM is standard usage


def test_a_flex_start_pools_running_nodes_are_its_own_on_preemptible_quota(
    env: dict[str, Any],
) -> None:
    labels = {
        "goog-k8s-cluster-name": "flex",
        "goog-k8s-cluster-location": R,
        "goog-k8s-node-pool-name": "l4-flex",
    }
    for z in ("us-central1-a", "us-central1-b"):
        env["compute"].add_instance(
            z,
            "nvidia-l4",
            1,
            machine_type="g2-standard-8",
            model="FLEX_START",
            labels=labels,
            boot_disk=("pd-balanced", 100),
        )
    env["compute"].set_region(
        P, R, PREEMPTIBLE_NVIDIA_L4_GPUS=(4, 2), PREEMPTIBLE_NVIDIA_T4_GPUS=(8, 0)
    )
    env["compute"].set_region(P, R, PREEMPTIBLE_CPUS=(100, 0))
    _, doc = run("--config", str(FIX / "Pulumi.gke-flex.yaml"))
    pre = row(doc, "PREEMPTIBLE_NVIDIA_L4_GPUS")
    assert (pre["ownUsage"], pre["status"]) == (2, "ok")  # 4 needed, 2 running: 2 more in 2


# --- the quota project --------------------------------------------------------------------------


def test_the_adc_quota_project_403_names_set_quota_project_not_enabling_the_api(
    env: dict[str, Any],
) -> None:
    env["quotas"].inject("quotaInfos.get", g.quota_project_required("cloudquotas.googleapis.com"))
    code, doc = run("--config", str(FIX / "Pulumi.gke-h100.yaml"))
    fam = row(doc, "NVIDIA_H100_GPUS")
    assert code == 3 and fam["status"] == "unknown"
    assert "gcloud auth application-default set-quota-project demo-project" in fam["reason"]
    assert "GOOGLE_CLOUD_QUOTA_PROJECT" in fam["reason"]
    assert "services enable" not in fam["reason"]


@pytest.fixture
def tls_env(env: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The same fakes behind https:// (so the clients use Application Default Credentials: a
    service account of another project, its tokens from a fake endpoint), sharing the http
    fakes' state."""
    from tests.fakes.tls import self_signed, service_account_file

    ctx, ca = self_signed(tmp_path)
    oauth = g.FakeOAuth()
    oauth.start()
    secure: dict[str, Any] = {}
    for name, cls in (
        ("compute", g.FakeCompute),
        ("quotas", g.FakeCloudQuotas),
        ("usage", g.FakeServiceUsage),
    ):
        fake = cls()
        fake.__dict__.update({k: v for k, v in env[name].__dict__.items() if not _server(k)})
        fake.user_projects = []
        fake.start(tls=ctx)
        secure[name] = fake
    adc = service_account_file(tmp_path, f"{oauth.url}/token")
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(adc))
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(ca))
    monkeypatch.setenv("QUOTA_ENDPOINT_COMPUTE", secure["compute"].url)
    monkeypatch.setenv("QUOTA_ENDPOINT_CLOUDQUOTAS", secure["quotas"].url)
    monkeypatch.setenv("QUOTA_ENDPOINT_SERVICEUSAGE", secure["usage"].url)
    yield secure
    for fake in (*secure.values(), oauth):
        fake.stop()


def _server(attr: str) -> bool:
    return attr in ("_server", "_thread", "_tls", "lock", "routes", "calls", "faults")


def test_credentials_send_the_stacks_project_as_quota_project_on_every_call(
    tls_env: dict[str, Any],
) -> None:
    # ClientOptions.quota_project_id -> x-goog-user-project (google-api-core, google-auth); the
    # fake Cloud Quotas refuses token callers without one, as Google does.
    tls_env["quotas"].set_family(P, [({**H100, "region": R}, 64)])
    code, doc = run("--config", str(FIX / "Pulumi.gke-h100.yaml"))
    assert code == 0 and row(doc, "NVIDIA_H100_GPUS")["status"] == "ok", [
        (c["quota"], c["reason"]) for c in doc["checks"] if c["status"] != "ok"
    ]
    sent = [*tls_env["quotas"].user_projects, *tls_env["compute"].user_projects]
    assert sent and set(sent) == {P}


def test_google_cloud_quota_project_overrides_the_stacks_project(
    tls_env: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_CLOUD_QUOTA_PROJECT", "billing-project")
    tls_env["quotas"].set_family(P, [({**H100, "region": R}, 64)])
    run("--config", str(FIX / "Pulumi.gke-h100.yaml"))
    assert set(tls_env["quotas"].user_projects) == {"billing-project"}


# --- required APIs only where a row needs them ---------------------------------------------------


def test_a_disabled_cloud_quotas_api_does_not_fail_a_plain_t4_stack(env: dict[str, Any]) -> None:
    env["usage"].enabled.discard("cloudquotas.googleapis.com")
    code, doc = run("--stack", "gke-t4")
    assert code == 0 and all(c["quota"] != "cloudquotas.googleapis.com" for c in doc["checks"])


@pytest.mark.parametrize(
    "args",
    [
        ("--config", str(FIX / "Pulumi.gke-h100.yaml")),  # a family row reads Cloud Quotas
        ("--stack", "gke-t4", "--request", "--email", "ops@example.org"),  # requests file there
    ],
    ids=["family-row", "request"],
)
def test_a_disabled_cloud_quotas_api_is_an_unknown_row_where_a_row_or_request_needs_it(
    env: dict[str, Any], args: tuple[str, ...]
) -> None:
    env["usage"].enabled.discard("cloudquotas.googleapis.com")
    env["quotas"].set_family(P, [({**H100, "region": R}, 64)])
    code, doc = run(*args)
    api = row(doc, "cloudquotas.googleapis.com")
    assert api["status"] == "unknown" and code == 3


# --- GPUS_ALL_REGIONS missing from projects.get ---------------------------------------------------


def _global_info(env: dict[str, Any], value: int) -> None:
    qid = "GPUS-ALL-REGIONS-per-project"
    env["compute"].projects[P].pop("GPUS_ALL_REGIONS", None)
    env["quotas"].infos[qid] = {
        "name": f"projects/{P}/locations/global/services/compute.googleapis.com/quotaInfos/{qid}",
        "quotaId": qid,
        "quotaIncreaseEligibility": {"isEligible": True},
        "dimensionsInfos": [
            {"dimensions": {}, "details": {"value": str(value)}, "applicableLocations": ["global"]}
        ],
    }


def test_a_project_without_gpus_all_regions_gets_a_request_sized_from_the_regions_usage(
    env: dict[str, Any],
) -> None:
    # usage: every region's GPU figures (4 T4 in us-east1) and the H100 VMs Compute reports no
    # metric for (8 in us-east4): 21 needed + 12 used = 33
    _global_info(env, 1)
    env["compute"].set_region(P, "us-east1", NVIDIA_T4_GPUS=(8, 4))
    env["compute"].set_region(P, "us-east4", PREEMPTIBLE_NVIDIA_H100_GPUS=(0, 0))
    env["compute"].add_instance("us-east4-a", "nvidia-h100-80gb", 8)
    code, doc = run("--stack", "gke-t4", "--request", "--email", "ops@example.org")
    glob = row(doc, "GPUS_ALL_REGIONS")
    assert code == 1 and (glob["status"], glob["limit"], glob["usage"]) == ("short", 1, 12)
    assert (glob["request"]["action"], glob["request"]["desired"]) == ("created", 33)
    pref = env["quotas"].prefs[glob["request"]["id"]]
    assert pref["quotaId"] == "GPUS-ALL-REGIONS-per-project"


def test_a_vm_with_a_gpu_no_table_names_leaves_the_global_usage_unknown(
    env: dict[str, Any],
) -> None:
    _global_info(env, 64)
    env["compute"].add_instance("us-east4-a", "nvidia-future-x1", 8)
    code, doc = run("--stack", "gke-t4")
    glob = row(doc, "GPUS_ALL_REGIONS")
    assert (glob["status"], code) == ("unknown", 3) and "nvidia-future-x1" in glob["reason"]


# --- requests an approver accepts --------------------------------------------------------------


def test_the_default_justification_names_pools_nodes_units_surge_and_the_value(
    env: dict[str, Any],
) -> None:
    env["compute"].set_region(P, R, NVIDIA_T4_GPUS=(4, 0))
    _, doc = run("--stack", "gke-t4", "--request", "--email", "ops@example.org")
    req = row(doc, "NVIDIA_T4_GPUS")["request"]
    text = env["quotas"].prefs[req["id"]]["justification"]
    for part in ("gke-t4", "cluster ml", "us-central1", "gpu-t4: 20 nodes x 1 GPU", "21 GPUs"):
        assert part in text, text
    assert "1 for surge nodes during node upgrades" in text and "Requested value 21" in text


def test_no_surge_requests_the_pools_maximum_without_the_upgrade_surge(
    env: dict[str, Any],
) -> None:
    env["compute"].set_region(P, R, NVIDIA_T4_GPUS=(4, 0))
    args = ("--stack", "gke-t4", "--request", "--email", "ops@example.org", "--no-surge")
    code, doc = run(*args)
    t4 = row(doc, "NVIDIA_T4_GPUS")
    assert code == 1 and t4["needed"] == 21 and t4["surge"] == 1  # the check still counts it
    assert (t4["request"]["desired"], t4["request"]["withoutSurge"]) == (20, 1)
    text = env["quotas"].prefs[t4["request"]["id"]]["justification"]
    assert "without the 1 of the upgrade surge" in text and "need 20 GPUs" in text


def test_no_surge_files_nothing_for_a_row_short_only_by_its_surge(env: dict[str, Any]) -> None:
    env["compute"].set_region(P, R, NVIDIA_T4_GPUS=(20, 0))  # 21 with surge, 20 without
    _, doc = run("--stack", "gke-t4", "--request", "--email", "a@b.c", "--no-surge")
    req = row(doc, "NVIDIA_T4_GPUS")["request"]
    assert req["action"] == "skipped" and "without the upgrade surge" in req["status"]
    assert env["quotas"].calls["quotaPreferences.create"] == 0


def test_no_surge_needs_request(env: dict[str, Any]) -> None:
    err = io.StringIO()
    assert main(["--stack", "gke-t4", "--no-surge"], out=io.StringIO(), err=err) == 2
    assert "--no-surge" in err.getvalue()


def _granted_short(env: dict[str, Any]) -> str:
    pid = "gpu-infra-nvidia-t4-gpus-per-project-region-us-central1"
    env["quotas"].prefs[pid] = {
        "name": f"projects/{P}/locations/global/quotaPreferences/{pid}",
        "quotaId": "NVIDIA-T4-GPUS-per-project-region",
        "service": "compute.googleapis.com",
        "dimensions": {"region": R},
        "quotaConfig": {"preferredValue": "21", "grantedValue": "4", "stateDetail": "Denied"},
        "reconciling": False,
        "etag": "etag-old",
    }
    return pid


def test_gcp_force_files_a_denied_preference_again(env: dict[str, Any]) -> None:
    env["compute"].set_region(P, R, NVIDIA_T4_GPUS=(4, 0))
    pid = _granted_short(env)
    args = ("--stack", "gke-t4", "--request", "--email", "ops@example.org")
    _, doc = run(*args)
    req = row(doc, "NVIDIA_T4_GPUS")["request"]
    assert req["action"] == "partially-granted" and "--force" in req["hint"]
    assert env["quotas"].calls["quotaPreferences.patch"] == 0
    _, doc = run(*args, "--force")
    req = row(doc, "NVIDIA_T4_GPUS")["request"]
    assert req["action"] == "updated" and env["quotas"].calls["quotaPreferences.patch"] == 1
    assert env["quotas"].patched_etags == ["etag-old"]
    assert env["quotas"].prefs[pid]["reconciling"] is True  # under review again


def test_h100_vms_pending_stop_or_deprovisioning_still_hold_family_quota(
    env: dict[str, Any],
) -> None:
    # Instance.Status PENDING_STOP "gracefully shutting down", DEPROVISIONING "tear down tasks
    # like ... releasing quota" (google-cloud-compute): both still hold it; STOPPED does not.
    env["quotas"].set_family(P, [({**H100, "region": R}, 64)])
    for status in ("PENDING_STOP", "DEPROVISIONING", "STOPPED"):
        env["compute"].add_instance("us-central1-a", "nvidia-h100-80gb", 8, status=status)
    _, doc = run("--config", str(FIX / "Pulumi.gke-h100.yaml"))
    assert row(doc, "NVIDIA_H100_GPUS")["usage"] == 16


def test_the_adc_files_quota_project_comes_before_the_stacks_and_after_the_variable(
    tls_env: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `gcloud auth application-default set-quota-project` writes quota_project_id into the
    # authorized_user ADC file (google.oauth2.credentials.Credentials.from_authorized_user_info);
    # google-auth applies GOOGLE_CLOUD_QUOTA_PROJECT over it (_default._apply_quota_project_id).
    import json

    adc = tmp_path / "user-adc.json"
    user = {"type": "authorized_user", "client_id": "c", "client_secret": "s"}
    token = {"refresh_token": "r", "token": "t", "expiry": "2099-01-01T00:00:00Z"}
    adc.write_text(json.dumps({**user, **token, "quota_project_id": "adc-project"}))
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(adc))
    tls_env["quotas"].set_family(P, [({**H100, "region": R}, 64)])
    run("--config", str(FIX / "Pulumi.gke-h100.yaml"))
    assert set(tls_env["quotas"].user_projects) == {"adc-project"}
    tls_env["quotas"].user_projects.clear()
    monkeypatch.setenv("GOOGLE_CLOUD_QUOTA_PROJECT", "billing-project")
    run("--config", str(FIX / "Pulumi.gke-h100.yaml"))
    assert set(tls_env["quotas"].user_projects) == {"billing-project"}
