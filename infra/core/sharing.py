"""Platform-neutral GPU sharing facts: the node labels that select a pool's time-slicing / MIG
config, NVIDIA's MIG profiles per GPU and the extended resource a workload requests.

The GKE, EKS and kubernetes planners label pools from here; the operator planner configures the
device plugin and MIG manager from the same facts, so the two cannot disagree.
"""

from __future__ import annotations

import functools
from pathlib import Path

from infra.core.catalog import DATA_DIR, read_rows
from infra.core.config_base import PoolBase
from infra.core.pools import GPU_RESOURCE, PoolHints

DEVICE_PLUGIN_CONFIG_LABEL = "nvidia.com/device-plugin.config"
MIG_CONFIG_LABEL = "nvidia.com/mig.config"
DEVICE_PLUGIN_CONFIGMAP = "gpu-infra-device-plugin-config"

# NVIDIA's MIG profiles per GPU model: the one source for operator MIG (every platform). GKE's own
# partitioning (gpu.partitionSize) keeps GKE's shorter list in gcp_accelerator_models.csv.
MIG_PROFILES_CSV = "nvidia_mig_profiles.csv"

MIG_CONFIGS_FIXED = ("all-disabled", "all-enabled", "all-balanced")
# Under strategy mixed these give no single per-pool resource name (none, or several sizes).
MIG_CONFIGS_NOT_MIXED = ("all-enabled", "all-balanced")


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
