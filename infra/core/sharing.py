"""Platform-neutral GPU sharing facts: the node labels that select a pool's time-slicing / MIG
config, NVIDIA's MIG profiles and layouts per GPU, the rules the device plugin enforces on them and
the extended resources a workload requests.

The GKE, EKS and kubernetes planners label pools from here; the operator planner configures the
device plugin and MIG manager from the same facts, so the two cannot disagree.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path

from infra.core.catalog.vendored import read_rows
from infra.core.config.base import MigSpec, PoolBase, SharingSpec
from infra.core.labels import GPU_PRESENT_LABEL
from infra.core.pools import GPU_RESOURCE, MigGpu, PoolHints

# Node labels the operator's device plugin and MIG manager read to pick a per-node config
# (NVIDIA gpu-operator docs: gpu-sharing.html "Applying multiple node-specific configurations",
# gpu-operator-mig.html "Configuring MIG Profiles").
DEVICE_PLUGIN_CONFIG_LABEL = "nvidia.com/device-plugin.config"
MIG_CONFIG_LABEL = "nvidia.com/mig.config"
DEVICE_PLUGIN_CONFIGMAP = "gpu-infra-device-plugin-config"
# The MIG profile of a pool under strategy single, for workloads that select nodes by partition size
# (Flyte's gpu-partition-size-node-label); label values cannot hold '+', so the dotted spelling.
FLYTE_PARTITION_LABEL = "gpu-infra/gpu-partition-size"
# Time-slicing with renameByDefault advertises `<resource>.shared` (NVIDIA/k8s-device-plugin
# api/config/v1/consts.go DefaultSharedResourceNameSuffix).
SHARED_GPU_RESOURCE = f"{GPU_RESOURCE}.shared"

# NVIDIA's MIG profiles and all-balanced layout per GPU model, from mig-parted's default config:
# the one source for operator MIG (every platform). GKE's own partitioning (gpu.partitionSize) keeps
# GKE's shorter list in gcp_accelerator_models.csv.
MIG_PROFILES_CSV = "nvidia_mig_profiles.csv"
# mig-parted config names that are not `all-<profile>` (config-default.yaml).
MIG_DISABLED, MIG_ENABLED, MIG_BALANCED = "all-disabled", "all-enabled", "all-balanced"


# How the device plugin hands GPUs to containers where the toolkit refuses NVIDIA_VISIBLE_DEVICES
# from unprivileged pods (EKS AL2023 node bootstrap, the operator's isolation settings):
# k8s-device-plugin deviceListStrategy / DEVICE_LIST_STRATEGY.
DEVICE_LIST_STRATEGY = "volume-mounts"


def operator_node_labels(pool: PoolBase, *, gpu_present: bool = False) -> dict[str, str]:
    """Node labels a pool needs for the operator (time-slicing and MIG config; with
    ``gpu_present``, ``nvidia.com/gpu.present`` set up front: ``Features.gpu_present_label``).

    The GKE and EKS planners merge these into the pool's node labels (and ``PoolHints.labels``)
    when the operator is on; the kubernetes planner does so for pools whose ``nodes`` gpu-infra
    labels. ``plan_operator`` checks they are there.

    Args:
        pool: any platform's pool spec.
    """
    labels: dict[str, str] = {}
    if gpu_present:
        labels[GPU_PRESENT_LABEL] = "true"
    if pool.sharing is not None:
        labels[DEVICE_PLUGIN_CONFIG_LABEL] = sharing_config_key(pool.sharing)
    if pool.mig is not None:
        labels[MIG_CONFIG_LABEL] = pool.mig.config
        fixed = (MIG_DISABLED, MIG_ENABLED, MIG_BALANCED)
        if pool.mig.strategy == "single" and pool.mig.config not in fixed:
            labels[FLYTE_PARTITION_LABEL] = pool.mig.config.removeprefix("all-")
    return labels


def sharing_config_key(sharing: SharingSpec) -> str:
    """The device-plugin ConfigMap key (and node label value) of a time-slicing setup."""
    key = f"time-slicing-{sharing.replicas}"
    return f"{key}-renamed" if sharing.rename_by_default else key


def time_slicing_config(sharing: SharingSpec) -> dict[str, object]:
    """The device plugin's config file for one time-slicing setup (``version: v1``).

    ``failRequestsGreaterThanOne``: a pod asking for 2 replicas would get 2 slices of possibly the
    same GPU and no more compute, so the plugin refuses it (NVIDIA gpu-sharing.html; field in
    NVIDIA/k8s-device-plugin api/config/v1/replicas.go).
    """
    return {
        "version": "v1",
        "sharing": {
            "timeSlicing": {
                "renameByDefault": sharing.rename_by_default,
                "failRequestsGreaterThanOne": True,
                "resources": [{"name": GPU_RESOURCE, "replicas": sharing.replicas}],
            }
        },
    }


def nvidia_mig_profiles(gpu: str, data_dir: Path) -> tuple[str, ...]:
    """NVIDIA's MIG profiles (smallest first) of a GPU, by model or alias; ``()`` if it has no MIG.

    Accepts the names people, GKE and EKS use (``A100-40GB``, ``nvidia-tesla-a100``, ``A100``).
    """
    mig = mig_gpu(gpu, data_dir)
    return mig.profiles if mig is not None else ()


def mig_gpu(gpu: str, data_dir: Path) -> MigGpu | None:
    """The MIG facts of a GPU by model or alias; ``None`` if it has no MIG."""
    return _mig_table(data_dir).get(gpu.strip().lower())


@functools.cache
def _mig_table(data_dir: Path) -> dict[str, MigGpu]:
    table: dict[str, MigGpu] = {}
    for row in read_rows(MIG_PROFILES_CSV, data_dir):
        pairs = [p.split(":") for p in row["balanced"].split()]
        mig = MigGpu(
            profiles=tuple(row["profiles"].split()),
            balanced=tuple(p for p, _ in pairs),
            balanced_counts=tuple(int(n) for _, n in pairs),
        )
        for alias in [row["gpu_model"], *row["aliases"].split(";")]:
            table[alias.strip().lower()] = mig
    return table


def pool_mig(gpu_model: str, gpu_type: str, data_dir: Path) -> MigGpu | None:
    """The MIG facts of a pool's GPU in the catalog of ``data_dir``, looked up by model, then by
    the cloud's name: what a planner records in ``PoolHints.mig``."""
    return mig_gpu(gpu_model, data_dir) or mig_gpu(gpu_type, data_dir)


