"""The GPU Operator planner's entry point: preset, values with reasons, objects and hints."""

from __future__ import annotations

from collections.abc import Sequence

from infra.core.catalog.runtime_facts import OPERATOR, runtime_fact
from infra.core.config.operator import GpuOperatorSpec
from infra.core.config.stack import StackConfig
from infra.core.errors import Issues
from infra.core.operator.gpu_sharing import mig_settings, reject_operator_features, sharing_settings
from infra.core.operator.helm_values import (
    Setting,
    is_cdi_era,
    merge_settings,
    unknown_paths,
    vendored_versions,
)
from infra.core.operator.isolation import RuntimePath, isolation_settings, runtime_paths
from infra.core.operator.model import HelmRelease, OperatorPlan
from infra.core.operator.objects import (
    assemble,
    check_cpu_nodes,
    check_namespaces,
    check_pool_labels,
)
from infra.core.operator.presets import choose_preset, preset_notes, preset_settings
from infra.core.operator.toolkit import toolkit_settings
from infra.core.operator.values import toleration_settings, user_settings
from infra.core.operator.vgpu import check_vgpu, vgpu_settings
from infra.core.pinned_defaults import with_pinned_defaults
from infra.core.platform import Platform, Preset
from infra.core.pools import PoolHints, PoolSpecs

# --------------------------------------------------------------------------------------------------
# Entry point


def plan_operator(
    config: StackConfig, pools: Sequence[PoolHints], platform: Platform, issues: Issues
) -> OperatorPlan | None:
    """Decide the GPU Operator install and the workload helpers around it.

    Chooses the preset, builds the Helm values (preset, toolkit env, sharing, MIG, tolerations,
    then the user's ``gpuOperator.values``, each with its reason), the namespace and the objects
    the release needs before and after it, and per pool the scheduling hints, JupyterHub profile
    and opt-in smoke-test Job.

    Args:
        config: the parsed stack.
        pools: the platform planner's ``PoolHints``, one per ``config.pools`` entry, same names.
        platform: the stack's platform as planned, asked for what the operator needs of it.
        issues: collects config errors (key path, value, rule); nothing is raised here.

    Returns:
        The plan (``release`` is ``None`` when the operator is disabled), or ``None`` when there is
        nothing to do (operator disabled, no pools, no GPU namespaces) or the chart version or
        preset is unusable (``issues`` says why).
    """
    # The chart version, smoke-test image and notebook images a stack names none of, decided
    # against the catalog the platform was planned with (the release and profiles record them).
    config = with_pinned_defaults(config, platform.catalog.data_dir)
    spec = config.operator
    specs: PoolSpecs = {p.name: (i, p) for i, p in enumerate(config.pools)}
    before = issues.count()
    check_namespaces(config, issues)
    if not spec.enabled:
        reject_operator_features(pools, specs, issues)
        check_vgpu(config, pools, specs, issues)
        if not pools and not config.namespaces:
            return None
        paths = runtime_paths(pools, platform, None, None)
        return assemble(config, pools, platform, specs, None, None, "default", paths=paths)

    if _refuse_shared_cluster(config, platform, issues) or not _known_version(spec, issues):
        return None
    preset = choose_preset(config, pools, platform, specs, issues)
    if preset is None:
        return None
    _check_version_for_preset(config, platform, preset, issues)
    check_vgpu(config, pools, specs, issues)
    notes: list[str] = preset_notes(preset, spec.chart_version)
    settings = [
        *preset_settings(preset, spec.chart_version, platform, pools),
        *vgpu_settings(config),
        *toolkit_settings(spec, preset, issues, notes, platform.catalog.data_dir),
        *sharing_settings(preset, pools, platform, specs, issues),
        *mig_settings(platform, preset, pools, specs, issues),
        *toleration_settings(spec.chart_version, pools),
    ]
    settings += _isolation(spec, settings, platform)
    user = user_settings(spec, settings, issues)
    values, reasons = merge_settings([*settings, *user], spec.chart_version)
    # The user's keys were checked above; anything left is a key gpu-infra sets for this preset.
    for path in unknown_paths(values, spec.chart_version):
        issues.add(
            "gpuOperator.preset",
            f"preset {preset.name!r} sets {path!r}, which is not a key of the gpu-operator "
            f"{spec.chart_version} chart values; pick another gpuOperator.version",
        )
    release = HelmRelease(
        version=spec.chart_version,
        namespace=spec.namespace,
        values=values,
        reasons=reasons,
        timeout=spec.timeout,
    )
    check_cpu_nodes(platform, values, spec.chart_version, issues)
    if issues.count() == before:  # a rejected sharing/MIG block needs no label hint on top
        check_pool_labels(pools, platform, specs, issues)
    paths = runtime_paths(pools, platform, release, preset.name)
    _check_delivery(paths, issues, platform)
    _check_nri(paths, issues)
    return assemble(
        config, pools, platform, specs, release, preset, spec.namespace, tuple(notes), paths
    )


