"""The whole decision for a stack: every pool, cluster and add-on, decided in pure code.

``build_plan`` is the single entry point that ``infra.program`` (Pulumi), ``infra.plan`` (offline)
and ``quota.check`` share. It raises ``ConfigErrors`` with every problem at once; a plan that
exists is complete, so components never decide anything.
"""

from __future__ import annotations

from infra.core.catalog.vendored import Catalog
from infra.core.config.stack import StackConfig
from infra.core.errors import Issues
from infra.core.observed import Observed
from infra.core.operator import plan_operator
from infra.core.planned import Plan
from infra.core.platform import plan_platform
from infra.core.receivers import check_plan
from infra.core.scheduling.proof import proof_issues
from infra.core.warm import plan_warm

__all__ = ["Plan", "build_plan"]


def build_plan(
    config: StackConfig, catalog: Catalog | None = None, observed: Observed | None = None
) -> Plan:
    """Decide everything for ``config`` over what the observe step read (``None``: offline).

    Raises:
        ConfigErrors: every rule the stack breaks, each as ``<key path>: <reason>``.
    """
    issues = Issues()
    observed = observed or Observed.none()
    platform = plan_platform(config, catalog or Catalog.load(), issues, observed)
    pools = platform.pools
    operator = plan_operator(config, pools, platform, issues)
    issues.raise_if_any()
    warm = plan_warm(config, pools, platform, operator.scheduling) if operator is not None else None
    notes = [*platform.notes, *(warm.notes if warm is not None else ())]
    plan = Plan(
        config=config,
        platform=platform,
        operator=operator,
        warm=warm,
        notes=tuple(notes),
        observed=observed,
    )
    # The backstop: what the plan sends, checked as each receiver checks it (infra.core.receivers).
    issues.extend(check_plan(plan))
    issues.raise_if_any()
    # Every pod the plan creates or describes lands and is admitted (well under a millisecond
    # per sample stack, so on every plan, not only where a pool sets `warm`).
    issues.extend(proof_issues(plan))
    issues.raise_if_any()
    return plan
