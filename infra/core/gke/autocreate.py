"""GKE node pool auto-creation (``gpuPools[].autoCreate``): a ComputeClass GKE creates pools from.

Pure code. The pool and its fallbacks are planned as fixed pools are (shape, zones, capacity,
labels, taints, cost, quota) and bound to one ComputeClass; instead of NodePools the class gets
one priority per pool and ``nodePoolAutoCreation.enabled``
(https://cloud.google.com/kubernetes-engine/docs/how-to/node-auto-provisioning). The field names
and enums are the ComputeClass CRD's (cloud.google.com/v1,
https://cloud.google.com/kubernetes-engine/docs/reference/crds/computeclass).

Cluster-level node auto-provisioning is enabled only below the version where a ComputeClass
auto-creates pools without it, and only on a cluster this stack creates (``nap``): its resource
limits are cluster-wide and cap every pool of the cluster, fixed ones included (pulumi_gcp
ClusterClusterAutoscaling ``resource_limits``: "These limits will apply to node pool autoscaling
in addition to node auto-provisioning"), so a stack cannot own them on a cluster it only adds
pools to; there ``autoCreate`` below that version is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from infra.core.config.gke import GkeGpuSpec, GkePoolSpec
from infra.core.errors import Issues, join_path
from infra.core.gke.model import GPU_TAINT, AutoCreation, ComputeClassPlan, GkePoolPlan
from infra.core.gke.nap import cluster_nap_needed
from infra.core.gke.versions import check_feature_version, feature_versions
from infra.core.labels import GKE_COMPUTE_CLASS_LABEL

AUTO_CREATION_DOC = "https://cloud.google.com/kubernetes-engine/docs/how-to/node-auto-provisioning"
COMPUTE_CLASS_CRD = "https://cloud.google.com/kubernetes-engine/docs/reference/crds/computeclass"

# priorities[].storage.bootDiskType enum of the ComputeClass CRD.
BOOT_DISK_TYPES = ("pd-balanced", "pd-standard", "pd-ssd", "hyperdisk-balanced")
# priorities[].gpu.driverVersion enum of the ComputeClass CRD: GKE always installs a driver.
DRIVER_VERSIONS = {"DEFAULT": "default", "LATEST": "latest"}
# priorities[].reservations.affinity enum of the ComputeClass CRD, by consumeReservationType.
RESERVATION_AFFINITY = {
    "SPECIFIC_RESERVATION": "Specific",
    "ANY_RESERVATION": "AnyBestEffort",
    "NO_RESERVATION": "None",
}
# GKE's default surge (maxSurge=1, maxUnavailable=0) applies: "Surge upgrades or blue-green
# upgrades" are among the settings ComputeClasses do not support (AUTO_CREATION_DOC#limitations).
DEFAULT_SURGE = (1, 0)


def check_auto_create(
    spec: GkePoolSpec,
    path: str,
    *,
    min_master: str | None,
    existing: bool,
    operator_on: bool,
    issues: Issues,
    data_dir: Path,
) -> None:
    """Refuse what an auto-created pool cannot have, each at its key path (``existing``: the
    cluster is not this stack's, so its version is only declared; ``data_dir``: the plan's
    catalog, whose version gates apply)."""
    apath = join_path(path, "autoCreate")
    _check_version(min_master, existing, apath, issues, data_dir)
    if operator_on:
        issues.add(
            apath,
            "true while gpuOperator.enabled is true: a ComputeClass priority's gpu.driverVersion "
            "is 'default' or 'latest' only, so GKE installs its driver and device plugin on every "
            f"auto-created node, which the GPU Operator needs off ({COMPUTE_CLASS_CRD}); set "
            "gpuOperator.enabled false or autoCreate false",
        )
    if spec.min_nodes:
        issues.add(
            join_path(path, "minNodes"),
            f"{spec.min_nodes}: an auto-created node pool has no minimum (GKE deletes the "
            "pool when it is no longer needed; https://cloud.google.com/kubernetes-engine/docs/concepts/node-auto-provisioning); "
            "set minNodes 0 or autoCreate false",
        )
    for key, why in _unsupported(spec):
        issues.add(join_path(path, key), f"set with autoCreate: {why}; drop it or autoCreate false")
    for j, fb in enumerate(spec.fallback or ()):
        fpath = join_path(path, "fallback", j)
        if fb.flex_start is not None:
            issues.add(join_path(fpath, "flexStart"), f"set with autoCreate: {_FLEX}")
        for key, why in _gpu_unsupported(fb.gpu):
            issues.add(join_path(fpath, key), f"set with autoCreate: {why}")


def _check_version(
    min_master: str | None, existing: bool, apath: str, issues: Issues, data_dir: Path
) -> None:
    """The one requirement without node auto-provisioning is the version (gke_feature_versions.csv:
    "If your cluster is running a version earlier than GKE version 1.33.3-gke.1136000, you must
    also enable cluster-level node auto-provisioning"); no release channel is required. Surely
    below it, a cluster this stack creates gets node auto-provisioning (``nap``); one it does not
    is refused. Otherwise strict: below the gate pods stay Pending with nothing refused, so an
    alias or an unset version that may name an older release is refused too."""
    if cluster_nap_needed(min_master, data_dir):
        if existing:
            floor = feature_versions(data_dir)["compute-class-auto-creation"]
            issues.add(
                apath,
                f"true with cluster.minMasterVersion {min_master}: below {floor} a ComputeClass "
                "auto-creates pools only with cluster-level node auto-provisioning, whose limits "
                "cap every pool; cluster.existing is true, so this stack does not own or enable "
                f"it; upgrade the existing cluster to {floor}+ and declare its version in "
                "cluster.minMasterVersion, or set autoCreate false",
            )
        return
    check_feature_version(
        "compute-class-auto-creation",
        "auto-created node pools without cluster-level node auto-provisioning (enabled here "
        "only for a created cluster whose minMasterVersion is surely older)",
        min_master,
        apath,
        issues,
        strict=True,
        declared=existing,
        data_dir=data_dir,
    )


def declared_version_note(path: str, min_master: str | None) -> str:
    """On an existing cluster the auto-creation gate trusts ``cluster.minMasterVersion``, which
    the stack neither sets nor reads back there: say so (below the version pods stay Pending)."""
    return (
        f"{join_path(path, 'autoCreate')}: the auto-creation version gate trusts the declared "
        f"cluster.minMasterVersion {min_master} of the existing cluster, which this stack does not "
        "enforce: if the cluster runs an older GKE, pods of this pool stay Pending "
        "(`gcloud container clusters describe` shows currentMasterVersion)"
    )


# The CRD has priorities[].flexStart {enabled, nodeRecycling} and priorities[].gpu.gpuSharing
# {sharingStrategy, maxSharedClientsPerGPU, gpuPartitionSize}; gpu-infra does not send them: the
# refusals below are this tool's limitation, not GKE's, and say so.
_FLEX = (
    "a ComputeClass priority can request flex-start (priorities[].flexStart, "
    f"{COMPUTE_CLASS_CRD}), but gpu-infra does not map it: its flex-start pools run without "
    "auto-repair and with maxRunDuration, and an auto-created class's nodePoolConfig.autoRepair is "
    "one setting for every priority; use a fixed pool for flex-start"
)
_GPU_FIELDS = (
    "a ComputeClass priority can share or partition its GPUs (priorities[].gpu.gpuSharing, "
    f"{COMPUTE_CLASS_CRD}), but gpu-infra does not map it yet: its scheduling proof and workload "
    "integrations model shared GPUs on fixed node pools only; use a fixed pool for GPU sharing "
    "or MIG partitions"
)


def _gpu_unsupported(gpu: GkeGpuSpec | None) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    if gpu is not None and gpu.sharing is not None:
        out.append(("gpu.sharing", _GPU_FIELDS))
    if gpu is not None and gpu.partition_size is not None:
        out.append(("gpu.partitionSize", _GPU_FIELDS))
    return out


def _unsupported(spec: GkePoolSpec) -> list[tuple[str, str]]:
    out = _gpu_unsupported(spec.gpu)
    if spec.queued_provisioning:
        out.append(
            (
                "queuedProvisioning",
                "queued provisioning admits pods through ProvisioningRequests on a node pool that "
                f"enables it; a ComputeClass priority has no such field ({COMPUTE_CLASS_CRD})",
            )
        )
    if spec.best_effort is not None:
        out.append(
            (
                "bestEffort",
                "best-effort provisioning acts on initial nodes; auto-created pools start empty",
            )
        )
    if spec.compact_placement:
        out.append(
            (
                "compactPlacement",
                "a ComputeClass priority places nodes only through an existing resource policy "
                f"(placement.policyName, {COMPUTE_CLASS_CRD}), which this stack does not create",
            )
        )
    if spec.flex_start is not None:
        out.append(("flexStart", _FLEX))
    return out


def auto_created(pools: Sequence[GkePoolPlan]) -> list[GkePoolPlan]:
    """The class's pools as auto-created: no NodePool, GKE's default surge. Their boot disks are
    series defaults or checked against the series (gcp_machine_series.csv), all of them values of
    the CRD's ``bootDiskType`` enum (BOOT_DISK_TYPES; a unit test keeps the two in step)."""
    surge, unavailable = DEFAULT_SURGE
    return [
        replace(p, auto_create=True, max_surge=surge, max_unavailable=unavailable) for p in pools
    ]


def auto_class(name: str, pools: Sequence[GkePoolPlan], active_migration: bool) -> ComputeClassPlan:
    """The ComputeClass that auto-creates ``pools``, tried in order."""
    first = pools[0]
    return ComputeClassPlan(
        name=name,
        pools=tuple(p.name for p in pools),
        active_migration=active_migration,
        auto=AutoCreation(
            priorities=tuple(priority(p) for p in pools),
            node_pool_config=node_pool_config(first),
        ),
    )


def priority(p: GkePoolPlan) -> dict[str, Any]:
    """One ``priorities[]`` rule: machine type, GPUs and GKE's driver, Spot, zones (on the
    reservation when it is a specific one), reservation, boot disk, and the pool's node labels
    (GKE adds the class label itself)."""
    storage: dict[str, Any] = {"bootDiskType": p.disk_type, "bootDiskSize": p.disk_size_gb}
    if p.local_ssd_count:
        storage["localSSDCount"] = p.local_ssd_count
    rule: dict[str, Any] = {
        "machineType": p.machine_type,
        "gpu": {
            "type": p.accelerator,
            "count": p.accelerator_count,
            "driverVersion": DRIVER_VERSIONS[p.driver_version],
        },
        "spot": p.spot,
        "storage": storage,
        "nodeLabels": {k: v for k, v in p.labels.items() if k != GKE_COMPUTE_CLASS_LABEL},
    }
    zones = list(p.node_locations)
    if p.reservation_type == "SPECIFIC_RESERVATION":
        # A priority with location.zones and a specific reservation is rejected ("compute-class
        # NAME contains priorities using location config with specific reservations enabled");
        # the zones go on the reservation instead (priorities[].reservations.specific[].zones,
        # COMPUTE_CLASS_CRD: "Zones is a list of GCE zones where reservations are to be consumed").
        rule["reservations"] = _specific(p.reservation_name, zones)
    else:
        rule["location"] = {"zones": zones}
        if p.reservation_type is not None:
            rule["reservations"] = {"affinity": RESERVATION_AFFINITY[p.reservation_type]}
    return rule


def _specific(name: str | None, zones: list[str]) -> dict[str, Any]:
    """``reservations`` of a Specific affinity: the CRD requires one ``specific`` entry at least
    ("At least 1 specific reservation required for specific affinity")."""
    # A shared reservation is projects/PROJECT/reservations/NAME (reservation_affinity).
    parts = (name or "").split("/")
    entry: dict[str, Any] = (
        {"name": parts[3], "project": parts[1]} if len(parts) == 4 else {"name": name}
    )
    entry["zones"] = zones
    return {"affinity": RESERVATION_AFFINITY["SPECIFIC_RESERVATION"], "specific": [entry]}


def node_pool_config(p: GkePoolPlan) -> dict[str, Any]:
    """``nodePoolConfig`` of every auto-created pool: image, node management, gVNIC, image
    streaming and the user taints (GKE adds the class's and the GPU's own)."""
    own = {(GPU_TAINT.key, GPU_TAINT.value), (GKE_COMPUTE_CLASS_LABEL, p.compute_class)}
    return {
        "imageType": p.image_type.lower(),
        "autoUpgrade": p.auto_upgrade,
        "autoRepair": p.auto_repair,
        "gvnic": {"enabled": p.gvnic},
        "imageStreaming": {"enabled": p.image_streaming},
        "taints": [
            {"key": t.key, "value": t.value, "effect": t.effect}
            for t in p.taints
            if (t.key, t.value) not in own
        ],
    }
