"""Planning for ``platform: kubernetes`` (an existing cluster via kubeconfig; issue 4).

Stub written by the foundation; the GPU Operator work replaces it.
"""

from __future__ import annotations

from dataclasses import dataclass

from infra.core.catalog import Catalog
from infra.core.config import StackConfig
from infra.core.errors import Issues
from infra.core.pools import PoolHints


@dataclass(frozen=True, slots=True, kw_only=True)
class KubernetesPlan:
    """An existing cluster and the GPU pools it already has."""

    pools: tuple[PoolHints, ...] = ()


def plan_kubernetes(config: StackConfig, catalog: Catalog, issues: Issues) -> KubernetesPlan:
    """Describe the existing cluster; problems go to ``issues``."""
    del config, catalog
    issues.add("platform", "kubernetes is not implemented yet")
    return KubernetesPlan()
