"""Cluster-autoscaler (CA) facts for EKS: node-template tags, chart and image pins, IAM policy.

CA builds a template node for an ASG at zero nodes from the ASG's tags
(``k8s.io/cluster-autoscaler/node-template/...``). EKS managed node groups never copy their labels,
taints or tags to the ASG (aws/containers-roadmap#608, pulumi/pulumi-eks#658), so scale-from-zero
needs these tags put on the ASG separately; they are derived here from the very labels, taints and
GPU count the node group gets, so the two cannot disagree. Reference: kubernetes/autoscaler
cluster-autoscaler/cloudprovider/aws/README.md ("Auto-Discovery Setup", "Scaling a node group to
0").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from infra.core.catalog.pins import Pin, pin, pins
from infra.core.catalog.vendored import DATA_DIR, read_rows
from infra.core.eks.names import HELM_RELEASE_MAX, TAG_KEY_MAX, TAG_VALUE_MAX, fit, stack_scoped
from infra.core.labels import POOL_LABEL
from infra.core.pools import GPU_RESOURCE, Taint

TEMPLATE_PREFIX = "k8s.io/cluster-autoscaler/node-template"

# At most 50 tags per Auto Scaling group (https://docs.aws.amazon.com/autoscaling/ec2/userguide/
# ec2-auto-scaling-quotas.html; eksctl pkg/cfn/builder/nodegroup.go MaximumTagNumber = 50). EKS
# itself puts these on a managed node group's ASG: eks:cluster-name, eks:nodegroup-name,
# kubernetes.io/cluster/<name>, k8s.io/cluster-autoscaler/enabled,
# k8s.io/cluster-autoscaler/<name> ("Managed node groups" resource tagging,
# https://docs.aws.amazon.com/eks/latest/userguide/managed-node-groups.html), plus aws:* tags that
# do not count; gpu-infra adds its stack tag. The node-template tags get what is left, minus 5 for
# the user's own.
ASG_TAG_LIMIT = 50
EKS_MANAGED_ASG_TAGS = 5
MANAGED_ASG_TAGS = EKS_MANAGED_ASG_TAGS + 1
TEMPLATE_TAG_BUDGET = ASG_TAG_LIMIT - MANAGED_ASG_TAGS - 5


# The cluster-autoscaler chart and its image, one per Kubernetes minor because CA must match the
# cluster's minor version (README "Releases": "we recommend the same minor version"): pins.csv
# rows cluster-autoscaler and cluster-autoscaler-image of the catalog a plan is built with.
CHART_PIN, IMAGE_PIN = "cluster-autoscaler", "cluster-autoscaler-image"
# The chart's name, which also names the default release, namespace objects and lease: what this
# code knows the chart by (the vendored row), not a version a refresh moves.
CHART_NAME = pin(CHART_PIN, DATA_DIR).chart


def chart(data_dir: Path) -> Pin:
    """The chart pinned in the catalog of ``data_dir``."""
    return pin(CHART_PIN, data_dir)


def image_tags(data_dir: Path) -> Mapping[str, str]:
    """Kubernetes minor -> CA image tag, as the catalog of ``data_dir`` pins them."""
    return {minor: p.version for minor, p in pins(IMAGE_PIN, data_dir).items()}


def image_repository(data_dir: Path) -> str:
    """The CA image repository (one for every minor) the catalog of ``data_dir`` pins."""
    (repository,) = {p.repository for p in pins(IMAGE_PIN, data_dir).values()}
    return repository


# Tags CA discovers node groups by (README "Auto-Discovery Setup": every listed key must exist).
# EKS puts the first two on every managed node group of the cluster, other teams' included; the
# stack tag narrows discovery (and the IAM condition) to this stack's groups.
ENABLED_TAG = "k8s.io/cluster-autoscaler/enabled"
STACK_TAG_VALUE = "owned"
# Per-AZ groups of one pool differ in labels CA's AWS comparator does not ignore: the template
# label ``nodegroup-name`` from the ASG tag eks:nodegroup-name (cloudprovider/aws/aws_manager.go
# extractLabelsFromAsg; kubernetes/autoscaler#6954) and ``topology.k8s.aws/zone-id`` on live nodes
# (processors/nodegroupset/aws_nodegroups.go ignores neither), so they are never "similar". The
# chart's extraArgs is a map, one value per flag, so ignoring both is not possible; instead
# --balancing-label "Specifies a label to use for comparing if two node groups are similar, rather
# than the built in heuristics" (config/flags/flags.go): only the pool label is compared. It needs
# no stack label beside it on a shared cluster: the autoscaler balances only the groups it
# discovers, which carry this stack's tag (every discovery tag must be present).
BALANCING_LABEL = POOL_LABEL
# The ConfigMap the priority expander reads (cluster-autoscaler/expander/priority/readme.md).
PRIORITY_CONFIGMAP = "cluster-autoscaler-priority-expander"
SPOT_PRIORITY = 20
ON_DEMAND_PRIORITY = 10
CATCH_ALL_PRIORITY = 1
NAMESPACE = "kube-system"
SERVICE_ACCOUNT = "cluster-autoscaler"


# The leader-election lock: a Lease named --leader-elect-resource-name (default below,
# cluster-autoscaler main.go leaderElectionConfiguration) in --namespace, which the chart sets to
# the release namespace (templates/deployment.yaml ``--namespace={{ .Release.Namespace }}``).
LEASE_NAME_FLAG = "leader-elect-resource-name"
DEFAULT_LEASE_NAME = "cluster-autoscaler"
CHART_RBAC_FILE = "autoscaler_chart_rbac.csv"


@dataclass(frozen=True, slots=True)
class RbacRule:
    """One rule the pinned chart renders (``autoscaler_chart_rbac.csv``)."""

    api_group: str
    resource: str
    resource_names: frozenset[str]  # empty: every name
    verbs: frozenset[str]

    def allows(self, api_group: str, resource: str, name: str, verb: str) -> bool:
        return (
            (self.api_group, self.resource) == (api_group, resource)
            and verb in self.verbs
            and (not self.resource_names or name in self.resource_names)
        )


def chart_rbac(data_dir: Path) -> tuple[RbacRule, ...]:
    """The RBAC rules of the chart version pinned in the catalog of ``data_dir``, from its
    template facts."""
    version = chart(data_dir).version
    return tuple(
        RbacRule(
            r["api_group"],
            r["resource"],
            frozenset(n for n in r["resource_names"].split(";") if n),
            frozenset(r["verbs"].split(";")),
        )
        for r in read_rows(CHART_RBAC_FILE, data_dir)
        if r["chart_version"] == version
    )


def lease_of(values: Mapping[str, object], namespace: str) -> tuple[str, str]:
    """(namespace, name) of the Lease the autoscaler these Helm values run will lock."""
    extra = values.get("extraArgs")
    name = extra.get(LEASE_NAME_FLAG) if isinstance(extra, Mapping) else None
    return namespace, str(name or DEFAULT_LEASE_NAME)


def lease_problem(
    values: Mapping[str, object], rules: Sequence[RbacRule], chart_pin: Pin
) -> str | None:
    """Why the RBAC ``rules`` of chart ``chart_pin`` would refuse the autoscaler its lease
    (client-go needs get, update, create on ``coordination.k8s.io/leases``), or ``None``."""
    _, name = lease_of(values, "")
    missing = [
        verb
        for verb in ("get", "update", "create")
        if not any(r.allows("coordination.k8s.io", "leases", name, verb) for r in rules)
    ]
    if not missing:
        return None
    return (
        f"lease {name!r}: chart {chart_pin.chart} {chart_pin.version} grants no "
        f"{'/'.join(missing)} on it "
        "(templates/clusterrole.yaml names only its default lease); the autoscaler would never "
        "become leader"
    )


# Labels of the namespace this stack's autoscaler gets on an existing cluster: the restricted
# Pod Security Standard, enforced (Pod Security Admission labels,
# https://kubernetes.io/docs/concepts/security/pod-security-admission/); Helm's --create-namespace
# would make it unlabelled, i.e. under the cluster's default level.
NAMESPACE_LABELS: Mapping[str, str] = {
    f"pod-security.kubernetes.io/{mode}": "restricted" for mode in ("enforce", "audit", "warn")
}


# The chart's own commented suggestions (values.yaml securityContext / containerSecurityContext
# of chart 9.52.1), which together meet the "restricted" Pod Security Standard
# (https://kubernetes.io/docs/concepts/security/pod-security-standards/#restricted).
POD_SECURITY_CONTEXT: Mapping[str, object] = {
    "runAsNonRoot": True,
    "runAsUser": 65534,
    "runAsGroup": 65534,
    "seccompProfile": {"type": "RuntimeDefault"},
}
CONTAINER_SECURITY_CONTEXT: Mapping[str, object] = {
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
    "readOnlyRootFilesystem": True,
}


def stack_release_name(stack: str) -> str:
    """``cluster-autoscaler-<stack>``: release, namespace, fullname and service account of this
    stack's autoscaler on an existing cluster.

    A cluster that already runs an autoscaler holds the Helm release ``cluster-autoscaler`` in
    kube-system, the ClusterRole and ServiceAccount named after it, and the leader-election
    lease kube-system/cluster-autoscaler (``DEFAULT_LEASE_NAME`` in the release namespace). A
    second autoscaler with those names fails Helm's ownership check or waits forever for the
    lease; its own namespace moves the lease (same name, which the chart's RBAC grants) and the
    priority-expander ConfigMap, fullnameOverride the cluster-wide RBAC.
    """
    # Helm's 53 (also under the 63 of the namespace and service account named the same).
    return stack_scoped(CHART_NAME, stack, HELM_RELEASE_MAX)


def taint_tag_value(taint: Taint) -> str:
    """``<value>:<Effect>`` in Kubernetes spelling.

    CA parses the value with ``(.*):(?:NoSchedule|NoExecute|PreferNoSchedule)``
    (extractTaintsFromAsg); the EKS spelling ``NO_SCHEDULE`` is silently ignored
    (terraform-aws-modules/terraform-aws-eks PR #2220).
    """
    return f"{taint.value}:{taint.effect}"


def node_template_tags(
    labels: Mapping[str, str],
    taints: Sequence[Taint],
    gpus: int | None,
    extra_resources: Mapping[str, int | str] | None = None,
) -> dict[str, str]:
    """CA node-template ASG tags for a node group with these labels, taints and GPUs per node.

    Args:
        labels: every label the nodes get (as set on the node group).
        taints: every taint the nodes get, Kubernetes spelling.
        gpus: ``nvidia.com/gpu`` the device plugin advertises per node (0 is a real answer for
            all-MIG nodes under the mixed strategy); ``None`` adds no resource tag.
        extra_resources: further extended resources (name -> quantity), e.g. MIG slices.

    Returns:
        key -> value, sorted by key so plans and diffs are stable.
    """
    tags: dict[str, str] = {}
    if gpus is not None:
        tags[f"{TEMPLATE_PREFIX}/resources/{GPU_RESOURCE}"] = str(gpus)
    for name, qty in (extra_resources or {}).items():
        tags[f"{TEMPLATE_PREFIX}/resources/{name}"] = str(qty)
    for key, value in labels.items():
        tags[f"{TEMPLATE_PREFIX}/label/{key}"] = value
    for t in taints:
        tags[f"{TEMPLATE_PREFIX}/taint/{t.key}"] = taint_tag_value(t)
    return dict(sorted(tags.items()))


def check_tag(key: str, value: str) -> str | None:
    """Why an ASG tag is invalid (AWS: key 1-128 chars, value <= 256 chars), or ``None``."""
    if not 1 <= len(key) <= TAG_KEY_MAX:
        return f"tag key {key!r} is {len(key)} characters; ASG tag keys are 1-{TAG_KEY_MAX}"
    if len(value) > TAG_VALUE_MAX:
        return (
            f"tag {key!r} value is {len(value)} characters; ASG tag values are at most "
            f"{TAG_VALUE_MAX}"
        )
    return None


def image_tag(kubernetes_version: str, data_dir: Path) -> str | None:
    """The CA image tag for a Kubernetes minor version in the catalog of ``data_dir``, or
    ``None`` if none is pinned."""
    return image_tags(data_dir).get(kubernetes_version)


def stack_tag(cluster_name: str, stack: str) -> str:
    """The ASG tag key that marks this stack's node groups (value ``owned``), at most 128."""
    return fit(f"gpu-infra/autoscaler/{cluster_name}/{stack}", TAG_KEY_MAX)


def priority_config(spot_groups: Sequence[str], on_demand_groups: Sequence[str]) -> str:
    """The priority expander's ``priorities`` YAML: spot node groups first, on-demand after.

    Keys are priorities (higher wins), values regexes over ASG names; EKS names a managed node
    group's ASG ``eks-<nodegroup>-<uuid>`` (cluster-autoscaler/expander/priority/readme.md). When
    every spot group fails to scale (a stockout backs it off), CA takes the next priority. A
    group's regex matches its name with any 8-hex hash (``<pool>[-<az id>]-<hash>``), so it also
    holds for the group's replacement while both exist and for a live group kept under its
    earlier name (``lifecycle.live_name``).
    """
    lines: list[str] = []
    for prio, groups in ((SPOT_PRIORITY, spot_groups), (ON_DEMAND_PRIORITY, on_demand_groups)):
        if groups:
            lines.append(f"{prio}:")
            lines += [f"  - ^eks-{g.rsplit('-', 1)[0]}-[0-9a-f]{{8}}-.*$" for g in groups]
    # Lowest, for every other discovered group (the system group): the expander drops a group no
    # regex matches ("not found in priority expander configuration. The group won't be used",
    # cluster-autoscaler/expander/priority/priority.go), so the catch-all keeps it a last resort.
    lines += [f"{CATCH_ALL_PRIORITY}:", "  - .*"]
    return "\n".join(lines) + "\n"


def helm_values(
    *,
    cluster_name: str,
    region: str,
    image: tuple[str, str],
    expander: str,
    gpu_threshold: float,
    unneeded_time: str,
    node_selector: Mapping[str, str],
    discovery_tag: str,
    balance_similar: bool,
    priorities: str | None = None,
    service_account: str = SERVICE_ACCOUNT,
    fullname: str | None = None,
) -> dict[str, object]:
    """Values for the cluster-autoscaler chart (the IRSA role ARN is added by the component).

    ``image`` is (repository, ``image_tag(<Kubernetes minor>)``), looked up once by the planner.

    Each override and why:
    - ``autoDiscovery.tags``: the chart's two cluster tags plus this stack's tag, so CA discovers
      only this stack's groups on a cluster other teams share (the chart joins them into
      ``--node-group-auto-discovery=asg:tag=k1,k2,k3``, templates/deployment.yaml);
    - ``image.tag``: CA must match the cluster's Kubernetes minor version;
    - ``extraArgs.expander``: ``least-waste`` picks the group that wastes least CPU/memory/GPU;
      ``priority`` follows ``expanderPriorities`` (spot first, on-demand fallback);
    - ``scale-down-gpu-utilization-threshold``: nodes carrying ``k8s.amazonaws.com/accelerator``
      are judged by GPU utilisation, so an idle GPU node goes even if its DaemonSets use CPU;
    - ``ignore-daemonsets-utilization``: GPU DaemonSets (device plugin, DCGM) do not keep nodes;
    - ``skip-nodes-with-system-pods`` is left at its default (true): it only counts kube-system
      pods that are not DaemonSet or mirror pods (README "Common Notes and Gotchas"), i.e. pods
      like CoreDNS that must not be evicted by a scale-down;
    - ``balance-similar-node-groups``: on with ``groupPerZone`` (README "Common Notes": an
      ASG per AZ plus this flag for zonal EBS volumes); off otherwise, where spot and on-demand
      GPU groups are not meant to be balanced; with it ``balancing-label`` (``BALANCING_LABEL``):
      groups are similar when they serve the same pool;
    - ``nodeSelector``: run on the system node group, never on (scale-to-zero) GPU nodes;
    - ``fullnameOverride`` (``fullname``) and the service account: per stack on an existing
      cluster (``stack_release_name``), so ClusterRole and ServiceAccount never collide with
      another autoscaler's.
    """
    extra_args: dict[str, str] = {
        "expander": expander,
        "scale-down-gpu-utilization-threshold": str(gpu_threshold),
        "scale-down-unneeded-time": unneeded_time,
        "ignore-daemonsets-utilization": "true",
        "balance-similar-node-groups": "true" if balance_similar else "false",
    }
    values: dict[str, object] = {
        "cloudProvider": "aws",
        "awsRegion": region,
        "autoDiscovery": {
            "clusterName": cluster_name,
            "tags": [ENABLED_TAG, f"k8s.io/cluster-autoscaler/{cluster_name}", discovery_tag],
        },
        "image": {"repository": image[0], "tag": image[1]},
        "rbac": {"serviceAccount": {"create": True, "name": service_account}},
        "extraArgs": extra_args,
        "nodeSelector": dict(node_selector),
        "securityContext": dict(POD_SECURITY_CONTEXT),
        "containerSecurityContext": dict(CONTAINER_SECURITY_CONTEXT),
    }
    if balance_similar:
        extra_args["balancing-label"] = BALANCING_LABEL
    if fullname is not None:
        # The lease keeps its default name: the release's own namespace already separates it
        # from another autoscaler's, and the chart grants get/update on that name only
        # (autoscaler_chart_rbac.csv); a renamed lease is refused with 403 and never led.
        values["fullnameOverride"] = fullname
    if priorities is not None:
        # The chart renders cluster-autoscaler-priority-expander from this, a string as is
        # (kubernetes/autoscaler charts/cluster-autoscaler/templates/priority-expander-configmap.yaml).
        values["expanderPriorities"] = priorities
    return values


def iam_policy(
    cluster_name: str, region: str, partition: str, discovery_tag: str
) -> dict[str, object]:
    """Least-privilege IAM policy for CA, scoped to this stack's ASGs and the cluster's groups.

    Describe calls cannot be scoped by resource (AWS), so they are ``*``; everything that changes
    capacity is limited to ASGs carrying this stack's tag (EKS's own
    ``k8s.io/cluster-autoscaler/<cluster>`` tag is on every team's groups), and DescribeNodegroup
    to this cluster's node groups. Based on the README's "IAM Policy" (which lists
    ``eks:DescribeNodegroup``: CA reads a managed group's labels and taints at zero nodes).
    """
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "Describe",
                "Effect": "Allow",
                "Action": [
                    "autoscaling:DescribeAutoScalingGroups",
                    "autoscaling:DescribeAutoScalingInstances",
                    "autoscaling:DescribeLaunchConfigurations",
                    "autoscaling:DescribeScalingActivities",
                    "autoscaling:DescribeTags",
                    "ec2:DescribeImages",
                    "ec2:DescribeInstanceTypes",
                    "ec2:DescribeLaunchTemplateVersions",
                    "ec2:GetInstanceTypesFromInstanceRequirements",
                ],
                "Resource": "*",
            },
            {
                "Sid": "ScaleOwnAsgs",
                "Effect": "Allow",
                "Action": [
                    "autoscaling:SetDesiredCapacity",
                    "autoscaling:TerminateInstanceInAutoScalingGroup",
                ],
                "Resource": "*",
                "Condition": {
                    "StringEquals": {f"aws:ResourceTag/{discovery_tag}": STACK_TAG_VALUE}
                },
            },
            {
                "Sid": "DescribeOwnNodegroups",
                "Effect": "Allow",
                "Action": ["eks:DescribeNodegroup"],
                "Resource": f"arn:{partition}:eks:{region}:*:nodegroup/{cluster_name}/*/*",
            },
        ],
    }


def aws_partition(region: str) -> str:
    """The ARN partition of a region (``aws``, ``aws-us-gov``, ``aws-cn``)."""
    if region.startswith("us-gov-"):
        return "aws-us-gov"
    if region.startswith("cn-"):
        return "aws-cn"
    return "aws"
