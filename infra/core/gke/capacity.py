"""What each GKE node pool can grow to, in the units Compute Engine quotas count (pure): the GKE
side of ``Platform.quota_sizings``; the quota preflight (``quota``) vets and counts them."""

from __future__ import annotations

from pathlib import Path

from infra.core.catalog.vendored import Catalog
from infra.core.config.stack import StackConfig
from infra.core.errors import Issues, join_path
from infra.core.gke.cost import GKE_REGIONAL_DEFAULT_ZONES
from infra.core.gke.model import GkePlan, GkePoolPlan
from infra.core.gke.names import fallback_pool_name
from infra.core.platform import NodeMarks
from infra.core.pools import idle_nodes, warm_of
from infra.core.sizing import NodeGroupSizing, Provisioning
from infra.core.system_pool import gcp_vcpus_of

# GKE surge upgrades add up to maxSurge nodes to a pool while it is upgraded ("the maximum number
# of nodes that can be created beyond the current size of the node pool during the upgrade
# process", https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/NodePool#upgradesettings);
# the default is maxSurge=1 (https://cloud.google.com/kubernetes-engine/docs/concepts/node-pool-upgrade-strategies).
GKE_DEFAULT_MAX_SURGE = 1
# A new cluster first runs its default node pool (initial_node_count=1 per zone, machine type
# e2-medium, 2 vCPUs) until remove_default_node_pool deletes it; a regional cluster spreads it
# over GKE_REGIONAL_DEFAULT_ZONES zones. https://cloud.google.com/kubernetes-engine/docs/concepts/regional-clusters
# (three zones by default) and https://cloud.google.com/sdk/gcloud/reference/container/clusters/create
# (--machine-type default e2-medium).
GKE_BOOTSTRAP_MACHINE_TYPE = "e2-medium"
GKE_BOOTSTRAP_VCPUS = 2
# The system pool's name (infra/components/gke.py).
GKE_SYSTEM_POOL = "system"
# GKE labels every node VM with its cluster, the cluster's location (a region or a zone) and its
# node pool: "goog-k8s-cluster-location: Filter GKE resources by location. goog-k8s-cluster-name:
# Filter GKE resources by cluster. goog-k8s-node-pool-name: Filter cluster resources by node pool"
# (https://cloud.google.com/billing/docs/how-to/cost-table).
GKE_CLUSTER_LABEL = "goog-k8s-cluster-name"
GKE_LOCATION_LABEL = "goog-k8s-cluster-location"
GKE_POOL_LABEL = "goog-k8s-node-pool-name"


def _gke_model(gp: GkePoolPlan) -> Provisioning:
    if gp.flex_start:
        return "flex-start"
    if gp.queued_provisioning:
        return "queued"
    if gp.spot:
        return "spot"
    if gp.reservation_type == "SPECIFIC_RESERVATION":  # ANY_RESERVATION may not be consumed
        return "reservation"
    return "standard"


