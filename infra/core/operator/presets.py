"""GPU Operator presets: which preset serves the stack's pools, and the chart values each sets."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from infra.core.config.stack import StackConfig
from infra.core.errors import Issues
from infra.core.operator.gke_driver import COS_DRIVER_MODES
from infra.core.operator.helm_values import Setting, is_cdi_era
from infra.core.operator.model import GKE_DRIVER_DIR, GKE_RUNTIME_CONFIG_FILE_FROM
from infra.core.platform import Platform
from infra.core.pools import PoolHints, PoolSpecs, spec_of
from infra.core.sharing import DEVICE_LIST_STRATEGY

# Presets whose device plugin / MIG manager is the node image's, not the operator's (Bottlerocket
# NVIDIA variants: https://bottlerocket.dev/en/os/latest/concepts/variants/ ; EKS AL2023 NVIDIA AMI:
# https://docs.aws.amazon.com/eks/latest/userguide/ml-eks-optimized-ami.html).
NO_OPERATOR_DEVICE_PLUGIN = ("eks-bottlerocket",)
NO_OPERATOR_MIG_MANAGER = ("eks-bottlerocket",)
NO_OPERATOR_TOOLKIT = ("eks-al2023", "eks-bottlerocket")
# Distributions whose embedded containerd keeps runc its default runtime: k3s renders its containerd
# config from its own template, which defines only runtimes.runc and sets default_runtime_name only
# with `--default-runtime` (k3s pkg/agent/templates; https://docs.k3s.io/cli/agent), so nvidia is a
# non-default runtime there whatever toolkit 1.17 writes.
RUNTIME_CLASS_PRESETS = ("k3s", "rke2")
# Where k3s's (and RKE2's, which runs k3s's agent) embedded containerd listens
# (https://docs.k3s.io/advanced#configuring-containerd; NVIDIA getting-started.html, k3s/RKE2).
K3S_CONTAINERD_SOCKET = "/run/k3s/containerd/containerd.sock"

# --------------------------------------------------------------------------------------------------
# Preset choice and preset values


def choose_preset(
    config: StackConfig,
    pools: Sequence[PoolHints],
    platform: Platform,
    specs: PoolSpecs,
    issues: Issues,
) -> str | None:
    """The preset: ``gpuOperator.preset`` if given, else the platform's; checked against every
    pool."""
    allowed = platform.presets
    given = config.operator.preset
    if given is not None and given not in allowed:
        issues.add(
            "gpuOperator.preset",
            f"{given!r} is not a preset for platform {config.platform}; "
            f"use one of: {', '.join(allowed)}",
        )
        return None
    preset = given or platform.default_preset(pools)
    ok = True
    for h in pools:
        i, pool = spec_of(specs, h)
        problem = _pool_contradicts(preset, h)
        if problem is None:
            continue
        ok = False
        if given is not None:
            issues.add("gpuOperator.preset", f"{given!r} {problem} (gpuPools[{i}] {h.name})")
        else:
            issues.add(
                platform.driver_key(i, pool),
                f"{problem}; one operator install serves every pool, so pools must agree "
                f"(preset {preset!r} chosen from gpuPools[0])",
            )
    if platform.features.own_hardware and pools:
        first = pools[0].driver
        for h in pools[1:]:
            if h.driver != first:
                ok = False
                i, pool = spec_of(specs, h)
                issues.add(
                    platform.driver_key(i, pool),
                    f"{h.driver!r} differs from gpuPools[0]'s {first!r}; one operator install "
                    "either installs the driver on every GPU node or on none",
                )
    return preset if ok else None


def _pool_contradicts(preset: str, h: PoolHints) -> str | None:
    """Why ``preset`` cannot serve pool ``h``, or ``None``."""
    image = h.node_image.upper()
    if preset == "gke-google-driver":
        if h.driver not in COS_DRIVER_MODES:
            return (
                "expects Google's driver installer (gke-default/gke-latest), but the pool's "
                f"driver mode is {h.driver!r}"
            )
        # gpu-infra applies Google's COS installer; Ubuntu's manifest depends on GPU model and
        # node version (NVIDIA google-gke.html "Using the Google Driver Installer").
        if image != "COS_CONTAINERD":
            return (
                f"applies Google's COS driver installer, but the pool's imageType is "
                f"{h.node_image} (use imageType COS_CONTAINERD, or driver: operator on Ubuntu)"
            )
    if preset == "gke-operator-driver":
        if h.driver != "operator":
            return (
                f"installs the driver with the operator, but the pool's driver mode is {h.driver!r} "
                "(GKE installs it; two drivers conflict)"
            )
        if image != "UBUNTU_CONTAINERD":
            return (
                f"needs UBUNTU_CONTAINERD nodes: the operator's driver containers do not support "
                f"{h.node_image} (NVIDIA google-gke.html)"
            )
    if preset in ("eks-al2023", "eks-bottlerocket"):
        family = "AL2023" if preset == "eks-al2023" else "BOTTLEROCKET"
        if not (image.startswith(family) and "NVIDIA" in image):
            return (
                f"expects the {family} NVIDIA AMI (driver and toolkit preinstalled), "
                f"but the pool's AMI type is {h.node_image!r}"
            )
    return None


def _eks_settings(preset: str) -> list[tuple[str, Any, str]]:
    out: list[tuple[str, Any, str]] = [
        ("driver.enabled", False, "the EKS NVIDIA AMI ships the driver (AWS ml-eks-optimized-ami)"),
        ("toolkit.enabled", False, "the EKS NVIDIA AMI ships the container toolkit"),
    ]
    if preset == "eks-al2023":
        # The node bootstrap turns off NVIDIA_VISIBLE_DEVICES for unprivileged containers and
        # accepts volume-mount device lists (infra.core.eks.bootstrap), so the device plugin
        # hands GPUs over that way; a user devicePlugin.env value wins over the operator's CDI
        # strategy (NVIDIA/gpu-operator controllers/object_controls.go TransformDevicePlugin).
        out.append(
            (
                "devicePlugin.env[DEVICE_LIST_STRATEGY]",
                DEVICE_LIST_STRATEGY,
                "EKS AL2023 nodes accept only the device plugin's volume-mount device list "
                "(accept-nvidia-visible-devices-envvar-when-unprivileged = false at boot)",
            )
        )
    return out


def preset_settings(
    preset: str, version: str, platform: Platform, pools: Sequence[PoolHints]
) -> list[Setting]:
    """The values a preset overrides for chart ``version`` (NVIDIA gpu-operator getting-started.html
    "Specifying Configuration Options for containerd", google-gke.html, amazon-eks.html)."""
    cdi = is_cdi_era(version)
    out: list[Setting] = []

    def add(path: str, value: Any, why: str) -> None:
        out.append(Setting(path, value, f"preset {preset}: {why}"))

    if preset == "gke-google-driver":
        add("driver.enabled", False, "Google's installer DaemonSet installs the driver (COS)")
        add("hostPaths.driverInstallDir", GKE_DRIVER_DIR, "where Google's installer puts it")
        add("toolkit.installDir", GKE_DRIVER_DIR, "COS root filesystem (/usr/local) is read-only")
        add("cdi.enabled", True, "NVIDIA's GKE install command enables CDI")
        if not cdi:
            add("cdi.default", True, "NVIDIA's GKE install command (25.3 charts) sets it")
    pinned = platform.kubernetes_version
    if preset in ("gke-google-driver", "gke-operator-driver") and gke_needs_config_file(pinned):
        add(
            "toolkit.env[RUNTIME_CONFIG_SOURCE]",
            "file",
            ("GKE >= 1.33" if pinned else "GKE version unpinned (channels are >= 1.33)")
            + ": `containerd config dump` rewrites GKE's CNI bin_dir (nvidia-container-toolkit#1222)",
        )
    if preset in ("eks-al2023", "eks-bottlerocket"):
        out += [
            Setting(path, v, f"preset {preset}: {why}") for path, v, why in _eks_settings(preset)
        ]
    if preset == "eks-bottlerocket":
        add("devicePlugin.enabled", False, "Bottlerocket NVIDIA runs its own device plugin")
        add("migManager.enabled", False, "Bottlerocket NVIDIA ships the MIG manager")
    if preset in ("k3s", "rke2"):
        add(
            "toolkit.env[CONTAINERD_SOCKET]",
            K3S_CONTAINERD_SOCKET,
            f"{preset}'s embedded containerd socket",
        )
    if preset == "k3s" and not cdi:
        add(
            "toolkit.env[CONTAINERD_CONFIG]",
            "/var/lib/rancher/k3s/agent/etc/containerd/config.toml",
            "k3s's generated containerd config (toolkit 1.17 edits it; k3s re-detects on restart)",
        )
    if preset == "microk8s":
        add(
            "toolkit.env[CONTAINERD_CONFIG]",
            "/var/snap/microk8s/current/args/containerd-template.toml",
            "MicroK8s keeps its containerd config in the snap",
        )
        add(
            "toolkit.env[CONTAINERD_SOCKET]",
            "/var/snap/microk8s/common/run/containerd.sock",
            "MicroK8s's containerd socket",
        )
        if cdi:
            add(
                "toolkit.env[RUNTIME_CONFIG_SOURCE]",
                "file=/var/snap/microk8s/current/args/containerd.toml",
                "MicroK8s's rendered config (NVIDIA getting-started, MicroK8s)",
            )
        else:
            add(
                "toolkit.env[CONTAINERD_SET_AS_DEFAULT]",
                "true",
                "NVIDIA's 25.3 MicroK8s instructions make nvidia the default runtime",
            )
    if platform.features.own_hardware and _all_preinstalled(pools):
        add("driver.enabled", False, "every pool's hosts have the driver preinstalled")
    return out


def preset_notes(preset: str, version: str) -> list[str]:
    """Where a preset departs from NVIDIA's or the distribution's documented setup, with the
    source, for ``gpuOperator.notes``."""
    notes: list[str] = []
    if preset in ("eks-al2023", "eks-bottlerocket"):
        # NVIDIA cloud-native-docs gpu-operator/platform-support.rst "Cloud Service Providers".
        notes.append(
            f"EKS: NVIDIA's platform support lists Ubuntu 22.04/24.04/26.04 nodes for Amazon EKS; "
            f"preset {preset} runs the operator on the EKS NVIDIA AMI with its own driver and "
            "toolkit (driver/toolkit off), outside that validated matrix "
            "(https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/platform-support.html)"
        )
    if preset in RUNTIME_CLASS_PRESETS and is_cdi_era(version):
        # rancher/rke2-docs docs/add-ons/gpu_operators.md (v25.10 tab): "It requires containerd 2.0".
        notes.append(
            f"{preset}: chart {version} injects GPUs by CDI without runtimeClassName, which needs "
            "the distribution's containerd >= 2.0 (RKE2 docs: https://docs.rke2.io/add-ons/gpu_operators)"
        )
    return notes


def gke_needs_config_file(version: str | None) -> bool:
    """GKE ``version`` >= 1.33, or unpinned (every release channel is >= 1.33 as of 2026-11)."""
    if not version:
        return True
    m = re.match(r"^(\d+)\.(\d+)", str(version))
    return m is None or (int(m.group(1)), int(m.group(2))) >= GKE_RUNTIME_CONFIG_FILE_FROM


def _all_preinstalled(pools: Sequence[PoolHints]) -> bool:
    return bool(pools) and all(h.driver == "preinstalled" for h in pools)
