"""Quota demand of a stack, decided in pure code: which quota, in which region, needs how much.

Inputs are the parsed stack config (``infra.core.config.StackConfig``) and, when the planner has
it, the plan's per-pool facts; outputs are ``DemandRow`` values keyed by (scope, region, quota).
No cloud calls and no SDK imports here: ``--offline`` prints exactly this.

Rules (reference quota.md §1.1, §2.1, §5):

* GCP: per pool, GPUs = GPUs per node x (max nodes + upgrade surge) against ``NVIDIA_<X>_GPUS`` or,
  for spot pools, ``PREEMPTIBLE_NVIDIA_<X>_GPUS``; H100-and-newer on-demand GPUs against the Cloud
  Quotas family quota ``GPUS-PER-GPU-FAMILY-per-project-region`` (dimension ``gpu_family``);
  vCPUs x nodes against the machine family's CPU metric (``PREEMPTIBLE_CPUS`` for spot); every
  pool's GPUs and vCPUs also against the global ``GPUS_ALL_REGIONS`` / ``CPUS_ALL_REGIONS``.
* AWS: per node group, vCPUs x max nodes against the family's quota code (spot codes separate),
  summed per region and code. Managed node groups scale with ``maxSize`` as a total, so no surge.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal

from infra.core.catalog import Catalog, read_rows
from infra.core.errors import Issues, join_path
from infra.core.plan import Plan

Cloud = Literal["gcp", "aws"]
Scope = Literal["region", "global"]
Unit = Literal["GPUs", "vCPUs"]
# Where a limit is read from: Compute regions.get / projects.get, the Cloud Quotas family quota,
# or AWS Service Quotas.
Source = Literal["compute-region", "compute-project", "cloudquotas", "servicequotas"]

# GKE surge upgrades add up to ``maxSurge`` nodes above the pool size while nodes are replaced;
# GKE's default is maxSurge=1, maxUnavailable=0 and it upgrades one zone at a time, so a pool at its
# maximum briefly runs max + maxSurge nodes. https://cloud.google.com/kubernetes-engine/docs/concepts/node-pool-upgrade-strategies
GKE_DEFAULT_MAX_SURGE = 1

# Global GCP quotas (Project.quotas), checked for every GKE stack.
GPUS_ALL_REGIONS = "GPUS_ALL_REGIONS"
CPUS_ALL_REGIONS = "CPUS_ALL_REGIONS"
# Cloud Quotas id of the per-family GPU quota (H100 and newer); dimensions region + gpu_family.
GPU_FAMILY_QUOTA_ID = "GPUS-PER-GPU-FAMILY-per-project-region"

# Predefined GCP machine types end in their vCPU count (n1-standard-8, e2-standard-4).
_GCP_VCPUS_SUFFIX = re.compile(r"^[a-z0-9]+-[a-z]+-([0-9]+)$")


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeGroupSizing:
    """What one pool / node group can grow to, in the units quotas count.

    Attributes:
        path: config key path of the pool (``gpuPools[0]``, ``cluster.systemPool``).
        name: pool / node-group name.
        machine_types: GCP machine type or AWS instance type(s).
        gpu_type: GCP accelerator type (``nvidia-tesla-t4``); ``None`` for CPU pools and on AWS.
        gpus_per_node: GPUs per node.
        vcpus: vCPUs per node.
        spot: Spot / preemptible capacity.
        max_nodes: pool total maximum.
        surge: extra nodes an upgrade may add on top of ``max_nodes``.
    """

    path: str
    name: str
    machine_types: tuple[str, ...]
    gpu_type: str | None
    gpus_per_node: int
    vcpus: int
    spot: bool
    max_nodes: int
    surge: int = 0

    @property
    def nodes(self) -> int:
        """Peak node count quotas must cover."""
        return self.max_nodes + self.surge


@dataclass(frozen=True, slots=True)
class QuotaKey:
    """Identity of one quota check.

    Attributes:
        cloud: ``gcp`` | ``aws``.
        scope: ``region`` | ``global``.
        region: region for regional quotas, ``None`` for global ones.
        quota: GCP Compute metric (``NVIDIA_T4_GPUS``) or AWS quota code (``L-DB2E81BA``).
        unit: ``GPUs`` | ``vCPUs``.
        source: which API holds the limit.
        gpu_family: Cloud Quotas ``gpu_family`` dimension for family quotas.
    """

    cloud: Cloud
    scope: Scope
    region: str | None
    quota: str
    unit: Unit
    source: Source
    gpu_family: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DemandRow:
    """How much of one quota the stack needs, and which pools need it.

    Attributes:
        key: the quota.
        name: human name of the quota.
        needed: units needed at the stack's peak.
        pools: one line per contributing pool, e.g. ``gpu-t4: 1 x (20 max + 1 surge) nodes``.
    """

    key: QuotaKey
    name: str
    needed: int
    pools: tuple[str, ...] = field(default_factory=tuple)


@dataclass(frozen=True, slots=True)
class GcpAcceleratorQuota:
    """Quota metrics of one GCP accelerator (``gcp_accelerator_quotas.csv``)."""

    on_demand: str
    spot: str
    gpu_family: str | None


@dataclass(frozen=True, slots=True)
class AwsQuotaClass:
    """One EC2 vCPU quota class (``aws_quota_classes.csv``)."""

    name: str
    family_regex: re.Pattern[str]
    on_demand_code: str
    on_demand_name: str
    spot_code: str
    spot_name: str


@cache
def gcp_accelerator_quotas() -> dict[str, GcpAcceleratorQuota]:
    """Accelerator type -> its quota metrics."""
    return {
        r["accelerator"]: GcpAcceleratorQuota(
            r["on_demand_quota_metric"], r["spot_quota_metric"], r.get("gpu_family") or None
        )
        for r in read_rows("gcp_accelerator_quotas.csv")
    }


@cache
def gcp_cpu_metrics() -> dict[str, tuple[str | None, str]]:
    """Machine family -> (on-demand CPU metric or ``None``, spot CPU metric)."""
    return {
        r["family"]: (r["on_demand_metric"] or None, r["spot_metric"])
        for r in read_rows("gcp_cpu_quota_metrics.csv")
    }


@cache
def aws_quota_classes() -> tuple[AwsQuotaClass, ...]:
    """EC2 quota classes in match order."""
    return tuple(
        AwsQuotaClass(
            r["class"],
            re.compile(r["family_regex"]),
            r["on_demand_code"],
            r["on_demand_name"],
            r["spot_code"],
            r["spot_name"],
        )
        for r in read_rows("aws_quota_classes.csv")
    )


def aws_class_of(instance_type: str) -> AwsQuotaClass | None:
    """The quota class counting ``instance_type`` (by family), or ``None`` if no class matches."""
    family = instance_type.split(".", 1)[0]
    return next((c for c in aws_quota_classes() if c.family_regex.match(family)), None)


def aws_quota_code(instance_type: str, spot: bool) -> str | None:
    """The EC2 vCPU quota code an instance of ``instance_type`` counts against (by its class)."""
    cls = aws_class_of(instance_type)
    if cls is None:
        return None
    return cls.spot_code if spot else cls.on_demand_code


def aws_quota_name(code: str) -> str:
    """Service Quotas' name of an EC2 vCPU quota code (the code itself when unknown)."""
    for c in aws_quota_classes():
        if c.on_demand_code == code:
            return c.on_demand_name
        if c.spot_code == code:
            return c.spot_name
    return code


