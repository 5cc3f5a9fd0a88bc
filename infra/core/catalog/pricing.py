"""The catalog's prices: node prices per zone or AZ, platform unit prices, and the date of each.

The catalog answers prices from the same parsed files it answers shapes from
(``vendored.table``): GPU prices per zone and count (``gcp_accelerators.csv``), built-in-GPU
machine prices per zone (``gcp_machine_types.csv``; a row prices only vCPUs and memory, its GPUs
are the accelerator row with the same count and zone), CPU/N1 host prices per region
(``gcp_vm_prices.csv``), AWS instance prices per AZ ID (``aws_gpu_instances.csv``,
``aws_vm_prices.csv``) and everything else a stack pays for (``platform_prices.csv``: one row per
item, cloud and region, each with its own source and read date). A price the files lack is
``None``, never 0. Get one with ``Catalog.load().prices`` (or ``Catalog(data_dir).prices``).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, fields
from pathlib import Path

from infra.core.catalog.vendored import DATA_DIR, Catalog, prices_as_of, read_header, table

Price = tuple[float | None, float | None]  # (on-demand, spot) USD per hour
# Node price rows re-read at the clouds' price APIs, with the day each was read
# (python -m infra.catalog_refresh --verify-prices --write).
PRICE_CHECKS = "price_checks.csv"
PLATFORM_PRICES = "platform_prices.csv"
# Node price rows a second source disagrees with (scripts/import_platform_prices.py --gcp).
DISAGREEMENTS = "price_disagreements.csv"
_JSON_NAMES = {"catalog_usd": "catalogPerHour", "other_usd": "otherPerHour", "as_of": "asOf"}
GCP_PRICE_FILES = ("gcp_accelerators.csv", "gcp_machine_types.csv", "gcp_vm_prices.csv")
AWS_PRICE_FILES = ("aws_gpu_instances.csv", "aws_vm_prices.csv")


@dataclass(frozen=True, slots=True)
class UnitPrice:
    """One row of ``platform_prices.csv``."""

    item: str
    unit: str  # per_hour | per_gb_month | per_gib (a usage price: quoted, never counted)
    usd: float
    source: str
    as_of: str
    verified: bool = True  # False: the row has no quote, it was not re-read at the source on as_of

    @property
    def dated(self) -> str:
        """``as_of`` as a reader should take it: a date the price was read, or one it was not."""
        return self.as_of if self.verified else f"{self.as_of}, not re-read at the source"


@dataclass(frozen=True, slots=True)
class Disagreement:
    """A node price of the catalog that a second source disagrees with (``price_disagreements.csv``
    row): the catalog's price stands, shown as not verified beside the other source's."""

    item: str  # machine type
    region: str
    provisioning: str  # on-demand | spot
    covers: str  # what the price is of: vCPUs and memory, and the built-in GPUs
    catalog_usd: float
    other_usd: float
    source: str
    as_of: str

    def to_json(self) -> dict[str, object]:
        """Its fields under their ``--json`` names (camelCase; the prices per hour)."""
        return {_JSON_NAMES.get(f.name, f.name): getattr(self, f.name) for f in fields(self)}


class Prices:
    """Price look-ups over one catalog directory; each table is built on first use, so a GKE plan
    never builds the AWS prices and vice versa."""

    def __init__(self, data_dir: Path = DATA_DIR, *, catalog: Catalog | None = None) -> None:
        self.data_dir = data_dir
        if catalog is None:
            catalog = Catalog.load() if data_dir == DATA_DIR else Catalog(data_dir)
        self.catalog = catalog

    @classmethod
    def load(cls) -> Prices:
        """Prices from the vendored data directory (the default catalog's)."""
        return Catalog.load().prices

    @functools.cached_property
    def as_of(self) -> dict[str, str]:
        """Cloud -> the oldest prices date of its node price files."""
        return {
            "gcp": _oldest_date(GCP_PRICE_FILES, self.data_dir),
            "aws": _oldest_date(AWS_PRICE_FILES, self.data_dir),
        }

    def _table(self, names: tuple[str, ...], key: tuple[str, str]) -> dict[tuple[str, str], Price]:
        return {
            (r[key[0]], r[key[1]]): (_float(r["price_per_hour"]), _float(r["spot_price_per_hour"]))
            for name in names
            for r in table(name, self.data_dir)
        }

    @functools.cached_property
    def _gcp_machine_zone(self) -> dict[tuple[str, str], Price]:
        return self._table(("gcp_machine_types.csv",), ("machine_type", "zone"))

    @functools.cached_property
    def _gcp_vm_region(self) -> dict[tuple[str, str], Price]:
        return self._table(("gcp_vm_prices.csv",), ("machine_type", "region"))

    @functools.cached_property
    def _aws_az(self) -> dict[tuple[str, str], Price]:
        return self._table(AWS_PRICE_FILES, ("instance_type", "availability_zone"))

    # --- node prices ----------------------------------------------------------------------
    def gcp_vm(self, machine_type: str, zone: str) -> Price:
        """Price of the machine's vCPUs and memory in ``zone`` (GPUs excluded)."""
        found = self._gcp_machine_zone.get((machine_type, zone))
        if found is not None:
            return found
        return self._gcp_vm_region.get((machine_type, zone.rsplit("-", 1)[0]), (None, None))

    def gcp_node(self, machine_type: str, accelerator: str | None, count: int, zone: str) -> Price:
        """A GKE node in ``zone``: its machine plus its ``count`` GPUs (attached or built in)."""
        vm = self.gcp_vm(machine_type, zone)
        gpu: Price = (0.0, 0.0)
        if accelerator and count:
            gpu = self.catalog.gcp_price(accelerator, count, zone) or (None, None)
        return (_add(vm[0], gpu[0]), _add(vm[1], gpu[1]))

    def aws_instance(self, instance_type: str, az_id: str) -> Price:
        """An EC2 instance in the AZ ``az_id`` (``usw2-az1``)."""
        return self._aws_az.get((instance_type, az_id), (None, None))

    # --- platform unit prices ---------------------------------------------------------------
    @functools.cached_property
    def units(self) -> dict[tuple[str, str, str], UnitPrice]:
        """``(cloud, item, region) -> price`` (region ``*``: every region)."""
        return {
            (r["cloud"], r["item"], r["region"]): UnitPrice(
                r["item"],
                r["unit"],
                float(r["price_usd"]),
                r["source"],
                r["as_of"],
                bool(r["quote"].strip()),
            )
            for r in table(PLATFORM_PRICES, self.data_dir)
        }

    def unit(self, cloud: str, item: str, region: str) -> UnitPrice | None:
        """The price of ``item`` in ``region`` (or in every region), ``None`` if unknown."""
        return self.units.get((cloud, item, region)) or self.units.get((cloud, item, "*"))

    # --- a second source's disagreements ------------------------------------------------------
    @functools.cached_property
    def _disagreements(self) -> dict[tuple[str, str, str, str], Disagreement]:
        if not (self.data_dir / DISAGREEMENTS).exists():
            return {}
        return {
            (r["cloud"], r["item"], r["region"], r["provisioning"]): Disagreement(
                item=r["item"],
                region=r["region"],
                provisioning=r["provisioning"],
                covers=r["covers"],
                catalog_usd=float(r["catalog_usd"]),
                other_usd=float(r["other_usd"]),
                source=r["source"],
                as_of=r["as_of"],
            )
            for r in table(DISAGREEMENTS, self.data_dir)
        }

    def disagreement(
        self,
        cloud: str,
        machine_type: str,
        accelerator: str | None,
        count: int,
        zone: str,
        spot: bool,
    ) -> Disagreement | None:
        """What a second source says against the node price of ``machine_type`` in ``zone``, while
        the catalog still holds the price it disagreed with."""
        prov = "spot" if spot else "on-demand"
        found = self._disagreements.get((cloud, machine_type, zone.rsplit("-", 1)[0], prov))
        if found is None:
            return None
        # The rows are the GCP cross-check's (price_crosscheck.py): a built-in-GPU machine's price
        # with its GPUs, a host's without the GPUs it attaches.
        built_in = (machine_type, zone) in self._gcp_machine_zone
        price = (
            self.gcp_node(machine_type, accelerator, count, zone)
            if built_in
            else self.gcp_vm(machine_type, zone)
        )
        now = price[1] if spot else price[0]
        return found if now is not None and round(now, 6) == found.catalog_usd else None

    # --- each node price row's own date --------------------------------------------------------
    @functools.cached_property
    def _read_at_source(self) -> dict[tuple[str, str, str], tuple[float, str]]:
        """``price_checks.csv``: (file, item, region) -> (on-demand price read, the day read)."""
        if not (self.data_dir / PRICE_CHECKS).exists():
            return {}
        return {
            (r["file"], r["item"], r["region"]): (float(r["price_usd"]), r["as_of"])
            for r in table(PRICE_CHECKS, self.data_dir)
            if r["price_usd"]
        }

    @functools.cached_property
    def _aws_rows(self) -> dict[tuple[str, str], tuple[str, str]]:
        """(instance type, AZ ID) -> (file, region)."""
        return {
            (r["instance_type"], r["availability_zone"]): (name, r["region"])
            for name in AWS_PRICE_FILES
            for r in table(name, self.data_dir)
        }

    def row_date(self, file: str, item: str, region: str, price: Price, spot: bool) -> str:
        """The date of one node price row: the day its on-demand price was read at the cloud's
        price API (``price_checks.csv``, while the row still holds that price), else its file's."""
        read = self._read_at_source.get((file, item, region))
        if not spot and read is not None and price[0] is not None and read[0] == price[0]:
            return read[1]
        return _oldest_date((file,), self.data_dir)

    def gcp_vm_date(self, machine_type: str, zone: str, spot: bool) -> str:
        region = zone.rsplit("-", 1)[0]
        if (machine_type, zone) in self._gcp_machine_zone:
            price = self._gcp_machine_zone[(machine_type, zone)]
            return self.row_date("gcp_machine_types.csv", machine_type, region, price, spot)
        price = self._gcp_vm_region.get((machine_type, region), (None, None))
        return self.row_date("gcp_vm_prices.csv", machine_type, region, price, spot)

    def gcp_gpu_date(self, accelerator: str, count: int, zone: str, spot: bool) -> str:
        price = self.catalog.gcp_price(accelerator, count, zone) or (None, None)
        item, region = f"{accelerator} x{count}", zone.rsplit("-", 1)[0]
        return self.row_date("gcp_accelerators.csv", item, region, price, spot)

    def aws_date(self, instance_type: str, az_id: str, spot: bool) -> str:
        file, region = self._aws_rows.get((instance_type, az_id), ("aws_vm_prices.csv", ""))
        price = self.aws_instance(instance_type, az_id)
        return self.row_date(file, instance_type, region, price, spot)


def _float(text: str) -> float | None:
    return float(text) if text else None


def _add(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


def _oldest_date(names: Iterable[str], data_dir: Path) -> str:
    """The oldest prices date of the files (each per its header); unknown if any file's is."""
    dates = [prices_as_of(read_header(n, data_dir)) for n in names]
    return "unknown" if not dates or "unknown" in dates else min(dates)
