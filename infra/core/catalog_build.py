"""Turn live Compute API listings into the vendored GCP catalog files (pure; no SDK here).

``infra.catalog_refresh`` fetches the listings and writes what these functions return. Prices are
not in the Compute API: a row keeps the price of the same row in the current file, or stays empty.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

# GPU counts a VM can take, up to the zone's maximumCardsPerInstance
# (https://cloud.google.com/compute/docs/gpus: every GPU machine shape uses one of these).
_COUNTS = (1, 2, 4, 8, 16)

# Families whose GPUs are built into the machine type (the catalog's gcp_machine_types.csv).
GPU_MACHINE_FAMILIES = ("a2", "a3", "a4", "g2", "g4")

ACCELERATOR_COLUMNS = (
    "accelerator",
    "count",
    "region",
    "zone",
    "price_per_hour",
    "spot_price_per_hour",
)
MACHINE_COLUMNS = (
    "machine_type",
    "vcpus",
    "memory_gib",
    "accelerator",
    "accelerator_count",
    "region",
    "zone",
    "price_per_hour",
    "spot_price_per_hour",
)


@dataclass(frozen=True, slots=True)
class AcceleratorOffer:
    """One ``acceleratorTypes`` item of one zone."""

    zone: str
    name: str
    max_cards: int


@dataclass(frozen=True, slots=True)
class MachineOffer:
    """One GPU ``machineTypes`` item of one zone."""

    zone: str
    name: str
    vcpus: int
    memory_mb: int
    accelerator: str
    accelerator_count: int


def is_gpu_accelerator(name: str) -> bool:
    """GPU accelerator types are ``nvidia-*``; the listing also has TPUs and others."""
    return name.startswith("nvidia-")


def accelerator_rows(
    offers: Iterable[AcceleratorOffer], prices: Mapping[tuple[str, ...], tuple[str, str]]
) -> list[dict[str, str]]:
    """``gcp_accelerators.csv`` rows: one per GPU type, allowed count and zone, sorted like the source."""
    rows: list[dict[str, str]] = []
    for o in offers:
        if not is_gpu_accelerator(o.name):
            continue
        region = o.zone.rsplit("-", 1)[0]
        for count in (c for c in _COUNTS if c <= o.max_cards):
            price, spot = prices.get((o.name, str(count), o.zone), ("", ""))
            rows.append(
                {
                    "accelerator": o.name,
                    "count": str(count),
                    "region": region,
                    "zone": o.zone,
                    "price_per_hour": price,
                    "spot_price_per_hour": spot,
                }
            )
    rows.sort(key=lambda r: (r["accelerator"], int(r["count"]), r["region"], r["zone"]))
    return rows


def machine_rows(
    offers: Iterable[MachineOffer], prices: Mapping[tuple[str, ...], tuple[str, str]]
) -> list[dict[str, str]]:
    """``gcp_machine_types.csv`` rows: GPU machine types per zone, sorted like the source."""
    rows: list[dict[str, str]] = []
    for o in offers:
        if o.name.split("-", 1)[0] not in GPU_MACHINE_FAMILIES or not o.accelerator:
            continue
        price, spot = prices.get((o.name, o.zone), ("", ""))
        rows.append(
            {
                "machine_type": o.name,
                "vcpus": str(o.vcpus),
                "memory_gib": f"{o.memory_mb / 1024:g}",
                "accelerator": o.accelerator,
                "accelerator_count": str(o.accelerator_count),
                "region": o.zone.rsplit("-", 1)[0],
                "zone": o.zone,
                "price_per_hour": price,
                "spot_price_per_hour": spot,
            }
        )
    rows.sort(key=lambda r: (r["machine_type"], r["region"], r["zone"]))
    return rows


def render(
    header: Iterable[str], columns: tuple[str, ...], rows: Iterable[Mapping[str, str]]
) -> str:
    """A catalog file: ``#`` provenance lines, then CSV."""
    out = io.StringIO()
    for line in header:
        out.write(f"# {line}\n")
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()
