"""GKE planning: validate every GPU pool against the catalog and decide its exact shape.

Pure code. ``plan_gke`` turns the parsed stack into a ``GkePlan`` that the GKE component maps 1:1 onto
``gcp.container.Cluster`` / ``NodePool`` and a ComputeClass; every rule of reference gke.md §3, §5, §7
and §8 is checked here, before any API call.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from infra.core.catalog import Catalog, GcpMachine
from infra.core.config import StackConfig, gcp_region_of
from infra.core.config_gke import FallbackSpec, GkeClusterSpec, GkeGpuSpec, GkePoolSpec
from infra.core.errors import Issues, join_path
from infra.core.kubeconfig import exec_kubeconfig
from infra.core.pools import PoolHints, Taint
from infra.core.rules import gpu_type_hint
from infra.core.sharing import operator_node_labels

# GKE only adds this taint when a non-GPU pool already exists, so creation order would decide it
# and providers would see drift; declare it always (gke.md §8.3, terraform-provider-google#7928).
GPU_TAINT = Taint("nvidia.com/gpu", "present", "NoSchedule")

# With this label GKE does not deploy its own device plugin, so the GPU Operator's is the only
# nvidia.com/gpu advertiser (https://cloud.google.com/kubernetes-engine/docs/how-to/gpu-operator).
NO_GKE_DEVICE_PLUGIN = "gke-no-default-nvidia-gpu-device-plugin"

POOL_LABEL = "gpu-infra/pool"
COMPUTE_CLASS_LABEL = "cloud.google.com/compute-class"

_DRIVER_VERSION = {
    "gke-default": "DEFAULT",
    "gke-latest": "LATEST",
    "operator": "INSTALLATION_DISABLED",
}

# Machine families whose GPUs are built in (type and count follow from the machine type).
_BUNDLED_FAMILIES = ("a2", "a3", "a4", "g2", "g4")

# Without devstorage.read_only (or cloud-platform) the driver installer cannot fetch its binaries
# (gke.md §8.1); cloud-platform lets IAM on the node service account be the only gate.
NODE_SCOPES = ("https://www.googleapis.com/auth/cloud-platform",)

# Least-privilege node identity: GKE's purpose-built role plus image pulls from Artifact Registry.
# https://cloud.google.com/kubernetes-engine/docs/how-to/hardening-your-cluster#use_least_privilege_sa
NODE_SA_ROLES = ("roles/container.defaultNodeServiceAccount", "roles/artifactregistry.reader")

_RESERVATION = {
    "none": "NO_RESERVATION",
    "any": "ANY_RESERVATION",
    "specific": "SPECIFIC_RESERVATION",
}
RESERVATION_KEY = "compute.googleapis.com/reservation-name"


@dataclass(frozen=True, slots=True, kw_only=True)
class GkePoolPlan:
    """One GKE node pool, fully decided. Field names follow ``gcp.container.NodePool`` arguments."""

    name: str
    machine_type: str
    vcpus: int
    memory_gib: float
    accelerator: str
    accelerator_count: int
    driver_version: Literal["DEFAULT", "LATEST", "INSTALLATION_DISABLED"]
    image_type: str
    node_locations: tuple[str, ...]
    total_min: int
    total_max: int
    spot: bool
    labels: Mapping[str, str]
    taints: tuple[Taint, ...]
    sharing_strategy: Literal["TIME_SHARING", "MPS"] | None = None
    max_shared_clients_per_gpu: int | None = None
    partition_size: str | None = None
    reservation_type: str = "NO_RESERVATION"
    reservation_name: str | None = None
    flex_start: bool = False
    max_run_duration: str | None = None
    queued_provisioning: bool = False
    best_effort_min_nodes: int | None = None
    auto_upgrade: bool = False
    auto_repair: bool = True
    max_surge: int = 1
    max_unavailable: int = 0
    disk_size_gb: int = 100
    disk_type: str = "pd-balanced"
    compute_class: str | None = None
    secure_boot: bool = True
    hints: PoolHints


@dataclass(frozen=True, slots=True, kw_only=True)
class ComputeClassPlan:
    """A ``cloud.google.com/v1`` ComputeClass whose priorities are the pools, in fallback order."""

    name: str
    pools: tuple[str, ...]

    def manifest(self) -> dict[str, Any]:
        """The ComputeClass spec: one ``nodepools`` rule per pool, tried in order."""
        return {
            # Each rule names one manual pool; no other fields may sit next to `nodepools`.
            "priorities": [{"nodepools": [p]} for p in self.pools],
            # Explicit on purpose: the default changed to DoNotScaleUp in GKE 1.33 (gke.md §5.3).
            "whenUnsatisfiable": "DoNotScaleUp",
            "nodePoolAutoCreation": {"enabled": False},
        }


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
    node_sa_id: str
    system_machine_type: str
    system_min: int
    system_max: int


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


def plan_gke(config: StackConfig, catalog: Catalog, issues: Issues) -> GkePlan:
    """Validate and decide the GKE cluster and its GPU pools; problems go to ``issues``."""
    cluster: GkeClusterSpec = config.cluster
    project = config.project or ""
    region = config.region or ""
    operator_on = config.operator.enabled
    pools: list[GkePoolPlan] = []
    classes: list[ComputeClassPlan] = []
    for i, spec in enumerate(config.pools):
        path = join_path("gpuPools", i)
        main = _plan_pool(spec, path, region, catalog, operator_on, issues)
        if main is None:
            continue
        if not spec.fallback:
            pools.append(main)
            continue
        # Cross-GPU fallback: one manual pool per alternative, all bound to one ComputeClass.
        cc = spec.name
        group = [main]
        for j, fb in enumerate(spec.fallback):
            fb_plan = _plan_fallback(spec, fb, j, path, region, catalog, operator_on, issues)
            if fb_plan is not None:
                group.append(fb_plan)
        pools.extend(_bind(p, cc) for p in group)
        classes.append(ComputeClassPlan(name=cc, pools=tuple(p.name for p in group)))
    _check_unique_names(pools, issues)
    return GkePlan(
        project=project,
        region=region,
        cluster=GkeClusterPlan(
            name=cluster.name,
            location=cluster.location,
            existing=cluster.existing,
            release_channel=cluster.release_channel,
            min_master_version=cluster.min_master_version,
            deletion_protection=cluster.deletion_protection,
            network=cluster.network,
            subnetwork=cluster.subnetwork,
            workload_pool=f"{project}.svc.id.goog",
            # Service-account ids are 6-30 characters.
            node_sa_id=f"{cluster.name[:20]}-gpu-nodes".replace("--", "-"),
            system_machine_type=cluster.system_pool.machine_type,
            system_min=cluster.system_pool.min_nodes,
            system_max=cluster.system_pool.max_nodes,
        ),
        pools=tuple(pools),
        compute_classes=tuple(classes),
    )


def _plan_fallback(
    spec: GkePoolSpec,
    fb: FallbackSpec,
    j: int,
    path: str,
    region: str,
    catalog: Catalog,
    operator_on: bool,
    issues: Issues,
) -> GkePoolPlan | None:
    """A fallback alternative as a pool of its own: the main pool's settings, its own shape."""
    name = f"{spec.name}-fb{j + 1}"
    if len(name) > 40:
        issues.add(
            join_path(path, "name"),
            f"{spec.name!r} is too long to name its fallback "
            f"pools ({name!r} exceeds GKE's 40 characters)",
        )
        return None
    gpu = fb.gpu or GkeGpuSpec()
    if "driver" not in gpu.model_fields_set:
        gpu = gpu.model_copy(update={"driver": spec.gpu.driver})
    fb_spec = spec.model_copy(
        update={
            "name": name,
            "machine_type": fb.machine_type,
            "gpu": gpu,
            "spot": fb.spot,
            "max_nodes": fb.max_nodes or spec.max_nodes,
            "min_nodes": 0,  # the main pool holds the minimum; alternatives start empty
            "zones": None,  # every zone offering the alternative's GPU
            "fallback": None,
        }
    )
    return _plan_pool(fb_spec, join_path(path, "fallback", j), region, catalog, operator_on, issues)


