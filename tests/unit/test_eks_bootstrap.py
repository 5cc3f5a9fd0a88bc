"""EKS node bootstrap (infra.core.eks.bootstrap): GPU isolation on AL2023 NVIDIA nodes and the
device plugin strategy that still hands requested GPUs to pods."""

from __future__ import annotations

from infra.core.catalog.vendored import DATA_DIR
from infra.core.eks.bootstrap import (
    TOOLKIT_ISOLATION,
    node_user_data,
    toolkit_isolation_script,
)
from infra.core.eks.device_plugin import plan_device_plugin
from infra.core.sharing import DEVICE_LIST_STRATEGY


def test_al2023_nvidia_nodes_refuse_nvidia_visible_devices_from_unprivileged_containers():
    # nvidia-container-toolkit internal/config/config.go AcceptEnvvarUnprivileged (default true).
    assert ("accept-nvidia-visible-devices-envvar-when-unprivileged", "false") in TOOLKIT_ISOLATION
    data = node_user_data("AL2023_x86_64_NVIDIA", local_nvme=False)
    assert data is not None and toolkit_isolation_script() in data
    assert data.startswith("MIME-Version: 1.0\n") and data.rstrip().endswith("--GPUINFRA--")


def test_isolated_nodes_accept_the_device_plugins_volume_mount_list_so_requested_gpus_still_arrive():
    assert ("accept-nvidia-visible-devices-as-volume-mounts", "true") in TOOLKIT_ISOLATION
    assert DEVICE_LIST_STRATEGY == "volume-mounts"
    plugin = plan_device_plugin("gpu-infra/pool", ["gpu"], [], [], data_dir=DATA_DIR)
    assert plugin is not None
    assert plugin.values["deviceListStrategy"] == "volume-mounts"
    # The plugin's own NVML access came through NVIDIA_VISIBLE_DEVICES=all: now it must be
    # privileged to see the GPUs.
    assert plugin.values["securityContext"] == {"privileged": True}


def test_hpc_al2023_nodes_get_raid0_and_isolation_in_one_multipart():
    data = node_user_data("AL2023_x86_64_NVIDIA", local_nvme=True)
    assert data is not None
    assert data.count("--GPUINFRA\n") == 2
    assert "strategy: RAID0" in data and "nvidia-ctk config --in-place" in data


def test_cpu_and_bottlerocket_nodes_get_no_toolkit_script():
    assert node_user_data("AL2023_x86_64_STANDARD", local_nvme=False) is None
    assert node_user_data("BOTTLEROCKET_x86_64_NVIDIA", local_nvme=False) is None
    assert node_user_data(None, local_nvme=False) is None
