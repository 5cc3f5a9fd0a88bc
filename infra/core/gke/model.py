"""The decided shape of a GKE stack: plan dataclasses and the constants they are built from.

Field names follow the ``gcp.container.Cluster`` / ``NodePool`` arguments the component maps them
onto, so ``infra.components.gke`` decides nothing. The quota preflight reads ``GkePoolPlan.disk_type``,
``local_ssd_count`` and ``GkeClusterPlan.private_nodes``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from infra.core.pools import PoolHints, Taint

if TYPE_CHECKING:
    from infra.core.gke.observed import GkeClusterObserved

# GKE adds this taint only when a non-GPU pool already exists, so creation order would decide it
# and providers would see drift; declare it always
# (https://cloud.google.com/kubernetes-engine/docs/how-to/gpus#create, terraform-provider-google#7928).
GPU_TAINT = Taint("nvidia.com/gpu", "present", "NoSchedule")

# With this label GKE does not deploy its own device plugin, so the GPU Operator's is the only
# nvidia.com/gpu advertiser (https://cloud.google.com/kubernetes-engine/docs/how-to/gpu-operator).
NO_GKE_DEVICE_PLUGIN = "gke-no-default-nvidia-gpu-device-plugin"


# cloud-platform lets IAM on the node service account be the only gate; narrower scopes break the
# driver installer and image pulls
# (https://cloud.google.com/kubernetes-engine/docs/how-to/hardening-your-cluster#use_least_privilege_sa).
NODE_SCOPES = ("https://www.googleapis.com/auth/cloud-platform",)

# Least-privilege node identity: GKE's purpose-built role plus image pulls from Artifact Registry.
# https://cloud.google.com/kubernetes-engine/docs/how-to/hardening-your-cluster#use_least_privilege_sa
NODE_SA_ROLES = ("roles/container.defaultNodeServiceAccount", "roles/artifactregistry.reader")

# A custom node SA needs this role for image streaming
# (https://cloud.google.com/kubernetes-engine/docs/how-to/image-streaming#requirements).
IMAGE_STREAMING_ROLE = "roles/serviceusage.serviceUsageConsumer"
# "You must enable the Container File System API" for image streaming
# (https://cloud.google.com/kubernetes-engine/docs/how-to/image-streaming#requirements).
IMAGE_STREAMING_SERVICE = "containerfilesystem.googleapis.com"

# ReservationAffinity key for SPECIFIC_RESERVATION
# (https://cloud.google.com/kubernetes-engine/docs/how-to/consuming-reservations).
RESERVATION_KEY = "compute.googleapis.com/reservation-name"


# GPUDriverInstallationConfig.gpuDriverVersion values gpu-infra sends (GKE REST v1).
GpuDriverVersion = Literal["DEFAULT", "LATEST", "INSTALLATION_DISABLED"]


@dataclass(frozen=True, slots=True, kw_only=True)
class GkePoolPlan:
    """One GKE node pool, fully decided. Field names follow ``gcp.container.NodePool`` arguments,
    but for ``name``: the pool's name in the stack (a ``gpuPools`` entry or its fallback), which
    its resource, outputs and hints go by; the node pool GKE knows is ``node_pool``."""

    name: str
    # The GKE node pool's own name when it is not ``name``: on a shared cluster it carries the
    # stack (``infra.core.gke.neighbours``).
    node_pool_name: str = ""
    machine_type: str
    vcpus: int
    memory_gib: float
    accelerator: str
    accelerator_count: int
    driver_version: GpuDriverVersion
    image_type: str
    node_locations: tuple[str, ...]
    total_min: int
    total_max: int
    spot: bool
    labels: Mapping[str, str]
    taints: tuple[Taint, ...]
    auto_upgrade: bool
    disk_type: str
    # nvidia.com/gpu a node advertises: GPUs x MIG partitions x time-sharing/MPS clients.
    schedulable_gpus: int
    sharing_strategy: Literal["TIME_SHARING", "MPS"] | None = None
    max_shared_clients_per_gpu: int | None = None
    partition_size: str | None = None
    # None: no reservationAffinity is sent (GKE's default consumes matching reservations).
    reservation_type: str | None = None
    reservation_name: str | None = None
    flex_start: bool = False
    max_run_duration: str | None = None
    queued_provisioning: bool = False
    best_effort_min_nodes: int | None = None
    initial_node_count: int = 0  # per zone
    auto_repair: bool = True
    # None: no upgradeSettings (flex-start/queued pools use GKE's SHORT_LIVED strategy).
    max_surge: int | None = 1
    max_unavailable: int | None = 0
    disk_size_gb: int = 100
    local_ssd_count: int = 0  # ephemeral-storage Local SSDs (375 GiB each); 0 = none configured
    compact_placement: bool = False
    gvnic: bool = True
    image_streaming: bool = False
    compute_class: str | None = None
    secure_boot: bool = True
    # GKE creates (and deletes) this pool's node pools from its ComputeClass: no NodePool is
    # created for it (infra/core/gke/autocreate.py).
    auto_create: bool = False
    hints: PoolHints

    @property
    def node_pool(self) -> str:
        """The name GKE knows the node pool by (NodePool.name, the gke-nodepool node label)."""
        return self.node_pool_name or self.name

    @property
    def gke_sharing(self) -> bool:
        """GKE's own time-sharing, MPS or MIG partitioning is on (exclusive with the operator's)."""
        return self.sharing_strategy is not None or self.partition_size is not None

    @property
    def nodes_at_creation(self) -> int:
        """Nodes GKE creates the pool with: ``initialNodeCount`` is per zone ("In regional or
        multi-zonal clusters, this is the number of nodes per zone", terraform-provider-google
        container_node_pool ``initial_node_count``), in each of ``node_locations``."""
        return self.initial_node_count * len(self.node_locations)

    @property
    def zone_may_be_empty(self) -> bool:
        """Some zone's MIG (a node group of the autoscaler, which builds each one's node from its
        template when it has none: kubernetes/autoscaler FAQ.md "creates template nodes for each
        of the node groups") may sit at zero: totalMinNodeCount bounds the whole pool ("Total
        minimum number of nodes in the NodePool", terraform-provider-google container_node_pool
        autoscaling), not each zone, so any pool over more than one zone."""
        return self.total_min == 0 or len(self.node_locations) > 1

    @property
    def nodes_at_min(self) -> int:
        """Nodes at minimum scale: the autoscaler's total minimum, or more when the pool is
        created with more (best-effort provisioning, per zone)."""
        return max(self.total_min, self.nodes_at_creation)


@dataclass(frozen=True, slots=True, kw_only=True)
class AutoCreation:
    """What a ComputeClass with ``nodePoolAutoCreation`` sends besides its name: one priority per
    pool (machine type, GPUs, Spot, zones, reservation, boot disk, node labels) and the
    ``nodePoolConfig`` every auto-created pool gets; decided in ``infra.core.gke.autocreate``."""

    priorities: tuple[Mapping[str, Any], ...]
    node_pool_config: Mapping[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class ComputeClassPlan:
    """A ``cloud.google.com/v1`` ComputeClass whose priorities are the pools, in fallback order."""

    name: str
    pools: tuple[str, ...]
    # The GKE node pools the priorities name, when not ``pools`` (``GkePoolPlan.node_pool``).
    node_pools: tuple[str, ...] = ()
    # The gpuPools entry the class is planned from when ``name`` is not it (a shared cluster's
    # class carries the stack: infra.core.gke.neighbours); its outputs and resource go by it.
    entry: str = ""

    @property
    def key(self) -> str:
        """The ``gpuPools`` entry the class stands for (its ``gpuPools`` output's key)."""
        return self.entry or self.name

    # activeMigration.optimizeRulePriority: opt-in (gpuPools[].activeMigration).
    active_migration: bool = False
    # None: the priorities name the stack's fixed pools; set: GKE auto-creates the pools.
    auto: AutoCreation | None = None

    def manifest(self, service_account: str | None = None) -> dict[str, Any]:
        """The ComputeClass spec: one rule per pool, tried in order. ``service_account``: the
        node service account auto-created pools run as (``nodePoolConfig.serviceAccount``)."""
        spec: dict[str, Any] = {
            # Each rule names one manual pool; no other fields may sit next to `nodepools`.
            "priorities": [{"nodepools": [p]} for p in self.node_pools or self.pools]
            if self.auto is None
            else [dict(p) for p in self.auto.priorities],
            # Explicit on purpose: the default changed to DoNotScaleUp in GKE 1.33
            # (https://cloud.google.com/kubernetes-engine/docs/reference/crds/computeclass).
            "whenUnsatisfiable": "DoNotScaleUp",
            "nodePoolAutoCreation": {"enabled": self.auto is not None},
        }
        if self.auto is not None:
            config = dict(self.auto.node_pool_config)
            if service_account is not None:
                config["serviceAccount"] = service_account
            spec["nodePoolConfig"] = config
        if self.active_migration:
            # Move running workloads to a higher priority (e.g. back to Spot) when it has capacity
            # again, by evicting them; opt-in, as GPU Jobs and notebooks would be restarted
            # (https://cloud.google.com/kubernetes-engine/docs/concepts/about-custom-compute-classes#active-migration).
            # Omitted: the CRD's default, optimizeRulePriority false.
            spec["activeMigration"] = {"optimizeRulePriority": True}
        return spec


@dataclass(frozen=True, slots=True)
class ResourceLimitPlan:
    """One ``clusterAutoscaling.resourceLimits`` entry (cluster-level node auto-provisioning)."""

    resource_type: str
    maximum: int
    minimum: int = 0


@dataclass(frozen=True, slots=True)
class MaintenanceExclusionPlan:
    """One ``maintenancePolicy.maintenanceExclusions`` entry."""

    name: str
    start_time: str
    end_time: str
    scope: str


@dataclass(frozen=True, slots=True)
class AuthorizedNetworkPlan:
    """One ``masterAuthorizedNetworksConfig.cidrBlocks`` entry."""

    cidr_block: str
    display_name: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class GkeClusterPlan:
    """The cluster, created or attached."""

    name: str
    location: str
    existing: bool
    release_channel: str
    min_master_version: str | None
    deletion_protection: bool
    network: str | None
    subnetwork: str | None
    workload_pool: str
    # The node service account the stack creates (project-unique id, see infra.core.gke.names);
    # not created when ``node_sa_email`` brings an existing one.
    node_sa_id: str
    node_sa_email: str | None = None
    router_name: str = ""
    nat_name: str = ""
    # The one subnetwork the Cloud NAT serves (a resource path).
    nat_subnetwork: str = ""
    system_machine_type: str
    system_disk_type: str
    system_min: int
    system_max: int
    maintenance_start: str
    maintenance_end: str
    maintenance_recurrence: str
    maintenance_exclusions: tuple[MaintenanceExclusionPlan, ...] = ()
    private_nodes: bool = False
    cloud_nat: bool = False
    authorized_networks: tuple[AuthorizedNetworkPlan, ...] | None = None
    dataplane_v2: bool = True
    dcgm_metrics: bool = True
    # monitoringConfig.enableComponents: authoritative, so GKE's default packages are listed too.
    monitoring_components: tuple[str, ...] = ()
    # Cluster-level node auto-provisioning with these limits; None: not enabled, no block sent
    # (set only where a ComputeClass needs it to auto-create pools, infra/core/gke/nap.py).
    auto_provisioning_limits: tuple[ResourceLimitPlan, ...] | None = None

    @property
    def on_channel(self) -> bool:
        """Enrolled in a release channel (GKE then keeps node auto-upgrade on)."""
        return self.release_channel != "UNSPECIFIED"


@dataclass(frozen=True, slots=True, kw_only=True)
class GkePlan:
    """Everything GKE-side for one stack."""

    project: str
    region: str
    cluster: GkeClusterPlan
    pools: tuple[GkePoolPlan, ...] = ()
    compute_classes: tuple[ComputeClassPlan, ...] = ()
    node_sa_roles: tuple[str, ...] = field(default=NODE_SA_ROLES)
    node_scopes: tuple[str, ...] = field(default=NODE_SCOPES)
    # Project services the pools need (enabled with disableOnDestroy false).
    services: tuple[str, ...] = ()
    # What a reviewer should know that is not an error (zones widened, NAT needed ...).
    notes: tuple[str, ...] = ()
    # Of those, what the observe step found about the pools (running pools kept under their
    # names): logged by the node pools at deploy, so a plan over a live cluster says it too.
    pool_notes: tuple[str, ...] = ()
    # An existing cluster as observed (offline: placeholders; planner.attached_cluster).
    existing_cluster: GkeClusterObserved | None = None
    # Environment of the kubeconfig's auth plugin, so it signs as the provider (planner.adc_env).
    kubeconfig_env: tuple[tuple[str, str], ...] = ()

    @property
    def node_identity_role(self) -> str:
        """The lifecycle role (``data/lifecycle.csv``) of the node service account and its role
        bindings: ``auto-created-nodes`` (retained on delete) on a cluster the stack does not own
        when a ComputeClass auto-creates pools, since a destroy deletes the class but not the
        pools GKE created for it, whose nodes keep running as that account; else the type's row."""
        auto = any(c.auto is not None for c in self.compute_classes)
        return "auto-created-nodes" if self.cluster.existing and auto else ""
