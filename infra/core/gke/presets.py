"""GKE's GPU Operator presets: Google's COS driver installer or the operator's driver on Ubuntu,
and the chart values each sets (NVIDIA gpu-operator google-gke.html)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infra.core.gke.driver_installer import COS_DRIVER_MODES, GKE_DRIVER_DIR, installer_daemonsets
from infra.core.gke.versions import feature_versions, version_at_least
from infra.core.platform import Preset, PresetInputs, PresetSetting
from infra.core.pools import PoolHints


def gke_needs_config_file(version: str | None, data_dir: Path) -> bool:
    """GKE ``version`` runs containerd 2.0, whose config the toolkit must read from the file
    (gke_feature_versions.csv ``containerd-config-file`` of the catalog in ``data_dir``);
    unpinned counts as at least (every release channel is past it as of 2026-11)."""
    floor = feature_versions(data_dir)["containerd-config-file"]
    return version_at_least(version or None, floor)


@dataclass(frozen=True, slots=True)
class _GkePreset(Preset):
    def settings(self, at: PresetInputs) -> list[PresetSetting]:
        out = self._driver_settings(at.cdi)
        if gke_needs_config_file(at.kubernetes_version, at.data_dir):
            out.append(
                (
                    "toolkit.env[RUNTIME_CONFIG_SOURCE]",
                    "file",
                    (
                        "GKE >= 1.33"
                        if at.kubernetes_version
                        else "GKE version unpinned (channels are >= 1.33)"
                    )
                    + ": `containerd config dump` rewrites GKE's CNI bin_dir "
                    "(nvidia-container-toolkit#1222)",
                )
            )
        return out

    def _driver_settings(self, cdi: bool) -> list[PresetSetting]:
        return []

    def version_problem(
        self, version: str, cdi: bool, kubernetes_version: str | None, data_dir: Path
    ) -> str | None:
        if cdi or not gke_needs_config_file(kubernetes_version, data_dir):
            return None
        return (
            f"{version} ships container toolkit 1.17, whose `containerd config dump` breaks "
            "GKE >= 1.33 nodes (nvidia-container-toolkit#1222) and which cannot read "
            "RUNTIME_CONFIG_SOURCE=file; use v25.10.0 or later, or pin cluster.minMasterVersion "
            "below 1.33"
        )


@dataclass(frozen=True, slots=True)
class GoogleDriverPreset(_GkePreset):
    """``gke-google-driver``: Google's installer DaemonSet puts the driver on COS nodes."""

    def problem(self, h: PoolHints) -> str | None:
        if h.driver not in COS_DRIVER_MODES:
            return (
                "expects Google's driver installer (gke-default/gke-latest), but the pool's "
                f"driver mode is {h.driver!r}"
            )
        # gpu-infra applies Google's COS installer; Ubuntu's manifest depends on GPU model and
        # node version (NVIDIA google-gke.html "Using the Google Driver Installer").
        if h.node_image.upper() != "COS_CONTAINERD":
            return (
                f"applies Google's COS driver installer, but the pool's imageType is "
                f"{h.node_image} (use imageType COS_CONTAINERD, or driver: operator on Ubuntu)"
            )
        return None

    def _driver_settings(self, cdi: bool) -> list[PresetSetting]:
        out: list[PresetSetting] = [
            ("driver.enabled", False, "Google's installer DaemonSet installs the driver (COS)"),
            ("hostPaths.driverInstallDir", GKE_DRIVER_DIR, "where Google's installer puts it"),
            ("toolkit.installDir", GKE_DRIVER_DIR, "COS root filesystem (/usr/local) is read-only"),
            ("cdi.enabled", True, "NVIDIA's GKE install command enables CDI"),
        ]
        if not cdi:
            out.append(("cdi.default", True, "NVIDIA's GKE install command (25.3 charts) sets it"))
        return out

    def before_release(self, pools: Sequence[PoolHints]) -> tuple[dict[str, Any], ...]:
        # Pools send INSTALLATION_DISABLED; Google's installer puts the driver on COS nodes.
        return installer_daemonsets(pools)


@dataclass(frozen=True, slots=True)
class OperatorDriverPreset(_GkePreset):
    """``gke-operator-driver``: the operator builds the driver on Ubuntu nodes."""

    def problem(self, h: PoolHints) -> str | None:
        if h.driver != "operator":
            return (
                f"installs the driver with the operator, but the pool's driver mode is {h.driver!r} "
                "(GKE installs it; two drivers conflict)"
            )
        if h.node_image.upper() != "UBUNTU_CONTAINERD":
            return (
                f"needs UBUNTU_CONTAINERD nodes: the operator's driver containers do not support "
                f"{h.node_image} (NVIDIA google-gke.html)"
            )
        return None


PRESETS: Mapping[str, Preset] = {
    p.name: p
    for p in (GoogleDriverPreset("gke-google-driver"), OperatorDriverPreset("gke-operator-driver"))
}
