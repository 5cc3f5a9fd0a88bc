"""Planning for ``platform: kubernetes``: an existing cluster reached through a kubeconfig (issue 4).

Nothing is created at the cluster level; the plan describes the existing GPU nodes as ``PoolHints``
so the GPU Operator plan, the workload hints and the smoke tests can target them.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from infra.core.catalog import Catalog, read_rows
from infra.core.config import StackConfig
from infra.core.errors import Issues, join_path
from infra.core.operator import operator_node_labels
from infra.core.pools import PoolHints, Taint

MIG_PROFILES_CSV = "nvidia_mig_profiles.csv"


@dataclass(frozen=True, slots=True, kw_only=True)
class KubernetesPlan:
    """An existing cluster and the GPU pools it already has.

    Attributes:
        cluster_name: the cluster's name in gpu-infra (outputs, resource names).
        kubeconfig: kubeconfig path, or ``None`` for the provider's default lookup.
        context: kubeconfig context, or ``None`` for the current one.
        distribution: ``containerd`` | ``k3s`` | ``rke2`` | ``microk8s``.
        pools: one ``PoolHints`` per described node set.
    """

    cluster_name: str = ""
    kubeconfig: str | None = None
    context: str | None = None
    distribution: str = "containerd"
    pools: tuple[PoolHints, ...] = ()


@functools.cache
def _mig_table() -> dict[str, tuple[str, tuple[str, ...]]]:
    """alias (lower case) -> (canonical model, MIG profiles smallest first)."""
    table: dict[str, tuple[str, tuple[str, ...]]] = {}
    for row in read_rows(MIG_PROFILES_CSV):
        entry = (row["gpu_model"], tuple(row["profiles"].split()))
        for alias in [row["gpu_model"], *row["aliases"].split(";")]:
            table[alias.strip().lower()] = entry
    return table


def mig_profiles(gpu_model: str) -> tuple[str, ...]:
    """MIG profiles of a GPU model (``A100-40GB``, ``nvidia-tesla-a100``, ``H100``); ``()`` if none.

    Source: infra/core/data/nvidia_mig_profiles.csv (NVIDIA MIG user guide).
    """
    entry = _mig_table().get(gpu_model.strip().lower())
    return entry[1] if entry else ()


def plan_kubernetes(config: StackConfig, catalog: Catalog, issues: Issues) -> KubernetesPlan:
    """Describe the existing cluster's GPU pools; problems go to ``issues``."""
    del catalog  # on-prem hardware is not in the cloud catalog
    cluster = config.cluster
    pools: list[PoolHints] = []
    for i, p in enumerate(config.pools):
        labels = {**p.labels, **p.node_selector}
        wanted = operator_node_labels(p)
        missing = {k: v for k, v in wanted.items() if labels.get(k) != v}
        if missing and not p.nodes and config.operator.enabled:
            issues.add(
                join_path("gpuPools", i, "nodes"),
                "list the pool's node names so gpu-infra can label them "
                + ", ".join(f"{k}={v}" for k, v in sorted(missing.items()))
                + " (or label the nodes yourself and declare it under labels)",
            )
        pools.append(
            PoolHints(
                name=p.name,
                platform="kubernetes",
                gpu_type=p.gpu.model,
                gpu_model=p.gpu.model,
                gpus_per_node=p.gpu.count,
                vcpus=p.vcpus,
                memory_gib=p.memory_gib,
                node_image=cluster.distribution,
                driver=p.driver,
                node_selector=dict(p.node_selector),
                labels={**labels, **wanted},
                taints=tuple(Taint(t.key, t.value, t.effect) for t in p.taints),
                spot=p.spot,
                min_nodes=p.min_nodes,
                max_nodes=p.max_nodes,
                mig_profiles=mig_profiles(p.gpu.model),
            )
        )
    return KubernetesPlan(
        cluster_name=cluster.name,
        kubeconfig=cluster.kubeconfig,
        context=cluster.context,
        distribution=cluster.distribution,
        pools=tuple(pools),
    )