def _bind(pool: GkePoolPlan, compute_class: str) -> GkePoolPlan:
    """Bind a manual pool to a ComputeClass: the label selects it, the taint keeps others off."""
    taint = Taint(COMPUTE_CLASS_LABEL, compute_class, "NoSchedule")
    labels = {**pool.labels, COMPUTE_CLASS_LABEL: compute_class}
    hints = replace(
        pool.hints,
        labels=labels,
        taints=(*pool.hints.taints, taint),
        node_selector={COMPUTE_CLASS_LABEL: compute_class},
    )
    return replace(
        pool, labels=labels, taints=(*pool.taints, taint), compute_class=compute_class, hints=hints
    )


def _plan_pool(
    spec: GkePoolSpec,
    path: str,
    region: str,
    catalog: Catalog,
    operator_on: bool,
    issues: Issues,
) -> GkePoolPlan | None:
    """Decide one pool; ``None`` (with issues recorded) when its GPU shape is invalid."""
    before = issues.count()
    name, gpu, spot, max_nodes = spec.name, spec.gpu, spec.spot, spec.max_nodes
    shape = _gpu_shape(spec.machine_type, gpu, path, catalog, issues)
    if shape is None:
        return None
    machine, accelerator, count = shape
    zones = _zones(spec, machine, accelerator, count, path, region, catalog, issues)
    _check_driver(gpu, spec, path, operator_on, issues)
    _check_sharing(gpu, spec, accelerator, path, operator_on, catalog, issues)
    reservation_type, reservation_name = _check_capacity(spec, spot, path, issues)
    if issues.count() > before or not zones:
        return None

    labels = {**spec.labels, POOL_LABEL: name}
    if operator_on:
        # The operator runs the device plugin; with gke-default/latest GKE still installs the driver
        # underneath (NVIDIA aicr gke-cos recipe: "GKE preinstalls NVIDIA drivers on COS").
        labels[NO_GKE_DEVICE_PLUGIN] = "true"
        # Per-pool device-plugin (time-slicing) and MIG-manager configs are picked by node label.
        labels.update(operator_node_labels(spec))
    taints = (GPU_TAINT, *(Taint(t.key, t.value, t.effect) for t in spec.taints))
    queued_or_flex = spec.flex_start is not None or spec.queued_provisioning
    model = catalog.gcp_model(accelerator)
    hints = PoolHints(
        name=name,
        platform="gke",
        gpu_type=accelerator,
        gpu_model=model.model,
        gpus_per_node=count,
        vcpus=machine.vcpus,
        memory_gib=machine.memory_gib,
        node_image=spec.image_type,
        driver=gpu.driver,
        node_selector={
            "cloud.google.com/gke-nodepool": name,
            "cloud.google.com/gke-accelerator": accelerator,
        },
        labels=labels,
        taints=taints,
        spot=spot,
        min_nodes=spec.min_nodes,
        max_nodes=max_nodes,
        mig_profiles=model.mig_profiles,
        gke_sharing=gpu.sharing is not None or gpu.partition_size is not None,
    )
    return GkePoolPlan(
        name=name,
        machine_type=machine.name,
        vcpus=machine.vcpus,
        memory_gib=machine.memory_gib,
        accelerator=accelerator,
        accelerator_count=count,
        driver_version=_DRIVER_VERSION[gpu.driver],  # type: ignore[arg-type]
        image_type=spec.image_type,
        node_locations=tuple(zones),
        total_min=spec.min_nodes,
        total_max=max_nodes,
        spot=spot,
        labels=labels,
        taints=taints,
        sharing_strategy=("TIME_SHARING" if gpu.sharing.strategy == "time-sharing" else "MPS")
        if gpu.sharing
        else None,
        max_shared_clients_per_gpu=gpu.sharing.max_shared_clients_per_gpu if gpu.sharing else None,
        partition_size=gpu.partition_size,
        reservation_type=reservation_type,
        reservation_name=reservation_name,
        flex_start=spec.flex_start is not None,
        max_run_duration=spec.flex_start.max_run_duration if spec.flex_start else None,
        queued_provisioning=spec.queued_provisioning,
        best_effort_min_nodes=spec.best_effort.min_nodes if spec.best_effort else None,
        auto_upgrade=spec.auto_upgrade,
        # Flex-start and queued nodes are not repaired in place (gke.md §5.5, cluster-toolkit).
        auto_repair=not queued_or_flex,
        # Surge needs one extra node's capacity (and quota); flex/queued nodes cannot surge.
        max_surge=0 if queued_or_flex else 1,
        max_unavailable=1 if queued_or_flex else 0,
        disk_size_gb=spec.disk_size_gb,
        disk_type=spec.disk_type,
        # The operator's driver is an unsigned DKMS module that secure boot refuses to load.
        secure_boot=gpu.driver != "operator",
        hints=hints,
    )


