"""Turn live Compute API listings into the vendored GCP catalog files (pure; no SDK here).

``infra.catalog_refresh`` fetches the listings and writes what these functions return. Prices are
not in the Compute API: a row keeps the price of the same row in the current file, or stays empty.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

# GPU counts a VM can take, up to the zone's maximumCardsPerInstance
# (https://cloud.google.com/compute/docs/gpus: every GPU machine shape uses one of these).
_COUNTS = (1, 2, 4, 8, 16)

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
        if not is_gpu_accelerator(o.accelerator):  # TPU machine types list accelerators too
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


SERIES_COLUMNS = ("prefix", "series", "boot_disk_types", "provisioning", "local_ssd_count", "gpus")


def series_covers(prefix: str, machine_type: str) -> bool:
    """A ``gcp_machine_series.csv`` row ending in ``-`` covers its series, any other row one type."""
    return machine_type == prefix or (prefix.endswith("-") and machine_type.startswith(prefix))


def series_gpu_rows(
    rows: Iterable[Mapping[str, str]], offers: Iterable[MachineOffer]
) -> tuple[list[dict[str, str]], list[str]]:
    """``gcp_machine_series.csv`` rows with ``gpus`` regenerated, and the GPU machine types no row
    covers (a series new to the table: its disks and provisioning models are read by hand).

    A row covering a listed type with GPUs (``machineTypes[].accelerators``) is ``built-in``; a row
    the listing shows no GPU type of keeps its value (``attached`` comes from the N1 docs)."""
    gpu_types = sorted({o.name for o in offers if is_gpu_accelerator(o.accelerator)})
    out: list[dict[str, str]] = []
    covered: set[str] = set()
    for r in rows:
        mine = {t for t in gpu_types if series_covers(r["prefix"], t)}
        covered |= mine
        out.append(
            {**{c: r.get(c, "") for c in SERIES_COLUMNS}, **({"gpus": "built-in"} if mine else {})}
        )
    return out, [t for t in gpu_types if t not in covered]


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


# --- AWS ---------------------------------------------------------------------------------------

AWS_INSTANCE_COLUMNS = (
    "instance_type",
    "gpu_model",
    "gpus",
    "vcpus",
    "memory_gib",
    "region",
    "availability_zone",
    "price_per_hour",
    "spot_price_per_hour",
    "gpu_fraction",
    "efa_interfaces",
    "local_storage_gb",
    "efa_cards",
)
AWS_FAMILY_COLUMNS = ("family", "architecture", "accelerator_label", "eks_nvidia_ami", "note")
# What a family row says before someone checks the EKS AMI table for it.
UNREVIEWED = (
    "not reviewed: check https://docs.aws.amazon.com/eks/latest/userguide/ml-eks-optimized-ami.html"
)


@dataclass(frozen=True, slots=True)
class AwsTypeInfo:
    """The facts of one NVIDIA GPU instance type from EC2 ``DescribeInstanceTypes``."""

    name: str
    gpu_model: str
    gpus: int
    gpu_fraction: float
    vcpus: int
    memory_mib: int
    architecture: str
    efa_interfaces: int
    local_storage_gb: int
    efa_cards: tuple[int, ...] = ()

    @property
    def family(self) -> str:
        """``g4dn`` of ``g4dn.xlarge``."""
        return self.name.split(".", 1)[0]


def aws_type_info(item: Mapping[str, Any]) -> AwsTypeInfo | None:
    """One ``InstanceTypes[]`` item of DescribeInstanceTypes, or ``None`` if no NVIDIA GPU.

    A fractional type (g6f) reports ``Count`` 0, ``LogicalGpuCount`` 1 and its share in
    ``GpuPartitionSize``: the node sees one (partitioned) GPU.
    """
    gpu_info = item.get("GpuInfo")
    if not isinstance(gpu_info, Mapping):
        return None
    gpus = [g for g in gpu_info.get("Gpus", []) if g.get("Manufacturer") == "NVIDIA"]
    if not gpus:
        return None
    g = gpus[0]
    count = int(g.get("Count") or 0)
    fraction = float(g.get("GpuPartitionSize") or 1.0) if count == 0 else 1.0
    if count == 0:
        count = int(g.get("LogicalGpuCount") or 0)
    if count == 0:
        return None
    archs = list(_get(item, "ProcessorInfo", "SupportedArchitectures") or [])
    net = _get(item, "NetworkInfo") or {}
    efa = int(_get(net, "EfaInfo", "MaximumEfaInterfaces") or 0) if net.get("EfaSupported") else 0
    # Which network cards take an EFA: NetworkCards[].InterfaceTypes lists "efa" or "efa-only"
    # there (p6-b300.48xlarge: 17 cards, card 0 ENA only, cards 1-16 EFA).
    cards: tuple[int, ...] = ()
    if efa:
        cards = tuple(
            sorted(
                int(c.get("NetworkCardIndex") or 0)
                for c in net.get("NetworkCards") or []
                if {"efa", "efa-only"} & set(c.get("InterfaceTypes") or ())
            )
        )
    return AwsTypeInfo(
        name=str(item["InstanceType"]),
        gpu_model=str(g.get("Name")),
        gpus=count,
        gpu_fraction=fraction,
        vcpus=int(_get(item, "VCpuInfo", "DefaultVCpus") or 0),
        memory_mib=int(_get(item, "MemoryInfo", "SizeInMiB") or 0),
        architecture="x86_64" if "x86_64" in archs else "arm64",
        efa_interfaces=efa,
        local_storage_gb=int(_get(item, "InstanceStorageInfo", "TotalSizeInGB") or 0),
        efa_cards=cards,
    )


def format_cards(cards: Iterable[int]) -> str:
    """Card indices as ranges: ``0-31``, ``1-16``, ``0 2-3``; empty for none."""
    runs: list[list[int]] = []
    for c in sorted(cards):
        if runs and c == runs[-1][-1] + 1:
            runs[-1].append(c)
        else:
            runs.append([c])
    return " ".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)


def _get(obj: Any, *keys: str) -> Any:
    for k in keys:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(k)
    return obj


def aws_instance_rows(
    types: Mapping[str, AwsTypeInfo],
    offerings: Iterable[tuple[str, str, str]],
    prices: Mapping[tuple[str, ...], tuple[str, str]],
) -> list[dict[str, str]]:
    """``aws_gpu_instances.csv`` rows: one per NVIDIA type and AZ ID offering it.

    Args:
        types: instance type -> facts (NVIDIA types only).
        offerings: (region, AZ ID, instance type) from DescribeInstanceTypeOfferings.
        prices: (type, region, AZ ID) -> (on-demand, spot) from the previous file; a type new to
            the file gets its price from another AZ of the region, else none (unknown).
    """
    by_region: dict[tuple[str, str], tuple[str, str]] = {}
    for (t, region, _), p in prices.items():
        by_region.setdefault((t, region), p)
    rows: list[dict[str, str]] = []
    for region, az, t in offerings:
        info = types.get(t)
        if info is None:
            continue
        price, spot = prices.get((t, region, az)) or by_region.get((t, region), ("", ""))
        rows.append(
            {
                "instance_type": t,
                "gpu_model": info.gpu_model,
                "gpus": str(info.gpus),
                "vcpus": str(info.vcpus),
                "memory_gib": f"{info.memory_mib / 1024:g}",
                "region": region,
                "availability_zone": az,
                "price_per_hour": price,
                "spot_price_per_hour": spot,
                "gpu_fraction": "" if info.gpu_fraction == 1.0 else f"{info.gpu_fraction:g}",
                "efa_interfaces": str(info.efa_interfaces),
                "local_storage_gb": str(info.local_storage_gb),
                "efa_cards": format_cards(info.efa_cards),
            }
        )
    rows.sort(key=lambda r: (r["instance_type"], r["region"], r["availability_zone"]))
    return rows


def aws_family_rows(
    types: Mapping[str, AwsTypeInfo], previous: Iterable[Mapping[str, str]]
) -> tuple[list[dict[str, str]], list[str]]:
    """``aws_gpu_families.csv`` rows: the reviewed rows kept (architecture from the API when it
    lists the family), and a row for every NVIDIA family the API lists that the file lacks.

    Returns:
        (rows sorted by family, families added unreviewed).
    """
    rows = {r["family"]: {c: r.get(c, "") for c in AWS_FAMILY_COLUMNS} for r in previous}
    added: list[str] = []
    for info in sorted(types.values(), key=lambda i: i.name):
        row = rows.get(info.family)
        if row is None:
            label = "nvidia-" + info.gpu_model.lower().replace(" ", "-")
            rows[info.family] = {
                "family": info.family,
                "architecture": info.architecture,
                "accelerator_label": label,
                "eks_nvidia_ami": "no",
                "note": UNREVIEWED,
            }
            added.append(info.family)
        else:
            row["architecture"] = info.architecture
    return [rows[f] for f in sorted(rows)], added
