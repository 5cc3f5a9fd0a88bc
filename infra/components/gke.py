"""GKE components: map a ``GkePlan`` onto a cluster, GPU node pools and ComputeClasses.

Thin by design: every value comes from ``infra.core.gke``; nothing here decides.
"""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from infra.components.handles import ClusterHandle
from infra.core import gke as core
from infra.core.plan import Plan

# GCP's taint enum spelling for each Kubernetes effect (gke.md §2.3).
_EFFECT = {
    "NoSchedule": "NO_SCHEDULE",
    "PreferNoSchedule": "PREFER_NO_SCHEDULE",
    "NoExecute": "NO_EXECUTE",
}


class GkeCluster(pulumi.ComponentResource):
    """A GKE cluster with a small CPU system pool and a least-privilege GPU node identity.

    With ``existing`` the cluster is looked up instead of created; the node identity is still made
    for the GPU pools this stack adds.
    """

    name: pulumi.Output[str]
    endpoint: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]
    node_service_account: pulumi.Output[str]

    def __init__(
        self, name: str, plan: core.GkePlan, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpu-infra:gcp:Cluster", name, None, opts)
        c = plan.cluster
        child = pulumi.ResourceOptions(parent=self)
        self.ready: list[pulumi.Resource] = []
        if c.existing:
            found = gcp.container.get_cluster_output(
                name=c.name,
                location=c.location,
                project=plan.project,
                opts=pulumi.InvokeOutputOptions(parent=self),
            )
            cluster_name: pulumi.Output[str] = found.name
            endpoint: pulumi.Output[str] = found.endpoint
            ca = found.master_auths.apply(lambda a: a[0].cluster_ca_certificate or "")
        else:
            cluster = gcp.container.Cluster(
                f"{name}-cluster",
                gcp.container.ClusterArgs(
                    name=c.name,
                    project=plan.project,
                    location=c.location,
                    # GPU and system pools are managed separately; the default pool only bootstraps.
                    remove_default_node_pool=True,
                    initial_node_count=1,
                    min_master_version=c.min_master_version,
                    release_channel=gcp.container.ClusterReleaseChannelArgs(
                        channel=c.release_channel
                    ),
                    workload_identity_config=gcp.container.ClusterWorkloadIdentityConfigArgs(
                        workload_pool=c.workload_pool
                    ),
                    enable_shielded_nodes=True,
                    deletion_protection=c.deletion_protection,
                    network=c.network,
                    subnetwork=c.subnetwork,
                    # VPC-native (alias IPs): required for many GKE features, GKE's default too.
                    ip_allocation_policy=gcp.container.ClusterIpAllocationPolicyArgs(),
                ),
                opts=child,
            )
            cluster_name = cluster.name
            endpoint = cluster.endpoint
            ca = cluster.master_auth.apply(lambda a: a.cluster_ca_certificate or "")
        self.node_sa = gcp.serviceaccount.Account(
            f"{name}-gpu-nodes",
            gcp.serviceaccount.AccountArgs(
                account_id=c.node_sa_id,
                project=plan.project,
                display_name=f"GKE GPU nodes of {c.name} (least privilege)",
            ),
            opts=child,
        )
        member = self.node_sa.email.apply(lambda e: f"serviceAccount:{e}")
        for role in plan.node_sa_roles:
            gcp.projects.IAMMember(
                f"{name}-gpu-nodes-{role.rsplit('.', 1)[-1]}",
                gcp.projects.IAMMemberArgs(project=plan.project, role=role, member=member),
                opts=child,
            )
        if not c.existing:
            system = gcp.container.NodePool(
                f"{name}-system",
                gcp.container.NodePoolArgs(
                    name="system",
                    cluster=cluster_name,
                    location=c.location,
                    project=plan.project,
                    autoscaling=gcp.container.NodePoolAutoscalingArgs(
                        total_min_node_count=c.system_min,
                        total_max_node_count=c.system_max,
                        location_policy="BALANCED",
                    ),
                    management=gcp.container.NodePoolManagementArgs(
                        auto_repair=True, auto_upgrade=True
                    ),
                    node_config=_node_config(plan, c.system_machine_type, self.node_sa.email),
                ),
                opts=pulumi.ResourceOptions(parent=self, ignore_changes=["initialNodeCount"]),
            )
            self.ready.append(system)
        self.name = cluster_name
        self.endpoint = endpoint
        self.kubeconfig = pulumi.Output.secret(
            pulumi.Output.all(cluster_name, endpoint, ca).apply(
                lambda a: core.kubeconfig(str(a[0]), str(a[1]), str(a[2]))
            )
        )
        self.node_service_account = self.node_sa.email
        self.register_outputs(
            {
                "name": self.name,
                "endpoint": self.endpoint,
                "kubeconfig": self.kubeconfig,
                "nodeServiceAccount": self.node_service_account,
            }
        )


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
        self.pools: dict[str, gcp.container.NodePool] = {}
        for p in plan.pools:
            self.pools[p.name] = gcp.container.NodePool(
                f"{name}-{p.name}",
                _pool_args(plan, p, cluster),
                # initial_node_count is per zone and ForceNew; the autoscaler owns the size after
                # creation (gke.md §4, pulumi/pulumi-gcp#412).
                opts=pulumi.ResourceOptions(
                    parent=self, ignore_changes=["initialNodeCount"], depends_on=cluster.ready
                ),
            )
        for cc in plan.compute_classes:
            k8s.apiextensions.CustomResource(
                f"{name}-{cc.name}-class",
                api_version="cloud.google.com/v1",
                kind="ComputeClass",
                metadata=k8s.meta.v1.ObjectMetaArgs(name=cc.name),
                spec=cc.manifest(),
                opts=pulumi.ResourceOptions(
                    parent=self, provider=provider, depends_on=cluster.ready
                ),
            )
        self.register_outputs({"pools": {n: p.name for n, p in self.pools.items()}})


def _node_config(
    plan: core.GkePlan, machine_type: str, sa_email: pulumi.Input[str], **gpu: object
) -> gcp.container.NodePoolNodeConfigArgs:
    """Node settings shared by the system and GPU pools: identity and hardening."""
    return gcp.container.NodePoolNodeConfigArgs(
        machine_type=machine_type,
        service_account=sa_email,
        oauth_scopes=list(plan.node_scopes),
        # Pods get Workload Identity, never the node's credentials.
        workload_metadata_config=gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(
            mode="GKE_METADATA"
        ),
        metadata={"disable-legacy-endpoints": "true"},
        **gpu,  # type: ignore[arg-type]
    )


def _pool_args(
    plan: core.GkePlan, p: core.GkePoolPlan, cluster: GkeCluster
) -> gcp.container.NodePoolArgs:
    accel = gcp.container.NodePoolNodeConfigGuestAcceleratorArgs(
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
    reservation = gcp.container.NodePoolNodeConfigReservationAffinityArgs(
        consume_reservation_type=p.reservation_type,
        key=core.RESERVATION_KEY if p.reservation_name else None,
        values=[p.reservation_name] if p.reservation_name else None,
    )
    node_config = _node_config(
        plan,
        p.machine_type,
        cluster.node_service_account,
        image_type=p.image_type,
        disk_size_gb=p.disk_size_gb,
        disk_type=p.disk_type,
        guest_accelerators=[accel],
        spot=p.spot,
        flex_start=p.flex_start or None,
        max_run_duration=p.max_run_duration,
        reservation_affinity=reservation,
        labels=dict(p.labels),
        taints=[
            gcp.container.NodePoolNodeConfigTaintArgs(
                key=t.key, value=t.value, effect=_EFFECT[t.effect]
            )
            for t in p.taints
        ],
        shielded_instance_config=gcp.container.NodePoolNodeConfigShieldedInstanceConfigArgs(
            enable_secure_boot=p.secure_boot, enable_integrity_monitoring=True
        ),
    )
    return gcp.container.NodePoolArgs(
        name=p.name,
        cluster=cluster.name,
        location=plan.cluster.location,
        project=plan.project,
        node_locations=list(p.node_locations),
        # ANY needs autoscaling and 0 initial nodes (gke.md §5.1); totals span every zone.
        initial_node_count=0,
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
        ),
        queued_provisioning=gcp.container.NodePoolQueuedProvisioningArgs(enabled=True)
        if p.queued_provisioning
        else None,
        best_effort_provisioning=gcp.container.NodePoolBestEffortProvisioningArgs(
            enabled=True, min_provision_nodes=p.best_effort_min_nodes
        )
        if p.best_effort_min_nodes is not None
        else None,
        node_config=node_config,
    )


def build_gke(plan: Plan) -> tuple[ClusterHandle, GkeGpuNodePools]:
    """Build the GKE side of a stack; returns the handle the operator layer uses and the pools."""
    assert plan.gke is not None
    g = plan.gke
    cluster = GkeCluster(g.cluster.name, g)
    provider = k8s.Provider(
        f"{g.cluster.name}-k8s",
        k8s.ProviderArgs(kubeconfig=cluster.kubeconfig),
        opts=pulumi.ResourceOptions(parent=cluster),
    )
    pools = GkeGpuNodePools(f"{g.cluster.name}-gpu", g, cluster, provider)
    handle = ClusterHandle(
        name=cluster.name,
        endpoint=cluster.endpoint,
        kubeconfig=cluster.kubeconfig,
        provider=provider,
        ready=cluster.ready,
    )
    return handle, pools
