"""Stack-config schema for ``platform: gke``: the cluster block and GPU node pools.

Only shapes and enums live here; rules that need the catalog (zones, machine/GPU pairs) live in
the ``infra.core.gke`` package (``pools``, ``rules``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from infra.core import rules
from infra.core.config.base import ClusterBase, Model, PoolBase

# Driver modes map onto guestAccelerators[].gpuDriverInstallationConfig.gpuDriverVersion
# (https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/NodeConfig#gpudriverinstallationconfig):
# gke-default -> DEFAULT, gke-latest -> LATEST (COS only), operator -> INSTALLATION_DISABLED.
DriverMode = Literal["gke-default", "gke-latest", "operator"]
ImageType = Literal["COS_CONTAINERD", "UBUNTU_CONTAINERD"]


class GkeSharingSpec(Model):
    """GKE's own GPU sharing (``gpu_sharing_config``); exclusive with the operator's ``sharing``."""

    strategy: Literal["time-sharing", "mps"]
    max_shared_clients_per_gpu: int = Field(ge=2, le=48)


class GkeGpuSpec(Model):
    """The accelerator of a pool. ``type``/``count`` are derived for machine types with built-in GPUs."""

    type: str | None = None
    count: int | None = Field(default=None, ge=1, le=16)
    driver: DriverMode = "gke-default"
    sharing: GkeSharingSpec | None = None
    partition_size: str | None = None  # MIG profile, e.g. 1g.5gb (A100/H100/H200 only)


class ReservationSpec(Model):
    """Reservation affinity of a pool."""

    type: Literal["none", "any", "specific"] = "none"
    name: rules.ReservationName | None = None  # required for ``specific``


class FlexStartSpec(Model):
    """DWS flex-start: nodes for at most ``maxRunDuration``, obtained when capacity frees up."""

    max_run_duration: rules.MaxRunDuration = "604800s"


class BestEffortSpec(Model):
    """Best-effort provisioning: create with partial capacity instead of failing on stockout."""

    min_nodes: int = Field(ge=0)


class FallbackSpec(Model):
    """An alternative for the ComputeClass fallback chain, tried in list order, with its own
    capacity: nothing of the main pool's reservation, flex-start or queued provisioning carries
    over (GKE's chain reservation -> Spot -> on-demand has a different mode per priority)."""

    machine_type: str = Field(min_length=1)
    gpu: GkeGpuSpec | None = None
    spot: bool = False
    max_nodes: int | None = Field(default=None, ge=1, le=1000)
    reservation: ReservationSpec | None = None
    flex_start: FlexStartSpec | None = None
    # Omitted -> every zone of the cluster's region offering the alternative's GPU.
    zones: list[str] | None = None


class GkePoolSpec(PoolBase):
    """One GKE GPU node pool."""

    gpu: GkeGpuSpec = Field(default_factory=GkeGpuSpec)
    zones: list[str] | None = None
    image_type: ImageType = "COS_CONTAINERD"
    disk_size_gb: int = Field(default=100, ge=10, le=65536)
    # Boot disk; omitted -> the machine series' default (infra/core/data/gcp_machine_series.csv).
    disk_type: str | None = Field(default=None, min_length=1)
    reservation: ReservationSpec | None = None
    flex_start: FlexStartSpec | None = None
    queued_provisioning: bool = False
    best_effort: BestEffortSpec | None = None
    # Omitted -> on. Off is allowed only on a cluster without a release channel: GKE answers
    # "Auto_upgrade cannot be false when release_channel REGULAR is set." (nkoson/gke-tutorial#8).
    auto_upgrade: bool | None = None
    fallback: list[FallbackSpec] | None = None
    # Opt-in COMPACT placement (one zone) for multi-node A100/L4/H100 training pools.
    compact_placement: bool = False
    # gVNIC on GPU nodes (higher bandwidth). Omitted -> on for COS only: "GKE nodes must use a
    # Container-Optimized OS node image" (https://cloud.google.com/kubernetes-engine/docs/how-to/using-gvnic).
    gvnic: bool | None = None
    # Opt-in image streaming (gcfsConfig): large CUDA images start before they are fully pulled;
    # needs the Container File System API and COS (docs/how-to/image-streaming#requirements).
    image_streaming: bool = False
    # GKE node pool auto-creation: a ComputeClass with nodePoolAutoCreation (the pool and its
    # fallbacks as priorities), no fixed node pool (infra/core/gke/autocreate.py).
    auto_create: bool = False
    # ComputeClass activeMigration.optimizeRulePriority (pool with fallback or autoCreate): off
    # unless asked, since it evicts running pods to move them to a higher priority
    # (https://cloud.google.com/kubernetes-engine/docs/concepts/about-custom-compute-classes#active-migration).
    active_migration: bool = False


class SystemPoolSpec(Model):
    """The small CPU pool that keeps system pods off GPU nodes."""

    machine_type: rules.GceMachineType = "e2-standard-4"
    min_nodes: int = Field(default=1, ge=0)
    max_nodes: int = Field(default=3, ge=1)


class MaintenanceWindowSpec(Model):
    """A recurring maintenance window (RFC 3339 UTC times and an RFC 5545 RRULE)."""

    start: str = "2026-01-03T00:00:00Z"  # a Saturday
    end: str = "2026-01-03T08:00:00Z"
    recurrence: rules.RRule = "FREQ=WEEKLY;BYDAY=SA,SU"


ExclusionScope = Literal["NO_UPGRADES", "NO_MINOR_UPGRADES", "NO_MINOR_OR_NODE_UPGRADES"]


class MaintenanceExclusionSpec(Model):
    """A one-off period in which GKE does not upgrade what ``scope`` names."""

    name: str = Field(min_length=1, max_length=63)
    start: str
    end: str
    scope: ExclusionScope = "NO_UPGRADES"


class MaintenanceSpec(Model):
    """When GKE may upgrade the control plane and nodes (and so change the GPU driver)."""

    window: MaintenanceWindowSpec = Field(default_factory=MaintenanceWindowSpec)
    exclusions: list[MaintenanceExclusionSpec] = Field(default_factory=list)


class AuthorizedNetworkSpec(Model):
    """A CIDR allowed to reach the control plane endpoint."""

    cidr: str = Field(min_length=1)
    name: str | None = None


ReleaseChannel = Literal["UNSPECIFIED", "RAPID", "REGULAR", "STABLE", "EXTENDED"]


class GkeClusterSpec(ClusterBase):
    """The GKE cluster: created (regional by default) or attached with ``existing: true``."""

    name: rules.GkeClusterName  # type: ignore[assignment]  # GKE's own rule
    release_channel: ReleaseChannel = "REGULAR"
    min_master_version: rules.GkeVersion | None = (
        None  # e.g. "1.33"; GKE-only sharing/config rules read it
    )
    deletion_protection: bool = True
    network: rules.GceNetwork | None = None
    subnetwork: rules.GceSubnetwork | None = None
    system_pool: SystemPoolSpec = Field(default_factory=SystemPoolSpec)
    # CPU nodes of the cluster at most (the operator's NFD worker runs on each): required for an
    # existing cluster, whose nodes systemPool does not describe; default systemPool.maxNodes.
    cpu_nodes: int | None = Field(default=None, ge=0, le=15000)
    maintenance: MaintenanceSpec = Field(default_factory=MaintenanceSpec)
    private_nodes: bool = False  # nodes without external IPs
    cloud_nat: bool = False  # a Cloud Router + NAT so private nodes reach nvcr.io
    authorized_networks: list[AuthorizedNetworkSpec] | None = None
    dataplane_v2: bool = True  # ADVANCED_DATAPATH (eBPF) for clusters this stack creates
    # GKE-managed DCGM metrics + Google Cloud Managed Service for Prometheus.
    dcgm_metrics: bool = True
    # An existing service account (email) the nodes run as; omitted -> the stack creates one.
    node_service_account: rules.GcpServiceAccountEmail | None = None
