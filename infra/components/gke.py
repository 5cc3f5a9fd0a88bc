"""GKE components: map a ``GkePlan`` onto a cluster, GPU node pools and ComputeClasses.

Thin by design: every value comes from ``infra.core.gke.planner``; nothing here decides.
"""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from infra.components.handles import ClusterHandle
from infra.components.lifecycle import deletion_owner, with_lifecycle
from infra.core import lifecycle
from infra.core.gke import planner as core
from infra.core.gke.platform import gke_plan
from infra.core.plan import Plan

# GCP's taint enum spelling for each Kubernetes effect
# (https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/NodeTaint).
_EFFECT = {
    "NoSchedule": "NO_SCHEDULE",
    "PreferNoSchedule": "PREFER_NO_SCHEDULE",
    "NoExecute": "NO_EXECUTE",
}
# Pods get Workload Identity, never the node's credentials
# (https://cloud.google.com/kubernetes-engine/docs/how-to/workload-identity).
_GKE_METADATA = "GKE_METADATA"
_NO_LEGACY_METADATA = {"disable-legacy-endpoints": "true"}

# How Kubernetes reaches the cluster: name, endpoint, CA certificate.
_Access = tuple[pulumi.Output[str], pulumi.Output[str], pulumi.Output[str]]


class GkeCluster(pulumi.ComponentResource):
    """A GKE cluster with a small CPU system pool and a least-privilege node identity.

    With ``existing`` the observed cluster is used instead of a created one; the node identity is
    still made for the GPU pools this stack adds.
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
        # Kubernetes objects wait for the cluster, never for the system pool: the deploy's
        # critical path must not run through it.
        self.ready: list[pulumi.Resource] = []
        self.created: pulumi.Resource | None = None  # deletedWith target: created, unprotected
        self.node_service_account, self.node_sa_bindings = _node_identity(name, plan, child)
        if c.existing:
            cluster_name, endpoint, ca = self._existing(plan)
        else:
            cluster_name, endpoint, ca = self._create(name, plan, child)
        self.name = cluster_name
        self.endpoint = endpoint
        self.kubeconfig = pulumi.Output.secret(
            pulumi.Output.all(cluster_name, endpoint, ca).apply(
                lambda a: core.kubeconfig(str(a[0]), str(a[1]), str(a[2]))
            )
        )
        # Project services the pools need; left enabled on destroy (other stacks may use them).
        self.services: list[pulumi.Resource] = [
            gcp.projects.Service(
                f"{name}-{svc.split('.', 1)[0]}",
                gcp.projects.ServiceArgs(
                    project=plan.project, service=svc, disable_on_destroy=False
                ),
                opts=child,
            )
            for svc in plan.services
        ]
        self.register_outputs(
            {
                "name": self.name,
                "endpoint": self.endpoint,
                "kubeconfig": self.kubeconfig,
                "nodeServiceAccount": self.node_service_account,
            }
        )

    def _existing(self, plan: core.GkePlan) -> _Access:
        """The observed cluster: its name, endpoint and CA certificate."""
        found = plan.existing_cluster
        assert found is not None  # planner.attached_cluster: observed, or an issue
        return (
            pulumi.Output.from_input(found.name),
            pulumi.Output.from_input(found.endpoint),
            pulumi.Output.from_input(found.certificate_authority),
        )

    def _create(self, name: str, plan: core.GkePlan, child: pulumi.ResourceOptions) -> _Access:
        """Create the cluster (with its NAT when asked) and its system pool."""
        c = plan.cluster
        if c.cloud_nat:
            _cloud_nat(name, plan, child)
        cluster = gcp.container.Cluster(
            f"{name}-cluster",
            _cluster_args(plan, self.node_service_account),
            # Protected: deletionProtection is checked only in the cluster's own Delete, after the
            # engine has deleted every pool and in-cluster object (lifecycle.csv).
            opts=with_lifecycle(
                pulumi.ResourceOptions(
                    parent=self,
                    depends_on=self.node_sa_bindings,
                    # The bootstrap pool is deleted right after creation; its config is ForceNew.
                    ignore_changes=["nodeConfig"],
                ),
                _CLUSTER,
            ).merge(pulumi.ResourceOptions(protect=c.deletion_protection)),  # the one opt-out
        )
        self.ready.append(cluster)
        self.created = deletion_owner(cluster, _CLUSTER, protect=c.deletion_protection)
        gcp.container.NodePool(
            f"{name}-system",
            gcp.container.NodePoolArgs(
                name="system",
                cluster=cluster.name,
                location=c.location,
                project=plan.project,
                initial_node_count=1,  # per zone; the autoscaler owns the size afterwards
                autoscaling=gcp.container.NodePoolAutoscalingArgs(
                    total_min_node_count=c.system_min,
                    total_max_node_count=c.system_max,
                    location_policy="BALANCED",
                ),
                management=gcp.container.NodePoolManagementArgs(
                    auto_repair=True, auto_upgrade=True
                ),
                network_config=_private_nodes(plan),
                node_config=_node_config(
                    plan,
                    c.system_machine_type,
                    self.node_service_account,
                    disk_type=c.system_disk_type,
                    secure_boot=True,
                ),
            ),
            opts=with_lifecycle(
                pulumi.ResourceOptions(
                    parent=self,
                    depends_on=self.node_sa_bindings,
                    ignore_changes=["initialNodeCount"],
                ),
                _POOL,
                cluster=self.created,
                timeout_minutes=lifecycle.rolling_timeout_minutes(_POOL, c.system_max, 1),
            ),
        )
        ca = cluster.master_auth.apply(lambda a: a.cluster_ca_certificate or "")
        return cluster.name, cluster.endpoint, ca


# A stack created before project-scoped names carried the stack hash keeps its live account, router
# and NAT names: with the name ignored, the engine sends the old value and plans no replace (which
# for the account would re-create every node pool: nodeConfig.serviceAccount is ForceNew);
# https://www.pulumi.com/docs/iac/concepts/resources/options/ignorechanges/. New stacks get the
# planned (hashed) name.
KEEP_LIVE_NAME = {
    prop: pulumi.ResourceOptions(ignore_changes=[prop]) for prop in ("accountId", "name")
}


def _node_identity(
    name: str, plan: core.GkePlan, child: pulumi.ResourceOptions
) -> tuple[pulumi.Output[str], list[pulumi.Resource]]:
    """The nodes' service account (brought, or created with its roles) and the role bindings
    nodes wait for. A brought account gets no bindings: its roles are its owner's to manage."""
    c = plan.cluster
    if c.node_sa_email is not None:
        return pulumi.Output.from_input(c.node_sa_email), []
    sa = gcp.serviceaccount.Account(
        f"{name}-gpu-nodes",
        gcp.serviceaccount.AccountArgs(
            account_id=c.node_sa_id,
            project=plan.project,
            display_name=f"GKE nodes of {c.name} in {c.location} (least privilege)",
            # A retained account outlives its stack under the same account_id: a redeploy adopts
            # it ("skip service account creation if a service account with the same email
            # already exists", terraform-provider-google resource_google_service_account.go).
            create_ignore_already_exists=plan.node_identity_role == "auto-created-nodes" or None,
        ),
        opts=with_lifecycle(
            pulumi.ResourceOptions.merge(child, KEEP_LIVE_NAME["accountId"]),
            "gcp:serviceaccount/account:Account",
            plan.node_identity_role,
        ),
    )
    member = sa.email.apply(lambda e: f"serviceAccount:{e}")
    # Nodes register and pull images only once the node SA holds its roles. Creating a binding
    # that a retained one already holds merges into the policy (terraform-provider-google
    # tpgiamresource/resource_iam_member.go resourceIamMemberCreate: MergeBindings), no error.
    bindings: list[pulumi.Resource] = [
        gcp.projects.IAMMember(
            f"{name}-gpu-nodes-{role.rsplit('.', 1)[-1]}",
            gcp.projects.IAMMemberArgs(project=plan.project, role=role, member=member),
            opts=with_lifecycle(child, "gcp:projects/iAMMember:IAMMember", plan.node_identity_role),
        )
        for role in plan.node_sa_roles
    ]
    return sa.email, bindings


