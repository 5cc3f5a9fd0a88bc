"""What the GKE observe step read before planning: frozen data, JSON both ways.

Pure code. ``infra.observe.gke`` reads an existing cluster (the only live read a GKE stack
makes); ``planner.plan_gke`` decides over it. ``None`` as a whole is an offline plan.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from infra.core.observed import access_from_json, access_to_json


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
    """

    cluster: GkeClusterObserved | None = None
    node_pools: Mapping[str, GkeNodePoolObserved] | None = None

    def to_json(self) -> dict[str, Any]:
        """camelCase JSON, as ``--json`` shows it; ``from_json`` reads it back."""
        c = self.cluster
        out: dict[str, Any] = {
            "cluster": None if c is None else {**access_to_json(c), "workloadPool": c.workload_pool}
        }
        if self.node_pools is not None:
            out["nodePools"] = {n: p.to_json() for n, p in self.node_pools.items()}
        return out

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> GkeObserved:
        """The value ``to_json`` wrote (keys it does not write are refused)."""
        if unknown := sorted(set(doc) - {"cluster", "nodePools"}):
            raise ValueError(f"observed.gke: unknown key(s) {', '.join(unknown)}")
        pools = doc.get("nodePools")
        node_pools = (
            None
            if pools is None
            else {str(n): GkeNodePoolObserved.from_json(p) for n, p in pools.items()}
        )
        c = doc.get("cluster")
        if c is None:
            return cls(node_pools=node_pools)
        if unknown := sorted(set(c) - {"name", "endpoint", "certificateAuthority", "workloadPool"}):
            raise ValueError(f"observed.gke.cluster: unknown key(s) {', '.join(unknown)}")
        return cls(
            cluster=GkeClusterObserved(**access_from_json(c), workload_pool=c.get("workloadPool")),
            node_pools=node_pools,
        )


def cluster_not_found(error: str, project: str, location: str, name: str) -> bool:
    """Whether reading the cluster failed because there is none: the provider's data source says
    ``<id> not found`` with the cluster's full name (terraform-provider-google
    google/services/container/data_source_google_container_cluster.go, containerClusterFullName
    ``projects/%s/locations/%s/clusters/%s``); any other failure stops the run."""
    return f"projects/{project}/locations/{location}/clusters/{name} not found" in error