def gke_sizings(
    config: StackConfig, gke: GkePlan, catalog: Catalog, issues: Issues
) -> list[NodeGroupSizing]:
    """Every planned GKE node pool (fallback pools included), the system and bootstrap pools."""
    paths = _gke_paths(config, catalog.data_dir)
    # Planned pools on a declared machine type (fallbacks too: the planner accepts only catalog
    # types and the declared ones).
    declared = {p.machine_type for p in config.pools if p.shape is not None}
    external = not gke.cluster.private_nodes
    warm = warm_of(config)
    out = [
        NodeGroupSizing(
            path=paths.get(gp.name, gp.name),
            name=gp.name,
            machine_types=(gp.machine_type,),
            gpu_type=gp.accelerator,
            gpus_per_node=gp.accelerator_count,
            vcpus=gp.vcpus,
            model=_gke_model(gp),
            max_nodes=gke_created(gp.total_max, gp.initial_node_count, len(gp.node_locations)),
            surge=gp.max_surge or 0,  # None: flex/queued pools (SHORT_LIVED, no surge)
            disk_type=gp.disk_type,
            disk_gb=gp.disk_size_gb,
            local_ssds=gp.local_ssd_count,
            external_ip=external,
            declared=gp.machine_type in declared,
            zones=gp.node_locations,
            auto_created=gp.auto_create,
            min_nodes=idle_nodes(gp.nodes_at_min, warm.get(gp.name, 0)),
            warm=warm.get(gp.name, 0),
        )
        for gp in gke.pools
    ]
    cluster = gke.cluster
    regional = cluster.location.count("-") == 1  # us-central1 vs us-central1-a
    if not cluster.existing:
        vcpus = gcp_vcpus_of(cluster.system_machine_type, catalog)
        if vcpus is None:
            issues.add(
                "cluster.systemPool.machineType",
                f"{cluster.system_machine_type!r} is not a predefined GCP machine type "
                "(vCPUs unknown)",
            )
        else:
            out.append(
                NodeGroupSizing(
                    path="cluster.systemPool",
                    name=GKE_SYSTEM_POOL,
                    machine_types=(cluster.system_machine_type,),
                    gpu_type=None,
                    gpus_per_node=0,
                    vcpus=vcpus,
                    # initialNodeCount=1 per zone (infra/components/gke.py), GKE's default zones
                    max_nodes=gke_created(
                        cluster.system_max, 1, GKE_REGIONAL_DEFAULT_ZONES if regional else 1
                    ),
                    surge=GKE_DEFAULT_MAX_SURGE,
                    disk_type=cluster.system_disk_type,
                    external_ip=external,
                    # initialNodeCount 1 per zone, as the cost estimate counts it at minimum
                    min_nodes=max(
                        cluster.system_min, GKE_REGIONAL_DEFAULT_ZONES if regional else 1
                    ),
                )
            )
        out.append(
            NodeGroupSizing(
                path="cluster",
                name="default-pool (bootstrap)",
                machine_types=(GKE_BOOTSTRAP_MACHINE_TYPE,),
                gpu_type=None,
                gpus_per_node=0,
                vcpus=GKE_BOOTSTRAP_VCPUS,
                max_nodes=GKE_REGIONAL_DEFAULT_ZONES if regional else 1,
                external_ip=external,
                bootstrap=True,
            )
        )
    return out


def gke_node_marks(gke: GkePlan) -> tuple[NodeMarks, ...]:
    """The labels on the VMs of every node pool the stack plans (an auto-created pool has a name
    GKE picks, so none: its VMs stay in the usage of others)."""
    c = gke.cluster
    pools = [(gp.name, gp.node_pool) for gp in gke.pools if not gp.auto_create]
    if not c.existing:
        pools.append((GKE_SYSTEM_POOL, GKE_SYSTEM_POOL))
    cluster = ((GKE_CLUSTER_LABEL, c.name), (GKE_LOCATION_LABEL, c.location))
    return tuple(NodeMarks(p, n, (*cluster, (GKE_POOL_LABEL, n))) for p, n in pools)


def gke_created(total_max: int, initial_per_zone: int, zones: int) -> int:
    """Nodes a GKE pool may hold: max(total max, zones x initialNodeCount).

    ``initialNodeCount`` is per zone: "The initial node count for the pool ... must be at least 1
    ... in each of the node pool's zones" (https://cloud.google.com/kubernetes-engine/docs/
    reference/rest/v1/projects.locations.clusters.nodePools#NodePool.FIELDS.initial_node_count:
    "The initial node count for the pool"; https://cloud.google.com/sdk/gcloud/reference/container/
    node-pools/create: "--num-nodes ... The number of nodes in the node pool in each of the
    cluster's zones"), so creation can start above ``totalMaxNodeCount``.
    """
    return max(total_max, initial_per_zone * zones)


def _gke_paths(config: StackConfig, data_dir: Path) -> dict[str, str]:
    """Planned pool name -> config key path (fallback pools are named by their shape)."""
    paths: dict[str, str] = {}
    for i, pool in enumerate(config.pools):
        paths[pool.name] = join_path("gpuPools", i)
        for j, fb in enumerate(pool.fallback or ()):
            name = fallback_pool_name(pool.name, fb, data_dir)
            paths[name] = join_path("gpuPools", i, "fallback", j)
    return paths
