"""The vendored GPU catalog: which GPUs and machine/instance types exist where, and their shapes.

Runtime code never asks the cloud what exists; it reads these files (``infra/core/data/*.csv``),
each headed by ``#`` lines naming its source and date. ``python -m infra.catalog_refresh``
regenerates the GCP files from the live Compute API.
"""

from __future__ import annotations

import copy
import csv
import functools
import itertools
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # pricing builds on this module
    from infra.core.catalog.pricing import Prices

DATA_DIR = Path(__file__).parent.parent / "data"
LIMITS = "receiver_limits.csv"  # read by infra.core.rules.limits


Row = Mapping[str, str]


def table(name: str, data_dir: Path) -> tuple[Row, ...]:
    """Rows of a catalog CSV (read-only), parsed once per process: again only if the file changed.

    Every reader of ``infra/core/data`` goes through here (``read_rows``, ``read_header``, the
    ``Catalog`` and its prices), so two views of one file never parse it twice.
    """
    return _parsed(*_identity(data_dir / name))[1]


def read_rows(name: str, data_dir: Path) -> Iterator[dict[str, str]]:
    """Rows of a catalog CSV as dicts of their own (a caller may edit them), without the header."""
    for row in table(name, data_dir):
        yield dict(row)


def read_header(name: str, data_dir: Path) -> list[str]:
    """The ``#`` provenance lines of a catalog CSV, without the ``# `` prefix."""
    return list(_parsed(*_identity(data_dir / name))[0])


def forget() -> None:
    """Drop every parsed file: a writer calls this after rewriting one (a rewrite in the same
    clock tick as the read before it could keep the file's size and mtime)."""
    _parsed.cache_clear()


def _identity(path: Path) -> tuple[Path, int, int, int]:
    st = path.stat()
    return path, st.st_ino, st.st_mtime_ns, st.st_size


# Bounded: a test run or a --old-catalog plan reads copies of the data directory elsewhere; the
# vendored directory has about 30 files.
@functools.lru_cache(maxsize=128)
def _parsed(
    path: Path, _ino: int, _mtime: int, _size: int
) -> tuple[tuple[str, ...], tuple[Row, ...]]:
    with path.open(encoding="utf-8", newline="") as f:
        lines = f.readlines()
    header = tuple(line[1:].strip() for line in itertools.takewhile(_comment, lines))
    rows = csv.DictReader(line for line in lines if not _comment(line))
    return header, tuple(MappingProxyType(r) for r in rows)


def _comment(line: str) -> bool:
    return line.startswith("#")


_DATE = re.compile(r"\b(20\d\d-\d\d-\d\d)\b")
PRICES_AS_OF = "prices as of: "


def prices_as_of(header: list[str]) -> str:
    """The date a catalog file's prices are from, per its header.

    A ``prices as of: <date>`` line wins (a regenerated file keeps older prices: its fetch date is
    not theirs); a file whose prices were kept from a previous one without that line is
    ``unknown``; otherwise the first date of the header (prices fetched with the rows).
    """
    for line in header:
        if line.startswith(PRICES_AS_OF):
            m = _DATE.search(line)
            return m.group(1) if m else "unknown"
    if any("kept from the previous file" in line for line in header):
        return "unknown"
    m = _DATE.search(" ".join(header))
    return m.group(1) if m else "unknown"


def _price(text: str) -> float | None:
    return float(text) if text else None


def parse_cards(text: str) -> tuple[int, ...]:
    """Network card indices from ``0-31`` / ``1-16`` / ``0 2-3`` (build.format_cards)."""
    out: list[int] = []
    for part in text.split():
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class UserShape:
    """A GPU machine / instance type declared in a stack file (``gpuPools[].shape``).

    Attributes:
        cloud: ``gcp`` (a GCE machine type) or ``aws`` (an EC2 instance type).
        name: the machine / instance type.
        gpu_model: GKE accelerator type, or the EKS GPU model.
        gpus: GPUs per node.
        vcpus: vCPUs per node.
        memory_gib: memory per node.
        region: the stack's region.
        zones: zones (GKE) or AZ IDs (EKS) that offer the type, per the user.
    """

    cloud: str
    name: str
    gpu_model: str
    gpus: int
    vcpus: int
    memory_gib: float
    region: str
    zones: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class GcpMachine:
    """A GCP machine type's shape.

    Attributes:
        name: e.g. ``n1-highmem-8`` or ``g2-standard-8``.
        vcpus: vCPUs.
        memory_gib: memory in GiB.
        accelerator: built-in GPU type (a2/a3/g2), ``None`` for attachable-GPU N1 types.
        accelerator_count: built-in GPU count, ``None`` for N1.
        zones: zones offering the type, ``None`` when not zone-restricted in the catalog (N1).
    """

    name: str
    vcpus: int
    memory_gib: float
    accelerator: str | None
    accelerator_count: int | None
    zones: frozenset[str] | None


