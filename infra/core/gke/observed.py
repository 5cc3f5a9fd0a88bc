"""What the GKE observe step read before planning: frozen data, JSON both ways.

Pure code. ``infra.observe.gke`` reads an existing cluster (the only live reads a GKE stack
makes: the cluster and, for a stack with auto-creating pools, its ComputeClasses);
``planner.plan_gke`` decides over it. ``None`` as a whole is an offline plan.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from infra.core.observed import access_from_json, access_to_json

if TYPE_CHECKING:
    from infra.core.config.stack import StackConfig


@dataclass(frozen=True, slots=True, kw_only=True)
class GkeClusterObserved:
    """An existing cluster as ``projects.locations.clusters.get`` shows it.

    Attributes:
        endpoint: the API server's IP address.
        certificate_authority: ``masterAuth.clusterCaCertificate``, base64 PEM.
        workload_pool: ``workloadIdentityConfig.workloadPool`` (``<project>.svc.id.goog``);
            ``""``: Workload Identity is off; ``None``: not read.
    """

    name: str
    endpoint: str
    certificate_authority: str
    workload_pool: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class GkeNodePoolObserved:
    """One node pool of an existing cluster, as the cluster read shows it (``nodePools[]``).

    Attributes:
        labels: its Kubernetes node labels (``config.labels``).
        service_account: the service account its nodes run as (``config.serviceAccount``);
            ``""``: not shown.
    """

    labels: Mapping[str, str] = field(default_factory=dict)
    service_account: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"labels": dict(self.labels), "serviceAccount": self.service_account}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> GkeNodePoolObserved:
        if unknown := sorted(set(doc) - {"labels", "serviceAccount"}):
            raise ValueError(f"observed.gke.nodePools: unknown key(s) {', '.join(unknown)}")
        labels = {str(k): str(v) for k, v in (doc.get("labels") or {}).items()}
        return cls(labels=labels, service_account=str(doc.get("serviceAccount") or ""))


@dataclass(frozen=True, slots=True, kw_only=True)
class GkeComputeClassObserved:
    """One ``cloud.google.com/v1`` ComputeClass of an existing cluster, as the Kubernetes API
    lists it.

    Attributes:
        priorities: per ``spec.priorities[]`` rule, the node labels and service account of the
            nodes GKE auto-creates for it (``nodePoolConfig.nodeLabels`` under the rule's own
            ``nodeLabels``; ``nodePoolConfig.serviceAccount``): whose class it is, as a node
            pool's labels and account say whose pool it is.
    """

    priorities: tuple[GkeNodePoolObserved, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"priorities": [p.to_json() for p in self.priorities]}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> GkeComputeClassObserved:
        if unknown := sorted(set(doc) - {"priorities"}):
            raise ValueError(f"observed.gke.computeClasses: unknown key(s) {', '.join(unknown)}")
        rules = doc.get("priorities") or ()
        return cls(priorities=tuple(GkeNodePoolObserved.from_json(p) for p in rules))

    @classmethod
    def of(cls, item: Mapping[str, Any]) -> GkeComputeClassObserved:
        """The class a ``ComputeClassList`` item is (the CRD's ``spec``: priorities[].nodeLabels,
        nodePoolConfig.nodeLabels and .serviceAccount; https://cloud.google.com/kubernetes-engine/docs/reference/crds/computeclass)."""
        spec = item.get("spec") or {}
        config = spec.get("nodePoolConfig") or {}
        shared = {str(k): str(v) for k, v in (config.get("nodeLabels") or {}).items()}
        account = str(config.get("serviceAccount") or "")
        return cls(
            priorities=tuple(
                GkeNodePoolObserved(
                    labels={
                        **shared,
                        **{str(k): str(v) for k, v in (rule.get("nodeLabels") or {}).items()},
                    },
                    service_account=account,
                )
                for rule in spec.get("priorities") or ()
            )
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class GkeObserved:
    """Everything the GKE observe step read.

    Attributes:
        cluster: the running cluster of ``cluster.name``: the one ``cluster.existing`` attaches
            to, or the one a stack creating its cluster made earlier (read only when its
            ``cluster.minMasterVersion`` is past support); ``None``: there is none, or nothing
            was read.
        node_pools: the existing cluster's node pools by name, whose labels and service accounts
            tell this stack's running pools from another's (``infra.core.gke.neighbours``);
            ``None``: not read (a cluster the stack creates, or none found).
        compute_classes: the existing cluster's ComputeClasses by name, read for a stack whose
            pools GKE auto-creates (``reads_compute_classes``): an idle auto-creating class has
            no node pool to show it runs, so the class itself does; ``None``: not read.
    """

    cluster: GkeClusterObserved | None = None
    node_pools: Mapping[str, GkeNodePoolObserved] | None = None
    compute_classes: Mapping[str, GkeComputeClassObserved] | None = None

    def to_json(self) -> dict[str, Any]:
        """camelCase JSON, as ``--json`` shows it; ``from_json`` reads it back."""
        c = self.cluster
        out: dict[str, Any] = {
            "cluster": None if c is None else {**access_to_json(c), "workloadPool": c.workload_pool}
        }
        if self.node_pools is not None:
            out["nodePools"] = {n: p.to_json() for n, p in self.node_pools.items()}
        if self.compute_classes is not None:
            out["computeClasses"] = {n: k.to_json() for n, k in self.compute_classes.items()}
        return out

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> GkeObserved:
        """The value ``to_json`` wrote (keys it does not write are refused)."""
        if unknown := sorted(set(doc) - {"cluster", "nodePools", "computeClasses"}):
            raise ValueError(f"observed.gke: unknown key(s) {', '.join(unknown)}")
        pools, classes = doc.get("nodePools"), doc.get("computeClasses")
        node_pools = (
            None
            if pools is None
            else {str(n): GkeNodePoolObserved.from_json(p) for n, p in pools.items()}
        )
        compute_classes = (
            None
            if classes is None
            else {str(n): GkeComputeClassObserved.from_json(k) for n, k in classes.items()}
        )
        c = doc.get("cluster")
        if c is None:
            return cls(node_pools=node_pools, compute_classes=compute_classes)
        if unknown := sorted(set(c) - {"name", "endpoint", "certificateAuthority", "workloadPool"}):
            raise ValueError(f"observed.gke.cluster: unknown key(s) {', '.join(unknown)}")
        return cls(
            cluster=GkeClusterObserved(**access_from_json(c), workload_pool=c.get("workloadPool")),
            node_pools=node_pools,
            compute_classes=compute_classes,
        )


def cluster_not_found(error: str, project: str, location: str, name: str) -> bool:
    """Whether reading the cluster failed because there is none: the provider's data source says
    ``<id> not found`` with the cluster's full name (terraform-provider-google
    google/services/container/data_source_google_container_cluster.go, containerClusterFullName
    ``projects/%s/locations/%s/clusters/%s``); any other failure stops the run."""
    return f"projects/{project}/locations/{location}/clusters/{name} not found" in error


# The cluster-scoped list of the ComputeClass CRD (group cloud.google.com, version v1, plural
# computeclasses: https://cloud.google.com/kubernetes-engine/docs/reference/crds/computeclass),
# as the Kubernetes API serves every custom resource's list
# (https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-uris).
COMPUTE_CLASSES_PATH = "/apis/cloud.google.com/v1/computeclasses"


def reads_compute_classes(config: StackConfig) -> bool:
    """Whether the observe step reads the cluster's ComputeClasses: on an existing cluster, for a
    stack with a pool GKE auto-creates (``autoCreate``), whose class is the only sign it runs. A
    fixed pool's class is kept or renamed with its node pools, which the cluster read shows; a
    stack without auto-creation needs no Kubernetes read grant."""
    return config.cluster.existing and any(getattr(p, "auto_create", False) for p in config.pools)
