"""The decided stack: ``Plan``, what ``infra.core.plan.build_plan`` returns and every check, view and
component reads. Its platform's part is held through ``Platform`` (``infra.core.platform``), so
nothing here, nor in the checks that run on it, knows which platform it is."""

from __future__ import annotations

from dataclasses import dataclass, field

from infra.core.catalog.vendored import Catalog
from infra.core.config.stack import StackConfig
from infra.core.observed import Observed
from infra.core.operator.model import OperatorPlan
from infra.core.platform import Platform
from infra.core.pools import PoolHints
from infra.core.warm import WarmPlan


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """Everything the Pulumi program will build for one stack.

    Attributes:
        config: the parsed stack.
        platform: the platform's plan (``config.platform``'s implementation of ``Platform``).
        operator: the GPU Operator and the workload helpers around it.
        warm: placeholders of the pools with ``gpuPools[].warm`` > 0.
        notes: what a person should know (e.g. facts declared by the stack).
        observed: what the plan read from the live platform before deciding
            (``Observed.none()``: offline).
    """

    config: StackConfig
    platform: Platform
    operator: OperatorPlan | None = None
    warm: WarmPlan | None = None
    notes: tuple[str, ...] = ()
    observed: Observed = field(default_factory=Observed.none)

    @property
    def catalog(self) -> Catalog:
        """The catalog the plan was decided with (vendored data plus the stack's declared
        shapes): the platform's."""
        return self.platform.catalog

    def assumed(self) -> list[str]:
        """``--json`` ``assumed``: offline, what the plan took for granted where ``pulumi up``
        reads the live platform first (``[]`` once it was planned over what it observed)."""
        if self.observed.value is not None:
            return []
        return list(self.platform.offline_assumptions)

    @property
    def pools(self) -> tuple[PoolHints, ...]:
        """Platform-neutral hints of every GPU pool, in stack-file order."""
        return self.platform.pools
