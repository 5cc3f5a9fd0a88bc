"""GPU Operator plan, MIG: a pool's layout checked against NVIDIA's profiles for its GPU and the
device plugin's strategies, and the labels and resources it gets.
"""

from __future__ import annotations

import pytest

from infra.core.catalog.vendored import DATA_DIR
from infra.core.operator import (
    MIG_CONFIG_LABEL,
    nvidia_mig_profiles,
    operator_node_labels,
)
from tests.unit.operator_fixtures import (
    errors,
    hints_for,
    plan,
    platform_of,
    stack,
)
from tests.unit.operator_workloads_fixtures import A100

# --- MIG --------------------------------------------------------------------------------------------


def test_mig_on_a_gpu_without_mig_is_rejected():
    cfg = stack("gke", [{"mig": {"strategy": "single", "config": "all-1g.5gb"}}])
    errs = errors(cfg)
    assert "T4 (nvidia-tesla-t4) does not support MIG" in errs["gpuPools[0].mig"]


def test_mig_validation_uses_nvidia_profiles_not_the_planner_list():
    # GKE's partition list lacks 4g.20gb; NVIDIA's A100 table (EKS p4d, on-prem) has it.
    cfg = stack("eks", [{"mig": {"strategy": "single", "config": "all-4g.20gb"}}])
    op = plan(cfg, hints_for(cfg, gpu_type="A100", gpu_model="A100-40GB", mig_profiles=()))
    assert op.release is not None


def test_mig_on_bottlerocket_is_rejected():
    cfg = stack("eks", [{"mig": {"config": "all-1g.5gb"}}])
    hints = hints_for(cfg, **A100, node_image="BOTTLEROCKET_x86_64_NVIDIA")
    assert "MIG manager" in errors(cfg, hints)["gpuPools[0].mig"]


def test_mig_together_with_gke_sharing_is_rejected():
    gpu = {"type": "nvidia-tesla-a100", "partitionSize": "1g.5gb"}
    cfg = stack(
        "gke", [{"machineType": "a2-highgpu-1g", "mig": {"config": "all-1g.5gb"}, "gpu": gpu}]
    )
    assert "not both" in errors(cfg, hints_for(cfg, **A100))["gpuPools[0].mig"]


def test_mig_single_labels_the_pool_and_reboots_on_clouds():
    cfg = stack("gke", [{"mig": {"strategy": "single", "config": "all-1g.5gb"}}])
    op = plan(cfg, hints_for(cfg, **A100))
    assert op.release is not None
    assert "mig" not in op.release.values  # single is the chart default
    assert op.release.values["migManager"] == {"env": [{"name": "WITH_REBOOT", "value": "true"}]}
    gke = platform_of(cfg).features
    assert operator_node_labels(cfg.pools[0], gpu_present=gke.gpu_present_label) == {
        MIG_CONFIG_LABEL: "all-1g.5gb",
        "nvidia.com/gpu.present": "true",  # GKE pools carry it for the operator's operands
        "gpu-infra/gpu-partition-size": "1g.5gb",  # Flyte's partition selector
    }
    assert op.scheduling["gpu"]["resourceName"] == "nvidia.com/gpu"


def test_mig_mixed_sets_the_strategy_and_the_profile_resource():
    cfg = stack("eks", [{"mig": {"strategy": "mixed", "config": "all-2g.10gb"}, "minNodes": 1}])
    op = plan(cfg, hints_for(cfg, **A100))
    assert op.release is not None
    assert op.release.values["mig"] == {"strategy": "mixed"}
    assert op.scheduling["gpu"]["resourceName"] == "nvidia.com/mig-2g.10gb"
    limits = op.jupyterhub_profiles["gpu"]["kubespawner_override"]["extra_resource_limits"]
    assert limits == {"nvidia.com/mig-2g.10gb": "1"}


def test_mig_mixed_all_disabled_requests_whole_gpus():
    cfg = stack("eks", [{"mig": {"strategy": "mixed", "config": "all-disabled"}}])
    assert plan(cfg, hints_for(cfg, **A100)).scheduling["gpu"]["resourceName"] == "nvidia.com/gpu"


@pytest.mark.parametrize("strategy", ["single", "mixed"])
def test_mig_all_enabled_is_rejected_because_it_creates_no_mig_devices(strategy):
    cfg = stack("gke", [{"mig": {"strategy": strategy, "config": "all-enabled"}}])
    reason = errors(cfg, hints_for(cfg, **A100))["gpuPools[0].mig.config"]
    assert "no MIG devices" in reason


def test_mig_single_with_all_balanced_is_rejected_as_the_device_plugin_refuses_the_node():
    # k8s-device-plugin internal/rm/device_map.go: "more than one MIG device type present on node"
    cfg = stack("gke", [{"mig": {"strategy": "single", "config": "all-balanced"}}])
    reason = errors(cfg, hints_for(cfg, **A100))["gpuPools[0].mig.config"]
    assert "more than one MIG device type present on node" in reason


def test_mig_mixed_with_all_balanced_advertises_every_profile_of_the_layout():
    cfg = stack("eks", [{"mig": {"strategy": "mixed", "config": "all-balanced"}, "minNodes": 1}])
    op = plan(cfg, hints_for(cfg, **A100))
    assert op.scheduling["gpu"]["resourceNames"] == [
        "nvidia.com/mig-1g.5gb",
        "nvidia.com/mig-2g.10gb",
        "nvidia.com/mig-3g.20gb",
    ]


def test_mig_media_extension_profiles_map_to_dotted_config_and_resource_names():
    cfg = stack("eks", [{"mig": {"strategy": "mixed", "config": "all-1g.5gb.me"}, "minNodes": 1}])
    op = plan(cfg, hints_for(cfg, **A100))
    assert op.scheduling["gpu"]["resourceName"] == "nvidia.com/mig-1g.5gb.me"


def test_mig_a100_40gb_accepts_mig_parted_all_1g_10gb():
    cfg = stack("gke", [{"mig": {"strategy": "single", "config": "all-1g.10gb"}}])
    assert plan(cfg, hints_for(cfg, **A100)).release is not None


def test_mig_config_must_name_a_profile_of_the_gpu():
    cfg = stack("gke", [{"mig": {"config": "all-3g.40gb"}}])
    assert "all-1g.5gb" in errors(cfg, hints_for(cfg, **A100))["gpuPools[0].mig.config"]


def test_mig_strategies_must_agree_across_pools():
    cfg = stack(
        "gke",
        [
            {"name": "a", "mig": {"strategy": "single", "config": "all-1g.5gb"}},
            {"name": "b", "mig": {"strategy": "mixed", "config": "all-2g.10gb"}},
        ],
    )
    assert "gpuPools[1].mig.strategy" in errors(cfg, hints_for(cfg, **A100))


def test_mig_mixed_with_time_slicing_is_rejected():
    mig = {"strategy": "mixed", "config": "all-1g.5gb"}
    cfg = stack("gke", [{"mig": mig, "sharing": {"replicas": 2}}])
    assert "gpuPools[0].sharing" in errors(cfg, hints_for(cfg, **A100))


def test_mig_profiles_resolve_cloud_and_people_names():
    assert nvidia_mig_profiles("nvidia-tesla-a100", DATA_DIR)[0] == "1g.5gb"
    assert nvidia_mig_profiles("H100", DATA_DIR)[-1] == "7g.80gb"
    assert nvidia_mig_profiles("T4", DATA_DIR) == () and nvidia_mig_profiles("A10", DATA_DIR) == ()
