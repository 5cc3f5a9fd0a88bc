"""What an EKS stack runs in the cluster: managed add-ons, cluster-autoscaler and device plugins.

Thin by design: every value comes from ``infra.core.eks`` (``addons``, ``autoscaler_plan``,
``device_plugin``, ``access``); nothing here decides. Each release's IAM role is made by
``workload_role`` (IRSA or EKS Pod Identity), which the Karpenter controller uses too.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from infra.components.helm import helm_release
from infra.components.lifecycle import with_lifecycle
from infra.core.eks import planner as core
from infra.core.eks.access import workload_trust_policy
from infra.core.eks.device_plugin import DevicePluginPlan
from infra.core.eks.names import IAM_ROLE_NAME_MAX, fit_autonamed

if TYPE_CHECKING:
    from infra.components.eks import EksCluster

HELM_RELEASE = "kubernetes:helm.sh/v3:Release"


class EksAddons(pulumi.ComponentResource):
    """EKS managed add-ons, after the system group; the EBS CSI driver gets its own role."""

    def __init__(
        self,
        name: str,
        plan: core.EksPlan,
        cluster: EksCluster,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpu-infra:aws:Addons", name, None, opts)
        self.ready: list[pulumi.Resource] = []
        self.by_name: dict[str, pulumi.Resource] = {}
        for addon in plan.addons:
            extra: dict[str, Any] = {}
            deps: list[pulumi.Resource] = list(cluster.ready)
            if addon.service_account is not None and addon.policy_arn is not None:
                role, _ = workload_role(
                    self,
                    f"{name}-{addon.name}",
                    plan,
                    cluster,
                    "kube-system",
                    addon.service_account,
                    f"{addon.name} add-on",
                    # With Pod Identity the add-on's podIdentityAssociations creates the
                    # association; a second one fails "ResourceInUseException: Association already
                    # exists" (eksctl-io/eksctl#7753), so the role comes alone.
                    associate=False,
                )
                aws.iam.RolePolicyAttachment(
                    f"{name}-{addon.name}",
                    aws.iam.RolePolicyAttachmentArgs(role=role.name, policy_arn=addon.policy_arn),
                    opts=pulumi.ResourceOptions(parent=self),
                )
                if plan.identity == "pod-identity":
                    extra["pod_identity_associations"] = [
                        aws.eks.AddonPodIdentityAssociationArgs(
                            role_arn=role.arn, service_account=addon.service_account
                        )
                    ]
                else:
                    extra["service_account_role_arn"] = role.arn
            # The version pinned for the cluster's minor, else EKS's default for it as observed
            # (DescribeAddonVersions defaultVersion); either way a kubernetesVersion bump updates it.
            # Exact, not a minimum: EKS never updates an add-on by itself (user guide,
            # updating-an-add-on), so only a hand update leaves the pin (`up --refresh` reverts it).
            self.by_name[addon.name] = aws.eks.Addon(
                f"{name}-{addon.name}",
                aws.eks.AddonArgs(
                    cluster_name=cluster.name,
                    addon_name=addon.name,
                    addon_version=addon.version,
                    # Adopt the self-managed copies EKS bootstrapped (aws-node, kube-proxy,
                    # CoreDNS) instead of failing on them (CreateAddon resolveConflicts).
                    resolve_conflicts_on_create="OVERWRITE",
                    resolve_conflicts_on_update="PRESERVE",
                    **extra,
                ),
                opts=with_lifecycle(
                    pulumi.ResourceOptions(parent=self, depends_on=deps), "aws:eks/addon:Addon"
                ),
            )
            self.ready.append(self.by_name[addon.name])
        self.register_outputs({"addons": [a.name for a in plan.addons]})


def workload_role(
    parent: pulumi.Resource,
    name: str,
    plan: core.EksPlan,
    cluster: EksCluster,
    namespace: str,
    service_account: str,
    what: str,
    *,
    associate: bool = True,
) -> tuple[aws.iam.Role, aws.eks.PodIdentityAssociation | None]:
    """An IAM role a Kubernetes service account assumes: IRSA or EKS Pod Identity.

    Trusted per ``infra.core.eks.access.workload_trust_policy``; with Pod Identity also an association
    (``associate``; an add-on brings its own through ``podIdentityAssociations``).
    """
    if plan.identity == "pod-identity":
        trust: pulumi.Input[str] = json.dumps(
            workload_trust_policy(plan.identity, namespace, service_account)
        )
    else:
        trust = pulumi.Output.all(cluster.oidc_provider_arn, cluster.oidc_issuer).apply(
            lambda a: json.dumps(
                workload_trust_policy(plan.identity, namespace, service_account, a[0], a[1])
            )
        )
    role = aws.iam.Role(
        fit_autonamed(f"{name}-role", IAM_ROLE_NAME_MAX),
        aws.iam.RoleArgs(description=f"{what} ({plan.identity})", assume_role_policy=trust),
        opts=pulumi.ResourceOptions(parent=parent),
    )
    assoc = None
    if plan.identity == "pod-identity" and associate:
        assoc = aws.eks.PodIdentityAssociation(
            f"{name}-pod-identity",
            aws.eks.PodIdentityAssociationArgs(
                cluster_name=cluster.name,
                namespace=namespace,
                service_account=service_account,
                role_arn=role.arn,
            ),
            opts=pulumi.ResourceOptions(parent=parent),
        )
    return role, assoc


class ClusterAutoscaler(pulumi.ComponentResource):
    """cluster-autoscaler by Helm, with an IAM role limited to this stack's ASGs."""

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
        super().__init__("gpu-infra:aws:ClusterAutoscaler", name, None, opts)
        a = plan.autoscaler
        assert a is not None
        for note in a.notes:
            pulumi.log.warn(note, resource=self)
        role, assoc = workload_role(
            self, name, plan, cluster, a.namespace, a.service_account, "cluster-autoscaler"
        )
        policy = aws.iam.RolePolicy(
            f"{name}-policy",
            aws.iam.RolePolicyArgs(role=role.id, policy=json.dumps(a.iam_policy)),
            opts=pulumi.ResourceOptions(parent=self),
        )
        values = dict(a.values)
        if plan.identity == "irsa":
            values["rbac"] = {
                "serviceAccount": {
                    **a.values["rbac"]["serviceAccount"],
                    "annotations": {"eks.amazonaws.com/role-arn": role.arn},
                }
            }
        self.release = helm_release(
            f"{name}-release",
            a,
            values=values,
            atomic=True,
            opts=with_lifecycle(
                pulumi.ResourceOptions(
                    parent=self,
                    provider=provider,
                    # Pod Identity injects credentials only into pods created after the association
                    # exists (https://docs.aws.amazon.com/eks/latest/userguide/pod-id-association.html).
                    depends_on=[role, policy, *([assoc] if assoc else []), *depends_on],
                ),
                HELM_RELEASE,
                cluster=cluster.created,
            ),
            create_namespace=a.create_namespace,
        )
        if a.create_namespace:
            # Helm creates the namespace bare; its Pod Security labels are patched on (server-side
            # apply: https://www.pulumi.com/registry/packages/kubernetes/how-to-guides/
            # managing-resources-with-server-side-apply/), which works on a namespace an earlier
            # run of this stack already made, where creating it would fail "already exists".
            k8s.core.v1.NamespacePatch(
                f"{name}-namespace",
                metadata=k8s.meta.v1.ObjectMetaPatchArgs(
                    name=a.namespace, labels=dict(a.namespace_labels)
                ),
                opts=pulumi.ResourceOptions(
                    parent=self, provider=provider, depends_on=[self.release]
                ),
            )
        self.register_outputs({"roleArn": role.arn, "release": self.release.name})


class DevicePlugin(pulumi.ComponentResource):
    """A device plugin chart: NVIDIA's (nvidia.com/gpu without the GPU Operator) or AWS's EFA
    plugin (vpc.amazonaws.com/efa on hpc pools)."""

    def __init__(
        self,
        name: str,
        plan: DevicePluginPlan,
        *,
        provider: k8s.Provider,
        depends_on: Sequence[pulumi.Resource],
        opts: pulumi.ResourceOptions | None = None,
        owner: pulumi.Resource | None = None,
    ) -> None:
        super().__init__("gpu-infra:aws:DevicePlugin", name, None, opts)
        self.release = helm_release(
            f"{name}-device-plugin",
            plan,
            values=plan.values,
            atomic=True,
            opts=with_lifecycle(
                pulumi.ResourceOptions(parent=self, provider=provider, depends_on=list(depends_on)),
                HELM_RELEASE,
                cluster=owner,
            ),
        )
        self.register_outputs({"release": self.release.name})