def _gpu_shape(
    machine_type: str,
    gpu: GkeGpuSpec,
    path: str,
    catalog: Catalog,
    issues: Issues,
) -> tuple[GcpMachine, str, int] | None:
    """Resolve (machine, accelerator, count) per gke.md §7, or record why it cannot carry the GPU."""
    mt_path = join_path(path, "machineType")
    family = machine_type.split("-", 1)[0]
    machine = catalog.gcp_machine(machine_type)
    gpu_path = join_path(path, "gpu")
    if gpu.type is not None and gpu.type not in catalog.gcp_accelerators():
        issues.add(
            join_path(gpu_path, "type"),
            f"{gpu.type!r} is not a known GPU type"
            f"{gpu_type_hint(gpu.type, catalog.gcp_accelerators())}; "
            f"known: {', '.join(catalog.gcp_accelerators())}",
        )
        return None
    if family in _BUNDLED_FAMILIES:
        if machine is None or machine.accelerator is None:
            issues.add(
                mt_path,
                f"{machine_type!r} is not a known GPU machine type of the "
                f"{family} family in the catalog",
            )
            return None
        acc, cnt = machine.accelerator, machine.accelerator_count or 1
        if gpu.type is not None and gpu.type != acc:
            issues.add(
                join_path(gpu_path, "type"),
                f"{machine_type} comes with {acc}, not {gpu.type}; omit gpu.type or use {acc}",
            )
        if gpu.count is not None and gpu.count != cnt:
            issues.add(
                join_path(gpu_path, "count"),
                f"{machine_type} comes with {cnt}x {acc}; the count is fixed by the machine "
                f"type (got {gpu.count})",
            )
        return machine, acc, cnt
    if gpu.type is None:
        issues.add(
            join_path(gpu_path, "type"),
            f"required for {machine_type!r}: only a2/a3/a4/g2/g4 machine types imply their GPU",
        )
        return None
    limits = catalog.gcp_attach_limits(gpu.type)
    if not limits:
        hosts = sorted({m.name.rsplit("-", 1)[0] for m in catalog.gcp_machines_with(gpu.type)})
        issues.add(
            join_path(gpu_path, "type"),
            f"{gpu.type} cannot be attached to {machine_type}; it comes only built into "
            f"{', '.join(h + '-*' for h in hosts) or 'other machine types'}",
        )
        return None
    if family != "n1":
        issues.add(
            mt_path,
            f"{machine_type!r} cannot carry {gpu.type}: attached GPUs need an N1 "
            "machine type (n1-standard-*, n1-highmem-*, n1-highcpu-*)",
        )
        return None
    if machine is None:
        issues.add(mt_path, f"{machine_type!r} is not a known N1 machine type")
        return None
    count = gpu.count or 1
    if count not in limits:
        issues.add(
            join_path(gpu_path, "count"),
            f"{count} is not an allowed count of {gpu.type} on N1; allowed: "
            f"{', '.join(str(c) for c in sorted(limits))}",
        )
        return None
    lim = limits[count]
    if machine.vcpus > lim.max_vcpus or machine.memory_gib > lim.max_memory_gb:
        issues.add(
            mt_path,
            f"{machine_type} ({machine.vcpus} vCPUs, {machine.memory_gib:g} GB) is "
            f"too large for {count}x {gpu.type}: at most {lim.max_vcpus} vCPUs and "
            f"{lim.max_memory_gb} GB",
        )
        return None
    return machine, gpu.type, count


