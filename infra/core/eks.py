"""EKS planning: GPU node groups, AMI choice, AZ filtering, autoscaler tags (issue 3).

Stub written by the foundation; the EKS work replaces it.
"""

from __future__ import annotations

from dataclasses import dataclass

from infra.core.catalog import Catalog
from infra.core.config import StackConfig
from infra.core.errors import Issues
from infra.core.pools import PoolHints


@dataclass(frozen=True, slots=True, kw_only=True)
class EksGroupPlan:
    """One EKS GPU node group."""

    hints: PoolHints


@dataclass(frozen=True, slots=True, kw_only=True)
class EksPlan:
    """The EKS cluster and its GPU node groups."""

    groups: tuple[EksGroupPlan, ...] = ()


def plan_eks(config: StackConfig, catalog: Catalog, issues: Issues) -> EksPlan:
    """Decide the EKS cluster and node groups; problems go to ``issues``."""
    del config, catalog
    issues.add("platform", "eks is not implemented yet")
    return EksPlan()
