"""The quota.check CLI offline: demand output, config errors, fast --help."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from infra.cli import stack_path
from quota.check import main
from tests.conftest import python_c

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(args), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_offline_json_for_gke_t4_lists_t4_cpus_and_global_gpus() -> None:
    code, out, _ = run("--stack", "gke-t4", "--offline", "--json")
    doc = json.loads(out)
    rows = {c["quota"]: c for c in doc["checks"]}
    assert code == 0 and doc["cloud"] == "gcp" and doc["stack"] == "gke-t4"
    assert (
        rows["NVIDIA_T4_GPUS"]["needed"] == 21 and rows["NVIDIA_T4_GPUS"]["region"] == "us-central1"
    )
    # n1 GPU pool 8 x (20 + 1 surge); the e2 system pool draws on E2_CPUS, not CPUS
    assert rows["CPUS"]["needed"] == 168 and rows["E2_CPUS"]["needed"] == 16
    assert (
        rows["GPUS_ALL_REGIONS"]["needed"] == 21 and rows["GPUS_ALL_REGIONS"]["scope"] == "global"
    )
    assert all(c["limit"] is None and c["status"] == "unknown" for c in doc["checks"])


def test_offline_json_for_eks_g4dn_lists_g_and_spot_codes_in_us_west_2() -> None:
    code, out, _ = run("--stack", "eks-g4dn", "--offline", "--json")
    rows = {c["quota"]: c for c in json.loads(out)["checks"]}
    assert code == 0
    # 4 vCPUs x (20 max + 6 update surge: 2 x the group's 3 AZs)
    assert rows["L-DB2E81BA"]["needed"] == 104 and rows["L-DB2E81BA"]["region"] == "us-west-2"
    assert rows["L-3819A6DF"]["needed"] == 104
    assert rows["L-DB2E81BA"]["name"] == "Running On-Demand G and VT instances"


def test_offline_table_prints_without_cloud_calls() -> None:
    code, out, _ = run("--stack", "gke-t4", "--offline")
    assert code == 0 and "NVIDIA_T4_GPUS" in out and "GPUS_ALL_REGIONS" in out


def test_invalid_config_exits_2_with_key_path_lines(tmp_path: Path) -> None:
    bad = tmp_path / "Pulumi.bad.yaml"
    bad.write_text(
        "config:\n"
        "  gcp:project: demo-project\n"
        "  gcp:region: us-east1\n"
        "  gpu-infra:platform: gke\n"
        "  gpu-infra:cluster: {name: ml, location: us-central1}\n"
        "  gpu-infra:gpuPools: [{name: a, machineType: n1-highmem-8, maxNodes: 2,"
        " gpu: {type: nvidia-tesla-t4, count: 1}}]\n"
    )
    code, out, err = run("--config", str(bad), "--offline", "--json")
    assert code == 2 and out == ""
    assert err.startswith("gcp:region: ") and "Traceback" not in err


def test_missing_stack_exits_2() -> None:
    code, _, err = run("--stack", "no-such-stack", "--offline")
    assert code == 2 and "no stack 'no-such-stack'" in err and "stacks: " in err


def test_module_entry_point_exits_2_without_traceback_on_bad_config(tmp_path: Path) -> None:
    bad = tmp_path / "Pulumi.bad.yaml"
    bad.write_text("config:\n  gpu-infra:platform: nomad\n")
    p = subprocess.run(
        [sys.executable, "-m", "quota.check", "--config", str(bad), "--offline"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert p.returncode == 2 and "platform: " in p.stderr and "Traceback" not in p.stderr


def test_help_imports_no_config_or_cloud_sdk() -> None:
    code = (
        "import sys, contextlib, io\n"
        "from quota.check import main\n"
        "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['--help'])\n"
        "heavy = [m for m in ('pydantic', 'boto3', 'google.cloud', 'rich') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    p = python_c(code)
    assert p.stdout.strip() == "[]", p.stderr


def test_stack_path_prefers_the_working_directory_then_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert stack_path("gke-t4") == ROOT / "stacks" / "Pulumi.gke-t4.yaml"
    assert stack_path("nope") == tmp_path / "stacks" / "Pulumi.nope.yaml"
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.gke-t4.yaml").write_text("config: {}\n")
    assert stack_path("gke-t4") == tmp_path / "stacks" / "Pulumi.gke-t4.yaml"


def test_offline_where_offers_a_declared_shape_in_the_stacks_own_region_only(tmp_path) -> None:
    stack = tmp_path / "Pulumi.eks-new.yaml"
    stack.write_text(
        "config:\n  aws:region: us-west-2\n  gpu-infra:platform: eks\n"
        "  gpu-infra:cluster: {name: ml, location: us-west-2, kubernetesVersion: '1.33'}\n"
        "  gpu-infra:gpuPools:\n    - name: gpu-new\n      machineType: g9.2xlarge\n"
        "      shape: {gpuModel: RTX-PRO-6000, gpus: 1, vcpus: 8, memoryGb: 64}\n"
        "      zones: [usw2-az1, usw2-az2]\n      maxNodes: 4\n"
    )
    code, out, _ = run("--config", str(stack), "--where", "--offline", "--json")
    (pool,) = json.loads(out)["where"]
    assert code == 0 and [r["region"] for r in pool["regions"]] == ["us-west-2"]


def test_diff_with_where_is_refused_not_silently_ignored() -> None:
    code, out, err = run("--stack", "eks-g4dn", "--diff", "eks-g4dn", "--where", "--offline")
    assert code == 2 and out == "" and "--diff: not with --where" in err


def test_offline_json_for_eks_karpenter_counts_nodepool_limits_plus_one_drift_replacement() -> None:
    code, out, _ = run("--stack", "eks-karpenter", "--offline", "--json")
    rows = {c["quota"]: c for c in json.loads(out)["checks"]}
    assert code == 0
    # spot a10g-spot: 8 vCPUs x (8 nodes by its limits + 1 drift replacement)
    assert rows["L-3819A6DF"]["needed"] == 72
    # on-demand l4: 8 vCPUs x (4 + 1); no GPU managed node group is counted
    assert rows["L-DB2E81BA"]["needed"] == 40
    assert rows["L-6D54EA21"]["needed"] == 1  # the system group only


def test_offline_spot_service_linked_role_row_is_unknown_not_read_with_the_create_command() -> None:
    code, out, _ = run("--stack", "eks-karpenter", "--offline", "--json")
    (role,) = [c for c in json.loads(out)["checks"] if c["quota"] == "AWSServiceRoleForEC2Spot"]
    assert code == 0 and role["status"] == "unknown" and role["limit"] is None
    assert "offline" in role["reason"] and "create-service-linked-role" in role["reason"]
    code, out, _ = run("--stack", "eks-g4dn", "--offline", "--json")  # no Karpenter spot pool
    assert all(c["quota"] != "AWSServiceRoleForEC2Spot" for c in json.loads(out)["checks"])


def test_offline_where_works_for_eks_karpenter() -> None:
    code, out, _ = run("--stack", "eks-karpenter", "--where", "--offline", "--json")
    pools = json.loads(out)["where"]
    assert code == 0 and {p["pool"] for p in pools} >= {"a10g-spot", "l4"}
