"""Google's NVIDIA driver installer DaemonSet for GKE COS pools under the GPU Operator.

NVIDIA's GKE guide ("Using the Google Driver Installer",
https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/google-gke.html) creates GPU
pools with ``gpu-driver-version=disabled`` and the ``gke-no-default-nvidia-gpu-device-plugin=true``
label, applies Google's installer DaemonSet, then installs the operator with ``driver.enabled=false``.
The DaemonSet is built here from the facts of Google's manifests (read, not copied), pinned at
GoogleCloudPlatform/container-engine-accelerators commit ``INSTALLER_COMMIT``:
``gke-default`` -> nvidia-driver-installer/cos/daemonset-preloaded.yaml (the COS default driver),
``gke-latest`` -> nvidia-driver-installer/cos/daemonset-preloaded-latest.yaml (``--version=latest``).
Pools whose driver the operator builds (``driver: operator``, Ubuntu) get no installer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from infra.core.catalog.pins import pin
from infra.core.catalog.vendored import DATA_DIR
from infra.core.gke.model import NO_GKE_DEVICE_PLUGIN
from infra.core.labels import GKE_ACCELERATOR_LABEL, GKE_NODEPOOL_LABEL, MANAGED_BY
from infra.core.pools import PoolHints

Manifest = dict[str, Any]
# Where Google's installer puts the driver on COS nodes (the manifests' NVIDIA_INSTALL_DIR_HOST).
GKE_DRIVER_DIR = "/home/kubernetes/bin/nvidia"

# The manifest this module reproduces (its DaemonSet is written here from the facts of that
# commit), so its pins are the vendored rows, whatever catalog a plan is built with.
INSTALLER_COMMIT = pin("gke-driver-installer", DATA_DIR).commit
_BASE = (
    "https://github.com/GoogleCloudPlatform/container-engine-accelerators/blob/"
    f"{INSTALLER_COMMIT}/nvidia-driver-installer/cos/"
)
# The manifest each COS driver mode follows, and the DaemonSet name it gets here (one per mode: a
# stack may mix gke-default and gke-latest pools; upstream names both nvidia-driver-installer).
INSTALLER_SOURCES = {
    "gke-default": _BASE + "daemonset-preloaded.yaml",
    "gke-latest": _BASE + "daemonset-preloaded-latest.yaml",
}
INSTALLER_NAMES = {
    "gke-default": "nvidia-driver-installer",
    "gke-latest": "nvidia-driver-installer-latest",
}
COS_DRIVER_MODES = tuple(INSTALLER_SOURCES)
# Upstream's namespace. kube-system is where Kubernetes admits system-node-critical pods by default
# and GKE ships its own critical-pod quota there (NVIDIA/aicr#921), so the operator namespace's
# gpu-operator-quota need not count the installer.
INSTALLER_NAMESPACE = "kube-system"
INSTALLER_PRIORITY_CLASS = "system-node-critical"
# The manifests' images (pins.csv); the installer is preloaded on GKE COS GPU nodes (never pulled:
# imagePullPolicy Never).
COS_INSTALLER_IMAGE = pin("cos-nvidia-installer", DATA_DIR).image
PARTITION_GPUS_IMAGE = pin("gke-partition-gpus", DATA_DIR).image
PAUSE_IMAGE = pin("gke-pause", DATA_DIR).image
# Labels GKE sets on nodes it installs the driver on itself / on Confidential GKE Nodes; upstream
# keeps the installer off both.
GKE_DRIVER_VERSION_LABEL = "cloud.google.com/gke-gpu-driver-version"
GKE_CONFIDENTIAL_LABEL = "cloud.google.com/gke-confidential-nodes-instance-type"

_VULKAN_DIR = f"{GKE_DRIVER_DIR}/vulkan/icd.d"
_COS_TOOLS = "/var/lib/cos-tools"
# (volume, host path, container mount path or None)
_VOLUMES: tuple[tuple[str, str, str | None], ...] = (
    ("nvidia-install-dir-host", GKE_DRIVER_DIR, "/usr/local/nvidia"),
    ("vulkan-icd-mount", _VULKAN_DIR, "/etc/vulkan/icd.d"),
    ("dev", "/dev", "/dev"),
    ("root-mount", "/", "/root"),
    ("cos-tools", _COS_TOOLS, "/build/cos-tools"),
    ("nvidia-config", "/etc/nvidia", None),  # partition-gpus only
)


def needs_installer(driver: str, node_image: str) -> bool:
    """A GKE pool under the operator needs Google's COS installer: GKE installs nothing
    (INSTALLATION_DISABLED) and the operator builds no driver (``driver.enabled=false``)."""
    return driver in COS_DRIVER_MODES and node_image.upper() == "COS_CONTAINERD"


def installer_daemonsets(pools: Sequence[PoolHints]) -> tuple[Manifest, ...]:
    """One installer DaemonSet per COS driver mode the pools use, each bound to its pools."""
    by_mode: dict[str, list[str]] = {}
    for h in pools:
        if needs_installer(h.driver, h.node_image):
            by_mode.setdefault(h.driver, []).append(h.node_pool or h.name)
    return tuple(installer_daemonset(mode, names) for mode, names in by_mode.items())


def _install_script(mode: str) -> str:
    """Upstream's init script: skip when a driver module is loaded, else run the COS installer
    (``--version=latest`` for the -latest manifest, which also opens the install dir to 755)."""
    install = "/cos-gpu-installer install"
    tail = ""
    if mode == "gke-latest":
        install += " --version=latest"
        tail = f"\n  chmod 755 /root{GKE_DRIVER_DIR}"
    return (
        "if lsmod | grep nvidia; then\n"
        '  echo "NVIDIA driver module already loaded; skipping installation"\n'
        "  exit 0\n"
        "fi\n"
        f"{install} || exit 1{tail}\n"
    )


def installer_daemonset(mode: str, pools: Sequence[str]) -> Manifest:
    """The DaemonSet for driver ``mode`` (``gke-default`` | ``gke-latest``) on ``pools``."""
    name = INSTALLER_NAMES[mode]
    selector = {"k8s-app": name}

    def mounts(*names: str) -> list[dict[str, str]]:
        return [{"name": v, "mountPath": m} for v, _, m in _VOLUMES if v in names and m]

    installer = {
        "name": "nvidia-driver-installer",
        "image": COS_INSTALLER_IMAGE,
        "imagePullPolicy": "Never",
        "command": ["bash", "-c", _install_script(mode)],
        "env": [
            {"name": "NVIDIA_INSTALL_DIR_HOST", "value": GKE_DRIVER_DIR},
            {"name": "NVIDIA_INSTALL_DIR_CONTAINER", "value": "/usr/local/nvidia"},
            {"name": "VULKAN_ICD_DIR_HOST", "value": _VULKAN_DIR},
            {"name": "VULKAN_ICD_DIR_CONTAINER", "value": "/etc/vulkan/icd.d"},
            {"name": "ROOT_MOUNT_DIR", "value": "/root"},
            {"name": "COS_TOOLS_DIR_HOST", "value": _COS_TOOLS},
            {"name": "COS_TOOLS_DIR_CONTAINER", "value": "/build/cos-tools"},
        ],
        "resources": {"requests": {"cpu": "150m"}},
        "securityContext": {"privileged": True},  # loads kernel modules
        "volumeMounts": mounts(
            "nvidia-install-dir-host", "vulkan-icd-mount", "dev", "root-mount", "cos-tools"
        ),
    }
    partition = {
        "name": "partition-gpus",
        "image": PARTITION_GPUS_IMAGE,
        "env": [{"name": "LD_LIBRARY_PATH", "value": "/usr/local/nvidia/lib64"}],
        "resources": {"requests": {"cpu": "150m"}},
        "securityContext": {"privileged": True},
        "volumeMounts": [
            *mounts("nvidia-install-dir-host", "dev"),
            {"name": "nvidia-config", "mountPath": "/etc/nvidia"},
        ],
    }
    match = [
        {"key": GKE_ACCELERATOR_LABEL, "operator": "Exists"},
        {"key": GKE_DRIVER_VERSION_LABEL, "operator": "DoesNotExist"},
        {"key": GKE_CONFIDENTIAL_LABEL, "operator": "DoesNotExist"},
        # Ours on top of upstream's: only the pools handed to the operator, in this driver mode.
        {"key": NO_GKE_DEVICE_PLUGIN, "operator": "In", "values": ["true"]},
        {"key": GKE_NODEPOOL_LABEL, "operator": "In", "values": sorted(pools)},
    ]
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {
            "name": name,
            "namespace": INSTALLER_NAMESPACE,
            "labels": {**selector, **MANAGED_BY},
            "annotations": {"gpu-infra/source": INSTALLER_SOURCES[mode]},
        },
        "spec": {
            "selector": {"matchLabels": selector},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {
                "metadata": {"labels": {"name": name, **selector}},
                "spec": {
                    "priorityClassName": INSTALLER_PRIORITY_CLASS,
                    "affinity": {
                        "nodeAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {
                                "nodeSelectorTerms": [{"matchExpressions": match}]
                            }
                        }
                    },
                    "tolerations": [{"operator": "Exists"}],  # every GPU taint
                    "hostNetwork": True,
                    "hostPID": True,
                    "volumes": [{"name": v, "hostPath": {"path": p}} for v, p, _ in _VOLUMES],
                    "initContainers": [installer, partition],
                    "containers": [{"name": "pause", "image": PAUSE_IMAGE}],
                },
            },
        },
    }
