"""An existing cluster reached through a kubeconfig (issue 4). Stub written by the foundation."""

from __future__ import annotations

from infra.components.handles import ClusterHandle
from infra.core.plan import Plan


def build_kubernetes(plan: Plan) -> ClusterHandle:
    """Attach to the existing cluster named by the stack's kubeconfig/context."""
    raise NotImplementedError(plan.config.stack)
