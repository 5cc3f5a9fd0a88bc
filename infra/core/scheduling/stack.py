"""What the scheduling proof reads of a plan (``infra.core.plan.Plan``, which runs the proof, so
this package names the shape instead of importing it): what the receiver check reads, and more."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from infra.core.receivers import PlannedStack

if TYPE_CHECKING:
    from infra.core.catalog.vendored import Catalog
    from infra.core.kubernetes.planner import KubernetesPlan
    from infra.core.pools import PoolHints


class Plan(PlannedStack, Protocol):
    """A decided stack, as ``infra.core.plan.Plan`` holds it."""

    @property
    def kubernetes(self) -> KubernetesPlan | None: ...
    @property
    def catalog(self) -> Catalog | None: ...
    @property
    def pools(self) -> tuple[PoolHints, ...]: ...
