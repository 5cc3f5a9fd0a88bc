"""Which quota a VM consumes: one table-driven function per cloud, every row sourced. Pure.

``gcp_vm_quotas`` answers, for one node of a pool, every quota it draws on and how much:
the machine family's vCPU quota (``gcp_cpu_quota_metrics.csv``), the GPU quota
(``gcp_accelerator_quotas.csv``), ``INSTANCES``, ``IN_USE_ADDRESSES``, boot-disk and local SSD GB
(``gcp_disk_quota_metrics.csv``), and the global ``*_ALL_REGIONS`` quotas. The provisioning model
(``PROVISIONING_RULES``) decides standard vs preemptible. Some answers depend on what the region
reports, so a draw may name a ``fallback`` and the condition under which it applies; the check
resolves those after reading (``quota.demand.resolve``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Literal

from infra.core.catalog import quota_classes
from infra.core.catalog.quota_classes import AwsQuotaClass, GcpCpuRule, gcp_machine_family
from infra.core.catalog.vendored import DATA_DIR, read_rows
from infra.core.errors import ConfigErrors, ConfigIssue
from infra.core.rules.gcp import LOCAL_SSD_GB
from infra.core.sizing import Provisioning
from quota.keys import VM_FAMILY_QUOTA, QuotaKey, Unit, unmapped_key, unverified_key

# Re-exported: the quota preflight's rules read the quota classes' one home.
__all__ = [
    "AwsQuotaClass",
    "GcpCpuRule",
    "aws_class_of",
    "aws_quota_classes",
    "gcp_cpu_rules",
    "gcp_machine_family",
]
# The catalog the preflight plans over: ``quota.check`` builds every plan with ``Catalog.load()``
# (it takes no ``--old-catalog``), so its quota tables are read from that catalog's directory.
CATALOG_DIR = DATA_DIR


def gcp_cpu_rules() -> dict[str, GcpCpuRule]:
    """Machine family -> its vCPU quota rule (``gcp_cpu_quota_metrics.csv``)."""
    return quota_classes.gcp_cpu_rules(CATALOG_DIR)


def aws_quota_classes() -> tuple[AwsQuotaClass, ...]:
    """EC2 quota classes in match order (``aws_quota_classes.csv``)."""
    return quota_classes.aws_quota_classes(CATALOG_DIR)


def aws_class_of(instance_type: str) -> AwsQuotaClass | None:
    """The quota class counting ``instance_type``, or ``None`` if no class matches."""
    return quota_classes.aws_class_of(instance_type, CATALOG_DIR)


QuotaClass = Literal["standard", "preemptible", "preemptible-if-granted", "reserved"]
# When a draw moves to its fallback: the preemptible quota was never granted (limit 0 or not
# reported), or the region does not report the metric at all (E2_CPUS -> CPUS).
FallbackWhen = Literal["preemptible-not-granted", "metric-missing"]

GPUS_ALL_REGIONS = "GPUS_ALL_REGIONS"
CPUS_ALL_REGIONS = "CPUS_ALL_REGIONS"
INSTANCES = "INSTANCES"
IN_USE_ADDRESSES = "IN_USE_ADDRESSES"
# Spot/preemptible Local SSD once granted (google-cloud-compute Quota.Metric PREEMPTIBLE_LOCAL_SSD_GB;
# create-use-spot: preemptible quota keeps Spot VMs off the standard "CPUs, GPUs, and disks").
PREEMPTIBLE_LOCAL_SSD_GB = "PREEMPTIBLE_LOCAL_SSD_GB"


@dataclass(frozen=True, slots=True)
class ProvisioningRule:
    """Which quota class a provisioning model draws on, and the public record for it."""

    model: Provisioning
    quota_class: QuotaClass
    source: str


PROVISIONING_RULES: dict[Provisioning, ProvisioningRule] = {
    r.model: r
    for r in (
        ProvisioningRule(
            "standard",
            "standard",
            "https://cloud.google.com/compute/quotas-limits (allocation quotas: every VM's vCPUs, "
            "GPUs and disks count against the region's standard quotas)",
        ),
        ProvisioningRule(
            "spot",
            "preemptible-if-granted",
            "https://cloud.google.com/compute/docs/instances/create-use-spot ('To prevent Spot VMs "
            "from consuming your quotas for standard VMs' CPUs, GPUs, and disks, consider "
            "requesting preemptible quota'); https://cloud.google.com/compute/docs/instances/"
            "create-use-preemptible#preemptible_cpu_quotas ('After Compute Engine grants you "
            "preemptible CPU quota in that region, all preemptible VMs count against that quota')",
        ),
        ProvisioningRule(
            "flex-start",
            "preemptible",
            "https://cloud.google.com/blog/products/compute/introducing-flex-start-vms-for-the-"
            "compute-engine-instance-api ('Flex-start VMs ... consume preemptible quota')",
        ),
        ProvisioningRule(
            "queued",
            "preemptible",
            "https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest (queued "
            "provisioning runs flex-start VMs, which consume preemptible quota)",
        ),
        ProvisioningRule(
            "reservation",
            "reserved",
            "https://cloud.google.com/compute/docs/instances/reservations-consume ('Compute Engine "
            "holds your reserved resources ... you consume the reservation by using the reserved "
            "resources to create your compute instances'): the reservation already holds its "
            "vCPUs, GPUs and Local SSDs (in usage), so the pool's nodes are counted once",
        ),
    )
}


# How a running VM is bought, by its Scheduling (google-cloud-compute Scheduling.ProvisioningModel:
# FLEX_START, RESERVATION_BOUND, SPOT, STANDARD; ``preemptible`` the legacy flag), as the model
# whose quota class it draws on: flex-start VMs on preemptible quota always, Spot and preemptible
# VMs on it once granted, the rest (a reservation's VMs too: the reservation holds their quota,
# counted as it is) on standard quota.
GCE_PROVISIONING_MODELS: dict[str, Provisioning] = {
    "FLEX_START": "flex-start",
    "SPOT": "spot",
    "STANDARD": "standard",
    "RESERVATION_BOUND": "standard",
}


def gce_vm_model(provisioning_model: str | None, preemptible: bool) -> Provisioning:
    """The provisioning model a VM with this Scheduling draws quota as (unset: standard)."""
    if preemptible:
        return "spot"
    return GCE_PROVISIONING_MODELS.get(provisioning_model or "STANDARD", "standard")


# Instance states that hold quota (google-cloud-compute Instance.Status): from PROVISIONING
# ("Resources are being allocated") until the VM is STOPPED, SUSPENDED or TERMINATED, which release
# it; PENDING_STOP ("gracefully shutting down") and DEPROVISIONING ("tear down tasks like ...
# releasing quota") still hold it. PENDING is a flex-start VM "waiting for available capacity",
# holding nothing yet. https://cloud.google.com/compute/docs/instances/instance-life-cycle
GCE_HOLDING_STATES = frozenset(
    {
        "PROVISIONING",
        "STAGING",
        "RUNNING",
        "STOPPING",
        "PENDING_STOP",
        "SUSPENDING",
        "REPAIRING",
        "DEPROVISIONING",
    }
)


@dataclass(frozen=True, slots=True)
class Draw:
    """One quota one node draws on.

    Attributes:
        key: the quota (regional draws carry the region; global ones ``None``).
        per_node: units per node.
        rule: the public record this draw follows.
        fallback: the draw that applies instead when ``when`` holds after reading.
        when: the condition for ``fallback``.
        verified: the key's metric name is known to exist (a member of the client library's
            enum), so a region not reporting it has none; ``False``: a region not reporting it
            may still have it under another name, and the row is unknown.
    """

    key: QuotaKey
    per_node: int
    rule: str
    fallback: Draw | None = None
    when: FallbackWhen | None = None
    verified: bool = True

    def chain(self) -> list[Draw]:
        """This draw and every fallback after it."""
        out: list[Draw] = [self]
        while out[-1].fallback is not None:
            out.append(out[-1].fallback)  # type: ignore[arg-type]
        return out


@dataclass(frozen=True, slots=True)
class GcpAcceleratorQuota:
    """Quota metrics of one GCP accelerator (``gcp_accelerator_quotas.csv``)."""

    on_demand: str
    spot: str
    gpu_family: str | None
    spot_verified: bool


@cache
def gcp_accelerator_quotas() -> dict[str, GcpAcceleratorQuota]:
    """Accelerator type -> its quota metrics."""
    return {
        r["accelerator"]: GcpAcceleratorQuota(
            r["on_demand_quota_metric"],
            r["spot_quota_metric"],
            r.get("gpu_family") or None,
            r["spot_verified"] == "yes",
        )
        for r in read_rows("gcp_accelerator_quotas.csv", CATALOG_DIR)
    }


@cache
def gcp_disk_metrics() -> dict[str, str]:
    """Disk type (and ``local-ssd``) -> the regional GB metric it counts against."""
    rows = read_rows("gcp_disk_quota_metrics.csv", CATALOG_DIR)
    return {r["disk_type"]: r["metric"] for r in rows}


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


_NAMES = {
    GPUS_ALL_REGIONS: "GPUs (all regions)",
    CPUS_ALL_REGIONS: "vCPUs (all regions)",
    "CPUS": "vCPUs",
    INSTANCES: "VM instances",
    IN_USE_ADDRESSES: "In-use external IPv4 addresses",
    "SSD_TOTAL_GB": "Persistent Disk SSD (GB)",
    "DISKS_TOTAL_GB": "Persistent Disk Standard (GB)",
    "LOCAL_SSD_TOTAL_GB": "Local SSD (GB)",
    "HDB_TOTAL_GB": "Hyperdisk Balanced (GB)",
}


def gcp_quota_name(key: QuotaKey) -> str:
    """A readable name for a GCP quota (``NVIDIA_T4_GPUS`` -> ``NVIDIA T4 GPUs``)."""
    if key.vm_family:
        return f"vCPUs (VM family {key.vm_family})"
    if key.source == "serviceusage":
        return f"API {key.quota} enabled"
    words = _NAMES.get(key.quota)
    if words is None:
        words = key.quota.replace("_GPUS", " GPUs").replace("_CPUS", " CPUs").replace("_", " ")
        words = words.replace("PREEMPTIBLE ", "Preemptible ")
    if key.gpu_family:
        words += f" (GPU family {key.gpu_family})"
    return words


# --- the table-driven function ----------------------------------------------------------------


def _gpu_draws(region: str, accelerator: str, gpus: int, rule: str) -> tuple[Draw, Draw]:
    """(standard, preemptible) GPU draws of one node."""
    q = gcp_accelerator_quotas()[accelerator]
    if q.gpu_family:  # H100 and newer: the on-demand quota is the Cloud Quotas family quota
        std_key = QuotaKey(
            "gcp", "region", region, q.on_demand, "GPUs", "cloudquotas", gpu_family=q.gpu_family
        )
    else:
        std_key = QuotaKey("gcp", "region", region, q.on_demand, "GPUs", "compute-region")
    pre_key = QuotaKey("gcp", "region", region, q.spot, "GPUs", "compute-region")
    src = f"gcp_accelerator_quotas.csv {accelerator}; {rule}"
    return Draw(std_key, gpus, src), Draw(pre_key, gpus, src, verified=q.spot_verified)


def draws_vcpu_quota(family: str) -> bool:
    """Whether a node of ``family`` draws on any vCPU quota, regional or ``CPUS_ALL_REGIONS``.

    One rule for every row: "To create A4X Max, A4X, A4, A3, G4, and G2 VMs, you only need to
    have the required ... GPU quotas ... You don't need to request CPU quotas"
    (https://cloud.google.com/compute/resource-usage#gpu_quota; ``cpu_quota=none`` in
    ``gcp_cpu_quota_metrics.csv``). A family with no row (a declared shape) is assumed to draw.
    """
    rule = gcp_cpu_rules().get(family)
    return rule is None or rule.has_vcpu_quota


def _cpu_draws(region: str, family: str, vcpus: int) -> tuple[Draw, Draw] | None:
    """(standard, preemptible) vCPU draws of one node of ``family``; ``None`` if it has none."""
    r = gcp_cpu_rules()[family]
    if not draws_vcpu_quota(family):  # G2/G4/A3/A4/A4X: GPU quota only
        return None
    assert r.spot_metric, family
    src = f"gcp_cpu_quota_metrics.csv {family}: {r.source}"
    if r.metric:
        std = Draw(
            QuotaKey("gcp", "region", region, r.metric, "vCPUs", "compute-region"), vcpus, src
        )
        if r.fallback_metric:  # E2_CPUS where the region reports it, else CPUS
            fb = QuotaKey("gcp", "region", region, r.fallback_metric, "vCPUs", "compute-region")
            std = Draw(std.key, vcpus, src, Draw(fb, vcpus, src), "metric-missing")
    else:
        assert r.vm_family, family
        key = QuotaKey(
            "gcp", "region", region, VM_FAMILY_QUOTA, "vCPUs", "cloudquotas", vm_family=r.vm_family
        )
        std = Draw(key, vcpus, src)
    pre = Draw(
        QuotaKey("gcp", "region", region, r.spot_metric, "vCPUs", "compute-region"), vcpus, src
    )
    return std, pre


_DECLARED = "declared gpuPools[].shape: no row in this project's quota tables"


def _unmapped_pair(region: str, what: str, unit: Unit, per_node: int) -> tuple[Draw, Draw]:
    """(standard, preemptible) draws of a declared shape's GPU or family with no quota row:
    unknown rows, still split by provisioning model as a known type's would be."""
    std = Draw(unmapped_key("gcp", region, what, unit), per_node, _DECLARED)
    pre = Draw(unmapped_key("gcp", region, f"preemptible:{what}", unit), per_node, _DECLARED)
    return std, pre