def pool_mig_gpu(h: PoolHints) -> MigGpu | None:
    """The MIG facts of the pool's GPU, as its planner recorded them (``pool_mig``)."""
    return h.mig


def pool_mig_profiles(h: PoolHints) -> tuple[str, ...]:
    """NVIDIA's MIG profiles of the pool's GPU (looked up by model, then by the cloud's name)."""
    mig = pool_mig_gpu(h)
    return mig.profiles if mig is not None else ()


def mig_config_name(profile: str) -> str:
    """mig-parted's config name for "every GPU split into ``profile``": ``1g.5gb+me`` ->
    ``all-1g.5gb.me`` (config-default.yaml)."""
    return "all-" + profile.replace("+", ".")


def mig_resource(profile: str) -> str:
    """The resource strategy ``mixed`` advertises for a profile: ``nvidia.com/mig-1g.5gb.me``
    (NVIDIA/k8s-device-plugin internal/rm/rm.go: ``strings.ReplaceAll("mig-"+p, "+", ".")``)."""
    return "nvidia.com/mig-" + profile.replace("+", ".")


def mig_layout(mig: MigGpu, config: str) -> tuple[str, ...] | None:
    """The distinct profiles ``config`` creates on each GPU; ``None`` if mig-parted has no such
    config for this GPU."""
    if config in (MIG_DISABLED, MIG_ENABLED):
        return ()
    if config == MIG_BALANCED:
        return mig.balanced or None
    profile = next((p for p in mig.profiles if mig_config_name(p) == config), None)
    return (profile,) if profile is not None else None


def mig_configs(mig: MigGpu, strategy: str) -> tuple[str, ...]:
    """The MIG configs a pool may use with ``strategy`` (see ``mig_config_problem``)."""
    names = [MIG_DISABLED, *(mig_config_name(p) for p in mig.profiles)]
    if strategy == "mixed" and mig.balanced:
        names.append(MIG_BALANCED)
    return tuple(names)


def mig_config_problem(mig: MigGpu, spec: MigSpec, gpu_model: str) -> str | None:
    """Why the device plugin cannot serve ``spec`` on this GPU, or ``None``.

    - ``all-enabled`` creates no MIG devices: strategy single fails ("device N has no MIG devices
      configured") and mixed advertises nothing (NVIDIA/k8s-device-plugin internal/rm/device_map.go);
    - strategy single needs one MIG device type per node: ``all-balanced`` fails "more than one MIG
      device type present on node" (same file, assertAllMigDevicesAreValid);
    - the config must be one of mig-parted's for this GPU.
    """
    allowed = mig_configs(mig, spec.strategy)
    if spec.config == MIG_ENABLED:
        return (
            "'all-enabled' creates no MIG devices, so the device plugin advertises none (strategy "
            "single fails: 'device 0 has no MIG devices configured'); use one of: "
            + ", ".join(allowed)
        )
    layout = mig_layout(mig, spec.config)
    if layout is None:
        return (
            f"{spec.config!r} is not one of NVIDIA mig-parted's MIG configs for {gpu_model}; "
            f"use one of: {', '.join(allowed)}"
        )
    if spec.strategy == "single" and len(layout) > 1:
        return (
            f"{spec.config!r} creates {len(layout)} MIG device types per GPU and strategy 'single' "
            "refuses the node ('more than one MIG device type present on node'); use "
            "all-disabled or all-<profile>, or strategy 'mixed'"
        )
    return None