def _known_version(spec: GpuOperatorSpec, issues: Issues) -> bool:
    if spec.chart_version in vendored_versions():
        return True
    issues.add(
        "gpuOperator.version",
        f"{spec.chart_version!r} is not a chart version gpu-infra has values for (its keys are "
        f"checked against them); known: {', '.join(vendored_versions())}",
    )
    return False


def _isolation(spec: GpuOperatorSpec, settings: list[Setting], platform: Platform) -> list[Setting]:
    """The isolation settings for the release as planned so far (the user's values included,
    their problems left to ``user_settings``, which reports them once), by the runtime facts of
    the catalog the platform was planned with."""
    probe = user_settings(spec, settings, Issues())
    values, reasons = merge_settings([*settings, *probe], spec.chart_version)
    return isolation_settings(values, spec.chart_version, reasons, platform.catalog.data_dir)


def _check_nri(paths: Sequence[RuntimePath], issues: Issues) -> None:
    """The NRI plugin's annotation path is refused where the plugin serves every namespace: an
    admission policy on pod annotations would be a cluster-wide object outside the release that a
    second stack on the cluster collides with and whose removal reopens the path silently, while
    CDI without NRI (containerd injects the device plugin's CRI CDI devices) already delivers."""
    for p in paths:
        if p.mode == "nri" and p.unrequested:
            issues.add(
                "gpuOperator.values.cdi.nriPluginEnabled",
                f"true opens a way past the GPU quotas: {p.unrequested}; leave it false (CDI "
                "without NRI injects allocated GPUs through containerd) or use a chart whose "
                "toolkit's NRI plugin serves only its own namespace",
            )


def _check_delivery(paths: Sequence[RuntimePath], issues: Issues, platform: Platform) -> None:
    """A release whose allocated GPUs could not reach their pods (every way the device plugin
    hands them over is one the runtime refuses or does not read) is an error, not a plan."""
    for p in paths:
        if p.delivers:
            continue
        why = "; ".join(p.undelivered)
        pools = ", ".join(p.pools)
        if p.device_list.by.startswith("the operator"):
            data = platform.catalog.data_dir
            # v25.3.0-2 apply their CDI env after devicePlugin.env (fact user-env-last), so a
            # volume-mount strategy cannot replace theirs.
            later = [
                v
                for v in vendored_versions()
                if (f := runtime_fact(OPERATOR, v, "devicePlugin.user-env-last", data)) and f.flag
            ]
            issues.add(
                "gpuOperator.values.cdi",
                f"with cdi.enabled true and cdi.default false the operator's device-list strategy "
                f"{p.device_list.value} ({p.device_list.source}) wins, and pods of {pools} would "
                f"get no GPU: {why}; set cdi.default: true (the runtime then reads the CDI "
                "annotations) or cdi.enabled: false"
                + (f", or use gpuOperator.version {later[0]} or later" if later else ""),
            )
            continue
        issues.add(
            "gpuOperator.values.devicePlugin.env",
            f"DEVICE_LIST_STRATEGY {p.device_list.value} ({p.device_list.by}): pods of {pools} "
            f"would get no GPU: {why}; drop it",
        )


def _check_version_for_preset(
    config: StackConfig, platform: Platform, preset: Preset, issues: Issues
) -> None:
    """Chart versions the chosen preset cannot run."""
    version = config.operator.chart_version
    cdi, data = is_cdi_era(version), platform.catalog.data_dir
    problem = preset.version_problem(version, cdi, platform.kubernetes_version, data)
    if problem is not None:
        issues.add("gpuOperator.version", problem)


def _refuse_shared_cluster(config: StackConfig, platform: Platform, issues: Issues) -> bool:
    """An existing GKE/EKS cluster may be shared: the operator's NFD labels every node and its
    operands run on every NVIDIA GPU node, with one ClusterPolicy per cluster (NVIDIA gpu-operator
    getting-started "Operator installs ... on all nodes with NVIDIA GPUs"), so it would take over
    other teams' GPU nodes unless the stack says it manages them all."""
    instead = platform.features.operator_off
    if not instead or not config.cluster.existing:
        return False
    if config.operator.cluster_wide:
        return False
    issues.add(
        "gpuOperator.clusterWide",
        "cluster.existing is true and the GPU Operator is cluster-wide: its NFD labels every node "
        "and its operands run on every NVIDIA GPU node, other teams' included; set "
        "gpuOperator.clusterWide: true if this stack manages every GPU node of the cluster, or "
        f"gpuOperator.enabled: false ({instead})",
    )
    return True
