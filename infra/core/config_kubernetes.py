"""Stack-config schema for ``platform: kubernetes``: an existing cluster reached through a kubeconfig.

Owned by the GPU Operator work (issue 4).
"""

from __future__ import annotations

from infra.core.config_base import ClusterBase, PoolBase


class KubernetesPoolSpec(PoolBase):
    """A set of existing GPU nodes, described so the operator can target them."""


class KubernetesClusterSpec(ClusterBase):
    """An existing cluster; ``location`` is free text (a site or rack name)."""

    kubeconfig: str | None = None  # path; default: the KUBECONFIG the provider finds
    context: str | None = None
