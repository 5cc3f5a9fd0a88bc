"""The catalog escape hatch: ``gpuPools[].shape`` declares a machine / instance type the catalog lacks.

A new GPU machine or instance type often ships before the vendored catalog knows it. A pool may then
declare its shape (``gpuModel``, ``gpus``, ``vcpus``, ``memoryGb``) and its ``zones`` (GKE zones, EKS
AZ IDs); the catalog is overlaid with those facts so the planners check everything else as usual, and
the plan says, per pool, that the facts are the user's. A shape for a type the catalog knows is an
error: the catalog's facts win.
"""

from __future__ import annotations

import re
from typing import Any

from infra.core.catalog.vendored import Catalog, UserShape
from infra.core.errors import Issues, join_path

# GKE sends gpuModel as guestAccelerators[].type and selects nodes by the
# cloud.google.com/gke-accelerator label, both the Compute accelerator type name (nvidia-l4,
# nvidia-b200; https://cloud.google.com/compute/docs/gpus), never the marketing name.
_GKE_ACCELERATOR = re.compile(r"nvidia-[a-z0-9]+(?:-[a-z0-9]+)*", re.ASCII)


def _gke_accelerator_type(model: str, catalog: Catalog, path: str, issues: Issues) -> bool:
    if model in catalog.gcp_accelerators() or _GKE_ACCELERATOR.fullmatch(model):
        return True
    known = {catalog.gcp_model(a).model.lower(): a for a in catalog.gcp_accelerators()}
    hint = known.get(model.lower()) or f"nvidia-{model.lower()}"
    issues.add(
        join_path(path, "gpuModel"),
        f"{model!r} is not a GKE accelerator type (did you mean {hint!r}?): GKE takes the "
        "Compute Engine accelerator type name (lowercase nvidia-...)",
    )
    return False


def user_shapes(config: Any, catalog: Catalog, issues: Issues) -> tuple[list[UserShape], list[str]]:
    """(shapes to overlay on the catalog, one plan note per pool planned from a declared shape)."""
    shapes: list[UserShape] = []
    notes: list[str] = []
    if config.platform not in ("gke", "eks"):
        for i, pool in enumerate(config.pools):
            if getattr(pool, "shape", None) is not None:
                issues.add(
                    join_path("gpuPools", i, "shape"),
                    "only for gke and eks pools (platform kubernetes pools describe their own nodes)",
                )
        return shapes, notes
    region = config.region or ""
    for i, pool in enumerate(config.pools):
        shape = getattr(pool, "shape", None)
        if shape is None:
            continue
        path = join_path("gpuPools", i, "shape")
        names = pool.machine_type if isinstance(pool.machine_type, list) else [pool.machine_type]
        known = [
            n
            for n in names
            if (catalog.gcp_machine(n) if config.platform == "gke" else catalog.aws_instance(n))
        ]
        # The accelerator type first: a marketing name is wrong whatever the machine type.
        if config.platform == "gke" and not _gke_accelerator_type(
            shape.gpu_model, catalog, path, issues
        ):
            continue
        if known:
            issues.add(
                path,
                f"{', '.join(known)} is in the catalog; remove shape (the catalog's facts are used)",
            )
            continue
        zones = tuple(pool.zones or ())
        if not zones:
            what = "zones" if config.platform == "gke" else "AZ IDs (usw2-az1)"
            issues.add(
                join_path("gpuPools", i, "zones"),
                f"required with shape: the catalog cannot say which {what} offer {names[0]}",
            )
            continue
        for n in names:
            shapes.append(
                UserShape(
                    config.platform,
                    n,
                    shape.gpu_model,
                    shape.gpus,
                    shape.vcpus,
                    float(shape.memory_gb),
                    region,
                    zones,
                )
            )
        notes.append(
            f"{pool.name}: {', '.join(names)} is not in the catalog; planned from the stack's "
            f"shape ({shape.gpus}x {shape.gpu_model}, {shape.vcpus} vCPUs, {shape.memory_gb:g} GB, "
            f"zones {', '.join(zones)}): these facts are yours, not checked against the cloud"
            + ("; assumed x86_64 on the EKS NVIDIA AMI" if config.platform == "eks" else "")
        )
    return shapes, notes
