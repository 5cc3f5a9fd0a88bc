"""The cluster-autoscaler release an EKS stack installs: its values, names and IAM policy.

Pure code over the facts in ``infra.core.eks.autoscaler``: the Helm release (its own names on an
existing cluster, where another autoscaler may run), the expander's priorities, the IAM policy
limited to this stack's ASGs, and the checks on them (Pod Identity needs CA >= 1.30, the lease).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from infra.core.config.eks import EksClusterSpec
from infra.core.config.stack import StackConfig
from infra.core.eks import autoscaler
from infra.core.eks.ami import kubernetes_minor
from infra.core.eks.groups import EksGroupPlan
from infra.core.eks.system import EksSystemGroupPlan
from infra.core.errors import Issues

# Pod Identity needs aws-sdk-go >= 1.47.11 (https://docs.aws.amazon.com/eks/latest/userguide/
# pod-id-minimum-sdk.html); cluster-autoscaler 1.29.0's vendored SDK was older
# (kubernetes/autoscaler#6392, #6461). 1.30 is the first minor released after the SDK update.
POD_IDENTITY_CA_MINOR = 30


@dataclass(frozen=True, slots=True, kw_only=True)
class EksAutoscalerPlan:
    """The cluster-autoscaler Helm release and its IAM role (IRSA or Pod Identity)."""

    chart: str
    version: str
    repo: str
    namespace: str
    service_account: str
    release: str = autoscaler.CHART_NAME
    create_namespace: bool = False
    namespace_labels: Mapping[str, str] = field(default_factory=dict)
    values: Mapping[str, Any]
    iam_policy: Mapping[str, Any]
    notes: tuple[str, ...] = ()


def check_pod_identity(cluster: EksClusterSpec, issues: Issues) -> None:
    a, version = cluster.autoscaler, cluster.planned_version
    if (
        a.enabled
        and a.kind == "cluster-autoscaler"
        and a.identity == "pod-identity"
        and kubernetes_minor(version) < POD_IDENTITY_CA_MINOR
    ):
        issues.add(
            "cluster.autoscaler.identity",
            f"pod-identity with Kubernetes {version}: cluster-autoscaler before 1."
            f"{POD_IDENTITY_CA_MINOR} ships an AWS SDK without the Pod Identity credential provider "
            "(kubernetes/autoscaler#6461: NoCredentialProviders); use irsa or Kubernetes >= 1."
            f"{POD_IDENTITY_CA_MINOR}",
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class AutoscalerTarget:
    """Where the autoscaler runs and what it discovers."""

    region: str
    partition: str
    stack_tag: str
    image_tag: str
    data_dir: Path  # the plan's catalog: the pinned chart, its image and RBAC rules


def plan_autoscaler(
    config: StackConfig,
    target: AutoscalerTarget,
    groups: tuple[EksGroupPlan, ...],
    system: EksSystemGroupPlan | None,
    issues: Issues,
) -> EksAutoscalerPlan:
    """The cluster-autoscaler release: its values, names and IAM policy."""
    cluster: EksClusterSpec = config.cluster
    a = cluster.autoscaler
    spot = [ng.name for g in groups if g.capacity_type == "SPOT" for ng in g.node_groups]
    rest = [ng.name for g in groups if g.capacity_type != "SPOT" for ng in g.node_groups]
    if a.expander == "priority" and not (spot and rest):
        issues.add(
            "cluster.autoscaler.expander",
            "priority orders spot groups before on-demand ones; this stack has "
            f"{len(spot)} spot and {len(rest)} other GPU node groups (needs both)",
        )
    # On an existing cluster another autoscaler may already hold the default names; this
    # stack's gets its own (autoscaler.stack_release_name).
    own = autoscaler.stack_release_name(config.stack) if cluster.existing else None
    chart = autoscaler.chart(target.data_dir)
    plan = EksAutoscalerPlan(
        chart=chart.chart,
        version=chart.version,
        repo=chart.repo,
        namespace=own or autoscaler.NAMESPACE,
        service_account=own or autoscaler.SERVICE_ACCOUNT,
        release=own or autoscaler.CHART_NAME,
        create_namespace=own is not None,
        namespace_labels=autoscaler.NAMESPACE_LABELS if own is not None else {},
        values=autoscaler.helm_values(
            cluster_name=cluster.name,
            region=target.region,
            image=(autoscaler.image_repository(target.data_dir), target.image_tag),
            expander=a.expander,
            gpu_threshold=a.scale_down_gpu_utilization_threshold,
            unneeded_time=a.scale_down_unneeded_time,
            node_selector=system.labels if system is not None else {},
            discovery_tag=target.stack_tag,
            balance_similar=any(g.group_per_zone for g in groups),
            priorities=(
                autoscaler.priority_config(spot, rest) if a.expander == "priority" else None
            ),
            service_account=own or autoscaler.SERVICE_ACCOUNT,
            fullname=own,
        ),
        iam_policy=autoscaler.iam_policy(
            cluster.name, target.region, target.partition, target.stack_tag
        ),
        notes=(_shared_cluster_note(cluster.name, target.stack_tag),) if own else (),
    )
    rbac = autoscaler.chart_rbac(target.data_dir)
    if problem := autoscaler.lease_problem(plan.values, rbac, chart):
        issues.add("cluster.autoscaler", problem)
    return plan


def _shared_cluster_note(cluster_name: str, stack_tag: str) -> str:
    """What a cluster-autoscaler the cluster already runs does with this stack's groups.

    EKS tags every managed node group's ASG ``k8s.io/cluster-autoscaler/enabled`` and
    ``k8s.io/cluster-autoscaler/<cluster>`` ("Managed node groups" resource tagging), the default
    auto-discovery of the chart (``autoDiscovery.tags``, values.yaml of chart 9.52.1); an
    autoscaler discovering by them also scales these groups, racing this stack's.
    """
    return (
        f"cluster {cluster_name}: if it already runs a cluster-autoscaler with the default "
        f"auto-discovery tags (k8s.io/cluster-autoscaler/enabled, k8s.io/cluster-autoscaler/"
        f"{cluster_name}), that one also scales this stack's node groups; narrow its "
        "--node-group-auto-discovery with a tag key only its own groups carry (this stack's carry "
        f"{stack_tag}), or set cluster.autoscaler.enabled: false here and let it manage them"
    )
