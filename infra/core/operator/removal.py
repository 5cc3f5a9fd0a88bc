"""What removing the GPU Operator release does to a running cluster, read from the release itself.

``helm uninstall`` of the gpu-operator chart (what pulumi-kubernetes does when the release leaves
the stack) first runs the chart's pre-delete hooks (fact ``pre-delete-hooks``: from v26.7.0 an
unconditional Job deleting the GPUCluster CR, ``templates/cleanup_gpucluster.yaml``), then deletes
the chart's ClusterPolicy, and Kubernetes' garbage collector deletes every operand DaemonSet and
RuntimeClass the operator created with it as controller (gpu-operator
``controllers/object_controls.go``: ``SetControllerReference(n.singleton, obj, ...)``). The
operator's own node labels (``nvidia.com/gpu.deploy.*``, ``nvidia.com/gpu.present``,
``nvidia.com/mig.config``: ``controllers/state_manager.go``, ``nodelabeling_controller.go``) stay
on the nodes. NFD's post-delete Job runs ``nfd-master -prune`` and removes NFD's labels (fact
``nfd.post-delete-gate``: ungated in the v25.3 charts' NFD subchart, gated on
``postDeleteCleanup`` from v25.10, its default fact ``nfd.post-delete-default``). Operator-installed drivers unload the kernel
modules as their containers stop (NVIDIA gpu-driver-container ``nvidia-driver``
``_unload_driver``). Each toolkit pod, on SIGTERM, reverts the runtime config it edited (fact
``containerd-config`` unless ``CONTAINERD_CONFIG`` names another) and restarts containerd (fact
``containerd-restart-mode``, ``signal``: a SIGHUP, which containerd does not handle, so it exits
and its service restarts it: containerd ``cmd/containerd/command/main_unix.go``
``handledSignals``), but keeps its install directory (toolkit ``cmd/nvidia-ctk-installer/main.go``
``Run``: the directory is removed only by the next ``Install``).

On k3s and RKE2 containerd is k3s's child process and k3s exits with it (k3s
``pkg/agent/containerd/containerd.go`` ``Run``: ``os.Exit(1)`` after containerd ends), so k3s
restarts on every GPU node, and on a server node its API server and etcd with it. The CDI-era
preset names only k3s's socket, so the file the toolkit reverts is its default, which k3s never
reads: after the restart k3s finds ``nvidia-container-runtime`` in the kept
``/usr/local/nvidia/toolkit`` and registers the nvidia runtimes again (k3s
``pkg/agent/containerd/nvidia.go`` ``findNvidiaContainerRuntimes``), which its own RuntimeClass
``nvidia`` names (k3s ``manifests/runtimes.yaml``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from infra.core.catalog.runtime_facts import K3S_CONTAINERD_SOCKET, OPERATOR, TOOLKIT, runtime_fact
from infra.core.operator.helm_values import default_at, vendored_versions
from infra.core.operator.model import CHART

OPERANDS = (
    "driver, toolkit, device plugin, feature discovery, DCGM exporter, MIG manager, validator"
)


def is_operator_release(inputs: Mapping[str, Any]) -> bool:
    """Whether a Helm release's inputs install NVIDIA's gpu-operator chart."""
    return str(inputs.get("chart", "")) == CHART


def _value(values: Mapping[str, Any], version: str, path: str) -> Any:
    """The release's value at ``path``, else the chart's default; ``None`` when neither is known."""
    node: Any = values
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return default_at(version, path) if version in vendored_versions() else None
        node = node[part]
    return node


def _on(values: Mapping[str, Any], version: str, path: str) -> bool:
    # An unknown chart's default is taken as on: a removal text errs toward saying more.
    value = _value(values, version, path)
    return True if value is None else bool(value)


def _toolkit_env(values: Mapping[str, Any]) -> dict[str, str]:
    toolkit = values.get("toolkit")
    env = toolkit.get("env", []) if isinstance(toolkit, Mapping) else []
    return {str(e.get("name")): str(e.get("value")) for e in env if isinstance(e, Mapping)}


def removal_effects(inputs: Mapping[str, Any], data_dir: Path) -> list[str]:
    """What the uninstall does, one clause each, for the release ``inputs`` (``--json`` shape),
    by the runtime facts of the catalog in ``data_dir``."""
    values = inputs.get("values") or {}
    version = str(inputs.get("version", ""))
    out = [*_hooks(version, data_dir)]
    out.append(
        f"its ClusterPolicy is deleted and every operand with it ({OPERANDS}) on every GPU node, "
        "with the operator's RuntimeClasses: no new pod gets a GPU there; the operator's node "
        "labels (nvidia.com/gpu.deploy.*, nvidia.com/gpu.present, nvidia.com/mig.config) stay"
    )
    if _on(values, version, "nfd.enabled") and (nfd := _nfd_prune(values, version, data_dir)):
        out.append(nfd)
    if _on(values, version, "driver.enabled"):
        out.append(
            "the operator's driver containers stop and unload the NVIDIA kernel modules on every "
            "GPU node"
        )
    if _on(values, version, "toolkit.enabled"):
        out.append(_toolkit_cleanup(values, version, data_dir))
    return out


def _hooks(version: str, data_dir: Path) -> list[str]:
    fact = runtime_fact(OPERATOR, version, "pre-delete-hooks", data_dir)
    if fact is None:
        return []
    always = [h.split(":", 1)[0] for h in fact.words if h.endswith(":-")]
    return [f"the chart's pre-delete Job ({', '.join(always)}) runs first"] if always else []


def _nfd_prune(values: Mapping[str, Any], version: str, data_dir: Path) -> str:
    fact = runtime_fact(OPERATOR, version, "nfd.post-delete-gate", data_dir)
    prune = "NFD's post-delete job prunes NFD's labels from every node"
    if fact is None:
        return f"{prune} (unless node-feature-discovery.postDeleteCleanup is false)"
    if not fact.value:
        return f"{prune} (not gated in chart {version})"
    default = runtime_fact(OPERATOR, version, "nfd.post-delete-default", data_dir)
    on = default is None or default.flag  # the NFD subchart's own default
    nfd = values.get("node-feature-discovery")
    gate = nfd.get(fact.value, on) if isinstance(nfd, Mapping) else on
    return prune if gate else ""


def _toolkit_cleanup(values: Mapping[str, Any], version: str, data_dir: Path) -> str:
    env = _toolkit_env(values)
    tag = str(_value(values, version, "toolkit.version") or "").split("-", 1)[0]

    def fact(name: str, otherwise: str) -> str:
        found = runtime_fact(TOOLKIT, tag, name, data_dir)
        return found.value if found is not None else otherwise

    mode = env.get("RUNTIME_RESTART_MODE") or fact("containerd-restart-mode", "signal")
    config = env.get("CONTAINERD_CONFIG") or fact("containerd-config", "its default config")
    if drop_in := env.get("RUNTIME_DROP_IN_CONFIG") or fact("containerd-drop-in", ""):
        config = f"{config} and removes {drop_in}"
    if mode == "none":
        return f"the toolkit reverts {config} on every GPU node (no restart: RUNTIME_RESTART_MODE=none)"
    if env.get("CONTAINERD_SOCKET") != K3S_CONTAINERD_SOCKET:
        return f"the toolkit reverts {config} and restarts containerd on every GPU node"
    if "CONTAINERD_CONFIG" in env:
        reverted = f"the toolkit reverts {config} (k3s's containerd config)"
    else:
        reverted = f"the toolkit reverts {config}, which k3s's containerd does not read"
    return (
        f"{reverted}, and restarts containerd on every GPU node; containerd is k3s's (RKE2's) "
        "child process, so k3s itself restarts there, its kubelet with it, and on a server node "
        "its API server and etcd (a single-server cluster loses its API server mid-uninstall: "
        "run the update again if the uninstall or NFD's prune fails); the toolkit keeps "
        "/usr/local/nvidia/toolkit, where k3s (RKE2 runs k3s's agent) finds the nvidia runtime "
        "again on restart, so pods naming a RuntimeClass nvidia (k3s ships one) still run under "
        "it until that directory is removed"
    )