def gcp_quota_name(metric: str, gpu_family: str | None = None) -> str:
    """A readable name for a Compute quota metric (``NVIDIA_T4_GPUS`` -> ``NVIDIA T4 GPUs``)."""
    if metric == GPUS_ALL_REGIONS:
        return "GPUs (all regions)"
    if metric == CPUS_ALL_REGIONS:
        return "vCPUs (all regions)"
    words = metric.replace("_GPUS", " GPUs").replace("_CPUS", " CPUs").replace("_", " ")
    words = "vCPUs" if words == "CPUS" else words.replace("PREEMPTIBLE ", "Preemptible ")
    if gpu_family:
        words += f" (GPU family {gpu_family})"
    return words


def gcp_machine_family(machine_type: str) -> str:
    """Machine family of a GCP machine type (``n1-highmem-8`` -> ``n1``)."""
    return machine_type.split("-", 1)[0]


def gcp_vcpus_of(machine_type: str, catalog: Catalog) -> int | None:
    """vCPUs of a GCP machine type: from the catalog, else from a predefined type's name."""
    m = catalog.gcp_machine(machine_type)
    if m is not None:
        return m.vcpus
    if match := _GCP_VCPUS_SUFFIX.match(machine_type):
        return int(match.group(1))
    return None


# --- sizing: plan -> NodeGroupSizing ----------------------------------------------------------


