"""The Karpenter controller on EKS: pinned chart, Helm values, IAM policy, interruption queue.

Pure code. ``plan_controller`` decides the release and the names; ``iam_policy`` and
``queue_policy`` take the ARNs only the cloud knows (node role, queue), so the component calls them
once those exist. Sources: aws/karpenter-provider-aws at commit c88abbbad455 ("Stable Release
updates Release v1.14.1."): the chart (charts/karpenter), and the v1.14 docs
(website/content/en/v1.14/...: getting-started-with-karpenter/cloudformation.yaml is the
published controller policy, interruption queue and EventBridge rules).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from infra.core.catalog.pins import Pin, pin
from infra.core.catalog.vendored import DATA_DIR, read_rows
from infra.core.eks.karpenter.names import discovery_tag
from infra.core.eks.names import fit
from infra.core.rules.limits import limit

# The chart the guide installs (getting-started-with-karpenter/scripts/step08-apply-helm-chart.sh)
# at the version of pins.csv row karpenter of the plan's catalog, the one pin of chart, CRD chart
# and vendored CRDs. The vendored row's chart is the default a plan's chart starts from.
PIN_NAME = "karpenter"
PIN = pin(PIN_NAME, DATA_DIR)
CHART = PIN.chart
RELEASE = "karpenter"


# The CRDs as their own release: Helm installs a chart's crds/ directory on the first install only
# and never upgrades it, so a chart bump would leave the old CRDs behind; the karpenter-crd chart
# keeps them in templates/, upgraded with the release (upgrading/upgrade-guide.md "CRD Upgrades":
# "we recommend using the independent karpenter-crd chart"; charts/karpenter-crd/templates). Same
# version as the controller ("CRDs are coupled to the version of Karpenter"); the controller's
# release then skips its own crds/.
def crd_chart(chart: Pin) -> str:
    """The karpenter-crd chart beside ``chart`` (same repository)."""
    return f"{chart.repository}/karpenter-crd"


CRD_CHART = crd_chart(PIN)
CRD_RELEASE = "karpenter-crd"
# "By default, Karpenter is installed into the kube-system namespace", whose FlowSchemas
# (system-leader-election, kube-system-service-accounts) keep its API calls in the high-priority
# levels under API throttling (getting-started-with-karpenter/_index.md; KARPENTER_NAMESPACE=
# "kube-system" in its step01 and in migrating-from-cas).
NAMESPACE = "kube-system"
SERVICE_ACCOUNT = "karpenter"
# The guide's controller requests and limits (step08-apply-helm-chart.sh: cpu 1, memory 1Gi);
# requests equal to limits give the pod the Guaranteed QoS class.
RESOURCES: Mapping[str, Mapping[str, str]] = {
    "requests": {"cpu": "1", "memory": "1Gi"},
    "limits": {"cpu": "1", "memory": "1Gi"},
}
# The chart's default, two replicas on different nodes (values.yaml replicas: 2, podAntiAffinity
# on kubernetes.io/hostname). "Karpenter won't launch capacity to run itself" (troubleshooting.md,
# "Unable to schedule pod due to insufficient node group instances"), so a system pool of one
# node gets one replica instead of a Pending second.
REPLICAS = 2
# Label every node Karpenter launches carries; the chart's default affinity keeps the controller
# off those nodes (values.yaml affinity: karpenter.sh/nodepool DoesNotExist).
NODEPOOL_LABEL = "karpenter.sh/nodepool"
# The chart's default toleration (values.yaml); it tolerates no GPU taint.
TOLERATIONS: tuple[Mapping[str, str], ...] = ({"key": "CriticalAddonsOnly", "operator": "Exists"},)
# Kubernetes minors Karpenter 1.14 supports (upgrading/compatibility.md, compatibility matrix:
# 1.30 >= 0.37 ... 1.36 >= 1.13).
KUBERNETES_MINORS = range(30, 37)
# cloudformation.yaml KarpenterInterruptionQueue: MessageRetentionPeriod 300, SqsManagedSseEnabled.
QUEUE_RETENTION_SECONDS = 300
# cloudformation.yaml: the target Id of every rule.
TARGET_ID = "KarpenterInterruptionQueueTarget"
# (short name, event source, detail-type) of the rules cloudformation.yaml routes to the queue:
# ScheduledChangeRule, SpotInterruptionRule, RebalanceRule, InstanceStateChangeRule,
# CapacityReservationInterruptionRule.
EVENT_RULES: tuple[tuple[str, str, str], ...] = (
    ("health", "aws.health", "AWS Health Event"),
    ("spot", "aws.ec2", "EC2 Spot Instance Interruption Warning"),
    ("rebalance", "aws.ec2", "EC2 Instance Rebalance Recommendation"),
    ("state", "aws.ec2", "EC2 Instance State-change Notification"),
    ("reservation", "aws.ec2", "EC2 Capacity Reservation Instance Interruption Warning"),
)
CHART_VALUES_FILE = "karpenter_chart_values.csv"

# Characters outside what SQS queue names (alphanumerics, - and _) and EventBridge rule names
# (also .) take (receiver_limits.csv sqs.queue_name, eventbridge.rule_name).
_NOT_NAME = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True, slots=True, kw_only=True)
class EventRulePlan:
    """One EventBridge rule sending an EC2/Health event type to the interruption queue."""

    key: str  # short name, also the Pulumi logical name's suffix
    name: str
    source: str
    detail_type: str

    @property
    def pattern(self) -> dict[str, list[str]]:
        return {"source": [self.source], "detail-type": [self.detail_type]}


@dataclass(frozen=True, slots=True, kw_only=True)
class KarpenterControllerPlan:
    """The Karpenter release, its service account, interruption queue and EventBridge rules.

    Attributes:
        values: Helm values without the IRSA role annotation (the component adds the role's ARN).
        queue_name: the SQS queue, also ``values['settings']['interruptionQueue']``.
        discovery_tag: ``(key, value)`` on the cluster security group and the private subnets of
            a VPC the stack creates (from their creation); given subnets are selected by ID and
            never tagged (``pools.node_class``).
    """

    cluster_name: str
    region: str
    partition: str
    release: str = RELEASE
    chart: str = CHART
    crd_release: str = CRD_RELEASE
    crd_chart: str = CRD_CHART
    version: str = PIN.version
    namespace: str = NAMESPACE
    service_account: str = SERVICE_ACCOUNT
    values: Mapping[str, Any] = field(default_factory=dict)
    queue_name: str = ""
    rules: tuple[EventRulePlan, ...] = ()
    discovery_tag: tuple[str, str] = ("", "")


def _slug(text: str) -> str:
    return _NOT_NAME.sub("-", text)


def queue_name(cluster_name: str, stack: str) -> str:
    """``<cluster>-<stack>-karpenter``, at most 80 characters (SQS CreateQueue).

    SQS names are per account and region (the queue ARN holds both), so cluster and stack keep
    two stacks of one cluster name in one account and region apart; other regions already are.
    """
    return fit(_slug(f"{cluster_name}-{stack}-karpenter"), limit("sqs.queue_name"))


def rule_name(cluster_name: str, stack: str, key: str) -> str:
    """``<cluster>-<stack>-karpenter-<key>``, at most 64 characters (EventBridge PutRule; rule
    names are per event bus, i.e. per account and region)."""
    return fit(_slug(f"{cluster_name}-{stack}-karpenter-{key}"), limit("eventbridge.rule_name"))


def event_rules(cluster_name: str, stack: str) -> tuple[EventRulePlan, ...]:
    return tuple(
        EventRulePlan(key=k, name=rule_name(cluster_name, stack, k), source=s, detail_type=d)
        for k, s, d in EVENT_RULES
    )


def helm_values(
    *, cluster_name: str, queue: str, node_selector: Mapping[str, str], replicas: int
) -> dict[str, Any]:
    """Values for the chart (the IRSA annotation is added by the component).

    - ``settings.clusterName`` (required: "Chart cannot be installed without a valid
      settings.clusterName!", templates/deployment.yaml) and ``settings.interruptionQueue``
      ("Interruption handling is disabled if not specified", values.yaml);
    - ``nodeSelector``: the system group's labels, so the controller runs on the managed system
      nodes only; the chart's ``affinity`` (``karpenter.sh/nodepool`` DoesNotExist, one replica
      per node) is restated so the plan shows the whole rule it relies on (Helm merges a map
      with the chart's default, and the default could change with the chart);
    - ``tolerations``: the chart's own (a list replaces the default whole); none matches the GPU
      taint;
    - ``controller.resources``: the guide's requests and limits.
    """
    return {
        "settings": {"clusterName": cluster_name, "interruptionQueue": queue},
        "serviceAccount": {"create": True, "name": SERVICE_ACCOUNT},
        "replicas": replicas,
        "controller": {"resources": {k: dict(v) for k, v in RESOURCES.items()}},
        "nodeSelector": {"kubernetes.io/os": "linux", **node_selector},
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": NODEPOOL_LABEL, "operator": "DoesNotExist"}]}
                    ]
                }
            },
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"topologyKey": "kubernetes.io/hostname"}
                ]
            },
        },
        "tolerations": [dict(t) for t in TOLERATIONS],
    }


def chart_value_kinds(data_dir: Path) -> dict[str, str]:
    """Key path -> kind (object, map, list, scalar) of the values of the chart the catalog of
    ``data_dir`` pins."""
    version = pin(PIN_NAME, data_dir).version
    return {
        r["path"]: r["kind"]
        for r in read_rows(CHART_VALUES_FILE, data_dir)
        if r["chart_version"] == version
    }


def unknown_value_keys(values: Mapping[str, Any], kinds: Mapping[str, str]) -> list[str]:
    """Key paths of ``values`` the chart does not read (Helm would ignore them silently)."""
    return list(_unknown(values, "", kinds))


def _unknown(values: Mapping[str, Any], prefix: str, kinds: Mapping[str, str]) -> Iterator[str]:
    for key, value in values.items():
        path = f"{prefix}{key}"
        kind = kinds.get(path)
        if kind is None:
            yield path
        elif kind == "object" and isinstance(value, Mapping):
            yield from _unknown(value, f"{path}.", kinds)


def account_of(arn: str) -> str:
    """The account ID of an ARN (``arn:partition:service:region:account:resource``)."""
    return arn.split(":")[4]


def _ec2(partition: str, region: str, *kinds: str, account: str = "*") -> list[str]:
    return [f"arn:{partition}:ec2:{region}:{account}:{k}/*" for k in kinds]


_OWNED = "aws:ResourceTag/kubernetes.io/cluster/{c}"
_REQ_OWNED = "aws:RequestTag/kubernetes.io/cluster/{c}"


def _node_lifecycle(c: str, p: str, r: str) -> list[dict[str, Any]]:
    """cloudformation.yaml NodeLifecyclePolicy: launch, tag and delete only what carries the
    cluster's ``owned`` tag and a nodepool tag."""
    owned = {"StringEquals": {_OWNED.format(c=c): "owned"}}
    nodepool = {"StringLike": {"aws:ResourceTag/karpenter.sh/nodepool": "*"}}
    req_nodepool = {"StringLike": {"aws:RequestTag/karpenter.sh/nodepool": "*"}}
    created = ("fleet", "instance", "volume", "network-interface", "launch-template")
    created += ("spot-instances-request",)
    req_tags = {_REQ_OWNED.format(c=c): "owned", "aws:RequestTag/eks:eks-cluster-name": c}
    launch = ["ec2:RunInstances", "ec2:CreateFleet"]
    return [
        {
            "Sid": "AllowScopedEC2InstanceAccessActions",
            "Resource": [
                f"arn:{p}:ec2:{r}::image/*",
                f"arn:{p}:ec2:{r}::snapshot/*",
                *_ec2(p, r, "security-group", "subnet", "capacity-reservation", "placement-group"),
            ],
            "Action": launch,
        },
        {
            "Sid": "AllowScopedEC2LaunchTemplateAccessActions",
            "Resource": _ec2(p, r, "launch-template")[0],
            "Action": launch,
            "Condition": {**owned, **nodepool},
        },
        {
            "Sid": "AllowScopedEC2InstanceActionsWithTags",
            "Resource": _ec2(p, r, *created),
            "Action": [*launch, "ec2:CreateLaunchTemplate"],
            "Condition": {"StringEquals": req_tags, **req_nodepool},
        },
        {
            "Sid": "AllowScopedResourceCreationTagging",
            "Resource": _ec2(p, r, *created),
            "Action": "ec2:CreateTags",
            "Condition": {
                "StringEquals": {
                    **req_tags,
                    "ec2:CreateAction": ["RunInstances", "CreateFleet", "CreateLaunchTemplate"],
                },
                **req_nodepool,
            },
        },
        {
            "Sid": "AllowScopedResourceTagging",
            "Resource": _ec2(p, r, "instance")[0],
            "Action": "ec2:CreateTags",
            "Condition": {
                **owned,
                **nodepool,
                "StringEqualsIfExists": {"aws:RequestTag/eks:eks-cluster-name": c},
                "ForAllValues:StringEquals": {
                    "aws:TagKeys": ["eks:eks-cluster-name", "karpenter.sh/nodeclaim", "Name"]
                },
            },
        },
        {
            "Sid": "AllowScopedDeletion",
            "Resource": _ec2(p, r, "instance", "launch-template"),
            "Action": ["ec2:TerminateInstances", "ec2:DeleteLaunchTemplate"],
            "Condition": {**owned, **nodepool},
        },
    ]


def _iam_integration(c: str, p: str, r: str, account: str, node_role_arn: str) -> list[dict]:
    """cloudformation.yaml IAMIntegrationPolicy: pass only the node role to EC2; create, tag and
    delete only instance profiles of this cluster, region and an EC2NodeClass."""
    profiles = f"arn:{p}:iam::{account}:instance-profile/*"
    owned = {_OWNED.format(c=c): "owned", "aws:ResourceTag/topology.kubernetes.io/region": r}
    requested = {
        _REQ_OWNED.format(c=c): "owned",
        "aws:RequestTag/eks:eks-cluster-name": c,
        "aws:RequestTag/topology.kubernetes.io/region": r,
    }
    nodeclass = "karpenter.k8s.aws/ec2nodeclass"
    return [
        {
            "Sid": "AllowPassingInstanceRole",
            "Resource": node_role_arn,
            "Action": "iam:PassRole",
            "Condition": {
                "StringEquals": {
                    "iam:PassedToService": ["ec2.amazonaws.com", "ec2.amazonaws.com.cn"]
                }
            },
        },
        {
            "Sid": "AllowScopedInstanceProfileCreationActions",
            "Resource": profiles,
            "Action": ["iam:CreateInstanceProfile"],
            "Condition": {
                "StringEquals": requested,
                "StringLike": {f"aws:RequestTag/{nodeclass}": "*"},
            },
        },
        {
            "Sid": "AllowScopedInstanceProfileTagActions",
            "Resource": profiles,
            "Action": ["iam:TagInstanceProfile"],
            "Condition": {
                "StringEquals": {**owned, **requested},
                "StringLike": {
                    f"aws:ResourceTag/{nodeclass}": "*",
                    f"aws:RequestTag/{nodeclass}": "*",
                },
            },
        },
        {
            "Sid": "AllowScopedInstanceProfileActions",
            "Resource": profiles,
            "Action": [
                "iam:AddRoleToInstanceProfile",
                "iam:RemoveRoleFromInstanceProfile",
                "iam:DeleteInstanceProfile",
            ],
            "Condition": {
                "StringEquals": owned,
                "StringLike": {f"aws:ResourceTag/{nodeclass}": "*"},
            },
        },
    ]


def _discovery_and_queue(c: str, p: str, r: str, account: str, queue_arn: str) -> list[dict]:
    """cloudformation.yaml EKSIntegrationPolicy, InterruptionPolicy, ResourceDiscoveryPolicy.
    Not its ZonalShiftPolicy: ``settings.enableZonalShift`` stays false (the chart's default)."""
    reads = ("CapacityReservations", "Images", "Instances", "InstanceStatus")
    reads += ("InstanceTypeOfferings", "InstanceTypes", "LaunchTemplates", "PlacementGroups")
    reads += ("SecurityGroups", "SpotPriceHistory", "Subnets")
    return [
        {
            "Sid": "AllowAPIServerEndpointDiscovery",
            "Resource": f"arn:{p}:eks:{r}:{account}:cluster/{c}",
            "Action": "eks:DescribeCluster",
        },
        {
            "Sid": "AllowInterruptionQueueActions",
            "Resource": queue_arn,
            "Action": ["sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage"],
        },
        {
            "Sid": "AllowRegionalReadActions",
            "Resource": "*",
            "Action": [f"ec2:Describe{x}" for x in reads],
            "Condition": {"StringEquals": {"aws:RequestedRegion": r}},
        },
        {
            "Sid": "AllowSSMReadActions",
            "Resource": f"arn:{p}:ssm:{r}::parameter/aws/service/*",
            "Action": "ssm:GetParameter",
        },
        {"Sid": "AllowPricingReadActions", "Resource": "*", "Action": "pricing:GetProducts"},
        {
            "Sid": "AllowUnscopedInstanceProfileListAction",
            "Resource": "*",
            "Action": "iam:ListInstanceProfiles",
        },
        {
            "Sid": "AllowInstanceProfileReadActions",
            "Resource": f"arn:{p}:iam::{account}:instance-profile/*",
            "Action": "iam:GetInstanceProfile",
        },
    ]


def iam_policy(
    plan: KarpenterControllerPlan, *, node_role_arn: str, queue_arn: str
) -> dict[str, Any]:
    """The controller's policy: the statements of the published v1.14 policy
    (cloudformation.yaml), in this cluster's partition, region and account (the node role's)."""
    c, p, r = plan.cluster_name, plan.partition, plan.region
    account = account_of(node_role_arn)
    statements = [
        *_node_lifecycle(c, p, r),
        *_iam_integration(c, p, r, account, node_role_arn),
        *_discovery_and_queue(c, p, r, account, queue_arn),
    ]
    return {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", **s} for s in statements]}


def policy_size(policy: Mapping[str, Any]) -> int:
    """Characters IAM counts for a policy: its JSON without white space."""
    return len(json.dumps(policy, separators=(",", ":")))


def queue_policy(queue_arn: str) -> dict[str, Any]:
    """cloudformation.yaml KarpenterInterruptionQueuePolicy: EventBridge (and SQS) may send;
    anything over plain HTTP is denied."""
    return {
        "Version": "2012-10-17",
        "Id": "EC2InterruptionPolicy",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": ["events.amazonaws.com", "sqs.amazonaws.com"]},
                "Action": "sqs:SendMessage",
                "Resource": queue_arn,
            },
            {
                "Sid": "DenyHTTP",
                "Effect": "Deny",
                "Action": "sqs:*",
                "Resource": queue_arn,
                "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                "Principal": "*",
            },
        ],
    }


def replicas_for(system_min_nodes: int | None) -> int:
    """The chart's two replicas, or as many as the system pool has nodes at its minimum."""
    if system_min_nodes is None:
        return REPLICAS
    return max(1, min(REPLICAS, system_min_nodes))


def plan_controller(
    *,
    cluster_name: str,
    stack: str,
    region: str,
    partition: str,
    system_labels: Mapping[str, str],
    system_min_nodes: int | None,
    data_dir: Path,
) -> KarpenterControllerPlan:
    """The Karpenter release and its interruption queue for one stack's cluster, at the chart
    the catalog of ``data_dir`` pins."""
    queue = queue_name(cluster_name, stack)
    chart = pin(PIN_NAME, data_dir)
    return KarpenterControllerPlan(
        cluster_name=cluster_name,
        region=region,
        partition=partition,
        chart=chart.chart,
        crd_chart=crd_chart(chart),
        version=chart.version,
        values=helm_values(
            cluster_name=cluster_name,
            queue=queue,
            node_selector=system_labels,
            replicas=replicas_for(system_min_nodes),
        ),
        queue_name=queue,
        rules=event_rules(cluster_name, stack),
        discovery_tag=discovery_tag(cluster_name),
    )


# Why a second Karpenter on a cluster is refused: the leader-election Lease is
# karpenter-leader-election in the release's namespace (charts/karpenter/templates/role.yaml), so a
# release in another namespace elects a second leader, and both controllers act on every NodePool
# and NodeClaim of the cluster (cluster-scoped CRDs).
EXISTING_CLUSTER_REASON = (
    "karpenter on an existing cluster: gpu-infra installs the Karpenter controller only in a "
    "cluster it creates. The cluster may already run one; a second release elects its own leader "
    "(the Lease karpenter-leader-election is per namespace) and both act on every NodePool of the "
    "cluster. Use cluster-autoscaler here, or create the cluster with this stack"
)


def longest_policy(plan: KarpenterControllerPlan) -> dict[str, Any]:
    """The controller's policy with the longest ARNs the cloud can hand it: a 64-character node
    role name (IAM) and this stack's queue, in a 12-digit account."""
    account = "0" * 12
    role = f"arn:{plan.partition}:iam::{account}:role/{'r' * limit('aws.iam_role_name')}"
    queue = f"arn:{plan.partition}:sqs:{plan.region}:{account}:{plan.queue_name}"
    return iam_policy(plan, node_role_arn=role, queue_arn=queue)


def problems(
    *, existing: bool, kubernetes_minor: int, plan: KarpenterControllerPlan, data_dir: Path
) -> Iterator[tuple[str, str]]:
    """``(key path, reason)`` of every reason this stack cannot run the Karpenter controller
    (``data_dir``: the plan's catalog, whose chart facts the values are checked against)."""
    if existing:
        yield "cluster.autoscaler.kind", EXISTING_CLUSTER_REASON
    if kubernetes_minor not in KUBERNETES_MINORS:
        first, last = KUBERNETES_MINORS[0], KUBERNETES_MINORS[-1]
        yield (
            "cluster.kubernetesVersion",
            f"'1.{kubernetes_minor}' with karpenter: Karpenter {plan.version} supports Kubernetes "
            f"1.{first}-1.{last} (Karpenter compatibility matrix)",
        )
    if (size := policy_size(longest_policy(plan))) > limit("aws.iam_role_inline_policy_size"):
        yield (
            "cluster.name",
            f"the Karpenter controller's IAM policy would be {size} characters; IAM takes "
            f"{limit('aws.iam_role_inline_policy_size')} per role (a shorter cluster name fits)",
        )
    for path in unknown_value_keys(plan.values, chart_value_kinds(data_dir)):
        yield (
            "cluster.autoscaler",
            f"Helm value {path!r} is not a key of chart karpenter {plan.version}; Helm would "
            "ignore it",
        )
