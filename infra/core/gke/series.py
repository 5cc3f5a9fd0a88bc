"""Per machine-series facts GKE enforces: boot-disk types, provisioning models, bundled Local SSD,
and whether the series' GPUs are built into its machine types.

Data, not code: ``infra/core/data/gcp_machine_series.csv`` (its ``#`` header names the sources).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from infra.core.catalog.build import series_covers
from infra.core.catalog.vendored import read_rows

SERIES_FILE = "gcp_machine_series.csv"
Provisioning = str  # on-demand | spot | flex-start | reservation
PROVISIONING_MODES = ("on-demand", "spot", "flex-start", "reservation")
# The table's gpus column: the machine type carries its GPUs (type and count follow from it), or
# GPUs attach to the VM, or neither (https://cloud.google.com/compute/docs/gpus).
BUILT_IN, ATTACHED = "built-in", "attached"
GPU_KINDS = (BUILT_IN, ATTACHED, "")


@dataclass(frozen=True, slots=True)
class MachineSeries:
    """What a machine series accepts.

    Attributes:
        prefix: machine-type prefix the row applies to (longest match wins).
        series: the series' name in Compute Engine's docs (``A3 Ultra``).
        boot_disk_types: disk types that can be the boot disk, the default first.
        provisioning: provisioning models Compute Engine offers the type with.
        local_ssd_count: 375 GiB Local SSD disks that come with the machine type.
        gpus: ``built-in``, ``attached`` or empty (no GPU).
    """

    prefix: str
    series: str
    boot_disk_types: tuple[str, ...]
    provisioning: frozenset[Provisioning]
    local_ssd_count: int
    gpus: str = ""

    @property
    def default_disk_type(self) -> str:
        """The boot disk a pool gets when it names none."""
        return self.boot_disk_types[0]


@functools.cache
def load_series(data_dir: Path) -> tuple[MachineSeries, ...]:
    """Every row of the series table, longest prefix first."""
    rows: list[MachineSeries] = []
    for r in read_rows(SERIES_FILE, data_dir):
        modes = frozenset(m for m in r["provisioning"].split("|") if m)
        unknown = modes - set(PROVISIONING_MODES)
        if unknown:
            raise ValueError(f"{SERIES_FILE}: {r['prefix']}: provisioning {sorted(unknown)}")
        gpus = r["gpus"] or ""  # a row may leave the last column out
        if gpus not in GPU_KINDS:
            raise ValueError(f"{SERIES_FILE}: {r['prefix']}: gpus {gpus!r}")
        rows.append(
            MachineSeries(
                r["prefix"],
                r["series"],
                tuple(d for d in r["boot_disk_types"].split("|") if d),
                modes,
                int(r["local_ssd_count"]),
                gpus,
            )
        )
    return tuple(sorted(rows, key=lambda s: -len(s.prefix)))


def series_of(machine_type: str, data_dir: Path) -> MachineSeries | None:
    """The series row for ``machine_type``, or ``None`` when the table does not cover it."""
    return next((s for s in load_series(data_dir) if series_covers(s.prefix, machine_type)), None)


def family_of(machine_type: str) -> str:
    """A machine type's family: what comes before the first ``-`` (``a3-highgpu-8g`` -> ``a3``)."""
    return machine_type.split("-", 1)[0]


@functools.cache
def gpu_families(kind: str, data_dir: Path) -> tuple[str, ...]:
    """Families of the table's rows whose ``gpus`` is ``kind``, sorted: ``built-in`` (the machine
    type carries its GPUs) or ``attached`` (GPUs attach to the VM)."""
    return tuple(sorted({family_of(s.prefix) for s in load_series(data_dir) if s.gpus == kind}))


def has_built_in_gpus(machine_type: str, data_dir: Path) -> bool:
    """Whether ``machine_type`` is of a family with built-in GPUs, listed in the catalog or not
    (a new size of such a family still names its GPU)."""
    return family_of(machine_type) in gpu_families(BUILT_IN, data_dir)


@functools.cache
def compact_placement_families(data_dir: Path) -> dict[str, bool]:
    """Machine family -> whether a compact placement policy applies (gce_compact_placement.csv)."""
    return {
        r["family"]: r["compact"] == "yes" for r in read_rows("gce_compact_placement.csv", data_dir)
    }
