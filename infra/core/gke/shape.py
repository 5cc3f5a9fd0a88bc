"""What a GKE GPU pool's machine carries: its accelerator type and GPUs per node.

Pure code: a machine type with built-in GPUs (A2, A3, A4, G2, G4, ...) fixes both, checked against
a given ``gpu`` block; an N1 machine type takes attached GPUs within the catalog's per-count
vCPU and memory limits (https://cloud.google.com/compute/docs/gpus).
"""

from __future__ import annotations

from dataclasses import dataclass

from infra.core.catalog.vendored import Catalog, GcpMachine
from infra.core.config.gke import GkeGpuSpec
from infra.core.errors import Issues, join_path
from infra.core.gke.series import ATTACHED, BUILT_IN, family_of, gpu_families, has_built_in_gpus
from infra.core.rules import gpu_type_hint


@dataclass(frozen=True, slots=True)
class GpuShape:
    """What a pool's machine carries: the machine, its accelerator type and GPUs per node."""

    machine: GcpMachine
    accelerator: str
    count: int


def gpu_shape(
    machine_type: str,
    gpu: GkeGpuSpec,
    path: str,
    catalog: Catalog,
    issues: Issues,
) -> GpuShape | None:
    """Resolve the machine's GPU shape, or record why the machine cannot carry the GPU
    (https://cloud.google.com/compute/docs/gpus)."""
    if not _known_gpu_type(gpu, path, catalog, issues):
        return None
    machine = catalog.gcp_machine(machine_type)
    # A declared shape (gpuPools[].shape) is a built-in-GPU type of a family the catalog lacks.
    built_in = has_built_in_gpus(machine_type, catalog.data_dir)
    if built_in or (machine is not None and machine.accelerator is not None):
        return _bundled_shape(machine_type, machine, gpu, path, issues)
    return _attached_shape(machine_type, machine, gpu, path, catalog, issues)


def _known_gpu_type(gpu: GkeGpuSpec, path: str, catalog: Catalog, issues: Issues) -> bool:
    if gpu.type is None or gpu.type in catalog.gcp_accelerators():
        return True
    issues.add(
        join_path(path, "gpu", "type"),
        f"{gpu.type!r} is not a known GPU type"
        f"{gpu_type_hint(gpu.type, catalog.gcp_accelerators())}; "
        f"known: {', '.join(catalog.gcp_accelerators())}",
    )
    return False


def _bundled_shape(
    machine_type: str, machine: GcpMachine | None, gpu: GkeGpuSpec, path: str, issues: Issues
) -> GpuShape | None:
    """A machine type with built-in GPUs: type and count come from the machine."""
    gpu_path = join_path(path, "gpu")
    if machine is None or machine.accelerator is None:
        family = machine_type.split("-", 1)[0]
        issues.add(
            join_path(path, "machineType"),
            f"{machine_type!r} is not a known GPU machine type of the {family} family in the "
            "catalog; if it is new, declare it with gpuPools[].shape ({gpuModel, gpus, vcpus, "
            "memoryGb}, gpuModel the GKE accelerator type such as nvidia-b200) and zones",
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
    return GpuShape(machine, acc, cnt)


def _attached_shape(
    machine_type: str,
    machine: GcpMachine | None,
    gpu: GkeGpuSpec,
    path: str,
    catalog: Catalog,
    issues: Issues,
) -> GpuShape | None:
    """An N1 machine type with attached GPUs: the type is required, the count within limits."""
    mt_path, gpu_path = join_path(path, "machineType"), join_path(path, "gpu")
    if gpu.type is None:
        issues.add(
            join_path(gpu_path, "type"),
            f"required for {machine_type!r}: only "
            f"{'/'.join(gpu_families(BUILT_IN, catalog.data_dir))} machine "
            "types imply their GPU",
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
    if family_of(machine_type) not in gpu_families(ATTACHED, catalog.data_dir):
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
    return GpuShape(machine, gpu.type, count)
