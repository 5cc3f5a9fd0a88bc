"""Operator values and objects for GPU sharing: the device plugin's time-slicing ConfigMap and the
MIG strategy / MIG manager settings, checked per pool."""

from __future__ import annotations

from collections.abc import Sequence

import yaml

from infra.core.config.base import PoolBase
from infra.core.config.stack import StackConfig
from infra.core.errors import Issues, join_path
from infra.core.operator.helm_values import Setting
from infra.core.operator.model import MANAGED_BY, Manifest, PoolSpecs, spec_of
from infra.core.operator.presets import NO_OPERATOR_DEVICE_PLUGIN, NO_OPERATOR_MIG_MANAGER
from infra.core.pools import PoolHints
from infra.core.sharing import (
    DEVICE_PLUGIN_CONFIGMAP,
    mig_config_problem,
    mig_layout_counts,
    pool_mig_gpu,
    sharing_config_key,
    time_slicing_config,
)

# --------------------------------------------------------------------------------------------------
# Sharing and MIG: device-plugin time-slicing configs and the MIG manager (NVIDIA gpu-operator
# gpu-sharing.html, gpu-operator-mig.html)


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
        elif pool.sharing.rename_by_default and h.platform == "gke" and h.min_nodes == 0:
            # GKE's scale-from-zero template node has the machine's accelerator count as
            # nvidia.com/gpu and nothing else (kubernetes/autoscaler cluster-autoscaler/
            # cloudprovider/gce/templates.go BuildNodeFromTemplate), so a pod asking for
            # nvidia.com/gpu.shared never triggers a scale-up. EKS templates carry it as a
            # node-template/resources tag (infra.core.eks.groups).
            issues.add(
                join_path(path, "renameByDefault"),
                "nvidia.com/gpu.shared is unknown to GKE's scale-from-zero template, so pods "
                "requesting it would stay pending at minNodes 0"
                + (f" (fallback pool {h.name!r} starts at 0)" if h.name != pool.name else "")
                + "; set minNodes >= 1 or keep renameByDefault false",
            )
        else:
            shared = True
    if not shared:
        return []
    why = "per-pool time-slicing configs; nodes pick one by label nvidia.com/device-plugin.config"
    return [Setting("devicePlugin.config.name", DEVICE_PLUGIN_CONFIGMAP, why)]


def sharing_config_map(config: StackConfig, namespace: str) -> Manifest | None:
    """The device-plugin ConfigMap, one key per distinct time-slicing setup (replicas, rename);
    ``None`` when no pool shares GPUs."""
    setups = {sharing_config_key(p.sharing): p.sharing for p in config.pools if p.sharing}
    if not setups:
        return None
    data = {
        key: yaml.safe_dump(time_slicing_config(setups[key]), sort_keys=False)
        for key in sorted(setups)
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
        gpu = pool_mig_gpu(h)
        if gpu is None:
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
        problem = mig_config_problem(gpu, pool.mig, h.gpu_model)
        if problem is not None:
            issues.add(join_path("gpuPools", i, "mig", "config"), problem)
        elif (why := gke_mixed_from_zero(h, pool)) is not None:
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
    if config.platform in ("gke", "eks"):
        out.append(
            Setting(
                "migManager.env[WITH_REBOOT]",
                "true",
                "cloud VMs need a reboot to apply MIG geometry (NVIDIA gpu-operator-mig docs)",
            )
        )
    return out


def gke_mixed_from_zero(h: PoolHints, pool: PoolBase) -> str | None:
    """Why operator MIG ``mixed`` cannot scale this GKE pool (or one of its fallback pools,
    which start at zero) up from zero, or ``None``.

    GKE's scale-from-zero template node advertises the machine's accelerators as
    ``nvidia.com/gpu`` only (kubernetes/autoscaler cluster-autoscaler/cloudprovider/gce/
    templates.go BuildNodeFromTemplate); the operator's MIG manager makes the MIG devices on the
    node, so a pod requesting ``nvidia.com/mig-<profile>`` matches no template and stays Pending.
    """
    gpu = pool_mig_gpu(h)
    if h.platform != "gke" or pool.mig is None or pool.mig.strategy != "mixed" or gpu is None:
        return None
    if h.min_nodes > 0 or not mig_layout_counts(gpu, pool.mig.config):
        return None
    at = "minNodes 0" if h.name == pool.name else f"fallback {h.name!r} at minNodes 0"
    return (
        f"'mixed' with {pool.mig.config!r} at {at}: GKE's scale-from-zero node template "
        "knows only nvidia.com/gpu, so pods requesting nvidia.com/mig-* never scale the pool up; "
        "use strategy 'single', minNodes >= 1, or GKE's own partitioning (gpu.partitionSize)"
    )


def reject_operator_features(pools: Sequence[PoolHints], specs: PoolSpecs, issues: Issues) -> None:
    for h in pools:
        i, pool = spec_of(specs, h)
        for key in ("sharing", "mig"):
            if getattr(pool, key) is not None:
                issues.add(
                    join_path("gpuPools", i, key),
                    f"{key} is done by the GPU Operator, but gpuOperator.enabled is false",
                )
