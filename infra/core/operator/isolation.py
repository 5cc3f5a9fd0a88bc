"""GPU isolation on every runtime path: can an unprivileged pod see a GPU it did not request?

The receivers' rule (nvidia-container-toolkit, fact ``envvar-gate`` in
``data/gpu_runtime_facts.csv``): a container that names GPUs in ``NVIDIA_VISIBLE_DEVICES`` (every
CUDA base image sets ``all``) gets them only if it is privileged (``CAP_SYS_ADMIN`` in its bounding
set) or the toolkit's ``accept-nvidia-visible-devices-envvar-when-unprivileged`` is true, and only
when it runs under the nvidia runtime: containerd's default where the toolkit made it so, or any pod
that names one of the RuntimeClasses the operator creates (fact ``runtimeClasses``; the Pod Security
``restricted`` profile has no control on ``runtimeClassName``:
https://kubernetes.io/docs/concepts/security/pod-security-standards/). GPUs the device plugin
allocated arrive by CDI, the volume-mount list or ``NVIDIA_VISIBLE_DEVICES``, each read only where
the runtime's mode and gates read it (``infra.core.operator.delivery``). Not covered, as no runtime setting covers them: privileged pods, pods adding
``CAP_SYS_ADMIN`` and ``hostPath`` mounts; Pod Security ``baseline`` refuses all three, and
gpu-infra enforces it on every team namespace it labels (``TEAM_POD_SECURITY``).

Pod annotations never reach the nvidia runtime without the NRI plugin: the toolkit lists only
``container_annotations`` (set by the kubelet from the device plugin's response) on its containerd
handlers, never ``pod_annotations`` (toolkit ``pkg/config/engine/containerd/config.go``
``AddRuntime``). With the operator's NRI plugin (``cdi.nriPluginEnabled``) the toolkit injects the
CDI devices a pod's ``nvidia.cdi.k8s.io/container.<name>`` annotation names: toolkit 1.19 only for
pods in its own namespace, 1.20 for any pod (only ``management.nvidia.com/gpu`` kept to listed
namespaces), fact ``nri-annotation-scope``; gpu-infra refuses the latter.

Every value below is the chart's (vendored values), the operator's (what it sets in CDI mode, in
the order it applies env), the toolkit installer's default at the version the chart ships, the
device plugin's default, or the node image's (``Platform.node_runtime``); an unknown is reported as
unknown, never as isolated.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from infra.core.catalog.runtime_facts import (
    DEVICE_PLUGIN,
    OPERATOR,
    TOOLKIT,
    RuntimeFact,
    runtime_fact,
)
from infra.core.operator.delivery import UNKNOWN as _UNKNOWN
from infra.core.operator.delivery import Decided, Handover, nri_open, refusals
from infra.core.operator.helm_values import Setting, default_at
from infra.core.operator.model import HelmRelease
from infra.core.operator.pod_security import NamespaceGuard, guard_gaps
from infra.core.platform import NodeRuntime, Platform
from infra.core.pools import PoolHints
from infra.core.sharing import DEVICE_LIST_STRATEGY

ACCEPT_ENVVAR = "ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED"
ACCEPT_MOUNTS = "ACCEPT_NVIDIA_VISIBLE_DEVICES_AS_VOLUME_MOUNTS"
_FLAGS = {
    "accept-nvidia-visible-devices-envvar-when-unprivileged": ACCEPT_ENVVAR,
    "accept-nvidia-visible-devices-as-volume-mounts": ACCEPT_MOUNTS,
}
# Go strconv.ParseBool, which urfave/cli uses for a BoolFlag's env value.
_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})
NVIDIA_DEFAULTS = ("nvidia", "the image's")  # a default runtime that may be nvidia's


@dataclass(frozen=True, slots=True, kw_only=True)
class RuntimePath:
    """One row of the isolation table: a set of pools and what decides GPU visibility on them.

    Attributes:
        pools: the pools this row holds for.
        platform, preset, chart, driver: the combination (``preset`` ``-`` with the operator off).
        mode: ``cdi`` or ``legacy`` (the operator's ``cdi.enabled``), ``nri`` (its NRI plugin),
            ``-`` with the operator off.
        default_runtime, runtime_classes, accept_envvar, accept_mounts, device_list: the deciders.
        runtime_mode: the mode the nvidia runtime runs for the device plugin's requests.
        unrequested: which pod sees which GPUs it did not request; ``None``: none does.
        unknown: why visibility cannot be told ("" when it can).
        undelivered: why each of the device plugin's ways to hand allocated GPUs over fails
            (empty: they reach the pod, see ``infra.core.operator.delivery``).
    """

    pools: tuple[str, ...]
    platform: str
    preset: str
    chart: str
    driver: str
    mode: str
    default_runtime: Decided
    runtime_classes: Decided
    accept_envvar: Decided
    accept_mounts: Decided
    device_list: Decided
    unrequested: str | None
    runtime_mode: Decided = _UNKNOWN
    unknown: str = ""
    undelivered: tuple[str, ...] = ()

    @property
    def delivers(self) -> bool:
        return not self.undelivered

    @property
    def enforced(self) -> bool:
        return not self.unknown and self.unrequested is None

    @property
    def gap(self) -> str | None:
        """Why a GPU quota does not bind on these pools, or ``None``."""
        if self.unknown:
            return self.unknown
        return self.unrequested

    def to_json(self) -> dict[str, Any]:
        return {
            "pools": list(self.pools),
            "platform": self.platform,
            "preset": self.preset,
            "chart": self.chart,
            "driver": self.driver,
            "mode": self.mode,
            "defaultRuntime": self.default_runtime.to_json(),
            "runtimeClasses": self.runtime_classes.to_json(),
            "acceptEnvvarWhenUnprivileged": self.accept_envvar.to_json(),
            "acceptVolumeMounts": self.accept_mounts.to_json(),
            "deviceListStrategy": self.device_list.to_json(),
            "nvidiaRuntimeMode": self.runtime_mode.to_json(),
            "unrequestedGpus": self.gap or "none",
            "enforced": self.enforced,
        }


def effective(values: Mapping[str, Any], version: str, path: str) -> Any:
    """The value at dotted ``path``: the release's, else the chart's default."""
    node: Any = values
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return default_at(version, path)
        node = node[part]
    return node


def toolkit_version(values: Mapping[str, Any], version: str) -> str:
    """The toolkit tag the release runs (``v1.17.5-ubuntu20.04`` is toolkit v1.17.5)."""
    return str(effective(values, version, "toolkit.version")).split("-", 1)[0]


def _env_list(values: Mapping[str, Any], version: str, component: str) -> list[tuple[str, str]]:
    given = effective(values, version, f"{component}.env") or []
    return [(str(e.get("name")), str(e.get("value"))) for e in given if isinstance(e, Mapping)]


def container_env(
    values: Mapping[str, Any],
    version: str,
    component: str,
    reasons: Mapping[str, str],
    data_dir: Path,
) -> dict[str, tuple[str, str, str]]:
    """The env the operator gives the toolkit or device-plugin container: its CDI env and the
    release's ``<component>.env``, applied in the operator's order (fact ``<c>.user-env-last``;
    every fact of this module from the runtime facts of the catalog in ``data_dir``).

    Returns:
        name -> (value, who set it, source).
    """
    operator: list[tuple[str, str, str, str]] = []
    if effective(values, version, "cdi.enabled"):
        for f in _cdi_facts(values, version, component, data_dir):
            by = "the operator (CDI mode)"
            if component == "devicePlugin":
                operator.append(("DEVICE_LIST_STRATEGY", f.value, by, f.source))
                continue
            for pair in f.words:
                key, _, val = pair.partition("=")
                operator.append((key, val, by, f.source))
    # Who set a variable: the head of its reason ("GPU isolation", "preset k3s", ...).
    user = [
        (n, v, _who(reasons.get(f"{component}.env[{n}]")), f"{component}.env {n}={v}")
        for n, v in _env_list(values, version, component)
    ]
    last = runtime_fact(OPERATOR, version, f"{component}.user-env-last", data_dir)
    steps = [operator, user] if last is None or last.flag else [user, operator]
    return {name: (value, by, src) for step in steps for name, value, by, src in step}


def _who(reason: str | None) -> str:
    if reason is None:
        return "the chart's values"
    head = reason.split(":", 1)[0]
    return "gpu-infra (GPU isolation)" if head == "GPU isolation" else head


def _cdi_facts(
    values: Mapping[str, Any], version: str, component: str, data_dir: Path
) -> list[RuntimeFact]:
    names = ["devicePlugin.cdi-strategy"] if component == "devicePlugin" else ["toolkit.cdi-env"]
    if component == "toolkit" and effective(values, version, "cdi.default"):
        names.append("toolkit.cdi-default-env")
    return [f for n in names if (f := runtime_fact(OPERATOR, version, n, data_dir)) is not None]


def installer_flag(
    flag: str, tk: str, env: Mapping[str, tuple[str, str, str]], data_dir: Path
) -> Decided:
    """A toolkit installer flag as the installer resolves it: the first of its env variables that
    is set (urfave/cli reads them in order), else its default at toolkit ``tk``."""
    f = runtime_fact(TOOLKIT, tk, flag, data_dir)
    if f is None:
        return Decided(None, "unknown", f"no facts for nvidia-container-toolkit {tk}")
    for name in f.env.split():
        if name in env:
            value, by, _ = env[name]
            parsed = True if value in _TRUE else False if value in _FALSE else None
            return Decided(parsed, by, f"{name}={value} ({f.source})")
    return Decided(f.flag, f"toolkit {tk} default", f.source)


def runtime_classes(values: Mapping[str, Any], version: str, data_dir: Path) -> Decided:
    """The RuntimeClasses the operator creates for this release."""
    names = runtime_fact(OPERATOR, version, "runtimeClasses", data_dir)
    cdi_only = runtime_fact(OPERATOR, version, "runtimeClasses.cdi-only", data_dir)
    nri = runtime_fact(OPERATOR, version, "runtimeClasses.none-with-nri", data_dir)
    if names is None or cdi_only is None or nri is None:
        return Decided(None, "unknown", f"no facts for gpu-operator {version}")
    if nri.flag and effective(values, version, "cdi.nriPluginEnabled"):
        return Decided((), "the operator (NRI plugin)", nri.source)
    cdi = bool(effective(values, version, "cdi.enabled"))
    own = str(effective(values, version, "operator.runtimeClass") or "nvidia")
    chosen = [
        own if n == "operator.runtimeClass" else n
        for n in names.words
        if cdi or n not in cdi_only.words
    ]
    return Decided(tuple(chosen), "the operator", f"{names.source}; {cdi_only.source}")


def device_list(
    values: Mapping[str, Any],
    version: str,
    reasons: Mapping[str, str],
    node: NodeRuntime | None,
    data_dir: Path,
) -> Decided:
    """How the device plugin hands allocated GPUs over: the operator's plugin (its env, else the
    plugin's default at the version the chart ships) or the node image's own."""
    if not effective(values, version, "devicePlugin.enabled"):
        if node is None or node.device_list is None:
            return _UNKNOWN
        return Decided(node.device_list, "the node image's device plugin", node.source)
    env = container_env(values, version, "devicePlugin", reasons, data_dir)
    if "DEVICE_LIST_STRATEGY" in env:
        value, by, src = env["DEVICE_LIST_STRATEGY"]
        return Decided(value, by, src)
    plugin = str(effective(values, version, "devicePlugin.version"))
    f = runtime_fact(DEVICE_PLUGIN, plugin, "device-list-strategy", data_dir)
    if f is None:
        return Decided(None, "unknown", f"no facts for k8s-device-plugin {plugin}")
    return Decided(f.value, f"device plugin {plugin} default", f.source)


@dataclass(frozen=True, slots=True)
class Combination:
    """What a row is for: pools, platform, preset, chart and the pools' driver source (a
    ``RuntimePath``'s first fields, passed on as ``**asdict(combo)``)."""

    pools: tuple[str, ...]
    platform: str
    preset: str
    chart: str
    driver: str


def runtime_mode(tk: str, env: Mapping[str, tuple[str, str, str]], data_dir: Path) -> Decided:
    """The mode the nvidia runtime runs for device-plugin requests: the installer's
    ``NVIDIA_CONTAINER_RUNTIME_MODE`` where set, else what toolkit ``tk`` resolves ``auto`` to for
    device IDs (fact ``auto-mode``)."""
    if "NVIDIA_CONTAINER_RUNTIME_MODE" in env:
        value, by, src = env["NVIDIA_CONTAINER_RUNTIME_MODE"]
        return Decided(value, by, src)
    f = runtime_fact(TOOLKIT, tk, "auto-mode", data_dir)
    if f is None:
        return Decided(None, "unknown", f"no facts for nvidia-container-toolkit {tk}")
    return Decided(f.value, f"toolkit {tk} auto mode", f.source)


def _fact(receiver: str, version: str, name: str, data_dir: Path) -> Decided:
    f = runtime_fact(receiver, version, name, data_dir)
    if f is None:
        return Decided(None, "unknown", f"no facts for {receiver} {version}")
    return Decided(f.value, receiver, f.source)


@dataclass(frozen=True, slots=True)
class _Toolkit:
    """What the nvidia runtime of the pools' nodes does: default, gates, mode, mount forms."""

    runtime: Decided
    accept_envvar: Decided
    accept_mounts: Decided
    mode: Decided
    mount_forms: Decided
    handler: bool  # containerd has a handler a RuntimeClass may name
    nri_scope: Decided = _UNKNOWN  # which pods the toolkit's NRI plugin injects devices into


def _operator_toolkit(
    values: Mapping[str, Any],
    version: str,
    reasons: Mapping[str, str],
    node: NodeRuntime | None,
    data_dir: Path,
) -> _Toolkit:
    if effective(values, version, "toolkit.enabled"):
        tk = toolkit_version(values, version)
        env = container_env(values, version, "toolkit", reasons, data_dir)
        default = installer_flag("set-as-default", tk, env, data_dir)
        runtime = Decided(
            "nvidia" if default.value else "runc" if default.value is False else None,
            default.by,
            default.source,
        )
        return _Toolkit(
            runtime,
            installer_flag(_flag(ACCEPT_ENVVAR), tk, env, data_dir),
            installer_flag(_flag(ACCEPT_MOUNTS), tk, env, data_dir),
            runtime_mode(tk, env, data_dir),
            _fact(TOOLKIT, tk, "cdi-mount-forms", data_dir),
            True,
            _fact(TOOLKIT, tk, "nri-annotation-scope", data_dir),
        )
    if node is not None:
        return _node_toolkit(node)
    return _Toolkit(_UNKNOWN, _UNKNOWN, _UNKNOWN, _UNKNOWN, _UNKNOWN, True)


def _node_toolkit(node: NodeRuntime) -> _Toolkit:
    """The node image's own toolkit: its gates as the image sets them, its mode unknown."""
    by = "the node image"
    return _Toolkit(
        Decided(node.default_runtime, by, node.source),
        Decided(node.accept_envvar, by, node.source),
        Decided(node.accept_mounts, by, node.source),
        _UNKNOWN,
        _UNKNOWN,
        node.nvidia_handler,
    )


def operator_path(
    combo: Combination,
    values: Mapping[str, Any],
    reasons: Mapping[str, str],
    node: NodeRuntime | None,
    data_dir: Path,
) -> RuntimePath:
    """The row for pools the operator serves with the release ``values`` of chart ``combo.chart``
    (``node``: what the pools' nodes bring where the operator's toolkit is off)."""
    version = combo.chart
    nri = bool(effective(values, version, "cdi.nriPluginEnabled"))
    cdi = bool(effective(values, version, "cdi.enabled"))
    mode = "nri" if nri else "cdi" if cdi else "legacy"
    tk = _operator_toolkit(values, version, reasons, node, data_dir)
    strategy = device_list(values, version, reasons, node, data_dir)
    prefix = _fact(OPERATOR, version, "devicePlugin.cdi-annotation-prefix", data_dir)
    classes = runtime_classes(values, version, data_dir)
    return _verdict(combo, mode, classes, tk, _handover(tk, strategy, prefix, cdi))


def _handover(tk: _Toolkit, strategy: Decided, prefix: Decided, cdi: bool) -> Handover:
    return Handover(
        strategy=strategy,
        mode=tk.mode,
        mount_forms=tk.mount_forms,
        prefix=prefix,
        accept_envvar=tk.accept_envvar,
        accept_mounts=tk.accept_mounts,
        nvidia=tk.runtime.value is None or tk.runtime.value in NVIDIA_DEFAULTS,
        containerd_cdi=cdi,
    )


def node_path(combo: Combination, node: NodeRuntime | None, off_why: str) -> RuntimePath:
    """The row for pools no GPU Operator serves: the node image's runtime, or unknown."""
    if node is None:
        return RuntimePath(
            **asdict(combo),
            mode="-",
            default_runtime=_UNKNOWN,
            runtime_classes=Decided((), "no GPU Operator", ""),
            accept_envvar=_UNKNOWN,
            accept_mounts=_UNKNOWN,
            device_list=_UNKNOWN,
            unrequested=None,
            unknown=off_why,
        )
    tk = _node_toolkit(node)
    strategy = Decided(node.device_list, "the node image", node.source)
    none = Decided((), "no GPU Operator", "")
    return _verdict(combo, "-", none, tk, _handover(tk, strategy, _UNKNOWN, cdi=False))


def _verdict(
    combo: Combination, mode: str, classes: Decided, tk: _Toolkit, handover: Handover
) -> RuntimePath:
    """Who reaches the nvidia runtime, whether it honours their env var, and whether allocated
    GPUs still arrive (see the module docstring for the rule)."""
    ways: list[str] = []
    if tk.runtime.value is None or tk.runtime.value in NVIDIA_DEFAULTS:
        ways.append("any pod (nvidia is, or may be, containerd's default runtime)")
    named = tuple(classes.value or ()) if tk.handler else ()
    if named:
        ways.append("a pod naming runtimeClassName " + " or ".join(named))
    unknown = ""
    annotated = nri_open(tk.nri_scope) if mode == "nri" else None
    if mode == "nri" and tk.nri_scope.value is None:
        unknown = f"no facts on which pods the toolkit's NRI plugin serves ({tk.nri_scope.source})"
    elif classes.value is None:
        unknown = f"no facts on the RuntimeClasses of gpu-operator {combo.chart}"
    elif ways and tk.accept_envvar.value is None:
        where = tk.accept_envvar.source or "the hosts are the user's own"
        unknown = (
            "nothing tells whether the nodes' toolkit honours NVIDIA_VISIBLE_DEVICES from "
            f"unprivileged containers ({where}): a pod without a GPU request and with "
            "NVIDIA_VISIBLE_DEVICES=all may see every GPU of its node"
        )
    unrequested = annotated
    if ways and tk.accept_envvar.value:
        unrequested = "; ".join(
            x
            for x in (
                f"{' or '.join(ways)}, without a GPU request and with NVIDIA_VISIBLE_DEVICES=all "
                "(every CUDA base image), sees every GPU of its node",
                annotated,
            )
            if x
        )
    return RuntimePath(
        **asdict(combo),
        mode=mode,
        default_runtime=tk.runtime,
        runtime_classes=classes,
        accept_envvar=tk.accept_envvar,
        accept_mounts=tk.accept_mounts,
        device_list=handover.strategy,
        runtime_mode=tk.mode,
        unrequested=unrequested,
        unknown=unknown,
        undelivered=tuple(refusals(handover)),
    )


def _flag(env: str) -> str:
    return next(k for k, v in _FLAGS.items() if v == env)


# --------------------------------------------------------------------------------------------------
# What gpu-infra sends to close the path


def isolation_settings(
    values: Mapping[str, Any], version: str, reasons: Mapping[str, str], data_dir: Path
) -> list[Setting]:
    """The settings that close the env-var path where the operator installs the toolkit.

    ``values``/``reasons``: the release as planned so far. Always
    ``ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED=false`` (the installer's default is
    true at every recorded toolkit version, and the operator's RuntimeClass reaches the runtime):
    the operator's operands are privileged and keep their GPUs; its device-plugin validator is not
    privileged but requests the GPU resource (gpu-operator
    ``validator/manifests/plugin-workload-validation.yaml``), so it gets its GPU the way workloads
    do and checks exactly that path. Then, only where the device
    plugin's strategy as planned would no longer deliver with the env var refused (nvidia is
    containerd's default and its runtime mode reads neither the plugin's annotations nor CRI CDI
    devices: ``infra.core.operator.delivery``), allocated GPUs come as the volume-mount list,
    accepted by the toolkit and sent by the device plugin (the RKE2 docs' v25.3 setup,
    rancher/rke2-docs docs/add-ons/gpu_operators.md: "required to properly isolate GPU
    resources"). Where the runtime runs CDI mode (GKE's v25.3 ``cdi.default``), the operator's own
    CDI strategy is kept: toolkit 1.17 in CDI mode drops plain-ID mounts. A variable the stack
    sets itself is left as it is (and judged by the table).
    """
    if not effective(values, version, "toolkit.enabled"):
        return []
    tk = toolkit_version(values, version)
    env = container_env(values, version, "toolkit", reasons, data_dir)
    # What the stack itself sets (a chart default item, such as v25.3.0's
    # devicePlugin.env DEVICE_LIST_STRATEGY=envvar, is replaced, not kept).
    given = {n for n, _ in _env_list(values, version, "toolkit") if f"toolkit.env[{n}]" in reasons}
    out: list[Setting] = []
    default = installer_flag(_flag(ACCEPT_ENVVAR), tk, env, data_dir)
    if ACCEPT_ENVVAR not in given:
        out.append(
            Setting(
                f"toolkit.env[{ACCEPT_ENVVAR}]",
                "false",
                f"GPU isolation: the installer's default is {str(default.value).lower()} "
                f"({default.source}) and a pod naming the operator's RuntimeClass reaches the "
                "nvidia runtime; the operator's operands are privileged, and its device-plugin "
                "validator requests its GPU like any workload; allocated GPUs arrive by CDI or "
                "volume mounts",
            )
        )
    nvidia = installer_flag("set-as-default", tk, env, data_dir)
    if nvidia.value is False or not _needs_mounts(values, version, reasons, data_dir):
        return out
    why = (
        f"GPU isolation: nvidia is containerd's default runtime ({nvidia.source}) and runs "
        f"{runtime_mode(tk, env, data_dir).value} mode, so allocated GPUs come as the device plugin's "
        "volume-mount list (rke2-docs gpu_operators.md v25.3: required to isolate GPU resources)"
    )
    if ACCEPT_MOUNTS not in given:
        out.append(Setting(f"toolkit.env[{ACCEPT_MOUNTS}]", "true", why))
    plugin = {
        n
        for n, _ in _env_list(values, version, "devicePlugin")
        if f"devicePlugin.env[{n}]" in reasons
    }
    if effective(values, version, "devicePlugin.enabled") and "DEVICE_LIST_STRATEGY" not in plugin:
        out.append(Setting("devicePlugin.env[DEVICE_LIST_STRATEGY]", DEVICE_LIST_STRATEGY, why))
    return out


def _needs_mounts(
    values: Mapping[str, Any], version: str, reasons: Mapping[str, str], data_dir: Path
) -> bool:
    """Whether the plugin's strategy as planned would hand nothing over once the env var is
    refused (and volume mounts would)."""
    tk = _operator_toolkit(values, version, reasons, None, data_dir)
    refused = Decided(False, "GPU isolation", "")
    prefix = _fact(OPERATOR, version, "devicePlugin.cdi-annotation-prefix", data_dir)
    cdi = bool(effective(values, version, "cdi.enabled"))
    strategy = device_list(values, version, reasons, None, data_dir)
    plain = replace(tk, accept_envvar=refused)
    if not refusals(_handover(plain, strategy, prefix, cdi)):
        return False
    mounts = replace(plain, accept_mounts=Decided(True, "GPU isolation", ""))
    volume = Decided(DEVICE_LIST_STRATEGY, "GPU isolation", "")
    return not refusals(_handover(mounts, volume, prefix, cdi))


# Nodes of the user's own hosts that no operator serves: nothing gpu-infra plans decides it. k3s
# registers the nvidia runtimes itself when it finds nvidia-container-runtime on PATH or under
# /usr/local/nvidia/toolkit (k3s pkg/agent/containerd/nvidia.go findNvidiaContainerRuntimes) and
# ships RuntimeClass nvidia (k3s manifests/runtimes.yaml), so there the host toolkit is reachable
# even where nvidia is not the default runtime.
OFF_WHY = (
    "the GPU Operator is off, so gpu-infra configures no container runtime on these nodes; if "
    "nvidia is their default runtime, or a pod names a RuntimeClass that reaches it (k3s ships "
    "RuntimeClass nvidia and registers the host's nvidia-container-runtime itself), and the "
    "toolkit accepts NVIDIA_VISIBLE_DEVICES from unprivileged containers (its default), a CUDA "
    "image there sees every GPU of its node"
)


def runtime_paths(
    pools: Sequence[PoolHints],
    platform: Platform,
    release: HelmRelease | None,
    preset: str | None,
) -> tuple[RuntimePath, ...]:
    """The isolation table of a stack: one row per set of pools that share a runtime path (the
    runtime facts of the catalog ``platform`` was planned with)."""
    rows: list[RuntimePath] = []
    for h in pools:
        node = platform.node_runtime(h)
        if release is None:
            combo = Combination((h.name,), platform.name, "-", "-", h.driver)
            rows.append(node_path(combo, node, OFF_WHY))
        else:
            combo = Combination((h.name,), platform.name, preset or "-", release.version, h.driver)
            data = platform.catalog.data_dir
            rows.append(operator_path(combo, release.values, release.reasons, node, data))
    if not pools and release is None and platform.features.own_hardware:
        rows.append(node_path(Combination((), platform.name, "-", "-", "-"), None, OFF_WHY))
    merged: dict[RuntimePath, tuple[str, ...]] = {}
    for r in rows:
        key = replace(r, pools=())
        merged[key] = (*merged.get(key, ()), *r.pools)
    return tuple(replace(k, pools=v) for k, v in merged.items())


def summary(paths: Sequence[RuntimePath], guards: Sequence[NamespaceGuard] = ()) -> dict[str, Any]:
    """The ``gpuIsolation`` stack output: every row and team namespace, and whether all hold."""
    held = all(p.enforced for p in paths) and not guard_gaps(guards)
    return {
        "enforced": held,
        "paths": [p.to_json() for p in paths],
        "namespaces": [g.to_json() for g in guards],
    }


def gap_text(paths: Sequence[RuntimePath]) -> str | None:
    """One line naming, per row that does not hold, its pools and which pod gets what."""
    gaps = [(p.pools, p.gap) for p in paths if p.gap]
    if not gaps:
        return None
    return "; ".join(f"{', '.join(pools) or 'GPU nodes'}: {why}" for pools, why in gaps)
