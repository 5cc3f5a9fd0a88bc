"""Per-pool GKE rules: each function checks one concern and cites where GKE states it.

Driver and sharing, reservations and DWS, provisioning and boot disks, auto-upgrade and
best-effort provisioning, compact placement, gVNIC, feature version gates and the machine types
this stack does not model.

Pure code; every problem goes to ``issues`` as ``<key path>: <reason>``.
"""

from __future__ import annotations

import math
from pathlib import Path

from infra.core.catalog.vendored import Catalog
from infra.core.config.gke import GkeGpuSpec, GkePoolSpec
from infra.core.errors import Issues, join_path
from infra.core.gke.series import MachineSeries, compact_placement_families, family_of
from infra.core.gke.versions import check_feature_version
from infra.core.sizing import GKE_DEFAULT_DISK_TYPE

# Boot-disk types GKE node pools accept
# (https://cloud.google.com/kubernetes-engine/docs/how-to/custom-boot-disks).
GKE_BOOT_DISK_TYPES = ("pd-balanced", "pd-standard", "pd-ssd", "hyperdisk-balanced")

_RESERVATION = {
    "none": "NO_RESERVATION",
    "any": "ANY_RESERVATION",
    "specific": "SPECIFIC_RESERVATION",
}


def check_driver(
    gpu: GkeGpuSpec, spec: GkePoolSpec, path: str, operator_on: bool, issues: Issues
) -> None:
    """Driver mode vs node image and the operator switch."""
    dpath = join_path(path, "gpu", "driver")
    # LATEST is offered for COS only
    # (https://cloud.google.com/kubernetes-engine/docs/how-to/gpus#installing_drivers).
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
        # The operator's driver container builds on Ubuntu; COS has no compiler toolchain
        # (https://cloud.google.com/kubernetes-engine/docs/how-to/gpu-operator).
        if spec.image_type != "UBUNTU_CONTAINERD":
            issues.add(
                dpath,
                f"the GPU Operator can build its driver only on UBUNTU_CONTAINERD; "
                f"imageType is {spec.image_type}",
            )


def check_sharing(
    gpu: GkeGpuSpec,
    spec: GkePoolSpec,
    accelerator: str,
    path: str,
    operator_on: bool,
    catalog: Catalog,
    issues: Issues,
) -> None:
    """GKE's own MIG partitions / time-sharing vs the GPU and the operator's sharing."""
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


def reservation_affinity(
    spec: GkePoolSpec, spot: bool, path: str, issues: Issues
) -> tuple[str | None, str | None]:
    """(consumeReservationType, name) or (None, None) when no reservation is set, so GKE's
    default applies (it consumes matching reservations automatically;
    https://cloud.google.com/kubernetes-engine/docs/how-to/consuming-reservations)."""
    res = spec.reservation
    if res is None:
        # DWS pools are created with --reservation-affinity=none
        # (https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest).
        if spec.flex_start is not None or spec.queued_provisioning:
            return "NO_RESERVATION", None
        return None, None
    rpath = join_path(path, "reservation")
    if res.type == "specific" and not res.name:
        issues.add(join_path(rpath, "name"), "required when type is specific")
    if res.type != "specific" and res.name:
        issues.add(join_path(rpath, "name"), f"only used with type specific (type is {res.type})")
    # Spot VMs never consume reservations
    # (https://cloud.google.com/compute/docs/instances/reservations-consume).
    if spot and res.type != "none":
        issues.add(rpath, "spot VMs do not consume reservations; use type none or spot: false")
    # A reservation is a zonal resource (Compute API reservations.insert takes a zone; "Reservations
    # are zonal", https://cloud.google.com/compute/docs/instances/reservations-overview): nodes
    # that consume a specific one start only in its zone.
    if res.type == "specific" and (spec.zones is None or len(spec.zones) != 1):
        given = "none" if spec.zones is None else ", ".join(spec.zones)
        issues.add(
            join_path(path, "zones"),
            f"a specific reservation is in one zone, and a pool consuming it needs exactly that "
            f"zone (zones: {given}); for reservations in several zones, one pool per zone",
        )
    return _RESERVATION[res.type], res.name


