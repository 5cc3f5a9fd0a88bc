"""Operator values and objects for GPU sharing: the device plugin's time-slicing ConfigMap and the
MIG strategy / MIG manager settings, checked per pool."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

import yaml

from infra.core.config.base import PoolBase, SharingSpec
from infra.core.config.stack import StackConfig
from infra.core.errors import Issues, join_path
from infra.core.operator.helm_values import Setting
from infra.core.operator.model import MANAGED_BY, Manifest
from infra.core.platform import Platform, Preset
from infra.core.pools import GPU_RESOURCE, PoolHints, PoolSpecs, spec_of
from infra.core.sharing import (
    DEVICE_PLUGIN_CONFIGMAP,
    advertised_resources,
    mig_config_problem,
    pool_mig_gpu,
    sharing_config_key,
    time_slicing_config,
)

# --------------------------------------------------------------------------------------------------
# Sharing and MIG: device-plugin time-slicing configs and the MIG manager (NVIDIA gpu-operator
# gpu-sharing.html, gpu-operator-mig.html)


def sharing_settings(
    preset: Preset, pools: Sequence[PoolHints], platform: Platform, specs: PoolSpecs, issues: Issues
) -> list[Setting]:
    zero_gpu = platform.features.zero_gpu_rule
    shared = False
    for h in pools:
        i, pool = spec_of(specs, h)
        if pool.sharing is None:
            continue
        path = join_path("gpuPools", i, "sharing")
        if (native := platform.native_sharing(h, pool)) is not None:
            issues.add(path, f"{native.what} is on for this pool; use one of the two, not both")
        elif not preset.device_plugin:
            issues.add(
                path,
                f"preset {preset.name!r} leaves the device plugin to the node image; configure "
                f"time-slicing there ({preset.device_plugin_config})",
            )
        elif pool.mig is not None and pool.mig.strategy == "mixed":
            issues.add(
                path,
                "time-slicing with MIG strategy 'mixed' needs per-profile resource names; use MIG "
                "strategy 'single' or drop sharing",
            )
        elif pool.sharing.rename_by_default and zero_gpu is not None:
            issues.add(
                join_path(path, "renameByDefault"),
                "true: GPUs advertised as nvidia.com/gpu.shared leave nvidia.com/gpu at 0 "
                + zero_gpu
                + "; keep renameByDefault false",
            )
        else:
            shared = True
    if not shared:
        return []
    why = "per-pool time-slicing configs; nodes pick one by label nvidia.com/device-plugin.config"
    sharings = [pool.sharing for _, pool in specs.values() if pool.sharing is not None]
    return [Setting("devicePlugin.config.name", device_plugin_config_name(sharings), why)]


def _config_data(sharings: Iterable[SharingSpec]) -> dict[str, str]:
    """The ConfigMap's data: one key per distinct time-slicing setup (replicas, rename)."""
    setups = {sharing_config_key(s): s for s in sharings}
    return {
        key: yaml.safe_dump(time_slicing_config(setups[key]), sort_keys=False)
        for key in sorted(setups)
    }


def device_plugin_config_name(sharings: Iterable[SharingSpec]) -> str:
    """The ConfigMap's name, suffixed with a hash of its data.

    pulumi-kubernetes replaces a ConfigMap whose data changes (provider/pkg/provider/diff.go
    forceNewProperties), and deletes it first when its name stays (provider.go Diff): the device
    plugin would lose its config mid-update. A new name makes the replacement create-first, and
    the new devicePlugin.config.name in the ClusterPolicy makes the operator roll the device
    plugin onto it. An in-place data change would not reach the plugin: its config-manager
    sidecar re-links the config file and signals the plugin only when the node label changes
    (NVIDIA/k8s-device-plugin cmd/config-manager/main.go ``continuouslySyncConfigChanges``,
    ``updateSymlink``).
    """
    data = _config_data(sharings)
    digest = hashlib.sha256(repr(sorted(data.items())).encode()).hexdigest()[:8]
    return f"{DEVICE_PLUGIN_CONFIGMAP}-{digest}"