def _by_model(
    pairs: list[tuple[Draw, Draw]], rule: ProvisioningRule, force_preemptible: bool
) -> list[Draw]:
    """The draw of each (standard, preemptible) pair the provisioning model counts on."""
    out: list[Draw] = []
    for std, pre in pairs:
        if rule.quota_class == "standard":
            out.append(std)
        elif rule.quota_class == "preemptible" or force_preemptible:
            out.append(Draw(pre.key, pre.per_node, f"{pre.rule}; {rule.source}"))
        else:  # spot: preemptible once granted, else the standard quota
            src = f"{pre.rule}; {rule.source}"
            out.append(
                Draw(pre.key, pre.per_node, src, std, "preemptible-not-granted", pre.verified)
            )
    return out


def gcp_vm_quotas(
    region: str,
    *,
    machine_type: str,
    vcpus: int,
    accelerator: str | None,
    gpus: int,
    model: Provisioning,
    disk_type: str,
    disk_gb: int,
    local_ssds: int = 0,
    external_ip: bool = True,
    force_preemptible: bool = False,
    declared: bool = False,
) -> list[Draw]:
    """Every quota one node draws on, with per-node amounts.

    Args:
        force_preemptible: count Spot nodes against preemptible quota even where none is granted
            (``--preemptible-quota``: the user is about to request it).
        declared: the machine type is a declared ``gpuPools[].shape``: a GPU or machine family
            with no row in the tables draws on an ``unmapped`` key (an unknown row), and the
            node's other draws (global GPUs and vCPUs, VMs, addresses, disks) are still counted.

    Raises:
        KeyError: the accelerator, machine family or disk type has no row in the tables (and
            the type is not a declared shape).
    """
    rule = PROVISIONING_RULES[model]
    draws: list[Draw] = []
    pairs: list[tuple[Draw, Draw]] = []
    family = gcp_machine_family(machine_type)
    if rule.quota_class != "reserved":
        if accelerator is not None and gpus > 0:
            if declared and accelerator not in gcp_accelerator_quotas():
                pairs.append(_unmapped_pair(region, accelerator, "GPUs", gpus))
            else:
                pairs.append(_gpu_draws(region, accelerator, gpus, rule.source))
        if declared and family not in gcp_cpu_rules():
            pairs.append(_unmapped_pair(region, family, "vCPUs", vcpus))
        elif (cpu := _cpu_draws(region, family, vcpus)) is not None:
            pairs.append(cpu)
        if local_ssds:
            gb, metric = local_ssds * LOCAL_SSD_GB, gcp_disk_metrics()["local-ssd"]
            src = "gcp_disk_quota_metrics.csv local-ssd (375 GB per disk)"
            std = Draw(QuotaKey("gcp", "region", region, metric, "GB", "compute-region"), gb, src)
            pre_key = QuotaKey(
                "gcp", "region", region, PREEMPTIBLE_LOCAL_SSD_GB, "GB", "compute-region"
            )
            pairs.append((std, Draw(pre_key, gb, f"{src}; Quota.Metric PREEMPTIBLE_LOCAL_SSD_GB")))
    draws.extend(_by_model(pairs, rule, force_preemptible))
    if rule.quota_class != "reserved":
        gsrc = "https://cloud.google.com/compute/quotas-limits (global GPU and vCPU quotas)"
        if accelerator is not None and gpus > 0:
            g = QuotaKey("gcp", "global", None, GPUS_ALL_REGIONS, "GPUs", "compute-project")
            draws.append(Draw(g, gpus, gsrc))
        if draws_vcpu_quota(family):  # G2/G4/A3/A4/A4X: no vCPU quota, regional or global
            c = QuotaKey("gcp", "global", None, CPUS_ALL_REGIONS, "vCPUs", "compute-project")
            draws.append(Draw(c, vcpus, gsrc))
    qsrc = "https://cloud.google.com/compute/quotas-limits"
    draws.append(
        Draw(QuotaKey("gcp", "region", region, INSTANCES, "VMs", "compute-region"), 1, qsrc)
    )
    if external_ip:  # nodes without cluster.privateNodes get an ephemeral external IPv4 address
        key = QuotaKey("gcp", "region", region, IN_USE_ADDRESSES, "addresses", "compute-region")
        src = (
            f"{qsrc} (in-use external IPv4 addresses); https://cloud.google.com/kubernetes-engine/"
            "docs/concepts/private-cluster-concept (private nodes have internal IPs only)"
        )
        draws.append(Draw(key, 1, src))
    disk = QuotaKey("gcp", "region", region, gcp_disk_metrics()[disk_type], "GB", "compute-region")
    draws.append(Draw(disk, disk_gb, f"gcp_disk_quota_metrics.csv {disk_type}"))
    return draws


