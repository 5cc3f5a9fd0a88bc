"""quota.check on GKE stacks when a read fails: each failure is an unknown row naming its
cause (permission, disabled API, throttling, server error, timeout), never ok.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.emulator import quota_gcp_fixtures
from tests.emulator.quota_cli import row, run
from tests.emulator.quota_gcp_fixtures import P, R
from tests.fakes import gcp as g

pytestmark = pytest.mark.emulator

# Fixtures this module shares with its siblings (quota_gcp_fixtures).
env = quota_gcp_fixtures.env


def quota_rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows read from the cloud (not the documented GKE node limits, which carry a source)."""
    return [c for c in doc["checks"] if "source" not in c]


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


def test_missing_metric_is_unknown_not_zero(env: dict[str, Any]) -> None:
    _, doc = run("--stack", "gke-l4-spot")  # no L4 metrics in the region at all
    l4 = row(doc, "NVIDIA_L4_GPUS")  # spot falls back to it: no preemptible L4 quota reported
    assert l4["status"] == "unknown" and "quota missing" in l4["reason"]
    assert l4["needed"] == 9 + 4  # the spot pool (8 + its surge) and the on-demand fallback (4)


def test_unreachable_endpoint_is_reported_once(env: dict[str, Any], monkeypatch: Any) -> None:
    for var in ("COMPUTE", "CLOUDQUOTAS", "SERVICEUSAGE"):
        monkeypatch.setenv(f"QUOTA_ENDPOINT_{var}", "http://127.0.0.1:9")
    code, doc = run("--stack", "gke-t4")
    assert code == 3 and all(c["status"] == "unknown" for c in quota_rows(doc))
    assert len(doc["notes"]) == 1
    assert doc["notes"][0].startswith("cannot connect to http://127.0.0.1:9")
    assert all(c["reason"] == "not read: endpoint unreachable (see below)" for c in quota_rows(doc))


def test_an_api_missing_from_service_usages_answer_is_not_enabled(env: dict[str, Any]) -> None:
    env["usage"].omitted = {"container.googleapis.com"}
    code, doc = run("--stack", "gke-t4")
    api = row(doc, "container.googleapis.com")
    assert (
        code == 3 and api["status"] == "unknown" and "missing from Service Usage" in api["reason"]
    )
