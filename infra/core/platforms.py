"""The one registry of platforms: a stack's ``platform`` name -> its implementation.

The switch of aws/karpenter-provider-aws ``pkg/providers/amifamily/resolver.go`` ``GetAMIFamily``:
the only place that maps a platform's name to its code. Each entry imports its platform's package
when asked, so a plan imports only its own platform (``scripts/bench_plan.py`` measures start-up);
``COMPONENTS`` names the module of ``infra/components`` and its function that builds each
platform's cluster (``(plan) -> ClusterHandle``), imported by the Pulumi program only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from infra.core.catalog.vendored import Catalog
    from infra.core.config.stack import StackConfig
    from infra.core.errors import Issues
    from infra.core.platform import Planner, Platform


def _gke() -> Planner:
    from infra.core.gke.platform import plan

    return plan


def _eks() -> Planner:
    from infra.core.eks.platform import plan

    return plan


def _kubernetes() -> Planner:
    from infra.core.kubernetes.platform import plan

    return plan


PLANNERS: Mapping[str, Callable[[], Planner]] = {
    "gke": _gke,
    "eks": _eks,
    "kubernetes": _kubernetes,
}
COMPONENTS: Mapping[str, tuple[str, str]] = {
    "gke": ("infra.components.gke", "build_gke"),
    "eks": ("infra.components.eks", "build_eks"),
    "kubernetes": ("infra.components.kubernetes_cluster", "build_kubernetes"),
}


def plan_platform(config: StackConfig, catalog: Catalog, issues: Issues) -> Platform:
    """Plan ``config``'s platform (its declared shapes added to ``catalog``); problems go to
    ``issues``."""
    return PLANNERS[config.platform]()(config, catalog, issues)
