"""GKE GPU node pools: each ``gpuPools`` entry decided, and the ComputeClasses chaining fallbacks.

Pure code. ``plan_pools`` turns ``gpuPools`` into ``GkePoolPlan``s and ``ComputeClassPlan``s; one
pool's machine and GPU shape come from ``shape``, its zones from ``zones`` and its per-pool rules
(capacity, disks, placement, version gates) from ``rules``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from infra.core.catalog.vendored import Catalog, GpuModel
from infra.core.config.gke import FallbackSpec, GkeGpuSpec, GkePoolSpec
from infra.core.errors import Issues, join_path
from infra.core.gke.autocreate import (
    auto_class,
    auto_created,
    check_auto_create,
    declared_version_note,
)
from infra.core.gke.model import (
    GPU_TAINT,
    NO_GKE_DEVICE_PLUGIN,
    ComputeClassPlan,
    GkePoolPlan,
    GpuDriverVersion,
)
from infra.core.gke.names import compute_class_name_problem, fallback_pool_name, fallback_shape
from infra.core.gke.rules import (
    auto_upgrade,
    best_effort,
    boot_disk,
    check_compact,
    check_driver,
    check_dws,
    check_provisioning,
    check_sharing,
    check_versions,
    gvnic_of,
    provisioning_mode,
    refuse_unmodelled,
    reservation_affinity,
)
from infra.core.gke.series import series_of
from infra.core.gke.shape import GpuShape, gpu_shape
from infra.core.gke.zones import pool_zones
from infra.core.labels import (
    GKE_ACCELERATOR_LABEL,
    GKE_COMPUTE_CLASS_LABEL,
    GKE_NODEPOOL_LABEL,
    POOL_LABEL,
    STACK_LABEL,
)
from infra.core.pools import PoolGroup, PoolHints, Taint
from infra.core.sharing import operator_node_labels, pool_mig, schedulable_gpus

_DRIVER_VERSION: dict[str, GpuDriverVersion] = {
    "gke-default": "DEFAULT",
    "gke-latest": "LATEST",
    "operator": "INSTALLATION_DISABLED",
}


def driver_version(driver: str, operator_on: bool) -> GpuDriverVersion:
    """gpuDriverInstallationConfig.gpuDriverVersion. With the GPU Operator on, GKE installs no
    driver: NVIDIA's GKE guide creates pools with gpu-driver-version=disabled and applies Google's
    installer DaemonSet for COS (infra.core.gke.driver_installer) or lets the operator build it
    (https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/google-gke.html)."""
    return "INSTALLATION_DISABLED" if operator_on else _DRIVER_VERSION[driver]


@dataclass
class PoolContext:
    """What every pool decision reads besides its own spec."""

    region: str
    cluster_zone: str | None  # set for a zonal cluster
    release_channel: str
    operator_on: bool
    catalog: Catalog
    issues: Issues
    notes: list[str] = field(default_factory=list)
    min_master_version: str | None = None
    existing: bool = False  # cluster.existing: the stack does not create the cluster
    # On a shared cluster every GPU node's stack label (infra.core.neighbours.stack_node_labels).
    stack_labels: Mapping[str, str] = field(default_factory=dict)


def plan_pools(
    specs: list[GkePoolSpec], ctx: PoolContext
) -> tuple[list[GkePoolPlan], list[ComputeClassPlan]]:
    """Every GPU pool (fallback alternatives as pools of their own) and the classes binding them."""
    pools: list[GkePoolPlan] = []
    classes: list[ComputeClassPlan] = []
    for i, spec in enumerate(specs):
        path = join_path("gpuPools", i)
        before = ctx.issues.count()
        if spec.auto_create:
            check_auto_create(
                spec,
                path,
                min_master=ctx.min_master_version,
                existing=ctx.existing,
                operator_on=ctx.operator_on,
                issues=ctx.issues,
                data_dir=ctx.catalog.data_dir,
            )
            if ctx.existing:
                ctx.notes.append(declared_version_note(path, ctx.min_master_version))
        main = plan_pool(spec, path, ctx)
        if main is None:
            continue
        if not spec.fallback and not spec.auto_create:
            if spec.active_migration:
                ctx.issues.add(
                    join_path(path, "activeMigration"),
                    "true without fallback or autoCreate: there is no ComputeClass whose "
                    "priorities a pod could migrate between",
                )
            pools.append(main)
            continue
        # Cross-GPU fallback: one pool per alternative, all bound to one ComputeClass; fixed
        # pools it names, or priorities GKE auto-creates pools from.
        cc = spec.name
        if (problem := compute_class_name_problem(cc)) is not None:
            ctx.issues.add(join_path(path, "name"), problem)
            continue
        group = [main]
        if not _check_distinct_fallbacks(spec, path, ctx.issues, ctx.catalog.data_dir):
            continue
        for j, fb in enumerate(spec.fallback or ()):
            fb_plan = _plan_fallback(spec, fb, j, path, ctx)
            if fb_plan is not None:
                group.append(fb_plan)
        bound = [_bind(p, cc) for p in group]
        if spec.auto_create:
            if ctx.issues.count() > before:
                continue
            bound = auto_created(bound)
            classes.append(auto_class(cc, bound, active_migration=spec.active_migration))
        else:
            names = tuple(p.name for p in group)
            classes.append(
                ComputeClassPlan(name=cc, pools=names, active_migration=spec.active_migration)
            )
        pools.extend(bound)
    _check_unique_names(pools, ctx.issues)
    return pools, classes


def _plan_fallback(
    spec: GkePoolSpec, fb: FallbackSpec, j: int, path: str, ctx: PoolContext
) -> GkePoolPlan | None:
    """A fallback alternative as a pool of its own: the main pool's labels, taints, image and
    driver, its own shape and capacity (reservation, flex-start, Spot, zones). Each priority of a
    ComputeClass is a node pool with its own provisioning; GKE's documented chain is reservation,
    then Spot, then on-demand
    (https://cloud.google.com/kubernetes-engine/docs/concepts/about-custom-compute-classes)."""
    name = fallback_pool_name(spec.name, fb, ctx.catalog.data_dir)
    # NodePool.name is at most 40 characters: longer names fail with HTTP 400
    # (GoogleCloudPlatform/magic-modules#18477: name_prefix capped at 31 + a 9-character suffix).
    if len(name) > 40:
        ctx.issues.add(
            join_path(path, "name"),
            f"{spec.name!r} is too long to name its fallback "
            f"pools ({name!r} exceeds GKE's 40 characters; at most 33 with fallbacks)",
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
            "reservation": fb.reservation,
            "flex_start": fb.flex_start,
            # Queued provisioning admits pods only through ProvisioningRequests, never through a
            # ComputeClass priority (https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest).
            "queued_provisioning": False,
            "max_nodes": fb.max_nodes or spec.max_nodes,
            "min_nodes": 0,  # the main pool holds the minimum; alternatives start empty
            "zones": fb.zones,  # None: the cluster's zone(s) offering the alternative's GPU
            "fallback": None,
            "best_effort": None,  # acts on initial nodes, which alternatives never have
            # Each alternative's disk defaults to its own series' (a G2 pool may fall back to N1).
            "disk_type": None,
        }
    )
    return plan_pool(fb_spec, join_path(path, "fallback", j), ctx)