def resource_names(h: PoolHints, pool: PoolBase) -> tuple[str, ...]:
    """The extended resources a workload requests on the pool's nodes, most useful first.

    MIG strategy ``mixed``: ``nvidia.com/mig-<profile>`` per profile of the layout (all-disabled:
    ``nvidia.com/gpu``). Strategy ``single`` and no MIG: ``nvidia.com/gpu``, or
    ``nvidia.com/gpu.shared`` when time-slicing renames it.
    """
    mig = pool.mig
    if mig is not None and mig.strategy == "mixed" and (gpu := pool_mig_gpu(h)) is not None:
        layout = mig_layout(gpu, mig.config)
        if layout:
            return tuple(mig_resource(p) for p in layout)
    if pool.sharing is not None and pool.sharing.rename_by_default:
        return (SHARED_GPU_RESOURCE,)
    return (GPU_RESOURCE,)


def slots_per_node(h: PoolHints, pool: PoolBase) -> int:
    """How many one-slot workloads a node of the pool holds: GPUs x time-slicing replicas, or
    GPUs x MIG instances per GPU (a profile's instances are bounded by compute slices, 7 or 4 on an
    A30, and by memory: ``1g.10gb`` fits 4 times on a 40 GB A100; ``+me`` profiles exist once).
    A platform's own partitioning / sharing is the platform's to count (``Platform.native_sharing``)."""
    per_gpu = 1
    gpu = pool_mig_gpu(h)
    if (
        pool.mig is not None
        and gpu is not None
        and (counts := mig_layout_counts(gpu, pool.mig.config))
    ):
        per_gpu = sum(counts.values())  # all-balanced on an A100: 2x 1g + 1x 2g + 1x 3g
    if pool.sharing is not None:
        per_gpu *= pool.sharing.replicas
    return h.gpus_per_node * per_gpu


def _instances_per_gpu(profile: str, gpu: MigGpu) -> int:
    """NVIDIA's count of ``profile`` instances on one GPU; a ``+me`` profile takes the media
    engine, of which a GPU has one."""
    return mig_instances_per_gpu(profile, gpu.profiles) or 1


def quota_resource_names(h: PoolHints, pool: PoolBase) -> tuple[str, ...]:
    """Every GPU resource the pool's nodes may advertise, for namespace quotas: a quota that omits
    one leaves it unlimited. ``nvidia.com/gpu`` always, ``nvidia.com/gpu.shared`` when time-slicing
    renames, and under MIG strategy ``mixed`` the resource of every MIG profile of the GPU (any
    mig-parted config could be applied to the node by relabelling it)."""
    names: list[str] = [GPU_RESOURCE]
    if pool.sharing is not None and pool.sharing.rename_by_default:
        names.append(SHARED_GPU_RESOURCE)
    mig = pool_mig_gpu(h)
    if pool.mig is not None and pool.mig.strategy == "mixed" and mig is not None:
        names.extend(mig_resource(p) for p in mig.profiles)
    return tuple(names)


