"""The one registry of platforms: a stack's ``platform`` name -> its implementation.

The switch of aws/karpenter-provider-aws ``pkg/providers/amifamily/resolver.go`` ``GetAMIFamily``:
the only place that maps a platform's name to its code. Each entry imports its platform's package
when asked, so a plan imports only its own platform (``scripts/bench_plan.py`` measures start-up);
``COMPONENTS`` names the module of ``infra/components`` and its function that builds each
platform's cluster (``(plan) -> ClusterHandle``), imported by the Pulumi program only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from infra.core.catalog.vendored import Catalog
    from infra.core.config.stack import StackConfig
    from infra.core.errors import Issues
    from infra.core.observed import Observed
    from infra.core.platform import Platform


class Planner(Protocol):
    """One platform's entry: plan ``config``'s platform over ``catalog`` (its declared shapes
    added) and what the observe step read; problems go to ``issues``."""

    def __call__(
        self, config: StackConfig, catalog: Catalog, issues: Issues, observed: Observed
    ) -> Platform: ...


# Each entry hands its platform only its own part of the observation.
def _over_own_part(plan: Callable[..., Platform], part: type) -> Planner:
    def planner(
        config: StackConfig, catalog: Catalog, issues: Issues, observed: Observed
    ) -> Platform:
        return plan(config, catalog, issues, observed.part(part))

    return planner


def _gke() -> Planner:
    from infra.core.gke.platform import plan

    return _over_own_part(plan, _gke_observation())


def _eks() -> Planner:
    from infra.core.eks.platform import plan

    return _over_own_part(plan, _eks_observation())


def _kubernetes() -> Planner:
    from infra.core.kubernetes.platform import plan

    def planner(
        config: StackConfig,
        catalog: Catalog,
        issues: Issues,
        observed: Observed,  # noqa: ARG001  # an existing cluster's kubeconfig: nothing read
    ) -> Platform:
        return plan(config, catalog, issues)

    return planner


PLANNERS: Mapping[str, Callable[[], Planner]] = {
    "gke": _gke,
    "eks": _eks,
    "kubernetes": _kubernetes,
}
# Each platform's observe step (``infra/observe``): ``(config) -> its observed value``, run by
# ``pulumi up`` before planning; a platform that reads nothing has none.
OBSERVERS: Mapping[str, tuple[str, str]] = {
    "gke": ("infra.observe.gke", "observe_gke"),
    "eks": ("infra.observe.eks", "observe_eks"),
}
COMPONENTS: Mapping[str, tuple[str, str]] = {
    "gke": ("infra.components.gke", "build_gke"),
    "eks": ("infra.components.eks", "build_eks"),
    "kubernetes": ("infra.components.kubernetes_cluster", "build_kubernetes"),
}


def plan_platform(
    config: StackConfig, catalog: Catalog, issues: Issues, observed: Observed
) -> Platform:
    """Plan ``config``'s platform (its declared shapes added to ``catalog``) over what its observe
    step read; problems go to ``issues``."""
    return PLANNERS[config.platform]()(config, catalog, issues, observed)


def observed_from_json(doc: Mapping[str, Any]) -> Observed:
    """The ``Observed`` that ``Observed.to_json`` wrote (``{}``: nothing read).

    Raises:
        ValueError: more than one platform, or one that observes nothing, or a key its type
            never writes.
    """
    from infra.core.observed import Observed

    if not doc:
        return Observed.none()
    if unknown := sorted(set(doc) - set(_OBSERVATIONS)):
        raise ValueError(
            f"observed: unknown platform(s) {', '.join(unknown)} "
            f"(those that observe: {', '.join(sorted(_OBSERVATIONS))})"
        )
    if len(doc) != 1:
        raise ValueError(f"observed: one platform's observation, not {len(doc)}")
    ((name, value),) = doc.items()
    return Observed(name, _OBSERVATIONS[name]().from_json(value))


def _gke_observation() -> Any:
    from infra.core.gke.observed import GkeObserved

    return GkeObserved


def _eks_observation() -> Any:
    from infra.core.eks.observed import EksObserved

    return EksObserved


_OBSERVATIONS: Mapping[str, Callable[[], Any]] = {"gke": _gke_observation, "eks": _eks_observation}