def check_dws(spec: GkePoolSpec, spot: bool, rtype: str | None, path: str, issues: Issues) -> None:
    """Flex-start and queued provisioning (Dynamic Workload Scheduler) exclusions
    (https://cloud.google.com/kubernetes-engine/docs/concepts/dws)."""
    reserved = rtype not in (None, "NO_RESERVATION")
    if spec.flex_start is not None:
        fpath = join_path(path, "flexStart")
        if spot:
            issues.add(fpath, "flex-start and spot are exclusive")
        if reserved:
            issues.add(fpath, "flex-start needs reservation type none")
    if spec.queued_provisioning:
        qpath = join_path(path, "queuedProvisioning")
        if spec.min_nodes != 0:
            issues.add(qpath, f"queued provisioning needs minNodes 0 (got {spec.min_nodes})")
        if reserved:
            issues.add(qpath, "queued provisioning needs reservation type none")
        if spec.smoke_test:
            issues.add(
                join_path(path, "smokeTest"),
                "true: a queued provisioning pool gets nodes only through a ProvisioningRequest, "
                "so the smoke-test Job would stay Pending until its 30-minute deadline fails "
                "pulumi up; set smokeTest false or drop queuedProvisioning",
            )
        if spec.warm:
            # "nodes can be only obtained through queuing via the Cluster Autoscaler
            # ProvisioningRequest API" (container v1 NodePool.QueuedProvisioning.enabled).
            issues.add(
                join_path(path, "warm"),
                f"{spec.warm}: a queued provisioning pool gets nodes only through a "
                "ProvisioningRequest, so a warm placeholder would stay Pending and hold no node; "
                "set warm 0 or drop queuedProvisioning",
            )


def provisioning_mode(spec: GkePoolSpec, spot: bool, rtype: str | None) -> str:
    """How the pool's VMs are obtained, in the series table's vocabulary."""
    if spot:
        return "spot"
    if spec.flex_start is not None or spec.queued_provisioning:
        return "flex-start"
    if rtype in ("ANY_RESERVATION", "SPECIFIC_RESERVATION"):
        return "reservation"
    return "on-demand"


def check_provisioning(
    mode: str, machine_type: str, series: MachineSeries | None, path: str, issues: Issues
) -> None:
    """Capacity-limited machine types (A3 High 1g/2g/4g, A3 Ultra, A4 ...) are not sold on-demand
    (https://cloud.google.com/compute/docs/accelerator-optimized-machines)."""
    if series is None or mode in series.provisioning:
        return
    how = {
        "spot": "spot: true",
        "flex-start": "flexStart or queuedProvisioning",
        "reservation": "reservation: {type: any|specific}",
        "on-demand": "on-demand (no spot, reservation or flex-start)",
    }
    modes = [
        m for m in ("spot", "flex-start", "reservation", "on-demand") if m in series.provisioning
    ]
    issues.add(
        join_path(path, "machineType"),
        f"{machine_type} ({series.series}) is provisioned only with {', '.join(modes)}; "
        f"this pool asks for {mode}; use {' or '.join(how[m] for m in modes)}",
    )


def boot_disk(
    disk_type: str | None,
    machine_type: str,
    series: MachineSeries | None,
    path: str,
    issues: Issues,
) -> str:
    """The boot disk type: the series' default when omitted, else checked against the series."""
    allowed = series.boot_disk_types if series else GKE_BOOT_DISK_TYPES
    if disk_type is None:
        return allowed[0] if series else GKE_DEFAULT_DISK_TYPE
    if disk_type not in allowed:
        what = f"{series.series} ({machine_type})" if series else machine_type
        issues.add(
            join_path(path, "diskType"),
            f"{disk_type} is not a boot disk type of {what}; allowed: {', '.join(allowed)}",
        )
    return disk_type