def mig_instances_per_gpu(profile: str, profiles: Sequence[str]) -> int | None:
    """How many GPU instances of ``profile`` one GPU holds, from the model's profile list.

    A profile ``<N>g.<M>gb`` takes N of the GPU's compute slices and M GB of its memory; the
    largest profile (``7g.40gb`` on A100-40GB, ``4g.24gb`` on A30) is the whole GPU. The count is
    limited by both: A100-40GB 1g.5gb -> 7, 2g.10gb -> 3, 3g.20gb -> 2, 4g.20gb -> 1; H100 1g.20gb
    -> 4 (NVIDIA MIG User Guide, "Supported MIG Profiles").

    Returns:
        the count, or ``None`` when ``profile`` is not one of ``profiles`` (or not ``<N>g.<M>gb``).
    """
    shapes = {p: shape for p in profiles if (shape := _mig_shape(p)) is not None}
    if profile not in shapes:
        return None
    slices, memory = max(shapes.values())
    smallest = min(m for _, m in shapes.values())
    n, m = shapes[profile]
    # Memory in units of the smallest slice, rounded: H200's 141 GB is 8 units of its 18 GB slice.
    units = round(memory / smallest)
    return max(1, min(slices // n, units // max(1, round(m / smallest))))


def _mig_shape(profile: str) -> tuple[int, int] | None:
    g, _, mem = profile.partition("g.")
    if not g.isdigit() or not mem.endswith("gb") or not mem[:-2].isdigit():
        return None
    return int(g), int(mem[:-2])


def mig_layout_counts(gpu: MigGpu, config: str) -> dict[str, int]:
    """Instances per GPU of each profile ``config`` creates (mig-parted config-default.yaml:
    ``all-<profile>`` fills the GPU with one profile; ``all-balanced`` per its device-filter block);
    empty for all-disabled / all-enabled or a config this GPU has not."""
    layout = mig_layout(gpu, config)
    if not layout:
        return {}
    if config == MIG_BALANCED:
        return dict(zip(gpu.balanced, gpu.balanced_counts or (1,) * len(gpu.balanced), strict=True))
    return {layout[0]: _instances_per_gpu(layout[0], gpu)}


def advertised_resources(
    gpus: int, sharing: SharingSpec | None, mig: MigSpec | None, gpu: MigGpu | None
) -> dict[str, int]:
    """What the NVIDIA device plugin advertises per node, ``nvidia.com/gpu`` always a key: the one
    answer for autoscaler templates (EKS tags), the running node and the workloads' requests.

    - MIG strategy single: ``nvidia.com/gpu`` = GPUs x instances per GPU; mixed:
      ``nvidia.com/mig-<profile>`` = GPUs x instances per profile and ``nvidia.com/gpu`` = 0
      (NVIDIA/k8s-device-plugin internal/rm/rm.go, gpu-operator-mig.html "MIG strategies");
    - time-slicing: every device x replicas; with ``renameByDefault`` under ``<name>.shared`` and
      0 of the plain name (k8s-device-plugin api/config/v1/consts.go
      DefaultSharedResourceNameSuffix);
    - otherwise the physical GPU count.
    """
    devices: dict[str, int] = {GPU_RESOURCE: gpus}
    per_gpu = mig_layout_counts(gpu, mig.config) if mig is not None and gpu is not None else {}
    if mig is not None and per_gpu:
        if mig.strategy == "single":
            devices = {GPU_RESOURCE: gpus * sum(per_gpu.values())}
        else:
            devices = {GPU_RESOURCE: 0, **{mig_resource(p): gpus * n for p, n in per_gpu.items()}}
    if sharing is None:
        return devices
    out: dict[str, int] = {GPU_RESOURCE: 0} if sharing.rename_by_default else {}
    for name, n in devices.items():
        key = f"{name}.shared" if sharing.rename_by_default and n else name
        out[key] = n * sharing.replicas
    return out


def mig_instances(profile: str, profiles: tuple[str, ...]) -> int:
    """GPU instances one GPU splits into for ``profile`` (GKE's partition-size table).

    GKE's table is NVIDIA's: 1g -> 7, 2g -> 3, 3g -> 2, 4g/7g -> 1 on A100, H100 1g.20gb -> 4
    (https://cloud.google.com/kubernetes-engine/docs/how-to/gpus-multi#partition-sizes), so the
    NVIDIA count is reused; a partition size not of the GPU was refused earlier.
    """
    return mig_instances_per_gpu(profile, profiles) or 1


def schedulable_gpus(
    count: int, partition_size: str | None, clients: int | None, profiles: tuple[str, ...]
) -> int:
    """``nvidia.com/gpu`` a node advertises: GPUs x MIG partitions x time-sharing/MPS clients
    (https://cloud.google.com/kubernetes-engine/docs/how-to/timesharing-gpus#enable-gke)."""
    parts = mig_instances(partition_size, profiles) if partition_size else 1
    return count * parts * (clients or 1)


def advertised_gpu_resources(
    gpus: int, sharing: SharingSpec | None, mig: MigSpec | None, gpu: MigGpu | None
) -> tuple[int, dict[str, int]]:
    """``advertised_resources`` split as ``(nvidia.com/gpu, the other resources)``: the shape the
    EKS autoscaler template tags take. A template that under-counts makes CA scale up too many
    nodes; one that omits a MIG resource makes pods requesting it unschedulable from zero."""
    out = advertised_resources(gpus, sharing, mig, gpu)
    count = out.pop(GPU_RESOURCE)
    return count, out