def aws_vm_quotas(
    region: str, instance_types: tuple[str, ...], vcpus: int, spot: bool, declared: bool = False
) -> list[Draw]:
    """The EC2 vCPU quota(s) one node of a group draws on.

    A group that may launch several types counts fully against each class it may launch in.

    ``declared``: the type is a declared ``gpuPools[].shape``; one that matches no class draws on
    an ``unmapped`` key (an unknown row) instead of raising.

    Raises:
        ConfigErrors: an instance type matches no quota class (the planner refuses those first).
    """
    src = (
        "aws_quota_classes.csv; https://docs.aws.amazon.com/ec2/latest/instancetypes/"
        "ec2-instance-quotas.html (vCPU quotas per instance class, Spot separate)"
    )
    out: list[Draw] = []
    for t in instance_types:
        code = aws_quota_code(t, spot)
        if code is None and declared:
            family = t.split(".")[0]
            key = unmapped_key("aws", region, f"{'spot:' if spot else ''}{family}", "vCPUs")
            if all(d.key != key for d in out):
                out.append(Draw(key, vcpus, _DECLARED))
            continue
        if code is None:
            raise ConfigErrors(
                [ConfigIssue(path="machineType", reason=f"{t!r} matches no EC2 vCPU quota class")]
            )
        key = QuotaKey("aws", "region", region, code, "vCPUs", "servicequotas")
        cls = aws_class_of(t)
        if spot and cls is not None and not cls.spot_verified:  # mapped by analogy only
            key = unverified_key("aws", region, f"spot {t.split('.')[0]}", "vCPUs", code)
        if all(d.key != key for d in out):
            out.append(Draw(key, vcpus, src))
    return out