def _zones(
    spec: GkePoolSpec,
    machine: GcpMachine,
    accelerator: str,
    count: int,
    path: str,
    region: str,
    catalog: Catalog,
    issues: Issues,
) -> list[str]:
    """The pool's node locations: the given zones, each checked, or every zone that can host it."""
    offered = [
        z
        for z in catalog.gcp_zones_offering(accelerator, region, count)
        if machine.zones is None or z in machine.zones
    ]
    what = (
        f"{machine.name} with {count}x {accelerator}"
        if machine.accelerator is None
        else machine.name
    )
    if spec.zones is None:
        if not offered:
            elsewhere = catalog.gcp_regions_offering(accelerator)
            issues.add(
                join_path(path, "machineType"),
                f"no zone of {region} offers {what}; regions offering {accelerator}: "
                f"{', '.join(elsewhere) or 'none'}",
            )
        return offered
    if not spec.zones:
        issues.add(
            join_path(path, "zones"),
            "must not be empty; omit it to use every zone offering the GPU",
        )
    short = ", ".join(_short(offered))
    for k, zone in enumerate(spec.zones):
        split = gcp_region_of(zone)
        zpath = join_path(path, "zones", k)
        if split is None or split[1] is None:
            issues.add(zpath, f"{zone!r} is not a GCP zone such as {region}-a")
        elif split[0] != region:
            issues.add(zpath, f"{zone} is not in region {region} (cluster.location)")
        elif zone not in offered:
            issues.add(zpath, f"{zone} does not offer {what} (offered: {short or 'none'})")
    if len(set(spec.zones)) != len(spec.zones):
        issues.add(join_path(path, "zones"), "lists a zone twice")
    return [z for z in spec.zones if z in offered]


