"""What the scheduling proof reads of a plan (``infra.core.plan.Plan``, which runs the proof, so
this package names the shape instead of importing it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from infra.core.catalog.vendored import Catalog
    from infra.core.config.stack import StackConfig
    from infra.core.eks.planner import EksPlan
    from infra.core.gke.planner import GkePlan
    from infra.core.kubernetes.planner import KubernetesPlan
    from infra.core.operator.model import OperatorPlan
    from infra.core.pools import PoolHints
    from infra.core.warm import WarmPlan


class Plan(Protocol):
    """A decided stack, as ``infra.core.plan.Plan`` holds it."""

    @property
    def config(self) -> StackConfig: ...
    @property
    def gke(self) -> GkePlan | None: ...
    @property
    def eks(self) -> EksPlan | None: ...
    @property
    def kubernetes(self) -> KubernetesPlan | None: ...
    @property
    def operator(self) -> OperatorPlan | None: ...
    @property
    def warm(self) -> WarmPlan | None: ...
    @property
    def catalog(self) -> Catalog | None: ...
    @property
    def pools(self) -> tuple[PoolHints, ...]: ...