def gke_sizings(config: Any, plan: Plan, catalog: Catalog, issues: Issues) -> list[NodeGroupSizing]:
    """Sizing of every planned GKE node pool (fallback pools included) and the system pool.

    Each pool counts with its ``total_max`` and its upgrade ``max_surge`` (GKE adds a surge node
    per pool during upgrades, and that node needs quota too).
    """
    assert plan.gke is not None
    paths = _gke_paths(config)
    out = [
        NodeGroupSizing(
            path=paths.get(gp.name, gp.name),
            name=gp.name,
            machine_types=(gp.machine_type,),
            gpu_type=gp.accelerator,
            gpus_per_node=gp.accelerator_count,
            vcpus=gp.vcpus,
            spot=gp.spot,
            max_nodes=gp.total_max,
            surge=gp.max_surge or 0,  # None: flex/queued pools (SHORT_LIVED, no surge)
        )
        for gp in plan.gke.pools
    ]
    cluster = plan.gke.cluster
    if not cluster.existing:
        vcpus = gcp_vcpus_of(cluster.system_machine_type, catalog)
        if vcpus is None:
            issues.add(
                "cluster.systemPool.machineType",
                f"{cluster.system_machine_type!r} is not a predefined GCP machine type "
                "(vCPUs unknown)",
            )
        else:
            out.append(
                NodeGroupSizing(
                    path="cluster.systemPool",
                    name="system",
                    machine_types=(cluster.system_machine_type,),
                    gpu_type=None,
                    gpus_per_node=0,
                    vcpus=vcpus,
                    spot=False,
                    max_nodes=cluster.system_max,
                    surge=GKE_DEFAULT_MAX_SURGE,
                )
            )
    for s in out:
        if s.gpu_type is not None and s.gpu_type not in gcp_accelerator_quotas():
            issues.add(
                join_path(s.path, "gpu", "type"),
                f"{s.gpu_type!r} has no known GPU quota metric; known: "
                f"{', '.join(sorted(gcp_accelerator_quotas()))}",
            )
        family = gcp_machine_family(s.machine_types[0])
        if family not in gcp_cpu_metrics():  # unknown is not "no regional vCPU quota"
            issues.add(
                join_path(s.path, "machineType"),
                f"family {family!r} has no known regional CPU quota metric; known: "
                f"{', '.join(sorted(gcp_cpu_metrics()))}",
            )
    return [
        s
        for s in out
        if (s.gpu_type is None or s.gpu_type in gcp_accelerator_quotas())
        and gcp_machine_family(s.machine_types[0]) in gcp_cpu_metrics()
    ]


