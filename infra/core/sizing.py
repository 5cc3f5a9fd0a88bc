"""What each node pool or group of a plan can grow to, in the units cloud quotas count (pure).

Each platform with cloud quotas sizes its own pools (``Platform.quota_sizings``); the quota
preflight (``quota``) turns the sizings into quota draws and checks them against its rule tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# How a VM is bought, for the quota it draws on (quota.rules.PROVISIONING_RULES).
Provisioning = Literal["standard", "spot", "flex-start", "queued", "reservation"]

# Boot disk of GCE nodes whose pool sets none (the system pool, the bootstrap pool): 100 GB
# pd-balanced. https://cloud.google.com/kubernetes-engine/docs/how-to/custom-boot-disks
GKE_DEFAULT_DISK_TYPE = "pd-balanced"
GKE_DEFAULT_DISK_GB = 100


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeGroupSizing:
    """What one pool / node group can grow to.

    Attributes:
        path: config key path of the pool (``gpuPools[0]``, ``cluster.systemPool``).
        name: pool / node-group name.
        machine_types: GCP machine type or AWS instance type(s).
        gpu_type: GCP accelerator type; ``None`` for CPU pools and on AWS.
        gpus_per_node: GPUs per node.
        vcpus: vCPUs per node.
        model: provisioning model (``quota.rules.PROVISIONING_RULES``).
        max_nodes: pool total maximum.
        surge: extra nodes an upgrade of this pool may add on top of ``max_nodes``.
        surge_rule: why this group surges, where that is not its cloud's node-group update
            (a Karpenter NodePool's drift replacement); ``""``: the cloud's rule.
        disk_type / disk_gb: boot disk of each node (GCP).
        local_ssds: local SSDs per node (GCP).
        external_ip: nodes get an external IPv4 address (GCP, no private nodes).
        bootstrap: the cluster's default pool, which exists only before the others.
        declared: the machine type is the pool's declared ``gpuPools[].shape``: a GPU or family
            the quota tables lack is an unknown row, not a config error.
        reservation_id: the EC2 Capacity Reservation the group launches into (AWS).
        node_groups: EKS managed node groups the pool makes (one, or one per AZ).
        zones: the zones (GKE) or AZ IDs (EKS) the pool is planned in.
        node_group_names: the EKS node group names the pool makes (AWS).
        replaced_groups: node groups of the deployed stack this entry stands for while they
            run beside their replacements (``quota.sizing.with_replacements``); 0 for planned
            pools.
        auto_created: GKE auto-creates the pool from a ComputeClass, so it may put every node
            in one zone.
    """

    path: str
    name: str
    machine_types: tuple[str, ...]
    gpu_type: str | None
    gpus_per_node: int
    vcpus: int
    model: Provisioning = "standard"
    max_nodes: int
    surge: int = 0
    surge_rule: str = ""
    disk_type: str = GKE_DEFAULT_DISK_TYPE
    disk_gb: int = GKE_DEFAULT_DISK_GB
    local_ssds: int = 0
    external_ip: bool = True
    bootstrap: bool = False
    declared: bool = False
    reservation_id: str | None = None
    node_groups: int = 1
    zones: tuple[str, ...] = ()
    replaced_groups: int = 0
    node_group_names: tuple[str, ...] = ()
    auto_created: bool = False
    # Nodes running at minimum scale: minNodes, or the warm placeholders' nodes if more.
    min_nodes: int = 0
    warm: int = 0
    # A Karpenter NodePool allowing Spot and on-demand: every node may be either, so it counts
    # in full against the on-demand and the Spot vCPU quota (AWS).
    spot_or_on_demand: bool = False

    @property
    def spot(self) -> bool:
        """Spot capacity."""
        return self.model == "spot"
