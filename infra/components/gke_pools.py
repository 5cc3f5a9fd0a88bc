"""GKE node pools: the node settings every pool shares, GPU node pools and ComputeClasses.

Thin by design: every value comes from ``infra.core.gke.planner``; nothing here decides. The
system pool (``infra.components.gke``) takes the same node settings (identity and hardening).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from infra.components.lifecycle import with_lifecycle
from infra.core import lifecycle
from infra.core.gke import planner as core
from infra.core.tokens import COMPUTE_CLASS

if TYPE_CHECKING:
    from infra.components.gke import GkeCluster

# GCP's taint enum spelling for each Kubernetes effect
# (https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/NodeTaint).
_EFFECT = {
    "NoSchedule": "NO_SCHEDULE",
    "PreferNoSchedule": "PREFER_NO_SCHEDULE",
    "NoExecute": "NO_EXECUTE",
}
# Pods get Workload Identity, never the node's credentials
# (https://cloud.google.com/kubernetes-engine/docs/how-to/workload-identity).
GKE_METADATA = "GKE_METADATA"
NO_LEGACY_METADATA = {"disable-legacy-endpoints": "true"}


class GkeGpuNodePools(pulumi.ComponentResource):
    """One GKE node pool per ``GkePoolPlan``, plus the ComputeClasses that chain fallbacks."""

    def __init__(
        self,
        name: str,
        plan: core.GkePlan,
        cluster: GkeCluster,
        provider: k8s.Provider,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpu-infra:gcp:GpuNodePools", name, None, opts)
        for note in plan.pool_notes:  # running pools kept under their names, with why
            pulumi.log.warn(note, resource=self)
        self.pools: dict[str, gcp.container.NodePool] = {}
        # Auto-created pools are GKE's, made from their ComputeClass: no NodePool here.
        for p in (p for p in plan.pools if not p.auto_create):
            self.pools[p.name] = gcp.container.NodePool(
                f"{name}-{p.name}",
                _pool_args(plan, p, cluster),
                # initial_node_count is per zone and ForceNew; the autoscaler owns the size after
                # creation (pulumi/pulumi-gcp#412). Pools wait for the node SA's roles only.
                # Flex/queued pools: GKE sets SHORT_LIVED upgrade settings, which the provider
                # would otherwise diff forever (crossplane-contrib/provider-upjet-gcp#1028).
                opts=with_lifecycle(
                    pulumi.ResourceOptions(
                        parent=self,
                        ignore_changes=["initialNodeCount"]
                        + (["upgradeSettings"] if p.max_surge is None else []),
                        depends_on=[*cluster.node_sa_bindings, *cluster.services],
                    ),
                    NODE_POOL,
                    cluster=cluster.created,
                    timeout_minutes=_pool_timeout(p),
                ),
            )
        self.classes: dict[str, k8s.apiextensions.CustomResource] = {}
        for cc in plan.compute_classes:
            self.classes[cc.key] = k8s.apiextensions.CustomResource(
                f"{name}-{cc.key}-class",
                api_version="cloud.google.com/v1",
                kind="ComputeClass",
                metadata=k8s.meta.v1.ObjectMetaArgs(name=cc.name),
                # Auto-created pools run as the stack's node SA, never the Compute Engine
                # default (nodePoolConfig.serviceAccount, ComputeClass CRD).
                spec=cluster.node_service_account.apply(cc.manifest)
                if cc.auto is not None
                else cc.manifest(),
                opts=with_lifecycle(
                    pulumi.ResourceOptions(parent=self, provider=provider),
                    COMPUTE_CLASS,
                    cluster=cluster.created,
                ),
            )
        self.register_outputs({"pools": {n: p.name for n, p in self.pools.items()}})


NODE_POOL = "gcp:container/nodePool:NodePool"


def _pool_timeout(p: core.GkePoolPlan) -> int:
    """Minutes for a pool's create/update/delete: "The number of nodes upgraded simultaneously is
    the sum of max_surge and max_unavailable" (terraform-provider-google
    google/services/container/resource_container_node_pool.go, upgrade_settings)."""
    batch = (p.max_surge or 0) + (p.max_unavailable or 0)
    return lifecycle.rolling_timeout_minutes(NODE_POOL, p.total_max, batch or 1)


def node_config(
    plan: core.GkePlan,
    machine_type: str,
    sa_email: pulumi.Input[str],
    *,
    disk_type: str,
    secure_boot: bool,
    image_type: str | None = None,
    disk_size_gb: int | None = None,
    guest_accelerators: Sequence[gcp.container.NodePoolNodeConfigGuestAcceleratorArgs] = (),
    spot: bool | None = None,
    flex_start: bool | None = None,
    max_run_duration: str | None = None,
    reservation_affinity: gcp.container.NodePoolNodeConfigReservationAffinityArgs | None = None,
    labels: dict[str, str] | None = None,
    taints: Sequence[gcp.container.NodePoolNodeConfigTaintArgs] = (),
    gvnic: bool = False,
    image_streaming: bool = False,
    local_ssd_count: int = 0,
) -> gcp.container.NodePoolNodeConfigArgs:
    """Node settings shared by the system and GPU pools: identity and hardening."""
    return gcp.container.NodePoolNodeConfigArgs(
        machine_type=machine_type,
        service_account=sa_email,
        oauth_scopes=list(plan.node_scopes),
        workload_metadata_config=gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(
            mode=GKE_METADATA
        ),
        metadata=NO_LEGACY_METADATA,
        # https://cloud.google.com/kubernetes-engine/docs/how-to/shielded-gke-nodes
        shielded_instance_config=gcp.container.NodePoolNodeConfigShieldedInstanceConfigArgs(
            enable_secure_boot=secure_boot, enable_integrity_monitoring=True
        ),
        disk_type=disk_type,
        disk_size_gb=disk_size_gb,
        image_type=image_type,
        guest_accelerators=list(guest_accelerators) or None,
        spot=spot,
        flex_start=flex_start,
        max_run_duration=max_run_duration,
        reservation_affinity=reservation_affinity,
        labels=labels,
        taints=list(taints) or None,
        # https://cloud.google.com/kubernetes-engine/docs/how-to/using-gvnic
        gvnic=gcp.container.NodePoolNodeConfigGvnicArgs(enabled=True) if gvnic else None,
        # https://cloud.google.com/kubernetes-engine/docs/how-to/image-streaming
        gcfs_config=gcp.container.NodePoolNodeConfigGcfsConfigArgs(enabled=True)
        if image_streaming
        else None,
        # https://cloud.google.com/kubernetes-engine/docs/how-to/persistent-volumes/local-ssd
        ephemeral_storage_local_ssd_config=gcp.container.NodePoolNodeConfigEphemeralStorageLocalSsdConfigArgs(
            local_ssd_count=local_ssd_count
        )
        if local_ssd_count
        else None,
    )


def _pool_args(
    plan: core.GkePlan, p: core.GkePoolPlan, cluster: GkeCluster
) -> gcp.container.NodePoolArgs:
    return gcp.container.NodePoolArgs(
        name=p.node_pool,
        cluster=cluster.name,
        location=plan.cluster.location,
        project=plan.project,
        node_locations=list(p.node_locations),
        # Totals span every zone; ANY picks the zones with capacity
        # (https://cloud.google.com/kubernetes-engine/docs/concepts/cluster-autoscaler#location_policy).
        initial_node_count=p.initial_node_count,
        autoscaling=gcp.container.NodePoolAutoscalingArgs(
            total_min_node_count=p.total_min,
            total_max_node_count=p.total_max,
            location_policy="ANY",
        ),
        management=gcp.container.NodePoolManagementArgs(
            auto_repair=p.auto_repair, auto_upgrade=p.auto_upgrade
        ),
        upgrade_settings=gcp.container.NodePoolUpgradeSettingsArgs(
            max_surge=p.max_surge, max_unavailable=p.max_unavailable
        )
        if p.max_surge is not None
        else None,
        queued_provisioning=gcp.container.NodePoolQueuedProvisioningArgs(enabled=True)
        if p.queued_provisioning
        else None,
        best_effort_provisioning=gcp.container.NodePoolBestEffortProvisioningArgs(
            enabled=True, min_provision_nodes=p.best_effort_min_nodes
        )
        if p.best_effort_min_nodes is not None
        else None,
        # https://cloud.google.com/kubernetes-engine/docs/how-to/compact-placement
        placement_policy=gcp.container.NodePoolPlacementPolicyArgs(type="COMPACT")
        if p.compact_placement
        else None,
        node_config=_gpu_node_config(plan, p, cluster.node_service_account),
        network_config=private_nodes(plan),
    )


def private_nodes(plan: core.GkePlan) -> gcp.container.NodePoolNetworkConfigArgs | None:
    """Private nodes set on each pool too: the cluster-level switch applies only to pools created
    after it (NodeNetworkConfig.enablePrivateNodes, GKE REST v1; updated in place,
    https://cloud.google.com/kubernetes-engine/docs/how-to/latest/network-isolation)."""
    if not plan.cluster.private_nodes:
        return None
    return gcp.container.NodePoolNetworkConfigArgs(enable_private_nodes=True)


def _gpu_node_config(
    plan: core.GkePlan, p: core.GkePoolPlan, sa_email: pulumi.Input[str]
) -> gcp.container.NodePoolNodeConfigArgs:
    return node_config(
        plan,
        p.machine_type,
        sa_email,
        disk_type=p.disk_type,
        secure_boot=p.secure_boot,
        image_type=p.image_type,
        disk_size_gb=p.disk_size_gb,
        guest_accelerators=[_accelerator(p)],
        spot=p.spot,
        flex_start=p.flex_start or None,
        max_run_duration=p.max_run_duration,
        reservation_affinity=_reservation(p),
        labels=dict(p.labels),
        taints=[
            gcp.container.NodePoolNodeConfigTaintArgs(
                key=t.key, value=t.value, effect=_EFFECT[t.effect]
            )
            for t in p.taints
        ],
        gvnic=p.gvnic,
        image_streaming=p.image_streaming,
        local_ssd_count=p.local_ssd_count,
    )


def _accelerator(p: core.GkePoolPlan) -> gcp.container.NodePoolNodeConfigGuestAcceleratorArgs:
    return gcp.container.NodePoolNodeConfigGuestAcceleratorArgs(
        type=p.accelerator,
        count=p.accelerator_count,
        gpu_driver_installation_config=(
            gcp.container.NodePoolNodeConfigGuestAcceleratorGpuDriverInstallationConfigArgs(
                gpu_driver_version=p.driver_version
            )
        ),
        gpu_sharing_config=(
            gcp.container.NodePoolNodeConfigGuestAcceleratorGpuSharingConfigArgs(
                gpu_sharing_strategy=p.sharing_strategy,
                max_shared_clients_per_gpu=p.max_shared_clients_per_gpu,
            )
            if p.sharing_strategy and p.max_shared_clients_per_gpu
            else None
        ),
        gpu_partition_size=p.partition_size,
    )


def _reservation(
    p: core.GkePoolPlan,
) -> gcp.container.NodePoolNodeConfigReservationAffinityArgs | None:
    if p.reservation_type is None:
        return None
    return gcp.container.NodePoolNodeConfigReservationAffinityArgs(
        consume_reservation_type=p.reservation_type,
        key=core.RESERVATION_KEY if p.reservation_name else None,
        values=[p.reservation_name] if p.reservation_name else None,
    )
