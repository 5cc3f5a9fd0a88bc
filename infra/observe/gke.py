"""The GKE observe step: an existing cluster's name, endpoint, CA, workload pool, node pools and,
for a stack with auto-created pools, ComputeClasses, before planning.

Through pulumi-gcp's synchronous ``container.get_cluster``, so ``pulumi up`` reads with the
stack's provider configuration. A stack that creates its cluster reads it only when its
``cluster.minMasterVersion`` is past GKE support (whether that cluster already runs decides if
the version is sent at all); otherwise it reads nothing. The ComputeClasses come from the found
cluster's Kubernetes API (``infra.observe.kubeapi``), as the provider's identity
(``organizations.get_client_config``). Not found is an empty answer (the plan then says the
cluster is missing, or that it would create it on a dead minor; a cluster that serves no
ComputeClass type has none); any other failure stops the run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pulumi_gcp as gcp

from infra.core.config.gke import GkeClusterSpec
from infra.core.config.stack import StackConfig
from infra.core.gke.observed import (
    COMPUTE_CLASSES_PATH,
    GkeClusterObserved,
    GkeComputeClassObserved,
    GkeNodePoolObserved,
    GkeObserved,
    cluster_not_found,
    reads_compute_classes,
)
from infra.core.gke.versions import support_problem
from infra.core.observed import ClusterAccess, ObserveError, failure_reason
from infra.observe import kubeapi

if TYPE_CHECKING:
    from infra.core.catalog.vendored import Catalog


def observe_gke(config: StackConfig, catalog: Catalog) -> GkeObserved:
    """Read the live project for ``config`` (a GKE stack) planned over ``catalog`` (whose
    support calendar says whether the version is past support)."""
    c: GkeClusterSpec = config.cluster
    past = support_problem(c.min_master_version, c.release_channel, catalog.data_dir)
    if not c.existing and past is None:
        return GkeObserved()
    project = config.project or ""
    try:
        found = gcp.container.get_cluster(name=c.name, location=c.location, project=project)
    except Exception as e:  # classified: not found, or stop
        if cluster_not_found(str(e), project, c.location, c.name):
            return GkeObserved()
        reason = failure_reason(str(e))
        raise ObserveError("cluster.name", f"could not read GKE cluster {c.name}: {reason}") from e
    auths = found.master_auths
    identity = found.workload_identity_configs
    cluster = GkeClusterObserved(
        name=found.name or c.name,
        endpoint=found.endpoint,
        certificate_authority=(auths[0].cluster_ca_certificate or "") if auths else "",
        workload_pool=(identity[0].workload_pool or "") if identity else "",
    )
    return GkeObserved(
        cluster=cluster,
        # The pools the cluster runs with their node labels and service accounts (the data
        # source's node_pool blocks): which are this stack's (infra.core.gke.neighbours).
        node_pools={p.name: _pool(p) for p in found.node_pools or ()} if c.existing else None,
        compute_classes=_compute_classes(cluster) if reads_compute_classes(config) else None,
    )


def _compute_classes(cluster: GkeClusterObserved) -> dict[str, GkeComputeClassObserved]:
    """The cluster's ComputeClasses by name; none when it serves no such type (a 404)."""
    try:
        token = gcp.organizations.get_client_config().access_token
        access = ClusterAccess(
            name=cluster.name,
            endpoint=cluster.endpoint,
            certificate_authority=cluster.certificate_authority,
        )
        doc = kubeapi.READ.get()(access, token, COMPUTE_CLASSES_PATH)
    except kubeapi.NotServed:
        return {}
    except Exception as e:  # classified above: a 404 only; any other failure stops the run
        raise _unread(cluster.name, failure_reason(str(e))) from e
    if not isinstance(doc, dict) or not isinstance(doc.get("items") or [], list):
        raise _unread(cluster.name, "the answer is not a ComputeClassList")
    return {
        str(i["metadata"]["name"]): GkeComputeClassObserved.of(i)
        for i in doc.get("items") or []
        if isinstance(i, dict) and (i.get("metadata") or {}).get("name")
    }


def _unread(cluster: str, reason: str) -> ObserveError:
    return ObserveError(
        "cluster.name",
        f"could not read the ComputeClasses of GKE cluster {cluster} "
        f"(GET {COMPUTE_CLASSES_PATH}): {reason}",
    )


def _pool(p: gcp.container.outputs.GetClusterNodePoolResult) -> GkeNodePoolObserved:
    config = p.node_configs[0] if p.node_configs else None
    if config is None:
        return GkeNodePoolObserved()
    return GkeNodePoolObserved(
        labels=dict(config.labels or {}), service_account=config.service_account or ""
    )
