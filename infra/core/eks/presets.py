"""EKS's GPU Operator presets: the EKS NVIDIA AMIs (AL2023, Bottlerocket) ship the driver and the
container toolkit, so the operator runs without them (NVIDIA gpu-operator amazon-eks.html)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from infra.core.platform import Preset, PresetInputs, PresetSetting
from infra.core.pools import PoolHints
from infra.core.sharing import DEVICE_LIST_STRATEGY


@dataclass(frozen=True, slots=True)
class _EksPreset(Preset):
    family: str = ""

    def problem(self, h: PoolHints) -> str | None:
        image = h.node_image.upper()
        if image.startswith(self.family) and "NVIDIA" in image:
            return None
        return (
            f"expects the {self.family} NVIDIA AMI (driver and toolkit preinstalled), "
            f"but the pool's AMI type is {h.node_image!r}"
        )

    def settings(self, at: PresetInputs) -> list[PresetSetting]:
        return [
            (
                "driver.enabled",
                False,
                "the EKS NVIDIA AMI ships the driver (AWS ml-eks-optimized-ami)",
            ),
            ("toolkit.enabled", False, "the EKS NVIDIA AMI ships the container toolkit"),
        ]

    def notes(self, version: str, cdi: bool) -> list[str]:
        # NVIDIA cloud-native-docs gpu-operator/platform-support.rst "Cloud Service Providers".
        return [
            f"EKS: NVIDIA's platform support lists Ubuntu 22.04/24.04/26.04 nodes for Amazon EKS; "
            f"preset {self.name} runs the operator on the EKS NVIDIA AMI with its own driver and "
            "toolkit (driver/toolkit off), outside that validated matrix "
            "(https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/platform-support.html)"
        ]


@dataclass(frozen=True, slots=True)
class Al2023Preset(_EksPreset):
    """``eks-al2023`` (https://docs.aws.amazon.com/eks/latest/userguide/ml-eks-optimized-ami.html)."""

    def settings(self, at: PresetInputs) -> list[PresetSetting]:
        out = _EksPreset.settings(self, at)
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


@dataclass(frozen=True, slots=True)
class BottlerocketPreset(_EksPreset):
    """``eks-bottlerocket``: the node image also runs the device plugin and the MIG manager
    (https://bottlerocket.dev/en/os/latest/concepts/variants/)."""

    def settings(self, at: PresetInputs) -> list[PresetSetting]:
        return [
            *_EksPreset.settings(self, at),
            ("devicePlugin.enabled", False, "Bottlerocket NVIDIA runs its own device plugin"),
            ("migManager.enabled", False, "Bottlerocket NVIDIA ships the MIG manager"),
        ]


PRESETS: Mapping[str, Preset] = {
    p.name: p
    for p in (
        Al2023Preset("eks-al2023", toolkit=False, family="AL2023"),
        BottlerocketPreset(
            "eks-bottlerocket",
            device_plugin=False,
            mig_manager=False,
            toolkit=False,
            device_plugin_config="Bottlerocket settings.kubelet-device-plugins.nvidia",
            family="BOTTLEROCKET",
        ),
    )
}
