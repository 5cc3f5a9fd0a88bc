"""What the fake cloud account holds, and how each platform adds its part to it.

``LiveAccount`` holds every cloud's part of the account in one value (the observe step reads only
its own platform's fields); ``AccountPart`` is one platform's model of it, named by the registry
(``infra.core.platforms``): what an existing cluster of a stack looks like there, what a deploy
leaves, and the provider functions the observe step reads it with.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import grpc

if TYPE_CHECKING:
    from infra.core.catalog.vendored import Catalog
    from infra.core.config.stack import StackConfig
    from infra.core.observed import ClusterAccess
    from infra.mockengine import Recording


class InvokeFailure(Exception):
    """A look-up the real provider would answer with an error (e.g. "not found"), its reason the
    provider's own diagnostic.

    Raised to the program as the engine raises a bridged provider's failed read (``rpc_error``),
    so a program that catches or reports a failed look-up sees the text it will see live.
    """

    def rpc_error(self, token: str) -> grpc.RpcError:
        """The resource monitor's error for this failure of ``token``, as the Python SDK turns it
        into "invoke of <tok> failed: <details>" (``grpc_error_to_exception``)."""
        return _MonitorError(invoke_error_text(token, str(self)))


def invoke_error_text(token: str, reason: str) -> str:
    """What the engine answers a failed invoke of a bridged provider with: its own wrapper
    (pulumi/pulumi pkg/resource/deploy/source_eval.go ResourceMonitor.Invoke), the bridge's
    (pulumi-terraform-bridge pkg/tfbridge/provider.go Invoke) and go-multierror's list of the
    provider's diagnostics (pkg/tfshim/sdk-v2/diagnostics.go; hashicorp/go-multierror format.go)."""
    return (
        f"invocation of {token} returned an error: invoking {token}: "
        f"1 error occurred:\n\t* {reason}\n\n"
    )


class _MonitorError(grpc.RpcError):
    """A gRPC error from the resource monitor: what ``code()`` and ``details()`` the SDK reads."""

    def __init__(self, details: str) -> None:
        super().__init__(details)
        self._details = details

    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.UNKNOWN

    def details(self) -> str:
        return self._details


@dataclass(frozen=True, slots=True, kw_only=True)
class LiveAccount:
    """What the fake account holds before a run.

    Attributes:
        eks_clusters: EKS cluster name -> its subnet IDs (``vpcConfig.subnetIds``).
        eks_versions: EKS cluster name -> its Kubernetes version (absent: ``1.33``).
        eks_statuses: EKS cluster name -> its status (absent: ``ACTIVE``).
        addons: add-on name -> the version a created cluster runs (DescribeAddon).
        eks_cluster_tags: EKS cluster name -> its tags (none: an untagged cluster).
        node_groups: EKS node group name -> its current desired size.
        node_group_limits: EKS node group name -> its (min size, max size); absent: (0, at
            least its desired size).
        node_group_tags: EKS node group name -> its tags (none: a group no stack tagged).
        node_group_clusters: EKS node group name -> its cluster (none: every cluster lists it).
        vpcs: the VPC ``Name`` tags of the account's VPCs (``vpc-<n>`` IDs in this order).
        vpc_tags: each VPC's tags, in the order of ``vpcs`` (none: ``Name`` alone).
        nat_gateways: NAT gateway ID -> its subnet ID (in the first VPC).
        subnets: subnet ID -> its AZ ID.
        oidc_provider: whether the IAM OIDC provider of a cluster's issuer exists.
        oidc_provider_tags: its tags (untagged: someone else's).
        oidc_lookup_error: an error other than not-found the OIDC provider lookup fails with.
        pod_identity_agent: whether the eks-pod-identity-agent add-on is installed.
        gke_clusters: existing GKE cluster names (any project and location).
        gke_without_workload_identity: those of them without Workload Identity.
        gke_node_pools: GKE cluster name -> its node pools -> their ``nodeConfigs[0]`` as the
            cluster read answers it (``labels``, ``serviceAccount``).
        gke_compute_classes: GKE cluster name -> its ComputeClasses -> their ``spec``, as its
            Kubernetes API lists them (``kube_read``).
        gke_without_compute_classes: GKE clusters whose API serves no ComputeClass type (404).
        failures: invoke token (or ``GET <path>`` of a Kubernetes read) -> the reason a read of it
            fails with (AccessDenied, throttling, RBAC's forbidden): every such read fails so.
    """

    eks_clusters: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    eks_versions: Mapping[str, str] = field(default_factory=dict)
    eks_statuses: Mapping[str, str] = field(default_factory=dict)
    addons: Mapping[str, str] = field(default_factory=dict)
    eks_cluster_tags: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    node_groups: Mapping[str, int] = field(default_factory=dict)
    node_group_limits: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    node_group_tags: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    node_group_clusters: Mapping[str, str] = field(default_factory=dict)
    vpcs: tuple[str, ...] = ()
    vpc_tags: tuple[Mapping[str, str], ...] = ()
    nat_gateways: Mapping[str, str] = field(default_factory=dict)
    subnets: Mapping[str, str] = field(default_factory=dict)
    oidc_provider: bool = True
    oidc_provider_tags: Mapping[str, str] = field(default_factory=dict)
    oidc_lookup_error: str | None = None
    pod_identity_agent: bool = True
    gke_clusters: frozenset[str] = frozenset()
    gke_without_workload_identity: frozenset[str] = frozenset()
    gke_node_pools: Mapping[str, Mapping[str, Mapping[str, Any]]] = field(default_factory=dict)
    gke_compute_classes: Mapping[str, Mapping[str, Mapping[str, Any]]] = field(default_factory=dict)
    gke_without_compute_classes: frozenset[str] = frozenset()
    failures: Mapping[str, str] = field(default_factory=dict)


Answer = dict[str, Any]
# A provider function's answer from the account: (its arguments, the catalog, the account).
Invoke = Callable[[Answer, "Catalog", LiveAccount], Answer]
# A Kubernetes read's JSON body from the account: (the account, the cluster read).
KubeAnswer = Callable[[LiveAccount, "ClusterAccess"], Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class AccountPart:
    """One platform's model of the fake account (the registry's ``account`` entry).

    Attributes:
        existing: the account holding only the existing cluster ``config`` attaches to, as an
            offline plan (``Observed.none()``) over the catalog assumes it.
        deployed: ``found`` plus what a deploy of ``recording`` (of the stack ``config``) leaves
            running.
        invokes: provider function token -> its answer from the account (the observe step's
            reads).
        kube_paths: Kubernetes API path -> its answer from the account (the observe step's reads
            of a cluster's API, ``infra.observe.kubeapi``).
    """

    existing: Callable[[StackConfig, Catalog], LiveAccount]
    deployed: Callable[[LiveAccount, Recording, StackConfig], LiveAccount]
    invokes: Mapping[str, Invoke]
    kube_paths: Mapping[str, KubeAnswer] = field(default_factory=dict)