def _gke_paths(config: Any) -> dict[str, str]:
    """Planned pool name -> config key path (fallback pools are ``<name>-fb<j+1>``)."""
    paths: dict[str, str] = {}
    for i, pool in enumerate(config.pools):
        paths[pool.name] = join_path("gpuPools", i)
        for j, _ in enumerate(pool.fallback or ()):
            paths[f"{pool.name}-fb{j + 1}"] = join_path("gpuPools", i, "fallback", j)
    return paths


def eks_sizings(config: Any, plan: Plan, catalog: Catalog, issues: Issues) -> list[NodeGroupSizing]:
    """Sizing of every planned EKS GPU node group and the CPU system group."""
    assert plan.eks is not None
    index = {pool.name: i for i, pool in enumerate(config.pools)}
    out: list[NodeGroupSizing] = []
    for g in plan.eks.groups:
        path = join_path("gpuPools", index.get(g.name))
        unmapped = [t for t in g.instance_types if aws_quota_code(t, g.hints.spot) is None]
        for t in unmapped:
            issues.add(join_path(path, "machineType"), f"{t!r} matches no EC2 vCPU quota class")
        if unmapped:
            continue
        out.append(
            NodeGroupSizing(
                path=path,
                name=g.name,
                machine_types=g.instance_types,
                gpu_type=None,
                gpus_per_node=g.hints.gpus_per_node,
                vcpus=g.hints.vcpus,  # same-shape types only, so one vCPU count
                spot=g.hints.spot,
                max_nodes=g.max_size,
            )
        )
    system = plan.eks.system
    if system is not None:
        vcpus = [
            v
            for t in system.instance_types
            if (v := getattr(catalog.aws_instance(t), "vcpus", None) or _aws_vcpus_from_name(t))
        ]
        if len(vcpus) != len(system.instance_types):
            issues.add(
                "cluster.systemPool.machineType",
                f"vCPUs of {', '.join(system.instance_types)} unknown",
            )
        out.append(
            NodeGroupSizing(
                path="cluster.systemPool",
                name=system.name,
                machine_types=system.instance_types,
                gpu_type=None,
                gpus_per_node=0,
                vcpus=max(vcpus, default=0),
                spot=False,
                max_nodes=system.max_size,
            )
        )
    return out


# Standard-class sizes: vCPUs per size (https://aws.amazon.com/ec2/instance-types/), for the system
# group's CPU instances, which the GPU catalog does not list. Only sizes whose count holds across
# families: "medium" is 1 vCPU on a1/m6g but 2 on t3, so it stays unknown (an issue, not a guess).
_AWS_SIZE_VCPUS = {"large": 2, "xlarge": 4}


def _aws_vcpus_from_name(instance_type: str) -> int | None:
    size = instance_type.split(".", 1)[-1]
    if size in _AWS_SIZE_VCPUS:
        return _AWS_SIZE_VCPUS[size]
    if m := re.match(r"^([0-9]+)xlarge$", size):
        return 4 * int(m.group(1))
    return None


# --- demand: sizings -> rows --------------------------------------------------------------------


class _Acc:
    """Accumulates needed units and explanations per quota key, in first-seen order."""

    def __init__(self) -> None:
        self.rows: dict[QuotaKey, tuple[str, int, list[str]]] = {}

    def add(self, key: QuotaKey, name: str, amount: int, why: str) -> None:
        prev = self.rows.get(key)
        if prev is None:
            self.rows[key] = (name, amount, [why])
        else:
            prev[2].append(why)
            self.rows[key] = (prev[0], prev[1] + amount, prev[2])

    def result(self) -> list[DemandRow]:
        order = {"region": 0, "global": 1}
        keys = sorted(self.rows, key=lambda k: order[k.scope])  # stable: regional rows first
        return [
            DemandRow(
                key=k, name=self.rows[k][0], needed=self.rows[k][1], pools=tuple(self.rows[k][2])
            )
            for k in keys
        ]


def _nodes_text(s: NodeGroupSizing) -> str:
    return f"({s.max_nodes} max + {s.surge} surge)" if s.surge else f"{s.max_nodes} max"