def _short(zones: list[str]) -> list[str]:
    """``us-central1-a, -b, -c`` style, as in the contract's example message."""
    return [z if i == 0 else "-" + z.rsplit("-", 1)[1] for i, z in enumerate(zones)]


def _check_driver(
    gpu: GkeGpuSpec, spec: GkePoolSpec, path: str, operator_on: bool, issues: Issues
) -> None:
    dpath = join_path(path, "gpu", "driver")
    if gpu.driver == "gke-latest" and spec.image_type != "COS_CONTAINERD":
        issues.add(
            dpath,
            f"gke-latest is COS-only; imageType is {spec.image_type} "
            "(use gke-default, or imageType COS_CONTAINERD)",
        )
    if gpu.driver == "operator":
        if not operator_on:
            issues.add(
                dpath,
                "operator means the GPU Operator installs the driver, but "
                "gpuOperator.enabled is false",
            )
        if spec.image_type != "UBUNTU_CONTAINERD":
            issues.add(
                dpath,
                f"the GPU Operator can build its driver only on UBUNTU_CONTAINERD; "
                f"imageType is {spec.image_type} (gke.md §8.2)",
            )


def _check_sharing(
    gpu: GkeGpuSpec,
    spec: GkePoolSpec,
    accelerator: str,
    path: str,
    operator_on: bool,
    catalog: Catalog,
    issues: Issues,
) -> None:
    gpath = join_path(path, "gpu")
    if gpu.partition_size is not None:
        profiles = catalog.gcp_model(accelerator).mig_profiles
        if not profiles:
            issues.add(
                join_path(gpath, "partitionSize"), f"{accelerator} does not support MIG partitions"
            )
        elif gpu.partition_size not in profiles:
            issues.add(
                join_path(gpath, "partitionSize"),
                f"{gpu.partition_size!r} is not a MIG profile of {accelerator}; "
                f"allowed: {', '.join(profiles)}",
            )
    gke_on = gpu.sharing is not None or gpu.partition_size is not None
    if gke_on and (spec.sharing is not None or spec.mig is not None):
        which = "sharing" if spec.sharing is not None else "mig"
        issues.add(
            join_path(path, which),
            "GKE's own gpu.sharing/gpu.partitionSize and the "
            "operator's sharing/mig are exclusive on one pool; keep one",
        )
    elif gke_on and operator_on:
        issues.add(
            join_path(gpath, "sharing" if gpu.sharing else "partitionSize"),
            "GKE's sharing and partitioning are done by GKE's device plugin, which is off on "
            "pools of a stack with gpuOperator.enabled; use the pool's sharing/mig instead",
        )