@dataclass(frozen=True, slots=True)
class AttachLimit:
    """How many vCPUs and GB of memory an N1 machine may have with ``count`` GPUs attached."""

    max_vcpus: int
    max_memory_gb: int


@dataclass(frozen=True, slots=True)
class GpuModel:
    """What a GCP accelerator type is, for people and for MIG rules."""

    model: str
    memory_mib: int
    mig_profiles: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class AwsInstance:
    """An AWS GPU instance type's shape and where it is offered.

    Attributes:
        name: e.g. ``g4dn.xlarge``.
        gpu_model: ``T4``, ``A10G``, ``L4`` ...
        gpus: GPUs per instance.
        vcpus: vCPUs (what EC2 quotas count).
        memory_gib: memory in GiB.
        az_ids: region -> AZ IDs (``usw2-az1``) offering the type.
        price_per_hour: lowest on-demand price seen, USD; ``None`` when no price is on file.
        gpu_fraction: the GPU share of a fractional type (g6f: 0.125 of an L4, ``gpus`` 0);
            1.0 for whole GPUs (DescribeInstanceTypes GpuInfo.Gpus[].GpuPartitionSize).
        efa_interfaces: EFA interfaces the type takes (0: no EFA; NetworkInfo.EfaInfo).
        local_storage_gb: instance-store NVMe, GB (InstanceStorageInfo.TotalSizeInGB).
        efa_cards: network card indices that take an EFA (NetworkInfo.NetworkCards[]
            .InterfaceTypes lists efa-only); p6-b300.48xlarge's card 0 takes none.
    """

    name: str
    gpu_model: str
    gpus: int
    vcpus: int
    memory_gib: float
    az_ids: dict[str, frozenset[str]]
    price_per_hour: float | None
    gpu_fraction: float = 1.0
    efa_interfaces: int = 0
    local_storage_gb: int = 0
    efa_cards: tuple[int, ...] = ()

    @property
    def family(self) -> str:
        """Instance family (``g4dn``, ``p5`` ...)."""
        return self.name.split(".", 1)[0]


@dataclass(frozen=True, slots=True)
class AwsGpuFamily:
    """Per-family facts of an AWS GPU instance family (``aws_gpu_families.csv``).

    Attributes:
        family: ``g4dn``, ``p5`` ...
        architecture: CPU architecture of every size of the family.
        accelerator_label: the ``k8s.amazonaws.com/accelerator`` label value.
        eks_nvidia_ami: whether the EKS NVIDIA AMIs support the family.
        note: why not, when they do not.
    """

    family: str
    architecture: Literal["x86_64", "arm64"]
    accelerator_label: str
    eks_nvidia_ami: bool
    note: str = ""


