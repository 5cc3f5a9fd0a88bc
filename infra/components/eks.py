"""EKS cluster and GPU node groups (issue 3). Stub written by the foundation."""

from __future__ import annotations

from infra.components.handles import ClusterHandle
from infra.core.plan import Plan


def build_eks(plan: Plan) -> ClusterHandle:
    """Build (or attach to) the EKS cluster and its GPU node groups."""
    raise NotImplementedError(plan.config.stack)
