"""GKE planning: validate every GPU pool against the catalog and GKE's rules, decide its shape.

Pure code. ``plan_gke`` turns the parsed stack into a ``GkePlan`` that ``infra.components.gke``
maps 1:1 onto ``gcp.container.Cluster`` / ``NodePool`` and ComputeClasses. The rules live by
concern: ``cluster`` (channel, maintenance, private nodes, NAT), ``names`` (project-scoped names),
``pools`` (shape, zones, fallback), ``rules`` (per-pool checks), ``series`` (per-series disk and
capacity facts), ``versions`` (GKE version gates); docs/gke.md's "GKE rules we enforce" lists
each with its source.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from infra.core import offline
from infra.core.catalog.vendored import Catalog
from infra.core.config.gke import GkeClusterSpec
from infra.core.config.location import gcp_region_of
from infra.core.config.stack import StackConfig
from infra.core.errors import Issues, join_path
from infra.core.gke.cluster import plan_cluster
from infra.core.gke.model import (
    GPU_TAINT,
    IMAGE_STREAMING_ROLE,
    IMAGE_STREAMING_SERVICE,
    NO_GKE_DEVICE_PLUGIN,
    NODE_SA_ROLES,
    NODE_SCOPES,
    RESERVATION_KEY,
    AuthorizedNetworkPlan,
    ComputeClassPlan,
    GkeClusterPlan,
    GkePlan,
    GkePoolPlan,
    MaintenanceExclusionPlan,
)
from infra.core.gke.nap import NAP_DOC, cluster_nap_needed, resource_limits, system_shape
from infra.core.gke.neighbours import scope_to_stack
from infra.core.gke.observed import GkeClusterObserved, GkeObserved
from infra.core.gke.pools import PoolContext, plan_pools
from infra.core.gke.versions import feature_versions
from infra.core.kubeconfig import exec_kubeconfig
from infra.core.labels import GKE_ACCELERATOR_LABEL, GKE_COMPUTE_CLASS_LABEL, POOL_LABEL
from infra.core.neighbours import stack_node_labels
from infra.core.system_pool import gcp_system_type_problem

__all__ = [
    "GKE_ACCELERATOR_LABEL",
    "GKE_COMPUTE_CLASS_LABEL",
    "GPU_TAINT",
    "NODE_SA_ROLES",
    "NODE_SCOPES",
    "NO_GKE_DEVICE_PLUGIN",
    "POOL_LABEL",
    "RESERVATION_KEY",
    "AuthorizedNetworkPlan",
    "ComputeClassPlan",
    "GkeClusterPlan",
    "GkePlan",
    "GkePoolPlan",
    "MaintenanceExclusionPlan",
    "gke_pool_outputs",
    "kubeconfig",
    "plan_gke",
]


def plan_gke(
    config: StackConfig, catalog: Catalog, issues: Issues, observed: GkeObserved | None = None
) -> GkePlan:
    """Validate and decide the GKE cluster and its GPU pools over what was observed (``None``:
    offline); problems go to ``issues``."""
    cluster: GkeClusterSpec = config.cluster
    project = config.project or ""
    region = config.region or ""
    split = gcp_region_of(cluster.location)
    cluster_plan, notes = plan_cluster(
        cluster,
        project,
        issues,
        operator_on=config.operator.enabled,
        stack=config.stack,
        running=observed is not None and observed.cluster is not None,
        data_dir=catalog.data_dir,
    )
    if not cluster.existing and (
        problem := gcp_system_type_problem(cluster.system_pool.machine_type, catalog)
    ):
        issues.add("cluster.systemPool.machineType", problem)
    ctx = PoolContext(
        region=region,
        cluster_zone=cluster.location if split is not None and split[1] is not None else None,
        release_channel=cluster.release_channel,
        operator_on=config.operator.enabled,
        catalog=catalog,
        min_master_version=cluster.min_master_version,
        existing=cluster.existing,
        issues=issues,
        stack_labels=stack_node_labels(config, catalog),
    )
    pools, classes = plan_pools(list(config.pools), ctx)
    kept: list[str] = []
    if ctx.stack_labels:  # a cluster the stack does not own, by a gpu-infra that names per stack
        live = observed.node_pools if observed is not None else None
        running = observed.compute_classes if observed is not None else None
        pools, classes, kept = scope_to_stack(config, pools, classes, live, issues, running)
    if not cluster.existing:
        for i, pool in enumerate(config.pools):
            # infra/components/gke.py creates the CPU pool as NodePool "system"; a second pool of
            # that name is refused by nodePools.create with 409 ALREADY_EXISTS.
            if pool.name == "system":
                issues.add(join_path("gpuPools", i, "name"), "'system' is the system pool's name")
    streaming = any(p.image_streaming for p in pools)
    if streaming and cluster_plan.private_nodes:
        notes.append(
            "image streaming on private nodes needs Private Google Access on the subnet "
            "(https://cloud.google.com/kubernetes-engine/docs/how-to/image-streaming#requirements)"
        )
    for p in pools:
        if p.queued_provisioning:
            notes.append(
                f"pool {p.name}: queued provisioning gets nodes only through a "
                "ProvisioningRequest, so the JupyterHub, Kubeflow, Flyte and Kubernetes outputs "
                "leave it out; submit its workloads with a ProvisioningRequest or through Kueue "
                "(https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest)"
            )
    cluster_plan = _with_auto_provisioning(cluster_plan, pools, classes, catalog, issues)
    notes += _auto_creation_notes(classes, cluster_plan, catalog)
    return GkePlan(
        project=project,
        region=region,
        cluster=cluster_plan,
        pools=tuple(pools),
        compute_classes=tuple(classes),
        node_sa_roles=(*NODE_SA_ROLES, IMAGE_STREAMING_ROLE) if streaming else NODE_SA_ROLES,
        services=(IMAGE_STREAMING_SERVICE,) if streaming else (),
        notes=(*notes, *ctx.notes, *kept),
        pool_notes=tuple(kept),
        existing_cluster=attached_cluster(cluster, project, observed, issues),
        kubeconfig_env=adc_env(config.provider_config, issues),
    )


def attached_cluster(
    cluster: GkeClusterSpec, project: str, observed: GkeObserved | None, issues: Issues
) -> GkeClusterObserved | None:
    """An existing cluster as read (offline: placeholders, ``infra.core.offline``); a missing one
    is a problem: the stack attaches its pools to what is there."""
    if not cluster.existing:
        return None
    if observed is None:
        return GkeClusterObserved(
            name=cluster.name,
            endpoint=offline.ENDPOINT,
            certificate_authority=offline.CERTIFICATE_AUTHORITY,
            workload_pool=f"{project}.svc.id.goog",
        )
    if observed.cluster is None:
        issues.add(
            "cluster.name",
            f"{cluster.name!r}: no GKE cluster of that name in {cluster.location} of project "
            f"{project} (cluster.existing: true attaches to a running cluster); create it "
            "first, or set existing: false",
        )
    elif observed.cluster.workload_pool == "":
        # The pools run the GKE metadata server (workloadMetadataConfig GKE_METADATA), which
        # "can only be enabled if workload identity is enabled at the cluster level"
        # (terraform-provider-google container_cluster workload_metadata_config.mode).
        issues.add(
            "cluster.name",
            f"{cluster.name!r} has no Workload Identity (workloadIdentityConfig.workloadPool "
            "is empty): the GPU pools run the GKE metadata server, which needs it; enable it "
            f"with `gcloud container clusters update {cluster.name} "
            f"--workload-pool={project}.svc.id.goog`",
        )
    return observed.cluster


def _with_auto_provisioning(
    cluster: GkeClusterPlan,
    pools: list[GkePoolPlan],
    classes: list[ComputeClassPlan],
    catalog: Catalog,
    issues: Issues,
) -> GkeClusterPlan:
    """The cluster with node auto-provisioning where an auto-creating ComputeClass needs it
    (``nap``): limits from every pool of the cluster, the system pool included."""
    auto = any(c.auto is not None for c in classes)
    data = catalog.data_dir
    if cluster.existing or not auto or not cluster_nap_needed(cluster.min_master_version, data):
        return cluster
    system = system_shape(cluster.system_machine_type, catalog)
    if system is None:
        issues.add(
            "cluster.systemPool.machineType",
            f"{cluster.system_machine_type!r}: its memory is not known, and cluster-level node "
            "auto-provisioning (enabled for autoCreate below GKE "
            f"{feature_versions(data)['compute-class-auto-creation']}) needs it for its memory "
            "limit; use a standard, highmem or highcpu type such as e2-standard-4",
        )
        return cluster
    limits = resource_limits(pools, system, cluster.system_max)
    return replace(cluster, auto_provisioning_limits=limits)


def _auto_creation_notes(
    classes: list[ComputeClassPlan], cluster: GkeClusterPlan, catalog: Catalog
) -> list[str]:
    """What auto-creation leaves to GKE, said once per plan."""
    auto = [c.name for c in classes if c.auto is not None]
    if not auto:
        return []
    limits = cluster.auto_provisioning_limits
    if limits is None:
        notes = [
            f"ComputeClass {', '.join(auto)}: GKE creates and deletes the node pools; a "
            "ComputeClass has no node limit and cluster-level auto-provisioning (whose resource "
            "limits would cap them) is not enabled, so maxNodes is what cost and quota plan for, "
            "not a cap GKE enforces: the project's GPU quota is "
            "(https://cloud.google.com/kubernetes-engine/docs/how-to/node-auto-provisioning)"
        ]
    else:
        caps = ", ".join(f"{lim.resource_type} {lim.maximum}" for lim in limits)
        return [
            f"ComputeClass {', '.join(auto)}: GKE creates and deletes the node pools; below GKE "
            f"{feature_versions(catalog.data_dir)['compute-class-auto-creation']} that needs "
            "cluster-level node "
            f"auto-provisioning, enabled with cluster-wide resource limits ({caps}; memory in "
            "GB) that every pool of the cluster reaches at maxNodes: they cap the cluster's "
            "total, not one pool, and GKE may also create pools for any other pending pod within "
            "them. Pools another stack adds to this cluster count against them "
            f"({NAP_DOC}#resource_limits)",
            "auto-created nodes run as the node service account the ComputeClass names "
            "(nodePoolConfig.serviceAccount); the cluster's autoprovisioning defaults name the "
            "same account with the cloud-platform OAuth scope",
        ]
    # No clusterAutoscaling block is sent with auto-provisioning off: its autoProvisioningDefaults
    # are documented for cluster-level node auto-provisioning, and terraform-provider-google reads
    # them back only with it on (flattenClusterAutoscaling; hashicorp/terraform-provider-google
    # #25307: a permanent diff). The class's nodePoolConfig.serviceAccount is the node identity.
    notes.append(
        "auto-created nodes run as the node service account the ComputeClass names "
        "(nodePoolConfig.serviceAccount); their OAuth scopes are the cluster's autoprovisioning "
        "defaults, or GKE's default scopes when it has none; this stack does not set them"
    )
    return notes


def gke_pool_outputs(
    plan: GkePlan, per_pool: Mapping[str, Mapping[str, Any]]
) -> dict[str, dict[str, Any]]:
    """The ``gpuPools`` output, GKE-true: schedulable GPUs, one entry per ComputeClass.

    ``gpusPerNode`` is what GKE's device plugin advertises (MIG partitions x time-sharing clients;
    ``physicalGpusPerNode`` keeps the GPU count). A pod that selects a class (and tolerates every
    pool's taints) may land on any of its pools, so the class's entry selects the class only and
    its ``gpusPerNode`` is what every pool can give.
    """
    out = {name: dict(v) for name, v in per_pool.items()}
    for p in plan.pools:
        if p.name in out:
            out[p.name]["gpusPerNode"] = p.schedulable_gpus
            out[p.name]["physicalGpusPerNode"] = p.accelerator_count
    for cc in plan.compute_classes:
        entries = [out.pop(p) for p in cc.pools if p in out]
        if not entries:
            continue
        first = entries[0]
        tolerations: list[Any] = []
        for e in entries:
            tolerations += [t for t in e.get("tolerations", []) if t not in tolerations]
        out[cc.key] = {
            **first,
            "nodeSelector": {GKE_COMPUTE_CLASS_LABEL: cc.name},
            "tolerations": tolerations,
            "gpusPerNode": min(e["gpusPerNode"] for e in entries),
            "physicalGpusPerNode": min(e["physicalGpusPerNode"] for e in entries),
            "spot": any(e.get("spot") for e in entries),
            "minNodes": sum(e.get("minNodes", 0) for e in entries),
            "maxNodes": sum(e.get("maxNodes", 0) for e in entries),
            "computeClass": cc.name,
            "pools": list(cc.pools),
            "gpuTypes": list(dict.fromkeys(e["gpuType"] for e in entries)),
            "gpuModels": list(dict.fromkeys(e["gpuModel"] for e in entries)),
        }
    return out


def adc_env(provider_config: Mapping[str, Any], issues: Issues) -> tuple[tuple[str, str], ...]:
    """The environment under which the kubeconfig's plugin reads the provider's credentials.

    The provider signs with ``gcp:accessToken``, else ``gcp:credentials`` (a key file's path or
    its contents), else Application Default Credentials (terraform-provider-google
    google/transport/config.go ``GetCredentials``); the plugin with
    ``--use_application_default_credentials`` reads ADC, whose first source is the file named by
    GOOGLE_APPLICATION_CREDENTIALS (https://cloud.google.com/docs/authentication/application-default-credentials).
    A key path is passed so; what the plugin cannot be given (a token, key contents, a secret,
    impersonation) is refused rather than signing as gcloud's active account.
    """
    hint = (
        "the kubeconfig's gke-gcloud-auth-plugin reads Application Default Credentials only: "
        "give the key file's path, or drop the key and set GOOGLE_APPLICATION_CREDENTIALS "
        "(`gcloud auth application-default login --impersonate-service-account` for "
        "impersonation)"
    )
    for key in ("gcp:accessToken", "gcp:impersonateServiceAccount"):
        if provider_config.get(key):
            issues.add(key, f"the provider signs with it, but {hint}")
    given = provider_config.get("gcp:credentials")
    if not given:
        return ()
    if not isinstance(given, str) or given.lstrip().startswith("{"):
        issues.add("gcp:credentials", f"key contents or a secret, but {hint}")
        return ()
    return (("GOOGLE_APPLICATION_CREDENTIALS", given),)


def kubeconfig(
    cluster_name: str,
    endpoint: str,
    ca_certificate: str,
    env: tuple[tuple[str, str], ...] = (),
) -> str:
    """A kubeconfig that authenticates with ``gke-gcloud-auth-plugin`` (no static credentials)
    as the provider does: from Application Default Credentials (``adc_env``), not gcloud's
    active account (the plugin's flag: kubernetes/cloud-provider-gcp
    cmd/gke-gcloud-auth-plugin ``use_application_default_credentials``)."""
    exec_block: dict[str, Any] = {
        "command": "gke-gcloud-auth-plugin",
        "args": ["--use_application_default_credentials"],
        "installHint": "Install gke-gcloud-auth-plugin: https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl",
        "provideClusterInfo": True,
    }
    if env:
        exec_block["env"] = [{"name": k, "value": v} for k, v in env]
    return exec_kubeconfig(cluster_name, f"https://{endpoint}", ca_certificate, exec_block)
