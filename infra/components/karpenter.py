"""The Karpenter controller component: interruption queue and rules, IAM role, Helm release.

Thin: ``infra.core.eks.karpenter.controller`` decides names, values and policies; this maps them
onto pulumi-aws and the Helm release once the ARNs they need exist.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from infra.components.eks_addons import HELM_RELEASE, workload_role
from infra.components.helm import Chart, helm_release
from infra.components.lifecycle import with_lifecycle
from infra.core.eks import planner as core
from infra.core.eks.karpenter import controller as ctl

if TYPE_CHECKING:
    from infra.components.eks import EksCluster

QUEUE = "aws:sqs/queue:Queue"
QUEUE_POLICY = "aws:sqs/queuePolicy:QueuePolicy"
EVENT_RULE = "aws:cloudwatch/eventRule:EventRule"
EVENT_TARGET = "aws:cloudwatch/eventTarget:EventTarget"
EC2_TAG = "aws:ec2/tag:Tag"


class KarpenterController(pulumi.ComponentResource):
    """Karpenter by Helm on the system nodes, with its interruption queue and IAM role."""

    def __init__(
        self,
        name: str,
        plan: core.EksPlan,
        cluster: EksCluster,
        *,
        provider: k8s.Provider,
        depends_on: Sequence[pulumi.Resource],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpu-infra:aws:Karpenter", name, None, opts)
        k = plan.karpenter
        assert k is not None
        queue = self._queue(name, k)
        self.discovery_tags = self._discovery_tags(name, cluster, k)
        role, assoc = workload_role(
            self, name, plan, cluster, k.namespace, k.service_account, "Karpenter controller"
        )
        policy = aws.iam.RolePolicy(
            f"{name}-policy",
            aws.iam.RolePolicyArgs(
                role=role.id,
                policy=pulumi.Output.all(cluster.node_role.arn, queue.arn).apply(
                    lambda a: json.dumps(ctl.iam_policy(k, node_role_arn=a[0], queue_arn=a[1]))
                ),
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        values = dict(k.values)
        if plan.identity == "irsa":
            values["serviceAccount"] = {
                **k.values["serviceAccount"],
                "annotations": {"eks.amazonaws.com/role-arn": role.arn},
            }
        self.crd_release = self._crd_release(name, k, cluster, provider, depends_on)
        self.release = helm_release(
            f"{name}-release",
            Chart(k.release, k.chart, k.version, "", k.namespace),  # an OCI chart: no repo
            values=values,
            atomic=True,
            skip_crds=True,  # the karpenter-crd release owns them
            opts=with_lifecycle(
                pulumi.ResourceOptions(
                    parent=self,
                    provider=provider,
                    # Pod Identity injects credentials only into pods created after the
                    # association exists (EKS "Assign an IAM role to a Kubernetes service account").
                    depends_on=[
                        role,
                        policy,
                        queue,
                        self.crd_release,
                        *([assoc] if assoc else []),
                        *depends_on,
                    ],
                ),
                HELM_RELEASE,
                cluster=cluster.created,
            ),
        )
        self.register_outputs(
            {
                "roleArn": role.arn,
                "release": self.release.name,
                "crdRelease": self.crd_release.name,
                "queueArn": queue.arn,
            }
        )

    def _crd_release(
        self,
        name: str,
        k: ctl.KarpenterControllerPlan,
        cluster: EksCluster,
        provider: k8s.Provider,
        depends_on: Sequence[pulumi.Resource],
    ) -> k8s.helm.v3.Release:
        """The karpenter-crd release: the CRDs, upgraded with each chart version."""
        return helm_release(
            f"{name}-crds",
            Chart(k.crd_release, k.crd_chart, k.version, "", k.namespace),  # an OCI chart: no repo
            values={},
            atomic=True,
            opts=with_lifecycle(
                pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[*depends_on]),
                HELM_RELEASE,
                cluster=cluster.created,
            ),
        )

    def _queue(self, name: str, k: ctl.KarpenterControllerPlan) -> aws.sqs.Queue:
        """The interruption queue, its policy, and the EventBridge rules feeding it."""
        child = pulumi.ResourceOptions(parent=self)
        queue = aws.sqs.Queue(
            f"{name}-queue",
            aws.sqs.QueueArgs(
                name=k.queue_name,
                message_retention_seconds=ctl.QUEUE_RETENTION_SECONDS,
                sqs_managed_sse_enabled=True,
            ),
            opts=with_lifecycle(child, QUEUE),
        )
        aws.sqs.QueuePolicy(
            f"{name}-queue",
            aws.sqs.QueuePolicyArgs(
                queue_url=queue.url,
                policy=queue.arn.apply(lambda arn: json.dumps(ctl.queue_policy(arn))),
            ),
            opts=with_lifecycle(child, QUEUE_POLICY),
        )
        for r in k.rules:
            rule = aws.cloudwatch.EventRule(
                f"{name}-{r.key}",
                aws.cloudwatch.EventRuleArgs(
                    name=r.name,
                    description=f"{r.detail_type} to Karpenter of {k.cluster_name}",
                    event_pattern=json.dumps(r.pattern),
                ),
                opts=with_lifecycle(child, EVENT_RULE),
            )
            aws.cloudwatch.EventTarget(
                f"{name}-{r.key}",
                aws.cloudwatch.EventTargetArgs(
                    rule=rule.name, arn=queue.arn, target_id=ctl.TARGET_ID
                ),
                opts=with_lifecycle(child, EVENT_TARGET),
            )
        return queue

    def _discovery_tags(
        self, name: str, cluster: EksCluster, k: ctl.KarpenterControllerPlan
    ) -> list[aws.ec2.Tag]:
        """``karpenter.sh/discovery`` on the cluster security group EKS made for this stack's
        cluster; subnets of a VPC this stack creates get it at creation (``EksNetwork``), given
        ones are selected by ID and never tagged (``pools.node_class``)."""
        key, value = k.discovery_tag
        child = with_lifecycle(pulumi.ResourceOptions(parent=self), EC2_TAG)
        targets: dict[str, pulumi.Input[str]] = {"cluster-sg": cluster.security_group_id}
        return [
            aws.ec2.Tag(
                f"{name}-discovery-{suffix}",
                aws.ec2.TagArgs(resource_id=resource_id, key=key, value=value),
                opts=child,
            )
            for suffix, resource_id in targets.items()
        ]