def gcp_demand(region: str, sizings: Iterable[NodeGroupSizing]) -> list[DemandRow]:
    """GPU and vCPU demand of GKE pools in ``region``, regional rows first, then global ones.

    Raises:
        KeyError: a sizing's GPU type or machine family has no quota metric (``gke_sizings``
            reports those as config issues first).
    """
    acc = _Acc()
    for s in sizings:
        nodes = _nodes_text(s)
        if s.gpu_type is not None and s.gpus_per_node > 0:
            q = gcp_accelerator_quotas()[s.gpu_type]
            gpus = s.gpus_per_node * s.nodes
            why = f"{s.name}: {s.gpus_per_node} x {nodes} nodes"
            if s.spot:
                key = QuotaKey("gcp", "region", region, q.spot, "GPUs", "compute-region")
            elif q.gpu_family:
                key = QuotaKey(
                    "gcp", "region", region, q.on_demand, "GPUs", "cloudquotas", q.gpu_family
                )
            else:
                key = QuotaKey("gcp", "region", region, q.on_demand, "GPUs", "compute-region")
            acc.add(key, gcp_quota_name(key.quota, key.gpu_family), gpus, why)
            gkey = QuotaKey("gcp", "global", None, GPUS_ALL_REGIONS, "GPUs", "compute-project")
            acc.add(gkey, gcp_quota_name(GPUS_ALL_REGIONS), gpus, why)
        vcpus = s.vcpus * s.nodes
        why = f"{s.name}: {s.vcpus} vCPUs x {nodes} nodes"
        # KeyError for a family gke_sizings did not vet; an empty metric (g2, a3, a4) is deliberate.
        on_demand, spot = gcp_cpu_metrics()[gcp_machine_family(s.machine_types[0])]
        metric = spot if s.spot else on_demand
        if metric:
            key = QuotaKey("gcp", "region", region, metric, "vCPUs", "compute-region")
            acc.add(key, gcp_quota_name(metric), vcpus, why)
        gkey = QuotaKey("gcp", "global", None, CPUS_ALL_REGIONS, "vCPUs", "compute-project")
        acc.add(gkey, gcp_quota_name(CPUS_ALL_REGIONS), vcpus, why)
    return acc.result()


def aws_demand(region: str, sizings: Iterable[NodeGroupSizing]) -> list[DemandRow]:
    """vCPU demand of EKS node groups in ``region``, one row per quota code."""
    acc = _Acc()
    for s in sizings:
        codes = dict.fromkeys(c for t in s.machine_types if (c := aws_quota_code(t, s.spot)))
        for code in codes:  # a mixed group counts fully against each class it may launch in
            key = QuotaKey("aws", "region", region, code, "vCPUs", "servicequotas")
            why = f"{s.name}: {s.vcpus} vCPUs x {_nodes_text(s)} nodes"
            acc.add(key, aws_quota_name(code), s.vcpus * s.nodes, why)
    return acc.result()


def stack_demand(config: Any, catalog: Catalog, plan: Plan) -> tuple[Cloud, list[DemandRow]]:
    """The cloud and every demand row of a planned stack (``infra.core.plan.build_plan``).

    Raises:
        ConfigErrors: the stack cannot be sized (platform without cloud quotas, unknown types).
    """
    issues = Issues()
    if config.platform == "gke":
        sizings = gke_sizings(config, plan, catalog, issues)
        issues.raise_if_any()
        return "gcp", gcp_demand(config.region, sizings)
    if config.platform == "eks":
        sizings = eks_sizings(config, plan, catalog, issues)
        issues.raise_if_any()
        return "aws", aws_demand(config.region, sizings)
    issues.add("platform", f"{config.platform!r} has no cloud quotas to check (gke and eks do)")
    issues.raise_if_any()
    raise AssertionError("unreachable")