class Catalog:
    """Typed, cached view over the vendored CSVs. Build once with ``Catalog.load()``."""

    # Each cloud's tables are read on first use: a GKE plan never reads the 2,000 AWS rows.
    _acc: dict[str, dict[str, set[int]]]  # accelerator -> zone -> set of offered counts
    _acc_price: dict[tuple[str, int, str], tuple[float | None, float | None]]
    _machines: dict[str, GcpMachine]
    _attach: dict[str, dict[int, AttachLimit]]
    _models: dict[str, GpuModel]
    _aws: dict[str, AwsInstance]
    _aws_families: dict[str, AwsGpuFamily]
    _GCP = frozenset({"_acc", "_acc_price", "_machines", "_attach", "_models"})
    _AWS = frozenset({"_aws", "_aws_families"})

    def __init__(self, data_dir: Path = DATA_DIR) -> None:
        self.data_dir = data_dir

    def __getattr__(self, name: str) -> Any:
        # Called only for an attribute not yet set: load that cloud's tables once, then retry.
        if name in Catalog._GCP:
            self._load_gcp()
        elif name in Catalog._AWS:
            self._load_aws()
        else:
            raise AttributeError(name)
        return self.__dict__[name]

    def _load_gcp(self) -> None:
        data_dir = self.data_dir
        self._acc = defaultdict(lambda: defaultdict(set))
        self._acc_price = {}
        for r in table("gcp_accelerators.csv", data_dir):
            self._acc[r["accelerator"]][r["zone"]].add(int(r["count"]))
            # A refreshed row may have no price yet (the Compute API lists none).
            self._acc_price[(r["accelerator"], int(r["count"]), r["zone"])] = (
                _price(r["price_per_hour"]),
                _price(r["spot_price_per_hour"]),
            )
        self._machines = {}
        zones: dict[str, set[str]] = defaultdict(set)
        shapes: dict[str, Row] = {}
        for r in table("gcp_machine_types.csv", data_dir):
            zones[r["machine_type"]].add(r["zone"])
            shapes[r["machine_type"]] = r
        for name, r in shapes.items():
            self._machines[name] = GcpMachine(
                name,
                int(r["vcpus"]),
                float(r["memory_gib"]),
                r["accelerator"] or None,
                int(r["accelerator_count"]) if r["accelerator_count"] else None,
                frozenset(zones[name]),
            )
        for r in table("gcp_n1_machine_types.csv", data_dir):
            self._machines[r["machine_type"]] = GcpMachine(
                r["machine_type"], int(r["vcpus"]), float(r["memory_gib"]), None, None, None
            )
        self._attach = defaultdict(dict)
        for r in table("gcp_gpu_attach_limits.csv", data_dir):
            self._attach[r["accelerator"]][int(r["count"])] = AttachLimit(
                int(r["max_vcpus"]), int(r["max_memory_gb"])
            )
        self._models = {}
        for r in table("gcp_accelerator_models.csv", data_dir):
            self._models[r["accelerator"]] = GpuModel(
                r["model"],
                int(r["memory_mib"]),
                tuple(p for p in r["mig_profiles"].split("|") if p),
            )

    def _load_aws(self) -> None:
        data_dir = self.data_dir
        self._aws = {}
        aws_az: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
        aws_shape: dict[str, Row] = {}
        aws_price: dict[str, float] = {}
        for r in table("aws_gpu_instances.csv", data_dir):
            t = r["instance_type"]
            aws_az[t][r["region"]].add(r["availability_zone"])
            aws_shape[t] = r
            price = _price(r["price_per_hour"])  # a refreshed row of a new type may have none
            if price is not None:
                aws_price[t] = min(price, aws_price.get(t, price))
        for t, r in aws_shape.items():
            self._aws[t] = AwsInstance(
                t,
                r["gpu_model"],
                int(r["gpus"]),
                int(r["vcpus"]),
                float(r["memory_gib"]),
                {region: frozenset(ids) for region, ids in aws_az[t].items()},
                aws_price.get(t),
                float(r.get("gpu_fraction") or 1.0),
                int(r.get("efa_interfaces") or 0),
                int(r.get("local_storage_gb") or 0),
                parse_cards(r.get("efa_cards") or ""),
            )
        self._aws_families = {}
        for r in table("aws_gpu_families.csv", data_dir):
            arch = r["architecture"]
            if arch != "x86_64" and arch != "arm64":
                raise ValueError(f"aws_gpu_families.csv: {r['family']}: architecture {arch!r}")
            self._aws_families[r["family"]] = AwsGpuFamily(
                r["family"],
                arch,
                r["accelerator_label"],
                r["eks_nvidia_ami"] == "yes",
                r.get("note") or "",
            )

    def with_user_shapes(self, shapes: Iterable[UserShape]) -> Catalog:
        """A copy that also knows ``shapes``: types the vendored data lacks, as a stack declares them.

        The planners keep asking the catalog, so every other rule (zones in the region, counts,
        sharing, names) is still checked against these facts.
        """
        shapes = list(shapes)
        if not shapes:
            return self
        # Load both clouds' tables before the shallow copy, so the copy shares none it then edits.
        if "_acc" not in self.__dict__:
            self._load_gcp()
        if "_aws" not in self.__dict__:
            self._load_aws()
        new = copy.copy(self)
        new.__dict__.pop("prices", None)  # priced over the copy's own tables
        new._machines = dict(self._machines)
        new._acc = defaultdict(
            lambda: defaultdict(set),
            {
                a: defaultdict(set, {z: set(c) for z, c in zs.items()})
                for a, zs in self._acc.items()
            },
        )
        new._aws = dict(self._aws)
        new._aws_families = dict(self._aws_families)
        for s in shapes:
            if s.cloud == "gcp":
                new._machines[s.name] = GcpMachine(
                    s.name, s.vcpus, s.memory_gib, s.gpu_model, s.gpus, frozenset(s.zones)
                )
                for z in s.zones:
                    new._acc[s.gpu_model][z].add(s.gpus)
            else:
                azs = {s.region: frozenset(s.zones)}
                # A declared shape has no price on file: unknown (None), never 0.
                new._aws[s.name] = AwsInstance(
                    s.name, s.gpu_model, s.gpus, s.vcpus, s.memory_gib, azs, None
                )
                fam = s.name.split(".", 1)[0]
                # A family the catalog lacks: x86_64, GPU-labelled like GKE, on the NVIDIA AMI.
                new._aws_families.setdefault(
                    fam, AwsGpuFamily(fam, "x86_64", f"nvidia-{s.gpu_model.lower()}", True)
                )
        return new

    @classmethod
    @functools.cache
    def load(cls) -> Catalog:
        """The catalog from the vendored data directory (read once per process)."""
        return cls()

    @functools.cached_property
    def prices(self) -> Prices:
        """This catalog's prices (node, GPU and platform unit prices, each with its date)."""
        from infra.core.catalog.pricing import Prices

        return Prices(self.data_dir, catalog=self)

    @functools.cached_property
    def stack_node_labels(self) -> bool:
        """Whether the gpu-infra of this catalog labels the GPU nodes it adds to a shared cluster
        with their stack and names its GKE pools there per stack (``infra.core.neighbours``).
        An older gpu-infra's catalog (``--old-catalog REF``) lacks the ``pulumi.stack_name``
        limit that came with them, so ``--diff`` plans its side as that gpu-infra deployed it."""
        return any(r["limit"] == "pulumi.stack_name" for r in table(LIMITS, self.data_dir))

    # --- GCP -------------------------------------------------------------------------------
    def gcp_accelerators(self) -> list[str]:
        """Every accelerator type the catalog knows, sorted."""
        return sorted(self._acc)

    def gcp_zones_offering(
        self, accelerator: str, region: str, count: int | None = None
    ) -> list[str]:
        """Zones of ``region`` offering ``accelerator`` (with ``count`` GPUs, if given), sorted."""
        return sorted(
            z
            for z, counts in self._acc.get(accelerator, {}).items()
            if z.rsplit("-", 1)[0] == region and (count is None or count in counts)
        )

    def gcp_regions_offering(self, accelerator: str) -> list[str]:
        """Regions with at least one zone offering ``accelerator``, sorted."""
        return sorted({z.rsplit("-", 1)[0] for z in self._acc.get(accelerator, {})})

    def gcp_counts(self, accelerator: str) -> list[int]:
        """GPU counts per VM the catalog lists for ``accelerator``, sorted."""
        return sorted({c for counts in self._acc.get(accelerator, {}).values() for c in counts})

    def gcp_machine(self, name: str) -> GcpMachine | None:
        """The machine type's shape, or ``None`` if the catalog does not know it."""
        return self._machines.get(name)

    def gcp_machines_with(self, accelerator: str) -> list[GcpMachine]:
        """Bundled-GPU machine types that carry ``accelerator``, by GPU count then name."""
        return sorted(
            (m for m in self._machines.values() if m.accelerator == accelerator),
            key=lambda m: (m.accelerator_count or 0, m.name),
        )

    def gcp_attach_limits(self, accelerator: str) -> dict[int, AttachLimit]:
        """For GPUs attached to N1: allowed count -> ceiling; empty if not attachable to N1."""
        return dict(self._attach.get(accelerator, {}))

    def gcp_accelerator_of(self, model: str) -> str | None:
        """The GCP accelerator type of GPU ``model`` (case-insensitive); ``None``: none."""
        wanted = model.lower()
        return next((a for a, m in self._models.items() if m.model.lower() == wanted), None)

    def gcp_model(self, accelerator: str) -> GpuModel:
        """Model name, memory and MIG profiles of ``accelerator`` (the type itself if unmapped)."""
        return self._models.get(accelerator, GpuModel(accelerator, 0, ()))

    def gcp_price(
        self, accelerator: str, count: int, zone: str
    ) -> tuple[float | None, float | None] | None:
        """(on-demand, spot) USD/hour for ``count`` GPUs in ``zone``, if the catalog has it."""
        return self._acc_price.get((accelerator, count, zone))

    # --- AWS -------------------------------------------------------------------------------
    def aws_instance(self, name: str) -> AwsInstance | None:
        """The GPU instance type's shape and offerings, or ``None`` if unknown or not a GPU type."""
        return self._aws.get(name)

    def aws_instances(self) -> list[str]:
        """Every GPU instance type the catalog knows, sorted."""
        return sorted(self._aws)

    def aws_family(self, family: str) -> AwsGpuFamily | None:
        """Facts of a GPU instance family (``g4dn``), or ``None`` if it has no NVIDIA GPU."""
        return self._aws_families.get(family)

    def aws_families(self) -> list[str]:
        """Every GPU instance family the catalog knows, sorted."""
        return sorted(self._aws_families)

    def aws_sizes(self, family: str) -> list[str]:
        """The catalog's instance types of ``family`` (``g4dn.xlarge`` ...), sorted."""
        return [t for t in self.aws_instances() if t.split(".", 1)[0] == family]
