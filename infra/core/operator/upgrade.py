"""What an in-place update of the GPU Operator release does to the GPU nodes, from the values each
side resolves (the release's value, else the pinned chart's default).

Driver: the operator renders the driver DaemonSet with ``OnDelete`` (chart values.yaml: "driver
Daemonset is always set with OnDelete to avoid unintended disruptions"; gpu-operator
``controllers/object_controls.go`` @ a22dbf67). With ``driver.upgradePolicy.autoUpgrade`` (chart
default true) the upgrade controller (``controllers/upgrade_controller.go``, k8s-operator-libs
``pkg/upgrade``) takes the nodes ``maxParallelUpgrades`` / ``maxUnavailable`` at a time, cordons
each, deletes its GPU pods (``gpuPodDeletion``), optionally drains it, and deletes the driver pod,
so the new driver container unloads and reloads the kernel modules. With autoUpgrade false an old
driver pod is replaced only when it is deleted, which in practice is the node's next reboot.

Toolkit: a changed toolkit DaemonSet rolls its pods; each old pod on SIGTERM reverts the runtime
config and restarts containerd, each new one writes it again and restarts containerd (toolkit
``cmd/nvidia-ctk-installer/main.go`` ``Run``); on k3s and RKE2 k3s exits with its containerd (k3s
``pkg/agent/containerd/containerd.go`` ``Run``), taking the kubelet and, on a server node, the API
server and etcd with it (``infra.core.operator.removal``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from infra.core.catalog.runtime_facts import K3S_CONTAINERD_SOCKET
from infra.core.operator.helm_values import default_at, vendored_versions
from infra.core.operator.removal import is_operator_release


def _resolved(inputs: Mapping[str, Any], path: str) -> Any:
    """The release's value at ``path`` merged over the pinned chart's default (None: unknown)."""
    version = str(inputs.get("version", ""))
    node: Any = inputs.get("values") or {}
    for part in path.split("."):
        node = node.get(part) if isinstance(node, Mapping) else None
    default = default_at(version, path) if version in vendored_versions() else None
    if isinstance(node, Mapping) and isinstance(default, Mapping):
        return {**default, **node}
    return default if node is None else node


def _on(inputs: Mapping[str, Any], path: str) -> bool:
    value = _resolved(inputs, path)
    return True if value is None else bool(value)  # unknown chart: the chart ships it on


def driver_effect(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """What the update does to the operator's driver on the GPU nodes ("" when nothing)."""
    if not (is_operator_release(new) and _on(new, "driver.enabled") and _on(old, "driver.enabled")):
        return ""  # preinstalled or cloud-managed driver: the operator does not run one
    a, b = _resolved(old, "driver.version"), _resolved(new, "driver.version")
    if a is not None and a == b:
        return ""
    shown = f"{a or 'unknown'} -> {b or 'unknown'}"
    verb = "moves" if a is not None and b is not None else "may move (a chart not vendored)"
    if _resolved(new, "driver.upgradePolicy.autoUpgrade") is False:
        return (
            f"update in place, but the operator's driver {verb} ({shown}) and "
            "driver.upgradePolicy.autoUpgrade is false: the driver DaemonSet is OnDelete, so each "
            "node keeps the old driver until its driver pod is deleted (its next reboot)"
        )
    policy = _resolved(new, "driver.upgradePolicy") or {}
    unavailable = policy.get("maxUnavailable", "25%") if isinstance(policy, Mapping) else "25%"
    return (
        f"update in place, but the operator's driver {verb} ({shown}): its upgrade controller "
        f"(autoUpgrade) takes the GPU nodes a few at a time (maxUnavailable {unavailable}), "
        "cordons each, deletes its GPU pods and reloads the NVIDIA kernel modules"
    )


def toolkit_effect(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """What a changed toolkit DaemonSet does on the GPU nodes ("" when it does not change)."""
    if not (
        is_operator_release(new) and _on(new, "toolkit.enabled") and _on(old, "toolkit.enabled")
    ):
        return ""
    a, b = _resolved(old, "toolkit"), _resolved(new, "toolkit")
    if a is not None and a == b:
        return ""
    env = (b or {}).get("env", []) if isinstance(b, Mapping) else []
    socket = next((e.get("value") for e in env if e.get("name") == "CONTAINERD_SOCKET"), None)
    va, vb = (x.get("version") if isinstance(x, Mapping) else None for x in (a, b))
    moved = f" (toolkit {va or 'unknown'} -> {vb or 'unknown'})" if va != vb else ""
    text = (
        f"update in place, but the toolkit DaemonSet changes{moved}: each toolkit pod is replaced, the old "
        "one reverting the runtime config and the new one writing it again, each restarting "
        "containerd on every GPU node"
    )
    if socket == K3S_CONTAINERD_SOCKET:
        text += (
            "; containerd is k3s's (RKE2's) child process, so k3s itself restarts there, its "
            "kubelet with it, and on a server node its API server and etcd"
        )
    return text
