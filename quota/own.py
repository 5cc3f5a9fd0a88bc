"""What the stack itself runs now, from the cloud's list of VMs (pure).

A running stack's nodes are in the cloud's usage already, and its demand (``quota.demand``) counts
them again at the pools' maximum. Here every listed VM that carries the marks of one of the stack's
node groups (``Platform.node_marks``: EKS/Karpenter tags, GKE labels) and has its pool's planned
shape is counted per pool and per quota the pool draws on, so a row judges
``needed - own <= limit - usage`` and sizes a request as ``usage - own + needed``
(``quota.arithmetic``). A VM that matches no pool, or has another shape than its pool now plans
(one being replaced), stays in usage as someone else's: the safe side.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from infra.core.catalog.vendored import Catalog
from infra.core.platform import NodeMarks
from infra.core.sizing import NodeGroupSizing
from quota.keys import QuotaKey
from quota.rules import (
    GCE_HOLDING_STATES,
    PROVISIONING_RULES,
    Draw,
    aws_quota_code,
    gce_vm_model,
    gcp_disk_metrics,
)

# Per pool (``NodeGroupSizing.name``), per draw of the pool (by its first key: which key of its
# fallback chain counts is resolved with the readings, as the demand's is), the units its running
# VMs hold.
Own = dict[str, dict[QuotaKey, float]]


def pool_of(tags: Mapping[str, str], marks: Sequence[NodeMarks]) -> NodeMarks | None:
    """The node group whose every mark ``tags`` carries, if any."""
    for m in marks:
        if all(tags.get(k) == v for k, v in m.marks):
            return m
    return None


def _add(out: Own, pool: str, draws: Iterable[Draw], units_of: Any) -> None:
    """Add ``units_of(draw)`` (0: none) to each of the pool's draws."""
    for draw in draws:
        units = units_of(draw)
        if units:
            acc = out.setdefault(pool, {})
            acc[draw.key] = acc.get(draw.key, 0.0) + units


def _draws_of(contributions: Iterable[Any]) -> dict[str, list[Draw]]:
    out: dict[str, list[Draw]] = defaultdict(list)
    for c in contributions:
        out[c.pool.name].append(c.draw)
    return out


@dataclass(frozen=True, slots=True)
class Ec2Instance:
    """A pending or running EC2 instance as DescribeInstances lists it."""

    instance_type: str
    spot: bool
    tags: Mapping[str, str]
    capacity_reservation: str = ""


def aws_own(
    instances: Iterable[Ec2Instance],
    contributions: Iterable[Any],
    marks: Sequence[NodeMarks],
    vcpus: Mapping[str, int],
) -> Own:
    """vCPUs the stack's instances hold, per pool and quota code.

    An instance is its pool's when it carries the pool's node-group tags, is of one of the pool's
    instance types, and counts against a code the pool draws on (its class, Spot by
    ``InstanceLifecycle``). One inside a Capacity Reservation is not: the reservation holds that
    quota whether the instance runs or not ("Capacity Reservations count toward your On-Demand
    Instance quotas, even if they are unused", EC2 User Guide), and a pool that targets it nets
    it already (``demand.reserved_nodes``).
    """
    draws = _draws_of(contributions)
    sizing = {c.pool.name: c.pool for c in contributions}
    out: Own = {}
    for inst in instances:
        m = pool_of(inst.tags, marks)
        if m is None or inst.capacity_reservation or m.pool not in sizing:
            continue
        if inst.instance_type not in sizing[m.pool].machine_types:
            continue
        code = aws_quota_code(inst.instance_type, inst.spot)
        n = vcpus.get(inst.instance_type, 0)
        _add(out, m.pool, draws[m.pool], lambda d, code=code, n=n: n if d.key.quota == code else 0)
    return out


def aws_types_to_size(instances: Iterable[Ec2Instance], marks: Sequence[NodeMarks]) -> set[str]:
    """Instance types of the instances that carry one of the stack's marks (whose vCPUs
    ``aws_own`` needs)."""
    return {i.instance_type for i in instances if pool_of(i.tags, marks) is not None}


