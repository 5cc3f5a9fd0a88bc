"""GPU Operator planning: preset, Helm values with reasons, sharing/MIG, tolerations, GPU namespaces,
smoke tests and the per-pool hints workloads need (issue 4).

Everything is decided here from the stack config and the platform plans' ``PoolHints``; the
component (``infra.components.gpu_operator``) only maps the plan onto resources. Facts come from
reference gpu-operator.md (section numbers below) and the vendored chart values.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

import yaml

from infra.core.catalog import DATA_DIR, read_rows
from infra.core.config import StackConfig
from infra.core.config_base import PoolBase
from infra.core.config_kubernetes import Distribution, KubernetesPoolSpec
from infra.core.config_operator import EksPreset, GkePreset, GpuOperatorSpec
from infra.core.errors import Issues, join_path
from infra.core.helm_values import (
    Setting,
    chart_defaults,
    default_at,
    is_cdi_era,
    merge_settings,
    render_values_yaml,
    unknown_paths,
    vendored_versions,
)
from infra.core.pools import GPU_RESOURCE, PoolHints, Taint

Manifest = dict[str, Any]

# Chart coordinates (reference gpu-operator.md §1): the chart name is bare; "nvidia/gpu-operator"
# plus a repo URL fails with "chart not found" (NVIDIA/gpu-operator#538).
NVIDIA_HELM_REPO = "https://helm.ngc.nvidia.com/nvidia"
CHART = "gpu-operator"
RELEASE_NAME = "gpu-operator"

MANAGED_BY = {"app.kubernetes.io/managed-by": "gpu-infra"}
# NFD worker pods (hostPath mounts) come straight from the chart, before the operator could relabel
# the namespace (psa.enabled), so the namespace is created privileged up front (§6.4).
PRIVILEGED_PSA = {
    f"pod-security.kubernetes.io/{mode}": "privileged" for mode in ("enforce", "audit", "warn")
}

# Node labels the operator's device plugin and MIG manager read (§5.2, §5.3).
DEVICE_PLUGIN_CONFIG_LABEL = "nvidia.com/device-plugin.config"
MIG_CONFIG_LABEL = "nvidia.com/mig.config"
DEVICE_PLUGIN_CONFIGMAP = "gpu-infra-device-plugin-config"

# GKE admits system-node-critical/system-cluster-critical pods outside kube-system only under a
# quota scoped to those classes (§4.1; NVIDIA cloud-native-docs google-gke-gpu-operator-quota.yaml).
GKE_CRITICAL_QUOTA = "gpu-operator-quota"
GKE_CRITICAL_CLASSES = ("system-node-critical", "system-cluster-critical")
# GKE: the toolkit's `containerd config dump` rewrites GKE >= 1.33's CNI bin_dir; read the file
# instead (NVIDIA/nvidia-container-toolkit#1222, NVIDIA/gpu-operator#1577).
GKE_RUNTIME_CONFIG_FILE_FROM = (1, 33)
GKE_DRIVER_DIR = "/home/kubernetes/bin/nvidia"
# Labels GKE and EKS put on GPU nodes, for workloads' node selectors (gke.md §8, eks.md §2.4).
GKE_ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"
EKS_ACCELERATOR_LABEL = "k8s.amazonaws.com/accelerator"

SMOKE_TEST_TTL_SECONDS = 3600
# Scale-from-zero, image pull and (operator-managed) driver build take minutes; fail after 30.
SMOKE_TEST_DEADLINE_SECONDS = 1800

# NVIDIA's MIG profiles per GPU model: the one source for operator MIG (every platform). GKE's own
# partitioning (gpu.partitionSize) keeps GKE's shorter list in gcp_accelerator_models.csv.
MIG_PROFILES_CSV = "nvidia_mig_profiles.csv"

_PLATFORM_PRESETS: dict[str, tuple[str, ...]] = {
    "gke": get_args(GkePreset),
    "eks": get_args(EksPreset),
    "kubernetes": get_args(Distribution),
}
# Presets whose device plugin / MIG manager is the node image's, not the operator's (§4.4).
_NO_OPERATOR_DEVICE_PLUGIN = ("eks-bottlerocket",)
_NO_OPERATOR_MIG_MANAGER = ("eks-bottlerocket",)
_NO_OPERATOR_TOOLKIT = ("eks-al2023", "eks-bottlerocket")
_MIG_CONFIGS_FIXED = ("all-disabled", "all-enabled", "all-balanced")
# Under strategy mixed these give no single per-pool resource name (none, or several sizes).
_MIG_CONFIGS_NOT_MIXED = ("all-enabled", "all-balanced")

PoolSpecs = Mapping[str, tuple[int, PoolBase]]
# GKE binds a pool with `fallback` alternatives, and its `<pool>-fb<N>` pools planned from them, to
# a ComputeClass named after the pool (infra.core.gke); the alternatives share that gpuPools entry.
GKE_COMPUTE_CLASS_LABEL = "cloud.google.com/compute-class"


@dataclass(frozen=True, slots=True, kw_only=True)
class HelmRelease:
    """The ``gpu-operator`` Helm release.

    Attributes:
        name: release name.
        chart: chart name in the repository.
        repository: Helm repository URL.
        version: pinned chart version (with ``v``).
        namespace: namespace the release installs into (created separately).
        values: overrides only (nested Helm values).
        reasons: one line per override: dotted path (or ``toolkit.env[NAME]``) -> why.
        timeout: Helm timeout in seconds.
    """

    name: str = RELEASE_NAME
    chart: str = CHART
    repository: str = NVIDIA_HELM_REPO
    version: str
    namespace: str
    values: Mapping[str, Any]
    reasons: Mapping[str, str]
    timeout: int


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeLabels:
    """Labels gpu-infra puts on existing nodes (platform kubernetes only; clouds label pools)."""

    pool: str
    nodes: tuple[str, ...]
    labels: Mapping[str, str]


@dataclass(frozen=True, slots=True, kw_only=True)
class OperatorPlan:
    """The GPU Operator release and the in-cluster GPU setup around it.

    Attributes:
        namespace: the operator's namespace.
        preset: the platform preset (``None`` when the operator is disabled).
        release: the Helm release, or ``None`` when the operator is disabled.
        namespace_object: the operator namespace manifest (privileged pod security).
        before_release: objects the operator's pods need at install (GKE critical-pod quota,
            device-plugin config).
        after_release: objects that need the operator (GPU namespaces and quotas, smoke tests).
        node_labels: labels to patch onto existing nodes (platform kubernetes).
        scheduling: per pool, what a GPU workload needs to land there (stack output).
        jupyterhub_profiles: per pool, a ready JupyterHub ``profileList`` entry (stack output).
    """

    namespace: str
    preset: str | None
    release: HelmRelease | None
    namespace_object: Manifest | None
    before_release: tuple[Manifest, ...] = ()
    after_release: tuple[Manifest, ...] = ()
    node_labels: tuple[NodeLabels, ...] = ()
    scheduling: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    jupyterhub_profiles: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


# --------------------------------------------------------------------------------------------------
# Entry point


def plan_operator(
    config: StackConfig, pools: Sequence[PoolHints], issues: Issues
) -> OperatorPlan | None:
    """Decide the GPU Operator install and the workload helpers around it.

    Chooses the preset, builds the Helm values (preset, toolkit env, sharing, MIG, tolerations,
    then the user's ``gpuOperator.values``, each with its reason), the namespace and the objects
    the release needs before and after it, and per pool the scheduling hints, JupyterHub profile
    and opt-in smoke-test Job.

    Args:
        config: the parsed stack.
        pools: the platform planner's ``PoolHints``, one per ``config.pools`` entry, same names.
        issues: collects config errors (key path, value, rule); nothing is raised here.

    Returns:
        The plan (``release`` is ``None`` when the operator is disabled), or ``None`` when there is
        nothing to do (operator disabled, no pools, no GPU namespaces) or the chart version or
        preset is unusable (``issues`` says why).
    """
    spec = config.operator
    specs: PoolSpecs = {p.name: (i, p) for i, p in enumerate(config.pools)}
    before = issues.count()
    _check_namespaces(config, issues)
    if not spec.enabled:
        _reject_operator_features(pools, specs, issues)
        if not pools and not config.namespaces:
            return None
        return _assemble(config, pools, specs, None, None, "default")

    if spec.version not in vendored_versions():
        issues.add(
            "gpuOperator.version",
            f"{spec.version!r} is not a chart version gpu-infra has values for (its keys are "
            f"checked against them); known: {', '.join(vendored_versions())}",
        )
        return None
    preset = choose_preset(config, pools, specs, issues)
    if preset is None:
        return None
    if (
        preset.startswith("gke-")
        and not is_cdi_era(spec.version)
        and _gke_needs_config_file(config)
    ):
        issues.add(
            "gpuOperator.version",
            f"{spec.version} ships container toolkit 1.17, whose `containerd config dump` breaks "
            "GKE >= 1.33 nodes (nvidia-container-toolkit#1222) and which cannot read "
            "RUNTIME_CONFIG_SOURCE=file; use v25.10.0 or later, or pin cluster.minMasterVersion "
            "below 1.33",
        )
    settings = [
        *preset_settings(preset, spec.version, config),
        *_toolkit_settings(spec, preset, issues),
        *_sharing_settings(preset, pools, specs, issues),
        *_mig_settings(config, preset, pools, specs, issues),
        *_toleration_settings(spec.version, pools),
    ]
    user = _user_settings(spec, settings, issues)
    values, reasons = merge_settings([*settings, *user], spec.version)
    # The user's keys were checked above; anything left is a key gpu-infra sets for this preset.
    for path in unknown_paths(values, spec.version):
        issues.add(
            "gpuOperator.preset",
            f"preset {preset!r} sets {path!r}, which is not a key of the gpu-operator "
            f"{spec.version} chart values; pick another gpuOperator.version",
        )
    release = HelmRelease(
        version=spec.version,
        namespace=spec.namespace,
        values=values,
        reasons=reasons,
        timeout=spec.timeout,
    )
    if issues.count() == before:  # a rejected sharing/MIG block needs no label hint on top
        _check_pool_labels(config, pools, specs, issues)
    return _assemble(config, pools, specs, release, preset, spec.namespace)


def operator_node_labels(pool: PoolBase) -> dict[str, str]:
    """Node labels a pool needs for the operator's per-pool config (time-slicing, MIG).

    The GKE and EKS planners merge these into the pool's node labels (and ``PoolHints.labels``);
    the kubernetes planner does so for pools whose ``nodes`` gpu-infra labels. ``plan_operator``
    checks they are there.

    Args:
        pool: any platform's pool spec.
    """
    labels: dict[str, str] = {}
    if pool.sharing is not None:
        labels[DEVICE_PLUGIN_CONFIG_LABEL] = sharing_config_key(pool.sharing.replicas)
    if pool.mig is not None:
        labels[MIG_CONFIG_LABEL] = pool.mig.config
    return labels


def nvidia_mig_profiles(gpu: str, data_dir: Path = DATA_DIR) -> tuple[str, ...]:
    """NVIDIA's MIG profiles (smallest first) of a GPU, by model or alias; ``()`` if it has no MIG.

    Accepts the names people, GKE and EKS use (``A100-40GB``, ``nvidia-tesla-a100``, ``A100``).
    Source: ``nvidia_mig_profiles.csv`` (NVIDIA MIG user guide).
    """
    return _mig_table(data_dir).get(gpu.strip().lower(), ())


@functools.cache
def _mig_table(data_dir: Path) -> dict[str, tuple[str, ...]]:
    table: dict[str, tuple[str, ...]] = {}
    for row in read_rows(MIG_PROFILES_CSV, data_dir):
        for alias in [row["gpu_model"], *row["aliases"].split(";")]:
            table[alias.strip().lower()] = tuple(row["profiles"].split())
    return table


def pool_mig_profiles(h: PoolHints) -> tuple[str, ...]:
    """NVIDIA's MIG profiles of the pool's GPU (looked up by model, then by the cloud's name)."""
    return nvidia_mig_profiles(h.gpu_model) or nvidia_mig_profiles(h.gpu_type)


def sharing_config_key(replicas: int) -> str:
    """The device-plugin ConfigMap key for time-slicing with ``replicas`` per GPU."""
    return f"time-slicing-{replicas}"


def render_helm_values(plan: Any) -> str:
    """The operator's Helm values as YAML with the reasons as comments (``--helm-values``).

    Args:
        plan: an ``OperatorPlan``, or an ``infra.core.plan.Plan`` (its ``.operator`` is used).

    Returns:
        YAML text; a comment line saying so when the stack does not install the operator.
    """
    op: OperatorPlan | None = plan if isinstance(plan, OperatorPlan) else plan.operator
    if op is None or op.release is None:
        return "# gpuOperator.enabled is false: no GPU Operator values for this stack\n{}\n"
    r = op.release
    header = [
        f"gpu-operator {r.version} from {r.repository} (preset {op.preset}), namespace {r.namespace}",
        f"helm upgrade --install {r.name} {r.chart} --repo {r.repository} --version {r.version} "
        f"-n {r.namespace} -f values.yaml",
    ]
    if any(m["kind"] == "ConfigMap" for m in op.before_release):
        header.append(
            f"needs ConfigMap {DEVICE_PLUGIN_CONFIGMAP} in {r.namespace} "
            "(python -m infra.plan --json lists it)"
        )
    return render_values_yaml(r.values, r.reasons, header)


# --------------------------------------------------------------------------------------------------
# Preset choice and preset values


def choose_preset(
    config: StackConfig, pools: Sequence[PoolHints], specs: PoolSpecs, issues: Issues
) -> str | None:
    """The preset: ``gpuOperator.preset`` if given, else derived; checked against every pool."""
    allowed = _PLATFORM_PRESETS[config.platform]
    given = config.operator.preset
    if given is not None and given not in allowed:
        issues.add(
            "gpuOperator.preset",
            f"{given!r} is not a preset for platform {config.platform}; "
            f"use one of: {', '.join(allowed)}",
        )
        return None
    preset = given or _derive_preset(config, pools)
    ok = True
    for h in pools:
        i, pool = _spec_of(specs, h)
        problem = _pool_contradicts(preset, h)
        if problem is None:
            continue
        ok = False
        if given is not None:
            issues.add("gpuOperator.preset", f"{given!r} {problem} (gpuPools[{i}] {h.name})")
        else:
            issues.add(
                _driver_path(config.platform, i, pool),
                f"{problem}; one operator install serves every pool, so pools must agree "
                f"(preset {preset!r} chosen from gpuPools[0])",
            )
    if config.platform == "kubernetes" and pools:
        first = pools[0].driver
        for h in pools[1:]:
            if h.driver != first:
                ok = False
                i, pool = _spec_of(specs, h)
                issues.add(
                    _driver_path(config.platform, i, pool),
                    f"{h.driver!r} differs from gpuPools[0]'s {first!r}; one operator install "
                    "either installs the driver on every GPU node or on none",
                )
    return preset if ok else None


def _derive_preset(config: StackConfig, pools: Sequence[PoolHints]) -> str:
    first = pools[0] if pools else None
    if config.platform == "gke":
        return (
            "gke-operator-driver" if first and first.driver == "operator" else "gke-google-driver"
        )
    if config.platform == "eks":
        image = first.node_image.upper() if first else ""
        return "eks-bottlerocket" if image.startswith("BOTTLEROCKET") else "eks-al2023"
    return config.cluster.distribution


def _pool_contradicts(preset: str, h: PoolHints) -> str | None:
    """Why ``preset`` cannot serve pool ``h``, or ``None``."""
    image = h.node_image.upper()
    if preset == "gke-google-driver" and h.driver not in ("gke-default", "gke-latest"):
        return f"expects GKE to install the driver, but the pool's driver mode is {h.driver!r}"
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


def _spec_of(specs: PoolSpecs, h: PoolHints) -> tuple[int, PoolBase]:
    """The ``gpuPools`` entry (index, spec) behind ``h``: its own, or a GKE fallback pool's main."""
    own = specs.get(h.name)
    return own if own is not None else specs[h.labels[GKE_COMPUTE_CLASS_LABEL]]


def _driver_path(platform: str, i: int, pool: PoolBase) -> str:
    """The key that decides where a pool's driver comes from."""
    if platform == "gke":
        return join_path("gpuPools", i, "gpu", "driver")
    if platform == "kubernetes":
        return join_path("gpuPools", i, "driver")
    # EKS: the AMI type, given explicitly or derived from amiFamily.
    key = "amiType" if getattr(pool, "ami_type", None) is not None else "amiFamily"
    return join_path("gpuPools", i, key)


def preset_settings(preset: str, version: str, config: StackConfig) -> list[Setting]:
    """The values a preset overrides (reference gpu-operator.md §3.4, §4), for chart ``version``."""
    cdi = is_cdi_era(version)
    out: list[Setting] = []

    def add(path: str, value: Any, why: str) -> None:
        out.append(Setting(path, value, f"preset {preset}: {why}"))

    if preset == "gke-google-driver":
        add("driver.enabled", False, "GKE installs the driver (gpu_driver_version DEFAULT/LATEST)")
        add("hostPaths.driverInstallDir", GKE_DRIVER_DIR, "where GKE's installer puts the driver")
        add("toolkit.installDir", GKE_DRIVER_DIR, "COS root filesystem (/usr/local) is read-only")
        add("cdi.enabled", True, "NVIDIA's GKE install command enables CDI")
        if not cdi:
            add("cdi.default", True, "NVIDIA's GKE install command (25.3 charts) sets it")
    if preset in ("gke-google-driver", "gke-operator-driver") and _gke_needs_config_file(config):
        pinned = getattr(config.cluster, "min_master_version", None)
        add(
            "toolkit.env[RUNTIME_CONFIG_SOURCE]",
            "file",
            ("GKE >= 1.33" if pinned else "GKE version unpinned (channels are >= 1.33)")
            + ": `containerd config dump` rewrites GKE's CNI bin_dir (nvidia-container-toolkit#1222)",
        )
    if preset in ("eks-al2023", "eks-bottlerocket"):
        add(
            "driver.enabled",
            False,
            "the EKS NVIDIA AMI ships the driver (AWS ml-eks-optimized-ami)",
        )
        add("toolkit.enabled", False, "the EKS NVIDIA AMI ships the container toolkit")
    if preset == "eks-bottlerocket":
        add("devicePlugin.enabled", False, "Bottlerocket NVIDIA runs its own device plugin")
        add("migManager.enabled", False, "Bottlerocket NVIDIA ships the MIG manager")
    if preset in ("k3s", "rke2"):
        add(
            "toolkit.env[CONTAINERD_SOCKET]",
            "/run/k3s/containerd/containerd.sock",
            f"{preset}'s embedded containerd socket",
        )
    if preset == "k3s" and not cdi:
        add(
            "toolkit.env[CONTAINERD_CONFIG]",
            "/var/lib/rancher/k3s/agent/etc/containerd/config.toml",
            "k3s's generated containerd config (toolkit 1.17 edits it; k3s re-detects on restart)",
        )
    if preset == "rke2" and not cdi:
        why = "RKE2 docs (25.3): only device-plugin-allocated GPUs reach unprivileged pods"
        add("toolkit.env[ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED]", "false", why)
        add("toolkit.env[ACCEPT_NVIDIA_VISIBLE_DEVICES_AS_VOLUME_MOUNTS]", "true", why)
        add("devicePlugin.env[DEVICE_LIST_STRATEGY]", "volume-mounts", why)
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
    if preset in _PLATFORM_PRESETS["kubernetes"] and _all_preinstalled(config):
        add("driver.enabled", False, "every pool's hosts have the driver preinstalled")
    return out


def _gke_needs_config_file(config: StackConfig) -> bool:
    """GKE >= 1.33, or an unpinned version (every release channel is >= 1.33 as of 2026-11)."""
    version = getattr(config.cluster, "min_master_version", None)
    if not version:
        return True
    m = re.match(r"^(\d+)\.(\d+)", str(version))
    return m is None or (int(m.group(1)), int(m.group(2))) >= GKE_RUNTIME_CONFIG_FILE_FROM


def _all_preinstalled(config: StackConfig) -> bool:
    drivers = [getattr(p, "driver", "operator") for p in config.pools]
    return bool(drivers) and all(d == "preinstalled" for d in drivers)


# --------------------------------------------------------------------------------------------------
# Toolkit env (seed 003) mapped onto what the pinned chart honours (§3.3)


def _toolkit_settings(spec: GpuOperatorSpec, preset: str, issues: Issues) -> list[Setting]:
    if not spec.toolkit_env:
        return []
    if preset in _NO_OPERATOR_TOOLKIT:
        issues.add(
            "gpuOperator.toolkitEnv",
            f"preset {preset!r} disables the operator's container toolkit (the node image ships "
            "it), so toolkit env would have no effect; remove it",
        )
        return []
    cdi = is_cdi_era(spec.version)
    out: list[Setting] = []
    for name, raw in spec.toolkit_env.items():
        path = f"gpuOperator.toolkitEnv.{name}"
        value = _env_string(raw)
        if name == "CONTAINERD_RUNTIME_CLASS":
            # The operator overwrites this variable with operator.runtimeClass after applying user
            # env (object_controls.go transformForRuntime), so the class is set there.
            out.append(
                Setting(
                    "operator.runtimeClass",
                    value,
                    "from toolkitEnv CONTAINERD_RUNTIME_CLASS: the operator overwrites that "
                    "variable with operator.runtimeClass (also the RuntimeClass name)",
                )
            )
        elif name == "CONTAINERD_SET_AS_DEFAULT" and cdi:
            if value not in ("true", "false"):
                issues.add(path, f"{value!r} must be 'true' or 'false'")
                continue
            out.append(
                Setting(
                    "toolkit.env[NVIDIA_RUNTIME_SET_AS_DEFAULT]",
                    value,
                    "from toolkitEnv CONTAINERD_SET_AS_DEFAULT: with CDI (>= v25.10) the operator "
                    "sets NVIDIA_RUNTIME_SET_AS_DEFAULT=false, which the toolkit reads first",
                )
            )
        elif name == "NVIDIA_RUNTIME_NAME":
            issues.add(
                path,
                "would rename the containerd handler away from the RuntimeClass the operator "
                "creates; set CONTAINERD_RUNTIME_CLASS (mapped to operator.runtimeClass) instead",
            )
        elif name in ("RUNTIME_CONFIG_SOURCE", "RUNTIME_DROP_IN_CONFIG") and not cdi:
            issues.add(
                path,
                f"{name} needs container toolkit >= 1.18 (chart >= v25.10.0); "
                f"gpuOperator.version {spec.version} ships 1.17",
            )
        elif name in ("RUNTIME_CONFIG", "RUNTIME_SOCKET"):
            issues.add(
                path,
                f"{name} is generated by the operator (container path); give the host path as "
                f"{name.replace('RUNTIME_', 'CONTAINERD_')}",
            )
        else:
            out.append(Setting(f"toolkit.env[{name}]", value, f"gpuOperator.toolkitEnv {name}"))
    return out


def _env_string(raw: str | bool | int) -> str:
    # The ClusterPolicy CRD types env values as strings: True must become "true", not "True".
    if isinstance(raw, bool):
        return "true" if raw else "false"
    return str(raw)


# --------------------------------------------------------------------------------------------------
# Sharing and MIG (§5)


def _sharing_settings(
    preset: str, pools: Sequence[PoolHints], specs: PoolSpecs, issues: Issues
) -> list[Setting]:
    shared = False
    for h in pools:
        i, pool = _spec_of(specs, h)
        if pool.sharing is None:
            continue
        path = join_path("gpuPools", i, "sharing")
        if h.gke_sharing:
            issues.add(
                path,
                "GKE's own GPU sharing or partitioning (gpu.sharing / gpu.partitionSize) is on for "
                "this pool; use one of the two, not both",
            )
        elif preset in _NO_OPERATOR_DEVICE_PLUGIN:
            issues.add(
                path,
                f"preset {preset!r} leaves the device plugin to the node image; configure "
                "time-slicing there (Bottlerocket settings.kubelet-device-plugins.nvidia)",
            )
        elif pool.mig is not None and pool.mig.strategy == "mixed":
            issues.add(
                path,
                "time-slicing with MIG strategy 'mixed' needs per-profile resource names; use MIG "
                "strategy 'single' or drop sharing",
            )
        else:
            shared = True
    if not shared:
        return []
    why = "per-pool time-slicing configs; nodes pick one by label nvidia.com/device-plugin.config"
    return [Setting("devicePlugin.config.name", DEVICE_PLUGIN_CONFIGMAP, why)]


def sharing_config_map(config: StackConfig, namespace: str) -> Manifest | None:
    """The device-plugin ConfigMap (``version: v1``, ``sharing.timeSlicing``), one key per replica
    count; ``None`` when no pool shares GPUs."""
    replicas = sorted({p.sharing.replicas for p in config.pools if p.sharing is not None})
    if not replicas:
        return None
    data = {
        sharing_config_key(n): yaml.safe_dump(
            {
                "version": "v1",
                "sharing": {"timeSlicing": {"resources": [{"name": GPU_RESOURCE, "replicas": n}]}},
            },
            sort_keys=False,
        )
        for n in replicas
    }
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": DEVICE_PLUGIN_CONFIGMAP, "namespace": namespace, "labels": MANAGED_BY},
        "data": data,
    }


def _mig_settings(
    config: StackConfig,
    preset: str,
    pools: Sequence[PoolHints],
    specs: PoolSpecs,
    issues: Issues,
) -> list[Setting]:
    strategy: str | None = None
    for h in pools:
        i, pool = _spec_of(specs, h)
        if pool.mig is None:
            continue
        path = join_path("gpuPools", i, "mig")
        profiles = pool_mig_profiles(h)
        if not profiles:
            issues.add(
                path,
                f"{h.gpu_model} ({h.gpu_type}) does not support MIG; MIG needs an A30, A100, H100, "
                "H200 or B200",
            )
            continue
        if h.gke_sharing:
            issues.add(
                path,
                "GKE's own partitioning or sharing (gpu.partitionSize / gpu.sharing) is on for this "
                "pool; use one of the two, not both",
            )
            continue
        if preset in _NO_OPERATOR_MIG_MANAGER:
            issues.add(path, f"preset {preset!r} leaves MIG to the node image's MIG manager")
            continue
        valid = (*_MIG_CONFIGS_FIXED, *(f"all-{p}" for p in profiles))
        if pool.mig.config not in valid:
            issues.add(
                join_path("gpuPools", i, "mig", "config"),
                f"{pool.mig.config!r} is not a MIG config for {h.gpu_model}; use one of: "
                f"{', '.join(valid)}",
            )
        elif pool.mig.strategy == "mixed" and pool.mig.config in _MIG_CONFIGS_NOT_MIXED:
            issues.add(
                join_path("gpuPools", i, "mig", "config"),
                f"{pool.mig.config!r} with strategy 'mixed' gives the pool no single resource name "
                "(mixed advertises nvidia.com/mig-<profile> per profile); use all-<profile> "
                "(e.g. all-" + profiles[0] + ") or strategy 'single'",
            )
        if strategy is not None and pool.mig.strategy != strategy:
            issues.add(
                join_path("gpuPools", i, "mig", "strategy"),
                f"{pool.mig.strategy!r} differs from an earlier pool's {strategy!r}; the operator "
                "has one cluster-wide MIG strategy",
            )
        strategy = strategy or pool.mig.strategy
    if strategy is None:
        return []
    out = [Setting("mig.strategy", strategy, "MIG strategy of the MIG pools (cluster-wide)")]
    if config.platform in ("gke", "eks"):
        out.append(
            Setting(
                "migManager.env[WITH_REBOOT]",
                "true",
                "cloud VMs need a reboot to apply MIG geometry (NVIDIA gpu-operator-mig docs)",
            )
        )
    return out


def _reject_operator_features(pools: Sequence[PoolHints], specs: PoolSpecs, issues: Issues) -> None:
    for h in pools:
        i, pool = _spec_of(specs, h)
        for key in ("sharing", "mig"):
            if getattr(pool, key) is not None:
                issues.add(
                    join_path("gpuPools", i, key),
                    f"{key} is done by the GPU Operator, but gpuOperator.enabled is false",
                )


# --------------------------------------------------------------------------------------------------
# Tolerations: operands and the NFD worker must reach every GPU node (§2, §7 item 4)


def _toleration_settings(version: str, pools: Sequence[PoolHints]) -> list[Setting]:
    settings: list[Setting] = []
    for path, who in (
        ("daemonsets.tolerations", "operand DaemonSets"),
        ("node-feature-discovery.worker.tolerations", "the NFD worker"),
    ):
        base = default_at(version, path)
        tolerations: list[dict[str, str]] = list(base) if isinstance(base, list) else []
        added: set[str] = set()
        for t in (t for h in pools for t in h.taints):
            if not _tolerated(t, tolerations):
                tolerations.append({"key": t.key, "operator": "Exists", "effect": t.effect})
                added.add(t.key)
        if added:
            keys = ", ".join(sorted(added))
            # The list replaces the chart's, so the chart defaults stay at its head.
            settings.append(
                Setting(path, tolerations, f"chart defaults + GPU pool taints ({keys}) for {who}")
            )
    return settings


def _tolerated(taint: Taint, tolerations: Sequence[Mapping[str, str]]) -> bool:
    for t in tolerations:
        if t.get("key") != taint.key:
            continue
        if t.get("effect") not in (None, "", taint.effect):
            continue
        if t.get("operator", "Equal") == "Exists" or t.get("value", "") == taint.value:
            return True
    return False


# --------------------------------------------------------------------------------------------------
# User values


def _user_settings(
    spec: GpuOperatorSpec, managed: Sequence[Setting], issues: Issues
) -> list[Setting]:
    """``gpuOperator.values`` as settings. Keys the chart lacks, and every path a preset or the
    pools/toolkitEnv set (managed), are errors: a user value there would silently undo them."""
    unknown = unknown_paths(spec.values, spec.version)
    for path in unknown:
        issues.add(
            f"gpuOperator.values.{path}",
            f"{path!r} is not a key of the gpu-operator {spec.version} chart values",
        )
    # `toolkit.env[X]` manages the whole `toolkit.env` list; the first setting names the owner.
    owners: dict[str, str] = {}
    for s in managed:
        owners.setdefault(s.path.split("[")[0], s.reason)
    out: list[Setting] = []
    for path, value in _user_leaves(spec.values, spec.version):
        if path in unknown:
            continue
        clash = next(
            (
                m
                for m in owners
                if m == path or m.startswith(path + ".") or path.startswith(m + ".")
            ),
            None,
        )
        if path == "toolkit.env" or path.startswith("toolkit.env."):
            issues.add(
                f"gpuOperator.values.{path}",
                "set toolkit env with gpuOperator.toolkitEnv (it maps the seed's CONTAINERD_* "
                "variables onto what this chart honours)",
            )
        elif clash is not None:
            issues.add(
                f"gpuOperator.values.{path}",
                f"gpu-infra manages {clash} ({owners[clash]}); gpuOperator.values may not "
                "override it: change the preset, the pools' sharing/MIG/taints or toolkitEnv",
            )
        else:
            out.append(Setting(path, value, "gpuOperator.values"))
    return out


def _user_leaves(values: Mapping[str, Any], version: str) -> list[tuple[str, Any]]:
    """Leaves of the user's values, walked alongside the chart's: free-form maps (labels, data) and
    unknown keys stay whole, and keys are matched literally, so a key containing '.' is one key."""
    out: list[tuple[str, Any]] = []

    def walk(given: Mapping[str, Any], default: Mapping[str, Any], prefix: str) -> None:
        for key, value in given.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            sub = default.get(key)
            if isinstance(value, dict) and value and isinstance(sub, dict) and sub:
                walk(value, sub, path)
            else:
                out.append((path, value))

    walk(values, chart_defaults(version), "")
    return out


# --------------------------------------------------------------------------------------------------
# Checks across the stack


def _check_namespaces(config: StackConfig, issues: Issues) -> None:
    for i, ns in enumerate(config.namespaces):
        if config.operator.enabled and ns.name == config.operator.namespace:
            issues.add(
                join_path("gpuNamespaces", i, "name"),
                f"{ns.name!r} is the operator's namespace (privileged pod security); "
                "run GPU workloads elsewhere",
            )
        if ns.name.startswith("kube-"):
            issues.add(
                join_path("gpuNamespaces", i, "name"),
                f"{ns.name!r} is reserved for Kubernetes system namespaces",
            )


def _check_pool_labels(
    config: StackConfig, pools: Sequence[PoolHints], specs: PoolSpecs, issues: Issues
) -> None:
    """Every pool's nodes must carry the labels that select its sharing/MIG config: cloud planners
    put them on the pool; on-prem, gpu-infra labels the listed ``nodes`` (or the user did)."""
    for h in pools:
        i, pool = _spec_of(specs, h)
        want = operator_node_labels(pool)
        missing = ", ".join(f"{k}={v}" for k, v in sorted(want.items()) if h.labels.get(k) != v)
        if not missing:
            continue
        if config.platform == "kubernetes":
            issues.add(
                join_path("gpuPools", i, "nodes"),
                f"list the pool's node names so gpu-infra can label them {missing} (or label the "
                "nodes yourself and declare it under labels)",
            )
        else:
            issues.add(
                join_path("gpuPools", i, "labels"),
                f"the pool's nodes must carry {missing} for the operator's sharing/MIG config",
            )


# --------------------------------------------------------------------------------------------------
# Objects and outputs


def _assemble(
    config: StackConfig,
    pools: Sequence[PoolHints],
    specs: PoolSpecs,
    release: HelmRelease | None,
    preset: str | None,
    namespace: str,
) -> OperatorPlan:
    ns_object: Manifest | None = None
    before: list[Manifest] = []
    if release is not None:
        ns_object = {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": namespace, "labels": {**PRIVILEGED_PSA, **MANAGED_BY}},
        }
        if config.platform == "gke":
            before.append(_gke_critical_quota(namespace))
        if (cm := sharing_config_map(config, namespace)) is not None and (
            "devicePlugin" in release.values
        ):
            before.append(cm)
    after: list[Manifest] = []
    for ns in config.namespaces:
        after.extend(_gpu_namespace(ns.name, ns.gpus, ns.labels))
    scheduling: dict[str, dict[str, Any]] = {}
    profiles: dict[str, dict[str, Any]] = {}
    node_labels: list[NodeLabels] = []
    for h in pools:
        pool = _spec_of(specs, h)[1]
        hints = scheduling_hints(config.platform, h, pool)
        scheduling[h.name] = hints
        profiles[h.name] = jupyterhub_profile(h, hints)
        # A GKE fallback pool shares its main pool's ComputeClass selector, so the main pool's
        # Job already tests the class; one Job per class, not per alternative.
        if pool.smoke_test and h.name in specs:
            after.append(smoke_test_job(h, hints, namespace, config.operator.smoke_test_image))
        labels = operator_node_labels(pool)
        if release is not None and labels and isinstance(pool, KubernetesPoolSpec) and pool.nodes:
            node_labels.append(NodeLabels(pool=h.name, nodes=tuple(pool.nodes), labels=labels))
    return OperatorPlan(
        namespace=namespace,
        preset=preset,
        release=release,
        namespace_object=ns_object,
        before_release=tuple(before),
        after_release=tuple(after),
        node_labels=tuple(node_labels),
        scheduling=scheduling,
        jupyterhub_profiles=profiles,
    )


def _gke_critical_quota(namespace: str) -> Manifest:
    return {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": GKE_CRITICAL_QUOTA, "namespace": namespace, "labels": MANAGED_BY},
        "spec": {
            # NVIDIA's manifest uses 100; operand DaemonSets run ~8 pods per GPU node.
            "hard": {"pods": "100"},
            "scopeSelector": {
                "matchExpressions": [
                    {
                        "operator": "In",
                        "scopeName": "PriorityClass",
                        "values": list(GKE_CRITICAL_CLASSES),
                    }
                ]
            },
        },
    }


def _gpu_namespace(name: str, gpus: int, labels: Mapping[str, str]) -> list[Manifest]:
    return [
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": name, "labels": {**labels, **MANAGED_BY}},
        },
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": {"name": "gpu-quota", "namespace": name, "labels": MANAGED_BY},
            # Seed 001: both requests and limits, so neither can exceed the namespace's share.
            "spec": {
                "hard": {f"requests.{GPU_RESOURCE}": str(gpus), f"limits.{GPU_RESOURCE}": str(gpus)}
            },
        },
    ]


