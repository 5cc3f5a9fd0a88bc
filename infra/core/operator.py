"""GPU Operator planning: preset, Helm values, sharing/MIG, namespaces (issue 4).

Stub written by the foundation; the GPU Operator work replaces it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from infra.core.config import StackConfig
from infra.core.errors import Issues
from infra.core.pools import PoolHints


@dataclass(frozen=True, slots=True, kw_only=True)
class OperatorPlan:
    """The GPU Operator release and what goes with it."""

    namespace: str = "gpu-operator"


def plan_operator(
    config: StackConfig, pools: Sequence[PoolHints], issues: Issues
) -> OperatorPlan | None:
    """Decide the operator install, or ``None`` when disabled; problems go to ``issues``."""
    del pools, issues
    if not config.operator.enabled:
        return None
    return OperatorPlan()
