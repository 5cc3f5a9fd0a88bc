"""The GKE observe step: an existing cluster's name, endpoint, CA, workload pool and node pools,
before planning.

Through pulumi-gcp's synchronous ``container.get_cluster``, so ``pulumi up`` reads with the
stack's provider configuration. A stack that creates its cluster reads it only when its
``cluster.minMasterVersion`` is past GKE support (whether that cluster already runs decides if
the version is sent at all); otherwise it reads nothing. Not found is an empty answer (the plan
then says the cluster is missing, or that it would create it on a dead minor); any other failure
stops the run.
"""

from __future__ import annotations

import pulumi_gcp as gcp

from infra.core.config.gke import GkeClusterSpec
from infra.core.config.stack import StackConfig
from infra.core.gke.observed import (
    GkeClusterObserved,
    GkeNodePoolObserved,
    GkeObserved,
    cluster_not_found,
)
from infra.core.gke.versions import support_problem
from infra.core.observed import ObserveError, failure_reason


def observe_gke(config: StackConfig) -> GkeObserved:
    """Read the live project for ``config`` (a GKE stack)."""
    c: GkeClusterSpec = config.cluster
    if not c.existing and support_problem(c.min_master_version, c.release_channel) is None:
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
    return GkeObserved(
        cluster=GkeClusterObserved(
            name=found.name or c.name,
            endpoint=found.endpoint,
            certificate_authority=(auths[0].cluster_ca_certificate or "") if auths else "",
            workload_pool=(identity[0].workload_pool or "") if identity else "",
        ),
        # The pools the cluster runs with their node labels and service accounts (the data
        # source's node_pool blocks): which are this stack's (infra.core.gke.neighbours).
        node_pools={p.name: _pool(p) for p in found.node_pools or ()} if c.existing else None,
    )


def _pool(p: gcp.container.outputs.GetClusterNodePoolResult) -> GkeNodePoolObserved:
    config = p.node_configs[0] if p.node_configs else None
    if config is None:
        return GkeNodePoolObserved()
    return GkeNodePoolObserved(
        labels=dict(config.labels or {}), service_account=config.service_account or ""
    )