def resource_name(h: PoolHints, pool: PoolBase) -> str:
    """The extended resource a workload requests on the pool's nodes (§5.3).

    ``nvidia.com/mig-<profile>`` for MIG strategy mixed with ``all-<profile>``; otherwise
    ``nvidia.com/gpu`` (strategy single, no MIG, or ``all-disabled``). The plan rejects mixed with
    ``all-enabled``/``all-balanced``, which have no single per-pool resource.
    """
    mig = pool.mig
    if mig is not None and mig.strategy == "mixed":
        profile = mig.config.removeprefix("all-")
        if profile in pool_mig_profiles(h):
            return f"nvidia.com/mig-{profile}"
    return GPU_RESOURCE


def scheduling_hints(platform: str, h: PoolHints, pool: PoolBase) -> dict[str, Any]:
    """What a workload needs to land on pool ``h``: node selector, tolerations, resource name."""
    selector = dict(h.node_selector)
    if platform == "gke":
        selector.setdefault(GKE_ACCELERATOR_LABEL, h.gpu_type)
    elif platform == "eks" and EKS_ACCELERATOR_LABEL in h.labels:
        selector.setdefault(EKS_ACCELERATOR_LABEL, h.labels[EKS_ACCELERATOR_LABEL])
    tolerations: list[dict[str, str]] = h.tolerations()
    if not any(t.key == GPU_RESOURCE for t in h.taints):
        # GKE taints GPU nodes nvidia.com/gpu=present when the cluster has CPU pools (gke.md §8).
        tolerations.append({"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"})
    sharing = pool.sharing
    mig = pool.mig
    return {
        "nodeSelector": selector,
        "tolerations": tolerations,
        "resourceName": resource_name(h, pool),
        "gpuModel": h.gpu_model,
        "gpusPerNode": h.gpus_per_node,
        "timeSlicingReplicas": sharing.replicas if sharing is not None else None,
        "migStrategy": mig.strategy if mig is not None else None,
        "spot": h.spot,
    }


