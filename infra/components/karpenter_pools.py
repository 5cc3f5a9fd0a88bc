"""Karpenter GPU pools: one EC2NodeClass and one NodePool per pool (``infra.core.eks.karpenter``).

Thin: the manifests are decided and checked against the pinned CRDs in core; here they become
``kubernetes.apiextensions.CustomResource`` objects. The node role is the cluster's own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from infra.components.lifecycle import with_lifecycle
from infra.core.eks.karpenter.pools import KarpenterPoolPlan

NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"


class KarpenterGpuPool(pulumi.ComponentResource):
    """One GPU pool's EC2NodeClass and NodePool.

    ``controller``: the Karpenter CRD and controller releases and the discovery tags both
    objects wait for, and which Pulumi therefore deletes after them, so the controller still runs
    to terminate the pool's instances (their finalizers) on a destroy or a removed pool.
    ``depends_on`` holds every managed add-on too (the EBS CSI driver detaches the volumes a
    drain waits for), and both objects' delete timeout is the drain budget
    (``plan.delete_timeout_minutes``), so Pulumi deletes them first and waits for the drain.
    """

    def __init__(
        self,
        name: str,
        plan: KarpenterPoolPlan,
        *,
        node_role_name: pulumi.Input[str],
        provider: k8s.Provider,
        depends_on: Sequence[pulumi.Resource],
        controller: Sequence[pulumi.Resource] = (),
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpu-infra:aws:KarpenterGpuPool", name, None, opts)
        after = [*depends_on, *controller]
        drain = plan.delete_timeout_minutes or None
        self.node_class = self._custom(
            f"{name}-nodeclass", plan.node_class_with_role(node_role_name), NODE_CLASS,
            pulumi.ResourceOptions(parent=self, provider=provider, depends_on=after), drain,
        )  # fmt: skip
        self.node_pool = self._custom(
            f"{name}-nodepool", plan.node_pool, NODE_POOL,
            pulumi.ResourceOptions(
                parent=self, provider=provider, depends_on=[*after, self.node_class]
            ),
            drain,
        )  # fmt: skip
        self.register_outputs({"nodeClass": plan.name, "nodePool": plan.name})

    @staticmethod
    def _custom(
        name: str,
        manifest: Mapping[str, Any],
        type_token: str,
        opts: pulumi.ResourceOptions,
        delete_minutes: int | None,
    ) -> k8s.apiextensions.CustomResource:
        """A manifest decided in core as a CustomResource with its lifecycle options."""
        return k8s.apiextensions.CustomResource(
            name,
            api_version=manifest["apiVersion"],
            kind=manifest["kind"],
            metadata=k8s.meta.v1.ObjectMetaArgs(**manifest["metadata"]),
            spec=manifest["spec"],
            opts=with_lifecycle(opts, type_token, timeout_minutes=delete_minutes),
        )
