"""Stack-config schema for ``platform: gke``: the cluster block and GPU node pools.

Only shapes and enums live here; rules that need the catalog (zones, machine/GPU pairs) live in
``infra.core.gke``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from infra.core.config_base import ClusterBase, Model, PoolBase

# Driver modes map onto gpu_driver_installation_config.gpu_driver_version (reference gke.md §8):
# gke-default -> DEFAULT, gke-latest -> LATEST (COS only), operator -> INSTALLATION_DISABLED.
DriverMode = Literal["gke-default", "gke-latest", "operator"]
ImageType = Literal["COS_CONTAINERD", "UBUNTU_CONTAINERD"]


class GkeSharingSpec(Model):
    """GKE's own GPU sharing (``gpu_sharing_config``); exclusive with the operator's ``sharing``."""

    strategy: Literal["time-sharing", "mps"]
    max_shared_clients_per_gpu: int = Field(ge=2, le=48)


class GkeGpuSpec(Model):
    """The accelerator of a pool. ``type``/``count`` are derived for a2/a3/g2 machine types."""

    type: str | None = None
    count: int | None = Field(default=None, ge=1, le=16)
    driver: DriverMode = "gke-default"
    sharing: GkeSharingSpec | None = None
    partition_size: str | None = None  # MIG profile, e.g. 1g.5gb (A100/H100/H200 only)


class ReservationSpec(Model):
    """Reservation affinity of a pool."""

    type: Literal["none", "any", "specific"] = "none"
    name: str | None = None  # required for ``specific``


class FlexStartSpec(Model):
    """DWS flex-start: nodes for at most ``maxRunDuration``, obtained when capacity frees up."""

    max_run_duration: str = Field(default="604800s", pattern=r"^[1-9][0-9]*s$")


class BestEffortSpec(Model):
    """Best-effort provisioning: create with partial capacity instead of failing on stockout."""

    min_nodes: int = Field(ge=0)


class FallbackSpec(Model):
    """An alternative machine/GPU for the ComputeClass fallback chain, tried in list order."""

    machine_type: str = Field(min_length=1)
    gpu: GkeGpuSpec | None = None
    spot: bool = False
    max_nodes: int | None = Field(default=None, ge=1, le=1000)


class GkePoolSpec(PoolBase):
    """One GKE GPU node pool."""

    gpu: GkeGpuSpec = Field(default_factory=GkeGpuSpec)
    zones: list[str] | None = None
    image_type: ImageType = "COS_CONTAINERD"
    disk_size_gb: int = Field(default=100, ge=10, le=65536)
    disk_type: Literal["pd-standard", "pd-balanced", "pd-ssd", "hyperdisk-balanced"] = "pd-balanced"
    reservation: ReservationSpec | None = None
    flex_start: FlexStartSpec | None = None
    queued_provisioning: bool = False
    best_effort: BestEffortSpec | None = None
    # GPU drivers can change with node upgrades (gke.md §8.1); 2i2c and cluster-toolkit default to off.
    auto_upgrade: bool = False
    fallback: list[FallbackSpec] | None = None


class SystemPoolSpec(Model):
    """The small CPU pool that keeps system pods off GPU nodes."""

    machine_type: str = "e2-standard-4"
    min_nodes: int = Field(default=1, ge=0)
    max_nodes: int = Field(default=3, ge=1)


class GkeClusterSpec(ClusterBase):
    """The GKE cluster: created (regional by default) or attached with ``existing: true``."""

    release_channel: Literal["RAPID", "REGULAR", "STABLE", "EXTENDED"] = "REGULAR"
    min_master_version: str | None = None  # e.g. "1.33"; GKE-only sharing/config rules read it
    deletion_protection: bool = True
    network: str | None = None
    subnetwork: str | None = None
    system_pool: SystemPoolSpec = Field(default_factory=SystemPoolSpec)
    # Nodes without external IPs (CONTRACT.md, second round); the quota check skips
    # IN_USE_ADDRESSES when set. https://cloud.google.com/kubernetes-engine/docs/concepts/private-cluster-concept
    private_nodes: bool = False
