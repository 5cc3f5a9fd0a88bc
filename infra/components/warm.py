"""Warm GPUs: the placeholders' namespace, PriorityClass and one Deployment per warm pool.

Thin: every object comes from ``WarmPlan`` (``infra.core.warm``). The Deployments wait for the
cluster's ``ready`` resources, the pools they hold nodes of and the GKE ComputeClass they select,
never for the placeholders to run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from infra.components.handles import ClusterHandle
from infra.components.lifecycle import with_lifecycle
from infra.core.plan import Plan
from infra.core.warm import WarmPlan


class WarmGpus(pulumi.ComponentResource):
    """Placeholder pods that keep ``gpuPools[].warm`` nodes of each pool ready.

    Attributes:
        deployments: per pool, its placeholder Deployment.
    """

    def __init__(
        self,
        name: str,
        plan: WarmPlan,
        provider: k8s.Provider,
        ready: Sequence[pulumi.Resource],
        opts: pulumi.ResourceOptions | None = None,
        *,
        owner: pulumi.Resource | None = None,
        pools: Mapping[str, pulumi.Resource] | None = None,
        classes: Mapping[str, pulumi.Resource] | None = None,
    ) -> None:
        super().__init__("gpu-infra:k8s:WarmGpus", name, None, opts)
        for note in plan.notes:
            pulumi.log.warn(note, resource=self)

        def child(token: str, deps: Sequence[pulumi.Resource]) -> pulumi.ResourceOptions:
            base = pulumi.ResourceOptions(parent=self, provider=provider, depends_on=list(deps))
            return with_lifecycle(base, token, cluster=owner)

        ns_meta: Mapping[str, Any] = plan.namespace["metadata"]
        ns = k8s.core.v1.Namespace(
            f"{name}-ns",
            metadata=k8s.meta.v1.ObjectMetaArgs(**ns_meta),
            opts=child("kubernetes:core/v1:Namespace", ready),
        )
        pc = plan.priority_class
        klass = k8s.scheduling.v1.PriorityClass(
            f"{name}-priority",
            metadata=k8s.meta.v1.ObjectMetaArgs(**pc["metadata"]),
            value=pc["value"],
            preemption_policy=pc["preemptionPolicy"],
            global_default=pc["globalDefault"],
            description=pc["description"],
            opts=child("kubernetes:scheduling.k8s.io/v1:PriorityClass", ready),
        )
        self.deployments: dict[str, k8s.apps.v1.Deployment] = {}
        for t in plan.targets:
            d = t.deployment
            held = [p for m in t.members if (p := (pools or {}).get(m)) is not None]
            # A ComputeClass pool's placeholders select the class: without it they never land.
            if (cc := (classes or {}).get(t.pool)) is not None:
                held.append(cc)
            self.deployments[t.pool] = k8s.apps.v1.Deployment(
                f"{name}-{t.pool}",
                metadata=k8s.meta.v1.ObjectMetaArgs(**d["metadata"]),
                spec=d["spec"],
                opts=child("kubernetes:apps/v1:Deployment", [*ready, ns, klass, *held]),
            )
        self.register_outputs({"deployments": sorted(self.deployments)})


def build_warm(plan: Plan, cluster: ClusterHandle) -> dict[str, Any]:
    """The placeholders of the plan's warm pools; returns the ``warmGpus`` stack output."""
    warm = plan.warm
    if warm is None:
        return {}
    WarmGpus(
        "warm-gpus",
        warm,
        provider=cluster.provider,
        ready=cluster.ready,
        owner=cluster.owner,
        pools=cluster.pools,
        classes=cluster.classes,
    )
    return {
        "warmGpus": {
            t.pool: {"replicas": t.replicas, "resource": t.resource, "perPlaceholder": t.count}
            for t in warm.targets
        }
    }
