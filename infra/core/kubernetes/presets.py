"""On-prem GPU Operator presets, one per distribution: where its containerd keeps its config and
socket, for the container toolkit (NVIDIA gpu-operator getting-started.html "Specifying
Configuration Options for containerd")."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from infra.core.catalog.runtime_facts import K3S_CONTAINERD_SOCKET
from infra.core.platform import Preset, PresetInputs, PresetSetting


@dataclass(frozen=True, slots=True)
class DistributionPreset(Preset):
    """A distribution's containerd: plain ``containerd`` needs nothing of its own."""

    def settings(self, at: PresetInputs) -> list[PresetSetting]:
        out = self._containerd(at.cdi)
        if at.pools and all(h.driver == "preinstalled" for h in at.pools):
            out.append(("driver.enabled", False, "every pool's hosts have the driver preinstalled"))
        return out

    def _containerd(self, cdi: bool) -> list[PresetSetting]:
        return []


@dataclass(frozen=True, slots=True)
class RancherPreset(DistributionPreset):
    """k3s, and RKE2 (which runs k3s's agent): an embedded containerd that keeps runc its default
    runtime. k3s renders its containerd config from its own template, which defines only
    runtimes.runc and sets default_runtime_name only with ``--default-runtime`` (k3s
    pkg/agent/templates; https://docs.k3s.io/cli/agent), so nvidia is a non-default runtime there
    whatever toolkit 1.17 writes.

    Attributes:
        legacy_config: the containerd config toolkit 1.17 (pre-CDI charts) edits, when the
            toolkit's default is not it.
    """

    legacy_config: str = ""

    def _containerd(self, cdi: bool) -> list[PresetSetting]:
        out: list[PresetSetting] = [
            (
                "toolkit.env[CONTAINERD_SOCKET]",
                K3S_CONTAINERD_SOCKET,
                f"{self.name}'s embedded containerd socket",
            )
        ]
        if self.legacy_config and not cdi:
            out.append(
                (
                    "toolkit.env[CONTAINERD_CONFIG]",
                    self.legacy_config,
                    "k3s's generated containerd config (toolkit 1.17 edits it; k3s re-detects on "
                    "restart)",
                )
            )
        return out

    def notes(self, version: str, cdi: bool) -> list[str]:
        if not cdi:
            return []
        # rancher/rke2-docs docs/add-ons/gpu_operators.md (v25.10 tab): "It requires containerd 2.0".
        return [
            f"{self.name}: chart {version} injects GPUs by CDI without runtimeClassName, which "
            "needs the distribution's containerd >= 2.0 (RKE2 docs: "
            "https://docs.rke2.io/add-ons/gpu_operators)"
        ]

    def version_problem(
        self, version: str, cdi: bool, kubernetes_version: str | None, data_dir: Path
    ) -> str | None:
        if cdi:
            return None
        return (
            f"{version} on {self.name} leaves nvidia a non-default containerd runtime, so every "
            "GPU pod would need runtimeClassName: nvidia, which JupyterHub, Kubeflow and Flyte "
            "workloads do not set (https://docs.k3s.io/advanced#nvidia-container-runtime-support, "
            "https://docs.rke2.io/add-ons/gpu_operators); use v25.10.0 or later (CDI: the device "
            "plugin injects GPUs without a runtime class)"
        )


@dataclass(frozen=True, slots=True)
class MicroK8sPreset(DistributionPreset):
    """MicroK8s keeps containerd's config and socket in its snap."""

    def _containerd(self, cdi: bool) -> list[PresetSetting]:
        out: list[PresetSetting] = [
            (
                "toolkit.env[CONTAINERD_CONFIG]",
                "/var/snap/microk8s/current/args/containerd-template.toml",
                "MicroK8s keeps its containerd config in the snap",
            ),
            (
                "toolkit.env[CONTAINERD_SOCKET]",
                "/var/snap/microk8s/common/run/containerd.sock",
                "MicroK8s's containerd socket",
            ),
        ]
        if cdi:
            out.append(
                (
                    "toolkit.env[RUNTIME_CONFIG_SOURCE]",
                    "file=/var/snap/microk8s/current/args/containerd.toml",
                    "MicroK8s's rendered config (NVIDIA getting-started, MicroK8s)",
                )
            )
        else:
            out.append(
                (
                    "toolkit.env[CONTAINERD_SET_AS_DEFAULT]",
                    "true",
                    "NVIDIA's 25.3 MicroK8s instructions make nvidia the default runtime",
                )
            )
        return out


PRESETS: Mapping[str, Preset] = {
    p.name: p
    for p in (
        DistributionPreset("containerd"),
        RancherPreset("k3s", legacy_config="/var/lib/rancher/k3s/agent/etc/containerd/config.toml"),
        RancherPreset("rke2"),
        MicroK8sPreset("microk8s"),
    )
}