def _check_capacity(
    spec: GkePoolSpec, spot: bool, path: str, issues: Issues
) -> tuple[str, str | None]:
    """Cross-field rules for spot, reservations, flex-start and queued provisioning (gke.md §5.5)."""
    res = spec.reservation
    rtype = _RESERVATION[res.type] if res else "NO_RESERVATION"
    rname = res.name if res else None
    if res is not None:
        rpath = join_path(path, "reservation")
        if res.type == "specific" and not res.name:
            issues.add(join_path(rpath, "name"), "required when type is specific")
        if res.type != "specific" and res.name:
            issues.add(
                join_path(rpath, "name"), f"only used with type specific (type is {res.type})"
            )
        if spot and res.type != "none":
            issues.add(rpath, "spot VMs do not consume reservations; use type none or spot: false")
        if res.type == "specific" and spec.zones is None:
            issues.add(
                join_path(path, "zones"),
                "required with a specific reservation: name the "
                "zones where the reservation has capacity",
            )
    if spec.flex_start is not None:
        fpath = join_path(path, "flexStart")
        if spot:
            issues.add(fpath, "flex-start and spot are exclusive")
        if rtype != "NO_RESERVATION":
            issues.add(fpath, "flex-start needs reservation type none")
    if spec.queued_provisioning:
        qpath = join_path(path, "queuedProvisioning")
        if spec.min_nodes != 0:
            issues.add(qpath, f"queued provisioning needs minNodes 0 (got {spec.min_nodes})")
        if rtype != "NO_RESERVATION":
            issues.add(qpath, "queued provisioning needs reservation type none")
    if spec.best_effort is not None and spec.best_effort.min_nodes > spec.max_nodes:
        issues.add(
            join_path(path, "bestEffort", "minNodes"),
            f"{spec.best_effort.min_nodes} is above maxNodes {spec.max_nodes}",
        )
    return rtype, rname


def _check_unique_names(pools: list[GkePoolPlan], issues: Issues) -> None:
    seen: set[str] = set()
    for p in pools:
        if p.name in seen:
            issues.add(
                "gpuPools",
                f"two pools would be named {p.name!r} (a fallback pool name "
                "collides with a pool); rename one",
            )
        seen.add(p.name)


def kubeconfig(cluster_name: str, endpoint: str, ca_certificate: str) -> str:
    """A kubeconfig that authenticates with ``gke-gcloud-auth-plugin`` (no static credentials)."""
    return exec_kubeconfig(
        cluster_name,
        f"https://{endpoint}",
        ca_certificate,
        {
            "command": "gke-gcloud-auth-plugin",
            "installHint": "Install gke-gcloud-auth-plugin: https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl",
            "provideClusterInfo": True,
        },
    )