def auto_upgrade(spec: GkePoolSpec, release_channel: str, path: str, issues: Issues) -> bool:
    """Node auto-upgrade: on unless the pool turns it off on a cluster without a release channel.

    GKE refuses off on a channel cluster: "Auto_upgrade cannot be false when release_channel
    REGULAR is set." (nkoson/gke-tutorial#8; https://cloud.google.com/kubernetes-engine/docs/concepts/release-channels).
    """
    if spec.auto_upgrade is False and release_channel != "UNSPECIFIED":
        issues.add(
            join_path(path, "autoUpgrade"),
            f"false is refused by GKE while cluster.releaseChannel is {release_channel} "
            f'("Auto_upgrade cannot be false when release_channel {release_channel} is set."); '
            "keep it on and hold upgrades with cluster.maintenance.exclusions, or set "
            "cluster.releaseChannel: UNSPECIFIED",
        )
    return spec.auto_upgrade is not False


def best_effort(spec: GkePoolSpec, zones: int, path: str, issues: Issues) -> int:
    """Initial nodes per zone. Best-effort provisioning acts on the nodes a pool is created with
    (https://cloud.google.com/kubernetes-engine/docs/how-to/provisioning-best-effort), so it
    needs minNodes > 0; without it pools start empty and the autoscaler sizes them."""
    be = spec.best_effort
    if be is None:
        return 0
    bpath = join_path(path, "bestEffort", "minNodes")
    if be.min_nodes > spec.max_nodes:
        issues.add(bpath, f"{be.min_nodes} is above maxNodes {spec.max_nodes}")
        return 0
    if spec.min_nodes == 0:
        issues.add(
            join_path(path, "bestEffort"),
            "never applies: best-effort provisioning acts on the nodes a pool is created with, "
            "and this pool starts at minNodes 0; set minNodes > 0 or drop bestEffort",
        )
        return 0
    if be.min_nodes > spec.min_nodes:
        issues.add(bpath, f"{be.min_nodes} is above minNodes {spec.min_nodes} (the nodes created)")
    per_zone = math.ceil(spec.min_nodes / max(zones, 1))
    # initialNodeCount is per zone: "In regional or multi-zonal clusters, this is the number of
    # nodes per zone" (terraform-provider-google container_node_pool initial_node_count docs).
    if per_zone * zones > spec.max_nodes:
        issues.add(
            join_path(path, "zones"),
            f"best-effort pools start with {per_zone} node(s) per zone (initialNodeCount is per "
            f"zone): {zones} zones x {per_zone} = {per_zone * zones} nodes, above maxNodes "
            f"{spec.max_nodes}; name at most {spec.max_nodes // per_zone} zone(s) or raise maxNodes",
        )
    return per_zone


# Compact placement with DWS flex-start: "only supported for A3 Ultra, A4, and H4D machine types"
# (GoogleCloudPlatform/cluster-toolkit#5737, modules/compute/gke-node-pool/main.tf precondition).
_FLEX_COMPACT_PREFIXES = ("a3-ultragpu-", "a4-", "h4d-")


# A4X (GB200 NVL72) nodes need what this stack does not model: "You must use the reservation-bound
# provisioning model" and a workload policy (AI Hypercomputer, "Create an AI-optimized MIG with
# A4X", https://cloud.google.com/ai-hypercomputer/docs/create/create-mig-with-a4x), and GPUDirect
# RDMA over GKE multi-networking (gvnic-1, rdma-0..rdma-3 Network/GKENetworkParamSet pairs,
# https://docs.nvidia.com/aicr/integrator-guide/gke-a-4-x-max-networking.md).
_UNMODELLED = {
    "a4x-": "A4X needs the reservation-bound provisioning model, a workload policy "
    "(HIGH_THROUGHPUT, accelerator topology) and RDMA networks over multi-networking, none of "
    "which this stack creates; create A4X node pools with Cluster Toolkit or the AI Hypercomputer "
    "A4X guide"
}


def refuse_unmodelled(machine_type: str, path: str, issues: Issues) -> None:
    for prefix, why in _UNMODELLED.items():
        if machine_type.startswith(prefix):
            issues.add(join_path(path, "machineType"), f"{machine_type!r}: {why}")


