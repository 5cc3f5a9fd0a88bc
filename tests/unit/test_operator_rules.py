"""GPU Operator rules that keep GPUs isolated and working, one test per rule."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import yaml

from infra.core.catalog.vendored import DATA_DIR
from infra.core.config.stack import parse_file
from infra.core.labels import GPU_PRESENT_LABEL
from infra.core.plan import build_plan
from infra.core.sharing import (
    _instances_per_gpu,
    mig_config_name,
    mig_gpu,
    mig_resource,
    operator_node_labels,
)
from tests.unit.operator_fixtures import errors, hints_for, plan, stack

ROOT = Path(__file__).resolve().parents[2]
MIG_PARTED = ROOT / "tests" / "fixtures" / "mig-parted-config-default.yaml"
T4 = {"type": "nvidia-tesla-t4", "count": 1}
A100 = {"gpu_model": "A100-40GB", "gpu_type": "nvidia-tesla-a100"}


def _critical_quota(op) -> int:
    (q,) = [m for m in op.before_release if m["metadata"]["name"] == "gpu-operator-quota"]
    return int(q["spec"]["hard"]["pods"])


def test_gke_critical_pod_quota_admits_every_operand_pod_of_the_largest_pool():
    # gke-t4: 20 nodes x (toolkit, device plugin, GFD, DCGM exporter, validator, NFD worker).
    p = build_plan(parse_file(ROOT / "stacks" / "Pulumi.gke-t4.yaml"))
    assert p.operator is not None
    assert _critical_quota(p.operator) >= 6 * 20


def test_gke_critical_pod_quota_grows_with_the_pools_max_nodes():
    small = build_plan(stack("gke", [{"maxNodes": 4, "gpu": T4}])).operator
    large = build_plan(stack("gke", [{"maxNodes": 40, "gpu": T4}])).operator
    assert _critical_quota(large) - _critical_quota(small) >= 6 * 36
    assert _critical_quota(small) >= 6 * 4 + 3


def test_mig_profiles_and_balanced_layouts_match_nvidia_mig_parted_config():
    configs = yaml.safe_load(MIG_PARTED.read_text())["mig-configs"]
    rows = csv.DictReader(
        line for line in (ROOT / "infra/core/data/nvidia_mig_profiles.csv").open() if line[0] != "#"
    )
    for row in rows:
        for profile in row["profiles"].split():
            blocks = configs[mig_config_name(profile)]
            assert any(profile in (b.get("mig-devices") or {}) for b in blocks), profile
        layout = dict(kv.split(":") for kv in row["balanced"].split())
        assert any(
            {k: str(v) for k, v in b["mig-devices"].items()} == layout
            for b in configs["all-balanced"]
        ), row["gpu_model"]


def test_mig_resource_names_follow_the_device_plugin_spelling():
    assert mig_resource("1g.5gb+me") == "nvidia.com/mig-1g.5gb.me"
    assert mig_config_name("1g.10gb+me") == "all-1g.10gb.me"


def test_k3s_and_rke2_reject_pre_cdi_charts_whose_pods_need_a_runtime_class():
    for distribution in ("k3s", "rke2"):
        cfg = stack(
            "kubernetes", operator={"version": "v25.3.4"}, cluster={"distribution": distribution}
        )
        assert "runtimeClassName" in errors(cfg)["gpuOperator.version"]
    ok = stack("kubernetes", cluster={"distribution": "k3s"})
    assert plan(ok).release is not None


def test_time_slicing_fails_requests_greater_than_one_and_can_rename():
    cfg = stack("kubernetes", [{"sharing": {"replicas": 4, "renameByDefault": True}}])
    op = plan(cfg)
    (cm,) = [m for m in op.before_release if m["kind"] == "ConfigMap"]
    (key,) = cm["data"]
    ts = yaml.safe_load(cm["data"][key])["sharing"]["timeSlicing"]
    assert ts["failRequestsGreaterThanOne"] is True and ts["renameByDefault"] is True
    assert op.scheduling["gpu"]["resourceName"] == "nvidia.com/gpu.shared"
    assert op.node_labels[0].labels["nvidia.com/device-plugin.config"] == key


def test_smoke_test_job_runs_once_per_input_change_in_its_own_namespace():
    def job(image: str | None = None):
        op_cfg = {"smokeTestImage": image} if image else {}
        op = plan(stack("gke", [{"smokeTest": True}], operator=op_cfg))
        (j,) = [m for m in op.after_release if m["kind"] == "Job"]
        ns = [m for m in op.after_release if m["kind"] == "Namespace"]
        return j, ns

    a, ns = job()
    b, _ = job()
    c, _ = job("nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04")
    assert a["metadata"]["name"] == b["metadata"]["name"] != c["metadata"]["name"]
    assert len(a["metadata"]["name"]) <= 63  # copied into the pods' job-name label
    # no TTL: a TTL-deleted Job vanishes at `pulumi refresh` and `pulumi up` recreates it
    assert "ttlSecondsAfterFinished" not in a["spec"]
    assert a["metadata"]["namespace"] == "gpu-smoke-test"
    assert [n["metadata"]["name"] for n in ns] == ["gpu-smoke-test"]
    assert ns[0]["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"


def test_gke_gpu_pools_carry_the_gpu_present_label_when_the_operator_runs():
    p = build_plan(parse_file(ROOT / "stacks" / "Pulumi.gke-t4.yaml"))
    assert p.platform.name == "gke"
    assert all(h.labels.get(GPU_PRESENT_LABEL) == "true" for h in p.pools)
    eks = stack("eks")
    assert GPU_PRESENT_LABEL not in operator_node_labels(eks.pools[0])


def test_mig_instances_per_gpu_match_mig_parted_all_profile_configs():
    # Slots per node size JupyterHub's memory share: they must be what mig-parted creates.
    configs = yaml.safe_load(MIG_PARTED.read_text())["mig-configs"]
    checked = 0
    for model in ("A30", "A100-40GB", "A100-80GB", "H100-80GB", "H200-141GB", "B200"):
        gpu = mig_gpu(model, DATA_DIR)
        assert gpu is not None
        for profile in gpu.profiles:
            blocks = configs[mig_config_name(profile)]
            if len(blocks) != 1 or blocks[0]["devices"] != "all" or "device-filter" in blocks[0]:
                continue  # device-specific counts (all-1g.10gb): covered below
            assert _instances_per_gpu(profile, gpu) == blocks[0]["mig-devices"][profile], profile
            checked += 1
    assert checked > 20
    a100_40 = mig_gpu("A100-40GB", DATA_DIR)
    assert a100_40 is not None and _instances_per_gpu("1g.10gb", a100_40) == 4  # filtered block


@pytest.mark.parametrize("min_nodes", [0, 1])
def test_gke_refuses_renamed_shared_gpus_at_any_min_nodes_as_its_nodes_carry_the_gpu_label(
    min_nodes,
):
    pools = [{"minNodes": min_nodes, "sharing": {"replicas": 2, "renameByDefault": True}}]
    cfg = stack("gke", pools)
    reason = errors(cfg, hints_for(cfg, min_nodes=min_nodes))["gpuPools[0].sharing.renameByDefault"]
    assert reason.startswith("true:") and "cloud.google.com/gke-accelerator" in reason
    assert "nvidia.com/gpu at 0" in reason and "scale-from-zero" in reason
    ok = stack("eks", [{"minNodes": 0, "sharing": {"replicas": 2, "renameByDefault": True}}])
    assert plan(ok, hints_for(ok, min_nodes=0)).release is not None


def test_kubeflow_profile_namespace_labels_are_an_error_not_silently_dropped():
    ns = [{"name": "t", "gpus": 1, "labels": {"a": "b"}, "kubeflowProfile": {"owner": "a@b.co"}}]
    assert (
        "profile controller"
        in errors(stack("kubernetes", namespaces=ns))["gpuNamespaces[0].labels"]
    )