def _cluster_args(plan: core.GkePlan, sa_email: pulumi.Input[str]) -> gcp.container.ClusterArgs:
    c = plan.cluster
    return gcp.container.ClusterArgs(
        name=c.name,
        project=plan.project,
        location=c.location,
        # GPU and system pools are managed separately; the default pool only bootstraps.
        remove_default_node_pool=True,
        initial_node_count=1,
        node_config=_bootstrap_node_config(plan, sa_email),
        min_master_version=c.min_master_version,
        release_channel=gcp.container.ClusterReleaseChannelArgs(channel=c.release_channel),
        maintenance_policy=_maintenance_policy(c),
        workload_identity_config=gcp.container.ClusterWorkloadIdentityConfigArgs(
            workload_pool=c.workload_pool
        ),
        enable_shielded_nodes=True,
        deletion_protection=c.deletion_protection,
        network=c.network,
        subnetwork=c.subnetwork,
        # VPC-native (alias IPs): required for private nodes and Dataplane V2, GKE's default too.
        ip_allocation_policy=gcp.container.ClusterIpAllocationPolicyArgs(),
        # https://cloud.google.com/kubernetes-engine/docs/concepts/dataplane-v2
        datapath_provider="ADVANCED_DATAPATH" if c.dataplane_v2 else None,
        # https://cloud.google.com/kubernetes-engine/docs/how-to/latest/network-isolation
        private_cluster_config=gcp.container.ClusterPrivateClusterConfigArgs(
            enable_private_nodes=True
        )
        if c.private_nodes
        else None,
        master_authorized_networks_config=_authorized_networks(c),
        cluster_autoscaling=_auto_provisioning(plan, sa_email),
        # The list is authoritative: GKE's default packages are in it, DCGM only when asked for;
        # the packages need managed Prometheus collection
        # (https://cloud.google.com/kubernetes-engine/docs/how-to/configure-metrics).
        monitoring_config=gcp.container.ClusterMonitoringConfigArgs(
            enable_components=list(c.monitoring_components),
            managed_prometheus=gcp.container.ClusterMonitoringConfigManagedPrometheusArgs(
                enabled=True
            ),
        ),
    )


