"""quota.check on GKE stacks: the real google-cloud-* REST clients against local fakes.

Endpoints come from the contract's QUOTA_ENDPOINT_* variables; retries are shortened through
QUOTA_RETRY_* so fault cases stay fast.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.emulator import quota_gcp_fixtures
from tests.emulator.quota_cli import row, run
from tests.emulator.quota_gcp_fixtures import FIX, ROOT, P, R

pytestmark = pytest.mark.emulator

# Fixtures this module shares with its siblings (quota_gcp_fixtures).
env = quota_gcp_fixtures.env


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


def test_global_gpu_quota_short_while_regional_fine(env: dict[str, Any]) -> None:
    env["compute"].set_project(P, GPUS_ALL_REGIONS=(0, 0))  # new projects start at 0
    code, doc = run("--stack", "gke-t4", "--request", "--email", "ops@example.org")
    assert code == 1
    assert row(doc, "NVIDIA_T4_GPUS")["status"] == "ok"
    glob = row(doc, "GPUS_ALL_REGIONS")
    assert glob["status"] == "short" and glob["scope"] == "global" and glob["region"] is None
    pref = env["quotas"].prefs[glob["request"]["id"]]
    assert pref["quotaId"] == "GPUS-ALL-REGIONS-per-project" and not pref.get("dimensions")


def test_zonal_cluster_reads_its_region(env: dict[str, Any]) -> None:
    code, doc = run("--config", str(FIX / "Pulumi.gke-zonal.yaml"))
    assert code == 0
    t4 = row(doc, "NVIDIA_T4_GPUS")
    assert t4["region"] == R and t4["needed"] == 8  # 2 GPUs x (3 max + 1 surge)
    assert env["compute"].calls["regions.get"] == 1


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
