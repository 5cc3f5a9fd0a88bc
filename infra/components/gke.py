"""GKE components: map a ``GkePlan`` onto a cluster, GPU node pools and ComputeClasses.

Thin by design: every value comes from ``infra.core.gke.planner``; nothing here decides. The
cluster, its node identity, system pool and Cloud NAT are here; the GPU node pools and
ComputeClasses in ``infra.components.gke_pools``.
"""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from infra.components.gke_pools import (
    GKE_METADATA,
    NO_LEGACY_METADATA,
    NODE_POOL,
    GkeGpuNodePools,
    node_config,
    private_nodes,
)
from infra.components.handles import ClusterHandle
from infra.components.lifecycle import deletion_owner, with_lifecycle
from infra.core import lifecycle
from infra.core.gke import planner as core
from infra.core.gke.platform import gke_plan
from infra.core.plan import Plan

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
                lambda a: core.kubeconfig(str(a[0]), str(a[1]), str(a[2]), plan.kubeconfig_env)
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
                network_config=private_nodes(plan),
                node_config=node_config(
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
                NODE_POOL,
                cluster=self.created,
                timeout_minutes=lifecycle.rolling_timeout_minutes(NODE_POOL, c.system_max, 1),
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
            mode=GKE_METADATA
        ),
        metadata=NO_LEGACY_METADATA,
    )


def _auto_provisioning(
    plan: core.GkePlan, sa_email: pulumi.Input[str]
) -> gcp.container.ClusterClusterAutoscalingArgs:
    """Cluster-level node auto-provisioning, on only where the plan enables it (core/gke/nap.py):
    its limits, and NAP-created nodes as the least-privilege node SA with the stack's scopes and
    shielded settings, never the Compute Engine default account
    (https://cloud.google.com/kubernetes-engine/docs/how-to/node-auto-provisioning)."""
    limits = plan.cluster.auto_provisioning_limits
    if limits is None:
        # Sent as off, never left out: the block is Optional+Computed, so leaving it out keeps a
        # live one, and a plan that stops needing auto-provisioning would leave it on with stale
        # limits. Off is what the provider reads back from a cluster without it
        # (hashicorp/terraform-provider-google resource_container_cluster.go
        # flattenClusterAutoscaling: nil -> enabled=false), so no permanent diff.
        return gcp.container.ClusterClusterAutoscalingArgs(enabled=False)
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


_CLUSTER = "gcp:container/cluster:Cluster"


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
