"""The memory the DaemonSets on a GPU node request: the platform's system DaemonSets and, where
the GPU Operator runs, its operands and NFD worker. A whole-node guarantee (JupyterHub) is cut from
the node's allocatable less this budget, and the scheduling proof judges pods against the same.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from infra.core.nodes import daemonset_memory_mib, quantity
from infra.core.operator.helm_values import default_at
from infra.core.operator.model import OPERAND_DAEMONSETS, HelmRelease
from infra.core.platform import Platform

# The validator DaemonSet runs whatever the values enable (gpu-operator assets/state-operator-
# validation); its requests are the chart's validator.resources.
_ALWAYS = ("validator",)


def _given(values: Mapping[str, Any], version: str, key: str, field: str) -> Any:
    part = values.get(key, {})
    if isinstance(part, Mapping) and field in part:
        return part[field]
    return default_at(version, f"{key}.{field}")


def operand_memory_mib(release: HelmRelease | None, data_dir: Path) -> int:
    """Memory (MiB) the release's operand DaemonSets request on a GPU node: each enabled
    operand's ``resources.requests.memory`` (the chart's value unless overridden; the vendored
    charts leave them empty), plus the NFD worker's when ``nfd.enabled`` (as the catalog in
    ``data_dir`` measures it)."""
    if release is None:
        return 0
    values, version = release.values, release.version
    total = 0
    for key in (*OPERAND_DAEMONSETS, *_ALWAYS):
        if key not in _ALWAYS and not _given(values, version, key, "enabled"):
            continue
        resources = _given(values, version, key, "resources") or {}
        memory = (resources.get("requests") or {}).get("memory")
        if memory is not None:
            total += math.ceil(quantity(memory) / 2**20)
    if _given(values, version, "nfd", "enabled"):
        total += daemonset_memory_mib("nfd-worker", data_dir)
    return total


def daemonset_budget_mib(platform: Platform, release: HelmRelease | None) -> int:
    """Memory (MiB) the DaemonSets of a GPU node of the platform request."""
    return platform.system_daemonset_mib + operand_memory_mib(release, platform.catalog.data_dir)
