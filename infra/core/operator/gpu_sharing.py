"""Operator values and objects for GPU sharing: the device plugin's time-slicing ConfigMap and the
MIG strategy / MIG manager settings, checked per pool."""

from __future__ import annotations

from collections.abc import Sequence

import yaml

from infra.core.config import StackConfig
from infra.core.errors import Issues, join_path
from infra.core.helm_values import Setting
from infra.core.operator.model import MANAGED_BY, Manifest, PoolSpecs, spec_of
from infra.core.operator.presets import NO_OPERATOR_DEVICE_PLUGIN, NO_OPERATOR_MIG_MANAGER
from infra.core.pools import GPU_RESOURCE, PoolHints
from infra.core.sharing import (
    DEVICE_PLUGIN_CONFIGMAP,
    MIG_CONFIGS_FIXED,
    MIG_CONFIGS_NOT_MIXED,
    pool_mig_profiles,
    sharing_config_key,
)

# --------------------------------------------------------------------------------------------------
# Sharing and MIG (§5)


def sharing_settings(
    preset: str, pools: Sequence[PoolHints], specs: PoolSpecs, issues: Issues
) -> list[Setting]:
    shared = False
    for h in pools:
        i, pool = spec_of(specs, h)
        if pool.sharing is None:
            continue
        path = join_path("gpuPools", i, "sharing")
        if h.gke_sharing:
            issues.add(
                path,
                "GKE's own GPU sharing or partitioning (gpu.sharing / gpu.partitionSize) is on for "
                "this pool; use one of the two, not both",
            )
        elif preset in NO_OPERATOR_DEVICE_PLUGIN:
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


def mig_settings(
    config: StackConfig,
    preset: str,
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
        if preset in NO_OPERATOR_MIG_MANAGER:
            issues.add(path, f"preset {preset!r} leaves MIG to the node image's MIG manager")
            continue
        valid = (*MIG_CONFIGS_FIXED, *(f"all-{p}" for p in profiles))
        if pool.mig.config not in valid:
            issues.add(
                join_path("gpuPools", i, "mig", "config"),
                f"{pool.mig.config!r} is not a MIG config for {h.gpu_model}; use one of: "
                f"{', '.join(valid)}",
            )
        elif pool.mig.strategy == "mixed" and pool.mig.config in MIG_CONFIGS_NOT_MIXED:
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


def reject_operator_features(pools: Sequence[PoolHints], specs: PoolSpecs, issues: Issues) -> None:
    for h in pools:
        i, pool = spec_of(specs, h)
        for key in ("sharing", "mig"):
            if getattr(pool, key) is not None:
                issues.add(
                    join_path("gpuPools", i, key),
                    f"{key} is done by the GPU Operator, but gpuOperator.enabled is false",
                )
