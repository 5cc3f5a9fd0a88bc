"""An existing cluster reached through a kubeconfig (``platform: kubernetes``).

Nothing is created but the Kubernetes provider: the cluster, its nodes and its container runtime
already exist. The GPU Operator and workload helpers are then built on the returned handle.
"""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from infra.components.handles import ClusterHandle
from infra.core import lifecycle
from infra.core.kubernetes.platform import kubernetes_plan
from infra.core.plan import Plan


def build_kubernetes(plan: Plan) -> ClusterHandle:
    """Attach to the existing cluster named by the stack's kubeconfig path and context.

    The handle's ``kubeconfig`` is the kubeconfig *path* (a secret output): the file holds
    credentials the user already has, so gpu-infra neither reads nor re-exports its contents.
    """
    kp = kubernetes_plan(plan.platform)
    provider = k8s.Provider(
        f"{kp.cluster_name}-k8s",
        # Explicit file and context (required by the planner) and a stable identity: a changed
        # kubeconfig path updates the provider instead of replacing every object it manages.
        k8s.ProviderArgs(
            kubeconfig=kp.kubeconfig,
            context=kp.context,
            cluster_identifier=lifecycle.cluster_identifier("kubernetes", kp.cluster_name),
        ),
    )
    return ClusterHandle(
        name=kp.cluster_name,
        endpoint="",
        kubeconfig=pulumi.Output.secret(kp.kubeconfig or ""),
        provider=provider,
        ready=[],
    )
