"""What removing the GPU Operator release does to a running cluster, read from the release itself.

``helm uninstall`` of the gpu-operator chart (what pulumi-kubernetes does when the release leaves
the stack) deletes the chart's ClusterPolicy, and Kubernetes' garbage collector deletes every
operand DaemonSet the operator created with it as controller (gpu-operator
``controllers/object_controls.go``: ``SetControllerReference(n.singleton, obj, ...)``): the
driver, toolkit, device plugin, GFD, DCGM exporter, MIG manager and validator pods leave every GPU
node, so no new pod gets a GPU there. NFD's post-delete Job runs ``nfd-master -prune`` and removes
NFD's labels from every node (the node-feature-discovery subchart's ``post-delete-job.yaml``,
gated on ``postDeleteCleanup``, default true). Each toolkit pod, on SIGTERM, un-configures the
container runtime and restarts it (nvidia-container-toolkit ``cmd/nvidia-ctk-installer/main.go``
``Run`` -> ``Cleanup``; default restart mode ``signal``: a SIGHUP to containerd, which does not
handle it and exits, and its service restarts it: containerd ``cmd/containerd/command/main_unix.go``
``handledSignals``). On k3s and RKE2 containerd is k3s's child process and k3s exits with it
(k3s ``pkg/agent/containerd/containerd.go`` ``Run``: ``os.Exit(1)`` after containerd ends), so k3s
itself restarts on every GPU node, its kubelet with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from infra.core.catalog.runtime_facts import K3S_CONTAINERD_SOCKET
from infra.core.operator.helm_values import default_at, vendored_versions
from infra.core.operator.model import CHART


def is_operator_release(inputs: Mapping[str, Any]) -> bool:
    """Whether a Helm release's inputs install NVIDIA's gpu-operator chart."""
    return str(inputs.get("chart", "")) == CHART


def _on(values: Mapping[str, Any], version: str, path: str) -> bool:
    node: Any = values
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return bool(default_at(version, path)) if version in vendored_versions() else True
        node = node[part]
    return bool(node)


def _toolkit_env(values: Mapping[str, Any]) -> dict[str, str]:
    env = (
        values.get("toolkit", {}).get("env", [])
        if isinstance(values.get("toolkit"), Mapping)
        else []
    )
    return {str(e.get("name")): str(e.get("value")) for e in env if isinstance(e, Mapping)}


def removal_effects(inputs: Mapping[str, Any]) -> list[str]:
    """What the uninstall does, one clause each, for the release ``inputs`` (``--json`` shape)."""
    values = inputs.get("values") or {}
    version = str(inputs.get("version", ""))
    out = [
        "its ClusterPolicy is deleted and every operand with it (driver, toolkit, device plugin, "
        "feature discovery, DCGM, validator) on every GPU node: no new pod gets a GPU there"
    ]
    if _on(values, version, "nfd.enabled") and values.get("node-feature-discovery", {}).get(
        "postDeleteCleanup", True
    ):
        out.append("NFD's post-delete job prunes NFD's labels from every node")
    if _on(values, version, "toolkit.enabled"):
        env = _toolkit_env(values)
        if env.get("RUNTIME_RESTART_MODE") == "none":
            out.append(
                "the toolkit un-configures containerd on every GPU node (no restart: RUNTIME_RESTART_MODE=none)"
            )
        elif env.get("CONTAINERD_SOCKET") == K3S_CONTAINERD_SOCKET:
            out.append(
                "the toolkit un-configures containerd and restarts it on every GPU node; "
                "containerd is k3s's (RKE2's) child process, so k3s itself restarts there, "
                "its kubelet with it"
            )
        else:
            out.append("the toolkit un-configures containerd and restarts it on every GPU node")
    return out