def check_compact(
    spec: GkePoolSpec,
    machine_type: str,
    zones: list[str],
    path: str,
    issues: Issues,
    notes: list[str],
    data_dir: Path,
) -> None:
    """COMPACT placement: on a family that takes it (``gce_compact_placement.csv`` of the catalog
    in ``data_dir``) (a family the table does not list is noted,
    not decided); one zone; never with queued provisioning; with flex-start only on A3 Ultra, A4
    and H4D."""
    cpath = join_path(path, "compactPlacement")
    family = family_of(machine_type)
    supported = compact_placement_families(data_dir).get(family)
    if supported is False:
        issues.add(
            cpath,
            f"{machine_type} ({family}) does not take a compact placement policy (Compute Engine: "
            '"Placement policy is not applicable to machine type"); drop compactPlacement',
        )
        return
    if supported is None:
        notes.append(
            f"{cpath}: the {family} family is not in gce_compact_placement.csv, so whether "
            f"{machine_type} takes a compact placement policy is not known here; Compute Engine "
            'refuses one it does not take ("Placement policy is not applicable to machine type") '
            "when the node pool is created"
        )
    # "placement_policy cannot be COMPACT when enable_queued_provisioning is true."
    # (GoogleCloudPlatform/cluster-toolkit modules/compute/gke-node-pool/main.tf @ 01a7a3ed)
    if spec.queued_provisioning:
        issues.add(
            cpath,
            "compact placement cannot be combined with queued provisioning; drop "
            "compactPlacement or queuedProvisioning",
        )
    elif spec.flex_start is not None and not machine_type.startswith(_FLEX_COMPACT_PREFIXES):
        issues.add(
            cpath,
            f"compact placement with flex-start is supported only on A3 Ultra, A4 and H4D "
            f"machine types, not {machine_type}; drop compactPlacement or flexStart",
        )
    elif len(zones) != 1:
        issues.add(
            cpath,
            f"a compact placement policy keeps nodes in one zone; the pool spans "
            f"{len(zones)} ({', '.join(zones)}); set zones to one zone",
        )


def check_versions(
    spec: GkePoolSpec, min_master: str | None, path: str, issues: Issues, data_dir: Path
) -> None:
    """Features of the pool against the GKE version gates (gke_feature_versions.csv of the
    catalog in ``data_dir``)."""
    if spec.flex_start is not None:
        at = join_path(path, "flexStart")
        check_feature_version(
            "flex-start", "flex-start GPU pools", min_master, at, issues, data_dir=data_dir
        )
    if spec.gpu.sharing is not None:
        mps = spec.gpu.sharing.strategy == "mps"
        check_feature_version(
            "mps" if mps else "time-sharing",
            "GPU sharing with NVIDIA MPS" if mps else "GPU time-sharing",
            min_master,
            join_path(path, "gpu", "sharing"),
            issues,
            data_dir=data_dir,
        )
    if spec.queued_provisioning:
        check_feature_version(
            "queued-provisioning",
            "queued provisioning (ProvisioningRequest)",
            min_master,
            join_path(path, "queuedProvisioning"),
            issues,
            data_dir=data_dir,
        )
    if spec.fallback:
        check_feature_version(
            "compute-class",
            "ComputeClass fallbacks",
            min_master,
            join_path(path, "fallback"),
            issues,
            data_dir=data_dir,
        )


def gvnic_of(spec: GkePoolSpec, path: str, issues: Issues) -> bool:
    """gVNIC: "GKE nodes must use a Container-Optimized OS node image"
    (https://cloud.google.com/kubernetes-engine/docs/how-to/using-gvnic#requirements)."""
    cos = spec.image_type == "COS_CONTAINERD"
    if spec.gvnic and not cos:
        issues.add(
            join_path(path, "gvnic"),
            f"gVNIC needs imageType COS_CONTAINERD (imageType is {spec.image_type}); "
            "omit gvnic or set it false",
        )
    return cos if spec.gvnic is None else spec.gvnic and cos
