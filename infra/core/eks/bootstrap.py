"""What an EKS GPU node does at boot beyond EKS's own bootstrap: the user data of its launch
template (pure; ``infra.components.eks_nodes`` sends it).

EKS merges a MIME multipart user data into its own bootstrap for managed node groups without a
custom AMI (https://docs.aws.amazon.com/eks/latest/userguide/launch-templates.html#launch-template-user-data):
``application/node.eks.aws`` parts are nodeadm NodeConfig, ``text/x-shellscript`` parts run before
nodeadm starts containerd and the kubelet (awslabs/amazon-eks-ami nodeadm doc "Overview").

GPU isolation on AL2023 NVIDIA nodes: nodeadm makes ``nvidia`` containerd's default runtime
whenever ``/usr/bin/nvidia-container-runtime`` exists (awslabs/amazon-eks-ami
nodeadm/internal/containerd/runtime_config_nvidia.go), and the toolkit's default config honours
``NVIDIA_VISIBLE_DEVICES`` from unprivileged containers (NVIDIA/nvidia-container-toolkit
internal/config/config.go ``AcceptEnvvarUnprivileged``, toml
``accept-nvidia-visible-devices-envvar-when-unprivileged``, default true): any CUDA image, which
sets ``NVIDIA_VISIBLE_DEVICES=all``, would see every GPU of its node without requesting one,
bypassing the namespace GPU quotas. The script turns that off and accepts the device plugin's
volume-mount device list instead (``accept-nvidia-visible-devices-as-volume-mounts``, default
false), which the device plugin sends with ``DEVICE_LIST_STRATEGY=volume-mounts``
(NVIDIA/k8s-device-plugin ``deviceListStrategy``); the runtime reads its config per container, so
no restart is needed.
"""

from __future__ import annotations

from pathlib import Path

from infra.core.catalog.runtime_facts import BOTTLEROCKET, EKS_AMI, runtime_fact
from infra.core.platform import NodeRuntime
from infra.core.sharing import DEVICE_LIST_STRATEGY

# nvidia-container-toolkit config keys and the values that isolate GPUs (see the module docstring).
TOOLKIT_ISOLATION: tuple[tuple[str, str], ...] = (
    ("accept-nvidia-visible-devices-envvar-when-unprivileged", "false"),
    ("accept-nvidia-visible-devices-as-volume-mounts", "true"),
)
_BOUNDARY = "GPUINFRA"


def isolates_gpus(ami_type: str | None) -> bool:
    """Whether the AMI is an AL2023 NVIDIA image (nodeadm, nvidia as default runtime)."""
    return ami_type is not None and ami_type.startswith("AL2023") and "NVIDIA" in ami_type


def node_runtime(ami_type: str | None, data_dir: Path) -> NodeRuntime | None:
    """What an EKS GPU node's own runtime does with a pod's ``NVIDIA_VISIBLE_DEVICES``: AL2023
    NVIDIA nodes as nodeadm configures them plus ``TOOLKIT_ISOLATION``; Bottlerocket NVIDIA nodes as
    their shared defaults set the toolkit and device plugin (``gpu_runtime_facts.csv`` of the
    catalog in ``data_dir``); ``None`` for any other image or a fact the table lacks."""
    image = (ami_type or "").upper()
    if isolates_gpus(ami_type):
        default = runtime_fact(EKS_AMI, "al2023", "default-runtime", data_dir)
        if default is None:
            return None
        return NodeRuntime(
            default_runtime=default.value,
            nvidia_handler=True,
            accept_envvar=False,
            accept_mounts=True,
            # With the operator off, gpu-infra's NVIDIA device plugin chart serves these nodes.
            device_list=DEVICE_LIST_STRATEGY,
            source=f"{default.source}; gpu-infra's node user data: nvidia-ctk config "
            + " ".join(f"{k}={v}" for k, v in TOOLKIT_ISOLATION)
            + "; NVIDIA device plugin chart deviceListStrategy (infra.core.eks.device_plugin)",
        )
    if image.startswith("BOTTLEROCKET") and "NVIDIA" in image:
        envvar, mounts, strategy = (
            runtime_fact(BOTTLEROCKET, "nvidia-k8s", f, data_dir)
            for f in (
                "visible-devices-envvar-when-unprivileged",
                "visible-devices-as-volume-mounts",
                "device-list-strategy",
            )
        )
        if envvar is None or mounts is None or strategy is None:
            return None
        # Whichever runtime containerd defaults to, every path through nvidia's honours this.
        return NodeRuntime(
            default_runtime="the image's",
            nvidia_handler=True,
            accept_envvar=envvar.flag,
            accept_mounts=mounts.flag,
            device_list=strategy.value,
            # Defaults only: a node's user data may set settings.nvidia-container-runtime and
            # settings.kubelet-device-plugins.nvidia otherwise; gpu-infra sets neither.
            source=f"{envvar.source}; {strategy.source} (Bottlerocket defaults; gpu-infra sets no "
            "settings.nvidia-container-runtime or settings.kubelet-device-plugins.nvidia)",
        )
    return None


def toolkit_isolation_script() -> str:
    """The shell part that writes ``TOOLKIT_ISOLATION`` into the toolkit's config.toml
    (``nvidia-ctk config --in-place --set key=value``, NVIDIA/nvidia-container-toolkit
    cmd/nvidia-ctk/config)."""
    sets = " ".join(f"--set {k}={v}" for k, v in TOOLKIT_ISOLATION)
    return f"#!/bin/bash\nset -euo pipefail\nnvidia-ctk config --in-place {sets}\n"


def node_user_data(ami_type: str | None, local_nvme: bool) -> str | None:
    """The MIME multipart user data of a node group's launch template, or ``None`` if it needs
    none: the GPU-isolation script on AL2023 NVIDIA nodes, and a NodeConfig that RAID0s the
    instance-store NVMe for kubelet and containerd (hpc; https://awslabs.github.io/amazon-eks-ami/
    nodeadm/doc/api/#localstoragestrategy)."""
    parts: list[str] = []
    if local_nvme:
        parts.append(
            "Content-Type: application/node.eks.aws\n\n"
            "apiVersion: node.eks.aws/v1alpha1\n"
            "kind: NodeConfig\n"
            "spec:\n"
            "  instance:\n"
            "    localStorage:\n"
            "      strategy: RAID0\n"
        )
    if isolates_gpus(ami_type):
        parts.append(
            'Content-Type: text/x-shellscript; charset="us-ascii"\n\n' + toolkit_isolation_script()
        )
    if not parts:
        return None
    body = "".join(f"--{_BOUNDARY}\n{p}\n" for p in parts)
    return (
        "MIME-Version: 1.0\n"
        f'Content-Type: multipart/mixed; boundary="{_BOUNDARY}"\n\n'
        f"{body}--{_BOUNDARY}--\n"
    )