def _bootstrap_node_config(
    plan: core.GkePlan, sa_email: pulumi.Input[str]
) -> gcp.container.ClusterNodeConfigArgs:
    """The bootstrap pool runs as the least-privilege node SA, never the Compute Engine default
    account, which hardened projects delete
    (https://cloud.google.com/kubernetes-engine/docs/how-to/hardening-your-cluster#use_least_privilege_sa)."""
    return gcp.container.ClusterNodeConfigArgs(
        service_account=sa_email,
        oauth_scopes=list(plan.node_scopes),
        shielded_instance_config=gcp.container.ClusterNodeConfigShieldedInstanceConfigArgs(
            enable_secure_boot=True, enable_integrity_monitoring=True
        ),
        workload_metadata_config=gcp.container.ClusterNodeConfigWorkloadMetadataConfigArgs(
            mode=_GKE_METADATA
        ),
        metadata=_NO_LEGACY_METADATA,
    )


def _auto_provisioning(
    plan: core.GkePlan, sa_email: pulumi.Input[str]
) -> gcp.container.ClusterClusterAutoscalingArgs | None:
    """Cluster-level node auto-provisioning, only where the plan enables it (infra/core/gke/nap.py):
    its limits, and NAP-created nodes as the least-privilege node SA with the stack's scopes and
    shielded settings, never the Compute Engine default account
    (https://cloud.google.com/kubernetes-engine/docs/how-to/node-auto-provisioning)."""
    limits = plan.cluster.auto_provisioning_limits
    if limits is None:
        return None
    return gcp.container.ClusterClusterAutoscalingArgs(
        enabled=True,
        resource_limits=[
            gcp.container.ClusterClusterAutoscalingResourceLimitArgs(
                resource_type=lim.resource_type, minimum=lim.minimum, maximum=lim.maximum
            )
            for lim in limits
        ],
        auto_provisioning_defaults=gcp.container.ClusterClusterAutoscalingAutoProvisioningDefaultsArgs(
            service_account=sa_email,
            oauth_scopes=list(plan.node_scopes),
            shielded_instance_config=gcp.container.ClusterClusterAutoscalingAutoProvisioningDefaultsShieldedInstanceConfigArgs(
                enable_secure_boot=True, enable_integrity_monitoring=True
            ),
        ),
    )


def _maintenance_policy(c: core.GkeClusterPlan) -> gcp.container.ClusterMaintenancePolicyArgs:
    """Upgrades (and so GPU driver changes) happen only in this window, outside exclusions
    (https://cloud.google.com/kubernetes-engine/docs/concepts/maintenance-windows-and-exclusions)."""
    return gcp.container.ClusterMaintenancePolicyArgs(
        recurring_window=gcp.container.ClusterMaintenancePolicyRecurringWindowArgs(
            start_time=c.maintenance_start,
            end_time=c.maintenance_end,
            recurrence=c.maintenance_recurrence,
        ),
        maintenance_exclusions=[
            gcp.container.ClusterMaintenancePolicyMaintenanceExclusionArgs(
                exclusion_name=e.name,
                start_time=e.start_time,
                end_time=e.end_time,
                exclusion_options=gcp.container.ClusterMaintenancePolicyMaintenanceExclusionExclusionOptionsArgs(
                    scope=e.scope
                ),
            )
            for e in c.maintenance_exclusions
        ]
        or None,
    )


def _authorized_networks(
    c: core.GkeClusterPlan,
) -> gcp.container.ClusterMasterAuthorizedNetworksConfigArgs | None:
    """https://cloud.google.com/kubernetes-engine/docs/how-to/authorized-networks"""
    if c.authorized_networks is None:
        return None
    return gcp.container.ClusterMasterAuthorizedNetworksConfigArgs(
        cidr_blocks=[
            gcp.container.ClusterMasterAuthorizedNetworksConfigCidrBlockArgs(
                cidr_block=n.cidr_block, display_name=n.display_name
            )
            for n in c.authorized_networks
        ]
    )