def sharing_config_map(config: StackConfig, namespace: str) -> Manifest | None:
    """The device-plugin ConfigMap, one key per distinct time-slicing setup (replicas, rename);
    ``None`` when no pool shares GPUs."""
    sharings = [p.sharing for p in config.pools if p.sharing]
    if not sharings:
        return None
    name = device_plugin_config_name(sharings)
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": MANAGED_BY},
        "data": _config_data(sharings),
    }


def mig_settings(
    platform: Platform,
    preset: Preset,
    pools: Sequence[PoolHints],
    specs: PoolSpecs,
    issues: Issues,
) -> list[Setting]:
    strategy: str | None = None
    for h in pools:
        i, pool = spec_of(specs, h)
        if pool.mig is None:
            continue
        path = join_path("gpuPools", i, "mig")
        gpu = pool_mig_gpu(h)
        if gpu is None:
            issues.add(
                path,
                f"{h.gpu_model} ({h.gpu_type}) does not support MIG; MIG needs an A30, A100, H100, "
                "H200 or B200",
            )
            continue
        if (native := platform.native_sharing(h, pool)) is not None:
            issues.add(path, f"{native.what} is on for this pool; use one of the two, not both")
            continue
        if not preset.mig_manager:
            issues.add(path, f"preset {preset.name!r} leaves MIG to the node image's MIG manager")
            continue
        problem = mig_config_problem(gpu, pool.mig, h.gpu_model)
        if problem is not None:
            issues.add(join_path("gpuPools", i, "mig", "config"), problem)
        elif (why := zero_gpu_mixed_problem(h, pool, platform.features.zero_gpu_rule)) is not None:
            issues.add(join_path("gpuPools", i, "mig", "strategy"), why)
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
    if platform.features.mig_reboot:
        out.append(
            Setting(
                "migManager.env[WITH_REBOOT]",
                "true",
                "cloud VMs need a reboot to apply MIG geometry (NVIDIA gpu-operator-mig docs)",
            )
        )
    return out


def zero_gpu_mixed_problem(h: PoolHints, pool: PoolBase, rule: str | None) -> str | None:
    """Why operator MIG ``mixed`` is refused for this pool (at any minNodes), or ``None``: where
    the platform refuses a running node with 0 ``nvidia.com/gpu`` (``rule``, GKE's
    ``Features.zero_gpu_rule``).

    Mixed advertises ``nvidia.com/mig-<profile>`` and 0 ``nvidia.com/gpu`` when every GPU is
    partitioned (``advertised_resources``).
    """
    gpu = pool_mig_gpu(h)
    if rule is None or pool.mig is None or pool.mig.strategy != "mixed" or gpu is None:
        return None
    devices = advertised_resources(h.gpus_per_node, None, pool.mig, gpu)
    if devices.get(GPU_RESOURCE, 0) > 0:
        return None
    on = "" if h.name == pool.name else f" (and on its fallback pool {h.name!r})"
    return (
        f"'mixed' with {pool.mig.config!r}{on}: nvidia.com/mig-* devices leave nvidia.com/gpu at "
        f"0 {rule}; use strategy 'single' or GKE's own partitioning (gpu.partitionSize)"
    )


def reject_operator_features(pools: Sequence[PoolHints], specs: PoolSpecs, issues: Issues) -> None:
    for h in pools:
        i, pool = spec_of(specs, h)
        if h.driver == "vgpu":
            issues.add(
                join_path("gpuPools", i, "driver"),
                "'vgpu' is the guest driver the GPU Operator installs, but gpuOperator.enabled is "
                "false",
            )
        for key in ("sharing", "mig"):
            if getattr(pool, key) is not None:
                issues.add(
                    join_path("gpuPools", i, key),
                    f"{key} is done by the GPU Operator, but gpuOperator.enabled is false",
                )
