"""Stack-config schema for ``platform: gke``: the cluster block and GPU node pools.

Only shapes and enums live here; rules that need the catalog (zones, machine/GPU pairs) live in
the ``infra.core.gke`` package (``pools``, ``rules``).
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from infra.core import rules
from infra.core.config.base import ClusterBase, Model, PoolBase
from infra.core.config.entry import PlatformConfig
from infra.core.config.inert import EXISTING_KEEPS_SYSTEM_POOL, created_cluster_only
from infra.core.config.location import gke_location

# Driver modes map onto guestAccelerators[].gpuDriverInstallationConfig.gpuDriverVersion
# (https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/NodeConfig#gpudriverinstallationconfig):
# gke-default -> DEFAULT, gke-latest -> LATEST (COS only), operator -> INSTALLATION_DISABLED.
DriverMode = Literal["gke-default", "gke-latest", "operator"]
ImageType = Literal["COS_CONTAINERD", "UBUNTU_CONTAINERD"]


class GkeSharingSpec(Model):
    """GKE's own GPU sharing (``gpu_sharing_config``); exclusive with the operator's ``sharing``."""

    strategy: Literal["time-sharing", "mps"] = Field(
        description="GKE GPU time-sharing or NVIDIA MPS, through GKE's own device plugin."
    )
    max_shared_clients_per_gpu: int = Field(
        ge=2,
        le=48,
        description=(
            "Containers that share one GPU: a node advertises GPUs x partitions x clients "
            "`nvidia.com/gpu`, of which a container may request at most 1."
        ),
    )


class GkeGpuSpec(Model):
    """The accelerator of a pool. ``type``/``count`` are derived for machine types with built-in GPUs."""

    type: str | None = Field(
        default=None,
        description=(
            "Accelerator type (`nvidia-tesla-t4`): required for N1 machine types; derived, and "
            "checked if given, for a2/a3/a4/a4x/g2/g4, whose machine type fixes its GPU."
        ),
    )
    count: int | None = Field(
        default=None,
        ge=1,
        le=16,
        description=(
            "GPUs per node: on N1 one of the counts the GPU attaches in, under the machine's "
            "vCPU/memory ceiling for that count (default 1); fixed by a bundled machine type."
        ),
    )
    driver: DriverMode = Field(
        default="gke-default",
        description=(
            "Who installs the NVIDIA driver: `gke-default` / `gke-latest` (GKE's, `gke-latest` on "
            "COS only) or `operator` (the GPU Operator builds it; Ubuntu only, secure boot off "
            "because that module is unsigned). With the GPU Operator on, pools send "
            "`INSTALLATION_DISABLED` and COS pools get Google's driver installer DaemonSet."
        ),
    )
    sharing: GkeSharingSpec | None = Field(
        default=None,
        description="GKE's own time-sharing or MPS; exclusive with the operator's `sharing`/`mig`.",
    )
    partition_size: str | None = Field(
        default=None,  # MIG profile, e.g. 1g.5gb (A100/H100/H200 only)
        description=(
            "GKE MIG partition size (`1g.5gb`; A100/H100/H200 only), from the sizes of the pool's "
            "GPU; exclusive with the operator's `sharing`/`mig`."
        ),
    )


class ReservationSpec(Model):
    """Reservation affinity of a pool."""

    type: Literal["none", "any", "specific"] = Field(
        default="none",
        description=(
            "Reservation affinity. Spot VMs do not consume reservations. Pools on a specific "
            "reservation upgrade with `maxSurge 0, maxUnavailable 1` (surge nodes would count "
            "against the reservation)."
        ),
    )
    name: rules.ReservationName | None = Field(
        default=None,  # required for ``specific``
        description=(
            "Required for `specific`: the reservation's name, or `projects/P/reservations/N` for "
            "one shared from another project."
        ),
    )


class FlexStartSpec(Model):
    """DWS flex-start: nodes for at most ``maxRunDuration``, obtained when capacity frees up."""

    max_run_duration: rules.MaxRunDuration = Field(
        default="604800s",
        description=(
            "How long a flex-start node may run: a protobuf Duration in seconds (`86400s`, "
            "`3.5s`), positive, at most 7 days "
            "(https://cloud.google.com/kubernetes-engine/docs/concepts/dws)."
        ),
    )


class BestEffortSpec(Model):
    """Best-effort provisioning: create with partial capacity instead of failing on stockout."""

    min_nodes: int = Field(
        ge=0,
        description=(
            "Create the pool once this many of its initial nodes are up instead of failing on a "
            "stockout (`min_provision_nodes`); at most the pool's `minNodes`, which must be above "
            "0. The pool starts `ceil(minNodes / zones)` nodes in every zone, so zones x that "
            "must fit in `maxNodes` (else name fewer zones)."
        ),
    )


class FallbackSpec(Model):
    """An alternative for the ComputeClass fallback chain, tried in list order, with its own
    capacity: nothing of the main pool's reservation, flex-start or queued provisioning carries
    over (GKE's chain reservation -> Spot -> on-demand has a different mode per priority)."""

    machine_type: str = Field(min_length=1, description="The alternative's machine type.")
    gpu: GkeGpuSpec | None = Field(
        default=None,
        description=(
            "Its accelerator, as `gpuPools[].gpu`; the driver setting is the main pool's unless "
            "given."
        ),
    )
    spot: bool = Field(default=False, description="Spot capacity for this priority.")
    max_nodes: int | None = Field(
        default=None, ge=1, le=1000, description="Its most nodes; default: the pool's `maxNodes`."
    )
    reservation: ReservationSpec | None = Field(
        default=None, description="Its own reservation affinity, checked on its own."
    )
    flex_start: FlexStartSpec | None = Field(
        default=None, description="Its own flex-start, checked on its own."
    )
    # Omitted -> every zone of the cluster's region offering the alternative's GPU.
    zones: list[str] | None = Field(
        default=None,
        description=(
            "Its zones; omitted: every zone of the cluster's region offering its GPU, at each plan "
            "(`--pin-zones` does not pin fallbacks: write them by hand to hold them)."
        ),
    )


class GkePoolSpec(PoolBase):
    """One GKE GPU node pool."""

    gpu: GkeGpuSpec = Field(default_factory=GkeGpuSpec, description="The pool's accelerator.")
    zones: list[str] | None = Field(
        default=None,
        description=(
            "Zones of the cluster's region. Omitted: every zone offering the pool's exact shape "
            "(a zonal cluster's pools: its zone); given: non-empty, no repeats, each checked. "
            "`python -m infra.plan --pin-zones` writes the resolved ones."
        ),
    )
    image_type: ImageType = Field(default="COS_CONTAINERD", description="The node image.")
    disk_size_gb: int = Field(default=100, ge=10, le=65536, description="Boot disk size, GB.")
    # Boot disk; omitted -> the machine series' default (infra/core/data/gcp_machine_series.csv).
    disk_type: str | None = Field(
        default=None,
        min_length=1,
        description=(
            "Boot disk type; omitted: the machine series' default (`pd-balanced`, or "
            "`hyperdisk-balanced` where only Hyperdisk boots: A3 Ultra, A4, G4, C4, N4). Others "
            "are checked against the series (no `pd-standard` on G2/A3/C3)."
        ),
    )
    reservation: ReservationSpec | None = Field(
        default=None,
        description=(
            "Reservation affinity; omitted: no `reservationAffinity` is sent and GKE's default "
            "applies."
        ),
    )
    flex_start: FlexStartSpec | None = Field(
        default=None,
        description=(
            "Flex-start (Dynamic Workload Scheduler): not with Spot or a reservation, no "
            "auto-repair, GKE 1.32.2-gke.1652000 or later; draws on preemptible quota."
        ),
    )
    queued_provisioning: bool = Field(
        default=False,
        description=(
            "Queued provisioning (DWS): nodes come only through a ProvisioningRequest; starts at "
            "0 nodes, no auto-repair, never with compact placement; draws on preemptible quota."
        ),
    )
    best_effort: BestEffortSpec | None = Field(
        default=None,
        description="Best-effort provisioning of the nodes the pool is created with.",
    )
    # Omitted -> on. Off is allowed only on a cluster without a release channel: GKE answers
    # "Auto_upgrade cannot be false when release_channel REGULAR is set." (nkoson/gke-tutorial#8).
    auto_upgrade: bool | None = Field(
        default=None,
        description=(
            "Node auto-upgrade; omitted: on. `false` only with `cluster.releaseChannel: "
            'UNSPECIFIED` (GKE: "Auto_upgrade cannot be false when release_channel REGULAR is '
            'set."). Keep drivers stable with `cluster.maintenance` instead.'
        ),
    )
    fallback: list[FallbackSpec] | None = Field(
        default=None,
        description=(
            "Alternatives tried in order through a ComputeClass, each with its own capacity: "
            "nothing of the pool's reservation, flex-start or queued provisioning carries over, "
            "so GKE's chain reservation -> Spot -> on-demand is a reserved pool with fallbacks "
            "`{spot: true}` and `{}`. Each is a node pool `<pool>-<6 hex>`, so the pool's name is "
            "at most 33 characters; two entries of one shape are an error."
        ),
    )
    # Opt-in COMPACT placement (one zone) for multi-node A100/L4/H100 training pools.
    compact_placement: bool = Field(
        default=False,
        description=(
            "COMPACT placement, one zone, for multi-node training pools (opt-in), on a family "
            "that takes a compact policy (`infra/core/data/gce_compact_placement.csv`: A2, A3, "
            "A4, A4X, G2, G4, C2-C4, C4A, C4D, C4N, H3, H4D, N2, N2D, Z4D; not N1; a family it "
            "does not list is noted); with flex-start only on A3 Ultra, A4 and H4D."
        ),
    )
    # gVNIC on GPU nodes (higher bandwidth). Omitted -> on for COS only: "GKE nodes must use a
    # Container-Optimized OS node image" (https://cloud.google.com/kubernetes-engine/docs/how-to/using-gvnic).
    gvnic: bool | None = Field(
        default=None, description="gVNIC; omitted: on for COS pools; `true` on Ubuntu is an error."
    )
    # Opt-in image streaming (gcfsConfig): large CUDA images start before they are fully pulled;
    # needs the Container File System API and COS (docs/how-to/image-streaming#requirements).
    image_streaming: bool = Field(
        default=False,
        description=(
            "Image streaming (`gcfsConfig`, opt-in; COS only): enables the Container File System "
            "API and grants the node service account `roles/serviceusage.serviceUsageConsumer`."
        ),
    )
    # GKE node pool auto-creation: a ComputeClass with nodePoolAutoCreation (the pool and its
    # fallbacks as priorities), no fixed node pool (infra/core/gke/autocreate.py).
    auto_create: bool = Field(
        default=False,
        description=(
            "No fixed node pool: a ComputeClass with `nodePoolAutoCreation.enabled` whose "
            "priorities are the pool and its `fallback[]`, GKE creating and deleting the pools. "
            "Below GKE 1.33.3-gke.1136000 a cluster this stack creates also gets cluster-level "
            "node auto-provisioning (refused with `cluster.existing: true`). Refused with the GPU "
            "Operator, `minNodes` above 0, GKE sharing or MIG, flex-start, queued provisioning, "
            "best-effort and compact placement."
        ),
    )
    # ComputeClass activeMigration.optimizeRulePriority (pool with fallback or autoCreate): off
    # unless asked, since it evicts running pods to move them to a higher priority
    # (https://cloud.google.com/kubernetes-engine/docs/concepts/about-custom-compute-classes#active-migration).
    active_migration: bool = Field(
        default=False,
        description=(
            "With `fallback` or `autoCreate`: the ComputeClass sends "
            "`activeMigration.optimizeRulePriority: true`, so GKE moves running pods to a higher "
            "priority when it has capacity again, by evicting them (a GPU Job without retries "
            "fails, a notebook restarts). Off by default, the CRD's default; refused without a "
            "class."
        ),
    )


class SystemPoolSpec(Model):
    """The small CPU pool that keeps system pods off GPU nodes."""

    machine_type: rules.GceMachineType = Field(
        default="e2-standard-4",
        description="A predefined CPU machine type of a family with a known vCPU quota.",
    )
    min_nodes: int = Field(default=1, ge=0, description="Fewest system nodes (pool total).")
    max_nodes: int = Field(
        default=3,
        ge=1,
        description=(
            "Most system nodes; at least 3 on a regional cluster, which starts one node in each "
            "of three zones."
        ),
    )


class MaintenanceWindowSpec(Model):
    """A recurring maintenance window (RFC 3339 UTC times and an RFC 5545 RRULE)."""

    start: str = Field(
        default="2026-01-03T00:00:00Z",  # a Saturday
        description="First window's start: an RFC 3339 date-time with seconds and an offset.",
    )
    end: str = Field(default="2026-01-03T08:00:00Z", description="First window's end (RFC 3339).")
    recurrence: rules.RRule = Field(
        default="FREQ=WEEKLY;BYDAY=SA,SU",
        description=(
            "RFC 5545 RRULE (known rule parts, each once, `UNTIL` xor `COUNT`, `BYDAY` weekdays). "
            "The windows must give at least 48 hours in every 32-day rolling window, counting "
            "only windows of 4 or more contiguous hours: computed for `DAILY`, `WEEKLY` and "
            "`MONTHLY` rules with `INTERVAL`, `BYDAY` (`1SA`, `-1SU`), `BYMONTHDAY`, `BYMONTH`, "
            "`COUNT` and `UNTIL`."
        ),
    )


ExclusionScope = Literal["NO_UPGRADES", "NO_MINOR_UPGRADES", "NO_MINOR_OR_NODE_UPGRADES"]


class MaintenanceExclusionSpec(Model):
    """A one-off period in which GKE does not upgrade what ``scope`` names."""

    name: str = Field(min_length=1, max_length=63, description="The exclusion's name.")
    start: str = Field(description="Start, RFC 3339.")
    end: str = Field(description="End, RFC 3339.")
    scope: ExclusionScope = Field(
        default="NO_UPGRADES",
        description=(
            "`NO_UPGRADES` lasts at most 30 days, at most 3 of them; `NO_MINOR_UPGRADES` and "
            "`NO_MINOR_OR_NODE_UPGRADES` need a release channel (the way to hold a GPU driver "
            "longer)."
        ),
    )


class MaintenanceSpec(Model):
    """When GKE may upgrade the control plane and nodes (and so change the GPU driver)."""

    window: MaintenanceWindowSpec = Field(
        default_factory=MaintenanceWindowSpec,
        description="The recurring window, always sent; default Saturday and Sunday 00:00-08:00 UTC.",
    )
    exclusions: list[MaintenanceExclusionSpec] = Field(
        default_factory=list, description="Periods without upgrades; at most 20 in all."
    )


class AuthorizedNetworkSpec(Model):
    """A CIDR allowed to reach the control plane endpoint."""

    cidr: str = Field(min_length=1, description="An IPv4 CIDR block.")
    name: str | None = Field(default=None, description="Its display name.")


ReleaseChannel = Literal["UNSPECIFIED", "RAPID", "REGULAR", "STABLE", "EXTENDED"]


class GkeClusterSpec(ClusterBase):
    """The GKE cluster: created (regional by default) or attached with ``existing: true``."""

    name: rules.GkeClusterName = Field(  # type: ignore[assignment]  # GKE's own rule
        description=(
            "Lowercase letters, digits and `-`, starting with a letter, at most 40 characters "
            "(container v1 `Cluster.name`)."
        )
    )

    # Cluster names are unique per project and location: projects.locations.clusters.create of
    # a taken one answers HTTP 409 ALREADY_EXISTS ("alreadyExists").
    REFUSAL: ClassVar[str] = "GKE answers 409 alreadyExists to a second cluster of that name there"

    def where(self, project: str | None, region: str | None) -> str:
        del region
        return f"GKE cluster {self.name} of project {project}, location {self.location}"

    release_channel: ReleaseChannel = Field(
        default="REGULAR",
        description=(
            "The cluster's release channel. `UNSPECIFIED` (no channel) is the only setting on "
            "which GPU pools may turn auto-upgrade off; it is deprecated, open to existing GKE "
            "customers only and removed on June 14, 2027 (a plan note on a new cluster). Still "
            "read with `existing: true`: pool auto-upgrade rules depend on it."
        ),
    )
    min_master_version: rules.GkeVersion | None = Field(
        default=None,  # e.g. "1.33"; GKE-only sharing/config rules read it
        description=(
            "`latest`, `1.X`, `1.X.Y`, `1.X.Y-gke.N` or `-` (UpdateMasterRequest.master_version); "
            "feature version gates are checked against it, an alias counting as the highest "
            "release it may name. Omitted: the channel's default."
        ),
    )
    deletion_protection: bool = Field(
        default=True,
        description=(
            "GKE `deletionProtection` and Pulumi `protect` on the cluster; `false` turns both off "
            "and lets pools and in-cluster objects go with the cluster on destroy."
        ),
    )
    network: rules.GceNetwork | None = Field(
        default=None,
        description="VPC network: a name or `projects/P/global/networks/N`; omitted: `default`.",
    )
    subnetwork: rules.GceSubnetwork | None = Field(
        default=None,
        description=(
            "Subnetwork: a name or `projects/P/regions/R/subnetworks/N` in the cluster's region; "
            "needed by `cloudNat` on a network other than `default`."
        ),
    )
    system_pool: SystemPoolSpec = Field(
        default_factory=SystemPoolSpec,
        description="The CPU pool for system pods; not created with `existing: true`.",
    )
    # CPU nodes of the cluster at most (the operator's NFD worker runs on each): required for an
    # existing cluster, whose nodes systemPool does not describe; default systemPool.maxNodes.
    cpu_nodes: int | None = Field(
        default=None,
        ge=0,
        le=15000,
        description=(
            "The cluster's CPU nodes at most, for the GPU Operator's critical-pod quota (each runs "
            "an NFD worker): required with `existing: true`; default `systemPool.maxNodes`."
        ),
    )
    maintenance: MaintenanceSpec = Field(
        default_factory=MaintenanceSpec,
        description="When GKE may upgrade the control plane and nodes, and so the GPU driver.",
    )
    private_nodes: bool = Field(
        default=False,  # nodes without external IPs
        description=(
            "Nodes without external IPs, set on the cluster and on every pool. Turning it on for "
            "a running cluster is an update that re-creates the pools' nodes; turning it off is "
            "no change (the provider keeps the live setting; `--diff` warns), and refused while "
            "`cloudNat` is on (the NAT would go while the nodes stay private)."
        ),
    )
    cloud_nat: bool = Field(
        default=False,  # a Cloud Router + NAT so private nodes reach nvcr.io
        description=(
            "A Cloud Router and NAT for the cluster's subnetwork only (`LIST_OF_SUBNETWORKS`), so "
            "private nodes can pull `nvcr.io` images; on a network other than `default` it needs "
            "`subnetwork`; refused on a Shared VPC network of another project."
        ),
    )
    authorized_networks: list[AuthorizedNetworkSpec] | None = Field(
        default=None,
        description=(
            "Control-plane authorized networks, at most 100; omitted: not configured; `[]` is "
            "refused (it admits no one, this deploy included). The machine running `pulumi up` "
            "must be inside one of them."
        ),
    )
    dataplane_v2: bool = Field(
        default=True,  # ADVANCED_DATAPATH (eBPF) for clusters this stack creates
        description=(
            "`ADVANCED_DATAPATH` (eBPF, network policy built in) for clusters this stack creates. "
            "The datapath is fixed at creation: on a cluster created before this key existed, set "
            "`false` to keep it."
        ),
    )
    # GKE-managed DCGM metrics + Google Cloud Managed Service for Prometheus.
    dcgm_metrics: bool = Field(
        default=True,
        description=(
            "GKE-managed DCGM GPU metrics and managed Prometheus; applied only with the GPU "
            "Operator off (the operator ships its own dcgm-exporter)."
        ),
    )
    # An existing service account (email) the nodes run as; omitted -> the stack creates one.
    node_service_account: rules.GcpServiceAccountEmail | None = Field(
        default=None,
        description=(
            "The email of an existing user-managed service account "
            "(`ID@PROJECT.iam.gserviceaccount.com`, never the Compute Engine default one) every "
            "node runs as; the stack then creates no account and grants it no roles (a plan note "
            "lists the roles it needs). Omitted: the stack creates one."
        ),
    )

    def system_pool_range(self) -> tuple[int, int] | None:
        return self.system_pool.min_nodes, self.system_pool.max_nodes


# infra/components/gke.py _create/_cluster_args: gcp.container.Cluster arguments only. Not
# releaseChannel: gke.rules.auto_upgrade reads it for pools added to an existing cluster.
_INERT = (
    EXISTING_KEEPS_SYSTEM_POOL,
    created_cluster_only("deletionProtection", "dataplaneV2", "dcgmMetrics", "maintenance"),
)
CONFIG = PlatformConfig(GkeClusterSpec, GkePoolSpec, ("GKE", "GKE"), gke_location, _INERT)