# Boot disk metrics (the disk types'), as against local SSD GB: a VM's boot disk is checked against
# the pool's planned disk type and size before its GB count as the stack's own.
def _boot_disk_metrics() -> frozenset[str]:
    return frozenset(m for t, m in gcp_disk_metrics().items() if t != "local-ssd")


def _last(url: str) -> str:
    return url.rsplit("/", 1)[-1]


def gce_accelerators(inst: Any, catalog: Catalog) -> tuple[str | None, int]:
    """(GPU type, count) of a VM: its guest accelerators, or its machine type's bundled GPUs."""
    accs = [(_last(a.accelerator_type), int(a.accelerator_count)) for a in inst.guest_accelerators]
    if accs:
        return accs[0][0], sum(n for _, n in accs)
    m = catalog.gcp_machine(_last(inst.machine_type))
    if m is not None and m.accelerator:
        return m.accelerator, int(m.accelerator_count or 0)
    return None, 0


def _shape_matches(inst: Any, s: NodeGroupSizing, catalog: Catalog) -> bool:
    """Whether a VM has the shape its pool plans now: machine type, GPUs, the quota class of its
    provisioning model, local SSDs and external address (a VM of an older shape is being
    replaced: not counted as the stack's own)."""
    if _last(inst.machine_type) != s.machine_types[0]:
        return False
    gpu, count = gce_accelerators(inst, catalog)
    if (gpu, count) != ((s.gpu_type, s.gpus_per_node) if s.gpus_per_node else (None, 0)):
        return False
    sched = inst.scheduling
    vm_class = PROVISIONING_RULES[gce_vm_model(sched.provisioning_model, bool(sched.preemptible))]
    planned = PROVISIONING_RULES[s.model].quota_class
    if vm_class.quota_class != ("standard" if planned == "reserved" else planned):
        return False
    local = sum(1 for d in inst.disks if str(d.type_) == "SCRATCH")
    external = any(len(n.access_configs) for n in inst.network_interfaces)
    return local == s.local_ssds and external == s.external_ip


def _boot_disk_matches(inst: Any, s: NodeGroupSizing, disks: Mapping[str, tuple[str, int]]) -> bool:
    boot = next((d for d in inst.disks if d.boot), None)
    got = disks.get(boot.source) if boot is not None else None
    return got is not None and got == (s.disk_type, s.disk_gb)


def gcp_own(
    vms: Iterable[Any],
    disks: Mapping[str, tuple[str, int]],
    contributions: Iterable[Any],
    marks: Sequence[NodeMarks],
    catalog: Catalog,
) -> Own:
    """Units the stack's VMs hold, per pool and per key its draws name.

    ``vms``: Compute ``Instance`` messages of the region; ``disks``: disk self link -> (disk type,
    GB) of its persistent disks. A VM is its pool's when it carries the pool's GKE labels, holds
    quota (``rules.GCE_HOLDING_STATES``) and has the pool's planned shape; it then holds one
    node's draws of the pool. Its boot disk GB count only when that disk was listed with the
    pool's disk type and size (an instance does not show its disks' types).
    """
    draws = _draws_of(contributions)
    sizing = {c.pool.name: c.pool for c in contributions}
    boot_metrics = _boot_disk_metrics()
    out: Own = {}
    for inst in vms:
        m = pool_of(dict(inst.labels), marks)
        if m is None or m.pool not in sizing or inst.status not in GCE_HOLDING_STATES:
            continue
        s = sizing[m.pool]
        if not _shape_matches(inst, s, catalog):
            continue
        disk_ok = _boot_disk_matches(inst, s, disks)

        def units(d: Draw, disk_ok: bool = disk_ok) -> float:
            if d.key.quota in boot_metrics and d.key.unit == "GB" and not disk_ok:
                return 0.0
            return float(d.per_node)

        _add(out, m.pool, draws[m.pool], units)
    return out