def jupyterhub_profile(h: PoolHints, hints: Mapping[str, Any]) -> dict[str, Any]:
    """A JupyterHub ``singleuser.profileList`` entry for pool ``h`` (seed 000)."""
    whole_node = hints["resourceName"] == GPU_RESOURCE and not hints["timeSlicingReplicas"]
    whole_node = whole_node and not hints["migStrategy"]
    count = h.gpus_per_node if whole_node else 1
    if whole_node:
        what = f"a dedicated node with {count} GPU" + ("s" if count > 1 else "")
    elif hints["migStrategy"]:
        what = f"one MIG instance ({hints['resourceName']}) of a shared node"
    else:
        what = f"one time-sliced GPU ({hints['timeSlicingReplicas']} pods per GPU)"
    return {
        "display_name": f"NVIDIA {h.gpu_model}, ~{round(h.memory_gib)} GB, ~{h.vcpus} CPUs",
        "description": f"Start a container on {what} (pool {h.name})",
        "slug": h.name,
        "kubespawner_override": {
            # Without it the runtime injects no CUDA libraries or nvidia-smi (seed 000).
            "environment": {"NVIDIA_DRIVER_CAPABILITIES": "compute,utility"},
            "node_selector": dict(hints["nodeSelector"]),
            "tolerations": [dict(t) for t in hints["tolerations"]],
            "extra_resource_limits": {hints["resourceName"]: str(count)},
        },
    }