def _check_distinct_fallbacks(spec: GkePoolSpec, path: str, issues: Issues, data_dir: Path) -> bool:
    """Fallback pools are named by their shape, so two entries of one shape would name one pool."""
    first: dict[str, int] = {}
    ok = True
    for j, fb in enumerate(spec.fallback or ()):
        shape = fallback_shape(fb, data_dir)
        if shape in first:
            issues.add(
                join_path(path, "fallback", j),
                f"same shape (machineType {fb.machine_type!r}, gpu, spot, reservation, flexStart) "
                f"as {join_path(path, 'fallback', first[shape])}: two identical fallbacks would be "
                "one node pool; remove one or merge their maxNodes/zones",
            )
            ok = False
        first.setdefault(shape, j)
    return ok


def _bind(pool: GkePoolPlan, compute_class: str) -> GkePoolPlan:
    """Bind a manual pool to a ComputeClass: the label selects it, the taint keeps others off
    (https://cloud.google.com/kubernetes-engine/docs/how-to/use-node-pools-compute-class)."""
    taint = Taint(GKE_COMPUTE_CLASS_LABEL, compute_class, "NoSchedule")
    labels = {**pool.labels, GKE_COMPUTE_CLASS_LABEL: compute_class}
    selector = {GKE_COMPUTE_CLASS_LABEL: compute_class}
    hints = replace(
        pool.hints,
        labels=labels,
        taints=(*pool.hints.taints, taint),
        # The class only: pinning one pool's accelerator would defeat the fallback.
        node_selector=selector,
        # The class is named after the gpuPools entry its pools are planned from.
        spec=compute_class,
        group=PoolGroup(compute_class, selector, taint),
    )
    return replace(
        pool, labels=labels, taints=(*pool.taints, taint), compute_class=compute_class, hints=hints
    )


@dataclass(frozen=True, slots=True)
class PoolDecisions:
    """The per-pool rule outcomes ``_assemble`` turns into a ``GkePoolPlan``."""

    zones: tuple[str, ...]
    reservation_type: str | None
    reservation_name: str | None
    local_ssd_count: int
    disk_type: str
    auto_upgrade: bool
    initial_node_count: int
    gvnic: bool


