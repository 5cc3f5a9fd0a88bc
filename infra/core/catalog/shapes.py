"""The catalog escape hatch: ``gpuPools[].shape`` declares a machine / instance type the catalog lacks.

A new GPU machine or instance type often ships before the vendored catalog knows it. A pool may then
declare its shape (``gpuModel``, ``gpus``, ``vcpus``, ``memoryGb``) and its ``zones`` (GKE zones, EKS
AZ IDs); the catalog is overlaid with those facts so the planners check everything else as usual, and
the plan says, per pool, that the facts are the user's. A shape for a type the catalog knows is an
error: the catalog's facts win.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from infra.core.catalog.vendored import Catalog, UserShape
from infra.core.errors import Issues, join_path


@dataclass(frozen=True, slots=True)
class ShapeRules:
    """How one platform reads ``gpuPools[].shape``.

    Attributes:
        cloud: the catalog tables a declared type is overlaid on.
        places: what the pool's ``zones`` are called there.
        assumed: what the plan assumes of a declared type beyond its shape (said in its note).
        check_model: the platform's rule for ``shape.gpuModel`` (``False``: it reported why).
    """

    cloud: Literal["gcp", "aws"]
    places: str
    assumed: str = ""
    check_model: Callable[[str, Catalog, str, Issues], bool] | None = None


def refuse_shapes(config: Any, issues: Issues) -> None:
    """A platform that describes its own nodes takes no declared shape."""
    for i, pool in enumerate(config.pools):
        if pool.shape is not None:
            issues.add(
                join_path("gpuPools", i, "shape"),
                "only for gke and eks pools (platform kubernetes pools describe their own nodes)",
            )


def user_shapes(
    config: Any, catalog: Catalog, issues: Issues, shape_rules: ShapeRules
) -> tuple[list[UserShape], list[str]]:
    """(shapes to overlay on the catalog, one plan note per pool planned from a declared shape)."""
    shapes: list[UserShape] = []
    notes: list[str] = []
    region = config.region or ""
    for i, pool in enumerate(config.pools):
        shape = pool.shape
        if shape is None:
            continue
        path = join_path("gpuPools", i, "shape")
        names = pool.machine_type if isinstance(pool.machine_type, list) else [pool.machine_type]
        lookup = catalog.gcp_machine if shape_rules.cloud == "gcp" else catalog.aws_instance
        known = [n for n in names if lookup(n)]
        # The accelerator type first: a marketing name is wrong whatever the machine type.
        check = shape_rules.check_model
        if check is not None and not check(shape.gpu_model, catalog, path, issues):
            continue
        if known:
            issues.add(
                path,
                f"{', '.join(known)} is in the catalog; remove shape (the catalog's facts are used)",
            )
            continue
        zones = tuple(pool.zones or ())
        if not zones:
            issues.add(
                join_path("gpuPools", i, "zones"),
                f"required with shape: the catalog cannot say which {shape_rules.places} offer "
                f"{names[0]}",
            )
            continue
        for n in names:
            shapes.append(
                UserShape(
                    shape_rules.cloud,
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
            + shape_rules.assumed
        )
    return shapes, notes


def with_declared_shapes(
    config: Any, catalog: Catalog, issues: Issues, shape_rules: ShapeRules
) -> tuple[Catalog, tuple[str, ...]]:
    """(``catalog`` overlaid with the stack's declared shapes, their plan notes)."""
    shapes, notes = user_shapes(config, catalog, issues, shape_rules)
    return catalog.with_user_shapes(shapes), tuple(notes)