def smoke_test_job(h: PoolHints, hints: Mapping[str, Any], namespace: str, image: str) -> Manifest:
    """A Job running ``nvidia-smi`` on one GPU of pool ``h`` (seed 002's exercise, operator era)."""
    labels = {"app.kubernetes.io/name": "gpu-smoke-test", "gpu-infra/pool": h.name, **MANAGED_BY}
    resource = hints["resourceName"]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": f"gpu-smoke-test-{h.name}", "namespace": namespace, "labels": labels},
        "spec": {
            "backoffLimit": 2,
            "activeDeadlineSeconds": SMOKE_TEST_DEADLINE_SECONDS,
            "ttlSecondsAfterFinished": SMOKE_TEST_TTL_SECONDS,
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "restartPolicy": "Never",
                    "nodeSelector": dict(hints["nodeSelector"]),
                    "tolerations": [dict(t) for t in hints["tolerations"]],
                    "securityContext": {
                        "runAsNonRoot": True,
                        "runAsUser": 65534,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    "containers": [
                        {
                            "name": "nvidia-smi",
                            "image": image,
                            "command": ["nvidia-smi"],
                            "env": [{"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "utility"}],
                            "resources": {
                                "requests": {resource: "1"},
                                "limits": {resource: "1"},
                            },
                            "securityContext": {
                                "allowPrivilegeEscalation": False,
                                "capabilities": {"drop": ["ALL"]},
                            },
                        }
                    ],
                },
            },
        },
    }


__all__ = [
    "HelmRelease",
    "NodeLabels",
    "OperatorPlan",
    "operator_node_labels",
    "plan_operator",
    "render_helm_values",
]
