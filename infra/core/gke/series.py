"""Per machine-series facts GKE enforces: boot-disk types, provisioning models, bundled Local SSD.

Data, not code: ``infra/core/data/gcp_machine_series.csv`` (its ``#`` header names the sources).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from infra.core.catalog.vendored import DATA_DIR, read_rows

SERIES_FILE = "gcp_machine_series.csv"
Provisioning = str  # on-demand | spot | flex-start | reservation
PROVISIONING_MODES = ("on-demand", "spot", "flex-start", "reservation")
# Machine families whose GPUs are built in (type and count follow from the machine type;
# https://cloud.google.com/compute/docs/gpus).
BUNDLED_FAMILIES = ("a2", "a3", "a4", "a4x", "g2", "g4")


@dataclass(frozen=True, slots=True)
class MachineSeries:
    """What a machine series accepts.

    Attributes:
        prefix: machine-type prefix the row applies to (longest match wins).
        series: the series' name in Compute Engine's docs (``A3 Ultra``).
        boot_disk_types: disk types that can be the boot disk, the default first.
        provisioning: provisioning models Compute Engine offers the type with.
        local_ssd_count: 375 GiB Local SSD disks that come with the machine type.
    """

    prefix: str
    series: str
    boot_disk_types: tuple[str, ...]
    provisioning: frozenset[Provisioning]
    local_ssd_count: int

    @property
    def default_disk_type(self) -> str:
        """The boot disk a pool gets when it names none."""
        return self.boot_disk_types[0]


@functools.cache
def load_series(data_dir: Path = DATA_DIR) -> tuple[MachineSeries, ...]:
    """Every row of the series table, longest prefix first."""
    rows: list[MachineSeries] = []
    for r in read_rows(SERIES_FILE, data_dir):
        modes = frozenset(m for m in r["provisioning"].split("|") if m)
        unknown = modes - set(PROVISIONING_MODES)
        if unknown:
            raise ValueError(f"{SERIES_FILE}: {r['prefix']}: provisioning {sorted(unknown)}")
        rows.append(
            MachineSeries(
                r["prefix"],
                r["series"],
                tuple(d for d in r["boot_disk_types"].split("|") if d),
                modes,
                int(r["local_ssd_count"]),
            )
        )
    return tuple(sorted(rows, key=lambda s: -len(s.prefix)))


def series_of(machine_type: str, data_dir: Path = DATA_DIR) -> MachineSeries | None:
    """The series row for ``machine_type``, or ``None`` when the table does not cover it."""
    for s in load_series(data_dir):
        # A row ending in '-' covers the series; any other row is one exact machine type.
        if machine_type == s.prefix or (
            s.prefix.endswith("-") and machine_type.startswith(s.prefix)
        ):
            return s
    return None
