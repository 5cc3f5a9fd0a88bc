"""Stack-config schema for ``platform: eks``: the cluster block and GPU node groups.

Owned by the EKS work (issue 3); this first version carries only what the foundation needs.
"""

from __future__ import annotations

from pydantic import Field

from infra.core.config_base import ClusterBase, PoolBase


class EksPoolSpec(PoolBase):
    """One EKS managed GPU node group."""

    machine_type: str | list[str]  # type: ignore[assignment]  # a list only for same-shape spot types


class EksClusterSpec(ClusterBase):
    """The EKS cluster: created with pulumi-eks or attached with ``existing: true``."""

    kubernetes_version: str = Field(default="1.33", pattern=r"^1\.[0-9]{2}$")