def plan_pool(spec: GkePoolSpec, path: str, ctx: PoolContext) -> GkePoolPlan | None:
    """Decide one pool; ``None`` (with issues recorded) when it cannot be built."""
    before = ctx.issues.count()
    shape = gpu_shape(spec.machine_type, spec.gpu, path, ctx.catalog, ctx.issues)
    if shape is None:
        return None
    decided = _decide(spec, shape, path, ctx)
    if ctx.issues.count() > before or not decided.zones:
        return None
    for key in spec.labels:
        if key in OWNED_LABELS:
            ctx.issues.add(join_path(path, "labels", key), OWNED_LABELS[key])
    labels = {**_labels(spec, ctx.operator_on), **ctx.stack_labels}
    taints = (GPU_TAINT, *(Taint(t.key, t.value, t.effect) for t in spec.taints))
    return _assemble(spec, shape, decided, labels, taints, ctx)


# Node labels GKE or gpu-infra set on every node of a pool: a pool's own value would be
# overwritten without a word (GKE: "Each node in the pool has a Kubernetes node label,
# cloud.google.com/gke-nodepool", node-pools concept; the accelerator label, gpus how-to).
OWNED_LABELS = {
    GKE_NODEPOOL_LABEL: "GKE sets it on every node to the node pool's name",
    GKE_ACCELERATOR_LABEL: "GKE sets it on every GPU node to the GPU type",
    GKE_COMPUTE_CLASS_LABEL: "set by gpu-infra on a pool of a ComputeClass, to the class's name",
    POOL_LABEL: "set by gpu-infra on every GPU pool, to the pool's name",
    STACK_LABEL: "set by gpu-infra on every GPU pool of a cluster it does not own, to the stack",
}


def _decide(spec: GkePoolSpec, shape: GpuShape, path: str, ctx: PoolContext) -> PoolDecisions:
    """Run every per-pool rule (each records its own issues) and keep what the plan needs."""
    issues, gpu, spot = ctx.issues, spec.gpu, spec.spot
    machine = shape.machine
    zones = pool_zones(spec, machine, shape.accelerator, shape.count, path, ctx)
    check_driver(gpu, spec, path, ctx.operator_on, issues)
    check_sharing(gpu, spec, shape.accelerator, path, ctx.operator_on, ctx.catalog, issues)
    rtype, rname = reservation_affinity(spec, spot, path, issues)
    check_dws(spec, spot, rtype, path, issues)
    refuse_unmodelled(machine.name, path, issues)
    series = series_of(machine.name, ctx.catalog.data_dir)
    check_provisioning(provisioning_mode(spec, spot, rtype), machine.name, series, path, issues)
    disk_type = boot_disk(spec.disk_type, machine.name, series, path, issues)
    upgrade = auto_upgrade(spec, ctx.release_channel, path, issues)
    initial = best_effort(spec, len(zones), path, issues)
    if spec.compact_placement:
        check_compact(spec, machine.name, zones, path, issues, ctx.notes, ctx.catalog.data_dir)
    check_versions(spec, ctx.min_master_version, path, issues, ctx.catalog.data_dir)
    gvnic = gvnic_of(spec, path, issues)
    # "You must use the Container-Optimized OS with containerd node image"
    # (https://cloud.google.com/kubernetes-engine/docs/how-to/image-streaming#requirements).
    if spec.image_streaming and spec.image_type != "COS_CONTAINERD":
        issues.add(
            join_path(path, "imageStreaming"),
            f"image streaming needs imageType COS_CONTAINERD (imageType is {spec.image_type})",
        )
    return PoolDecisions(
        zones=tuple(zones),
        reservation_type=rtype,
        reservation_name=rname,
        # Bundled Local SSDs become node ephemeral storage (emptyDir, image layers)
        # (https://cloud.google.com/kubernetes-engine/docs/how-to/persistent-volumes/local-ssd).
        local_ssd_count=series.local_ssd_count if series else 0,
        disk_type=disk_type,
        auto_upgrade=upgrade,
        initial_node_count=initial,
        gvnic=gvnic,
    )


def _labels(spec: GkePoolSpec, operator_on: bool) -> dict[str, str]:
    labels = {**spec.labels, POOL_LABEL: spec.name}
    if operator_on:
        # The label turns GKE's device plugin off so the operator's is the only one (NVIDIA
        # cloud-native-docs gpu-operator/google-gke.rst); the driver comes from Google's installer
        # DaemonSet (COS) or the operator (Ubuntu), never from GKE (see driver_version).
        labels[NO_GKE_DEVICE_PLUGIN] = "true"
        # Per-pool device-plugin (time-slicing) and MIG-manager configs are picked by node label.
        labels.update(operator_node_labels(spec, gpu_present=True))
    return labels