def _cloud_nat(name: str, plan: core.GkePlan, child: pulumi.ResourceOptions) -> None:
    """A Cloud Router + NAT so private nodes reach nvcr.io
    (https://cloud.google.com/nat/docs/gke-example)."""
    c = plan.cluster
    router = gcp.compute.Router(
        f"{name}-router",
        gcp.compute.RouterArgs(
            name=c.router_name,
            project=plan.project,
            region=plan.region,
            network=c.network or "default",
        ),
        opts=pulumi.ResourceOptions.merge(child, KEEP_LIVE_NAME["name"]),
    )
    gcp.compute.RouterNat(
        f"{name}-nat",
        gcp.compute.RouterNatArgs(
            name=c.nat_name,
            project=plan.project,
            region=plan.region,
            router=router.name,
            nat_ip_allocate_option="AUTO_ONLY",
            # Only the cluster's subnetwork (all its ranges): other teams' subnets stay as they are
            # (RouterNat.sourceSubnetworkIpRangesToNat, Compute API routers).
            source_subnetwork_ip_ranges_to_nat="LIST_OF_SUBNETWORKS",
            subnetworks=[
                gcp.compute.RouterNatSubnetworkArgs(
                    name=c.nat_subnetwork, source_ip_ranges_to_nats=["ALL_IP_RANGES"]
                )
            ],
        ),
        opts=pulumi.ResourceOptions.merge(child, KEEP_LIVE_NAME["name"]),
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
                    _POOL,
                    cluster=cluster.created,
                    timeout_minutes=_pool_timeout(p),
                ),
            )
        self.classes: dict[str, k8s.apiextensions.CustomResource] = {}
        for cc in plan.compute_classes:
            self.classes[cc.name] = k8s.apiextensions.CustomResource(
                f"{name}-{cc.name}-class",
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
                    "kubernetes:cloud.google.com/v1:ComputeClass",
                    cluster=cluster.created,
                ),
            )
        self.register_outputs({"pools": {n: p.name for n, p in self.pools.items()}})


_POOL = "gcp:container/nodePool:NodePool"
_CLUSTER = "gcp:container/cluster:Cluster"


def _pool_timeout(p: core.GkePoolPlan) -> int:
    """Minutes for a pool's create/update/delete: "The number of nodes upgraded simultaneously is
    the sum of max_surge and max_unavailable" (terraform-provider-google
    google/services/container/resource_container_node_pool.go, upgrade_settings)."""
    batch = (p.max_surge or 0) + (p.max_unavailable or 0)
    return lifecycle.rolling_timeout_minutes(_POOL, p.total_max, batch or 1)


def _node_config(
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
            mode=_GKE_METADATA
        ),
        metadata=_NO_LEGACY_METADATA,
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
        name=p.name,
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
        network_config=_private_nodes(plan),
    )


def _private_nodes(plan: core.GkePlan) -> gcp.container.NodePoolNetworkConfigArgs | None:
    """Private nodes set on each pool too: the cluster-level switch applies only to pools created
    after it (NodeNetworkConfig.enablePrivateNodes, GKE REST v1; updated in place,
    https://cloud.google.com/kubernetes-engine/docs/how-to/latest/network-isolation)."""
    if not plan.cluster.private_nodes:
        return None
    return gcp.container.NodePoolNetworkConfigArgs(enable_private_nodes=True)


def _gpu_node_config(
    plan: core.GkePlan, p: core.GkePoolPlan, sa_email: pulumi.Input[str]
) -> gcp.container.NodePoolNodeConfigArgs:
    return _node_config(
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


def build_gke(plan: Plan) -> ClusterHandle:
    """Build the GKE side of a stack; returns the handle the operator layer uses."""
    g = gke_plan(plan.platform)
    cluster = GkeCluster(g.cluster.name, g)
    provider = k8s.Provider(
        f"{g.cluster.name}-k8s",
        k8s.ProviderArgs(
            kubeconfig=cluster.kubeconfig,
            cluster_identifier=lifecycle.cluster_identifier(
                "gke", g.project, g.cluster.location, g.cluster.name
            ),
        ),
        opts=pulumi.ResourceOptions(parent=cluster),
    )
    pools = GkeGpuNodePools(f"{g.cluster.name}-gpu", g, cluster, provider)
    return ClusterHandle(
        name=cluster.name,
        # GKE reports a bare IP ("The IP address of this cluster's master endpoint",
        # https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters);
        # the output is a URL on every platform, as EKS reports it.
        endpoint=cluster.endpoint.apply(
            lambda e: e if e.startswith("https://") else f"https://{e}"
        ),
        kubeconfig=cluster.kubeconfig,
        provider=provider,
        ready=cluster.ready,
        owner=cluster.created,
        pools=dict(pools.pools),
        classes=dict(pools.classes),
    )
