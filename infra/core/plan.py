"""The whole decision for a stack: every pool, cluster and add-on, decided in pure code.

``build_plan`` is the single entry point that ``infra.program`` (Pulumi), ``infra.plan`` (offline)
and ``quota.check`` share. It raises ``ConfigErrors`` with every problem at once; a plan that
exists is complete, so components never decide anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from infra.core.catalog.shapes import user_shapes
from infra.core.catalog.vendored import Catalog
from infra.core.config.stack import StackConfig
from infra.core.errors import Issues
from infra.core.observed import Observed
from infra.core.operator import OperatorPlan, plan_operator
from infra.core.pools import PoolHints
from infra.core.receivers import check_plan
from infra.core.scheduling.proof import proof_issues
from infra.core.warm import WarmPlan, plan_warm

if TYPE_CHECKING:  # each platform's planner is imported only for a stack of that platform
    from infra.core.eks.planner import EksPlan
    from infra.core.gke.planner import GkePlan
    from infra.core.kubernetes.planner import KubernetesPlan


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """Everything the Pulumi program will build for one stack.

    Exactly one of ``gke`` / ``eks`` / ``kubernetes`` is set, per ``config.platform``.
    """

    config: StackConfig
    gke: GkePlan | None = None
    eks: EksPlan | None = None
    kubernetes: KubernetesPlan | None = None
    operator: OperatorPlan | None = None
    warm: WarmPlan | None = None  # placeholders of the pools with gpuPools[].warm > 0
    notes: tuple[str, ...] = ()  # what a person should know (e.g. facts declared by the stack)
    # What the plan read from the live platform before deciding (Observed.none(): offline).
    observed: Observed = field(default_factory=Observed.none)
    # The catalog the plan was decided with (vendored data plus the stack's declared shapes).
    catalog: Catalog | None = field(default=None, compare=False, repr=False)

    @property
    def pools(self) -> tuple[PoolHints, ...]:
        """Platform-neutral hints of every GPU pool, in stack-file order."""
        if self.gke is not None:
            return tuple(p.hints for p in self.gke.pools)
        if self.eks is not None:
            return tuple(g.hints for g in self.eks.groups)
        if self.kubernetes is not None:
            return self.kubernetes.pools
        return ()


def build_plan(
    config: StackConfig, catalog: Catalog | None = None, observed: Observed | None = None
) -> Plan:
    """Decide everything for ``config`` over what the observe step read (``None``: offline).

    Raises:
        ConfigErrors: every rule the stack breaks, each as ``<key path>: <reason>``.
    """
    issues = Issues()
    catalog = catalog or Catalog.load()
    shapes, notes = user_shapes(config, catalog, issues)
    catalog = catalog.with_user_shapes(shapes)
    observed = observed or Observed.none()
    gke = eks = kube = None
    if config.platform == "gke":
        from infra.core.gke.planner import plan_gke

        gke = plan_gke(config, catalog, issues, observed.gke)
        pools = tuple(p.hints for p in gke.pools)
        notes = [*notes, *gke.notes]
    elif config.platform == "eks":
        from infra.core.eks.planner import plan_eks

        eks = plan_eks(config, catalog, issues, observed.eks)
        pools = tuple(g.hints for g in eks.groups)
        notes = [*notes, *eks.notes]
    else:
        from infra.core.kubernetes.planner import plan_kubernetes

        kube = plan_kubernetes(config, catalog, issues)
        pools = kube.pools
    operator = plan_operator(config, pools, issues)
    issues.raise_if_any()
    warm = plan_warm(config, pools, operator.scheduling) if operator is not None else None
    if warm is not None:
        notes = [*notes, *warm.notes]
    plan = Plan(
        config=config,
        gke=gke,
        eks=eks,
        kubernetes=kube,
        operator=operator,
        warm=warm,
        notes=tuple(notes),
        observed=observed,
        catalog=catalog,
    )
    # The backstop: what the plan sends, checked as each receiver checks it (infra.core.receivers).
    issues.extend(check_plan(plan))
    issues.raise_if_any()
    # Every pod the plan creates or describes lands and is admitted (well under a millisecond
    # per sample stack, so on every plan, not only where a pool sets `warm`).
    issues.extend(proof_issues(plan))
    issues.raise_if_any()
    return plan