def _hints(
    spec: GkePoolSpec,
    shape: GpuShape,
    labels: dict[str, str],
    taints: tuple[Taint, ...],
    model: GpuModel,
    data_dir: Path,
) -> PoolHints:
    name, gpu = spec.name, spec.gpu
    return PoolHints(
        name=name,
        gpu_type=shape.accelerator,
        gpu_model=model.model,
        gpus_per_node=shape.count,
        vcpus=shape.machine.vcpus,
        memory_gib=shape.machine.memory_gib,
        node_image=spec.image_type,
        driver=gpu.driver,
        node_selector={GKE_NODEPOOL_LABEL: name, GKE_ACCELERATOR_LABEL: shape.accelerator},
        labels=labels,
        taints=taints,
        spot=spec.spot,
        min_nodes=spec.min_nodes,
        max_nodes=spec.max_nodes,
        mig_profiles=model.mig_profiles,
        mig=pool_mig(model.model, shape.accelerator, data_dir),
    )


def _assemble(
    spec: GkePoolSpec,
    shape: GpuShape,
    d: PoolDecisions,
    labels: dict[str, str],
    taints: tuple[Taint, ...],
    ctx: PoolContext,
) -> GkePoolPlan:
    gpu, machine, rtype = spec.gpu, shape.machine, d.reservation_type
    queued_or_flex = spec.flex_start is not None or spec.queued_provisioning
    model = ctx.catalog.gcp_model(shape.accelerator)
    clients = gpu.sharing.max_shared_clients_per_gpu if gpu.sharing else None
    return GkePoolPlan(
        name=spec.name,
        machine_type=machine.name,
        vcpus=machine.vcpus,
        memory_gib=machine.memory_gib,
        accelerator=shape.accelerator,
        accelerator_count=shape.count,
        driver_version=driver_version(gpu.driver, ctx.operator_on),
        image_type=spec.image_type,
        node_locations=d.zones,
        total_min=spec.min_nodes,
        total_max=spec.max_nodes,
        spot=spec.spot,
        labels=labels,
        taints=taints,
        auto_upgrade=d.auto_upgrade,
        disk_type=d.disk_type,
        schedulable_gpus=schedulable_gpus(
            shape.count, gpu.partition_size, clients, model.mig_profiles
        ),
        sharing_strategy=("TIME_SHARING" if gpu.sharing.strategy == "time-sharing" else "MPS")
        if gpu.sharing
        else None,
        max_shared_clients_per_gpu=clients,
        partition_size=gpu.partition_size,
        reservation_type=rtype,
        reservation_name=d.reservation_name,
        flex_start=spec.flex_start is not None,
        max_run_duration=spec.flex_start.max_run_duration if spec.flex_start else None,
        queued_provisioning=spec.queued_provisioning,
        best_effort_min_nodes=spec.best_effort.min_nodes if spec.best_effort else None,
        initial_node_count=d.initial_node_count,
        # Flex-start and queued nodes are not repaired in place; GKE's DWS examples create these
        # pools with --no-enable-autorepair (https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest).
        auto_repair=not queued_or_flex,
        # Flex/queued pools get GKE's SHORT_LIVED strategy: "the dedicated upgrade strategy for
        # QueuedProvisioning and flex start node pools" (NodePoolUpdateStrategy, REST v1), so no
        # upgradeSettings is sent (crossplane-contrib/provider-upjet-gcp#1028: perpetual diff).
        # Surge nodes of a SPECIFIC-reservation pool need reservation capacity
        # (https://cloud.google.com/kubernetes-engine/docs/how-to/node-upgrades-quota): no surge.
        max_surge=None if queued_or_flex else 0 if rtype == "SPECIFIC_RESERVATION" else 1,
        max_unavailable=None if queued_or_flex else 1 if rtype == "SPECIFIC_RESERVATION" else 0,
        disk_size_gb=spec.disk_size_gb,
        local_ssd_count=d.local_ssd_count,
        compact_placement=spec.compact_placement,
        gvnic=d.gvnic,
        image_streaming=spec.image_streaming,
        # The operator's driver is an unsigned DKMS module that secure boot refuses to load; COS
        # drivers (GKE's or Google's installer DaemonSet, both cos-gpu-installer) come with
        # Google's module signatures, so COS pools keep secure boot (cos.googlesource.com/cos/tools
        # src/cmd/cos_gpu_installer/internal/signing).
        secure_boot=gpu.driver != "operator",
        hints=_hints(spec, shape, labels, taints, model, ctx.catalog.data_dir),
    )


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
