"""Quota demand of a stack, decided in pure code: which quota, in which region, needs how much.

Pipeline: ``quota.sizing`` maps the plan onto node groups; ``quota.rules`` says which quotas one
node of each draws on; here the draws are summed per quota. ``--offline`` prints exactly this.

Peak per quota:

* every pool at its maximum, plus surge: on GKE the **largest single pool's** (GKE upgrades one
  node pool at a time, https://cloud.google.com/kubernetes-engine/docs/concepts/cluster-upgrades);
  on EKS **every group's**, summed: a managed node group update raises its ASG by max(2 x the
  group's AZs, maxUnavailable) nodes (https://docs.aws.amazon.com/eks/latest/userguide/
  managed-node-update-behavior.html) and one ``pulumi up`` updates every group concurrently;
* the GKE bootstrap default pool exists only before the other pools, so it counts as
  max(bootstrap, steady state), not on top.

Some draws depend on what the cloud reports (Spot on standard quota until preemptible quota is
granted; E2_CPUS only where a region reports it). ``Demand.rows`` takes a ``pick`` that resolves
them; without readings the first choice applies.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from infra.core.catalog.vendored import Catalog
from infra.core.plan import Plan
from infra.core.platform import NodeMarks
from infra.core.system_pool import gcp_vcpus_of
from quota.arithmetic import Reading
from quota.keys import (
    GPU_FAMILY_QUOTA_ID,
    VM_FAMILY_QUOTA,
    VM_FAMILY_QUOTA_ID,
    Cloud,
    QuotaKey,
    Scope,
    Source,
    Unit,
    unmapped_name,
    unmapped_reason,
)
from quota.rules import (
    CPUS_ALL_REGIONS,
    GPUS_ALL_REGIONS,
    Draw,
    aws_quota_code,
    aws_quota_name,
    aws_vm_quotas,
    gcp_accelerator_quotas,
    gcp_cpu_rules,
    gcp_machine_family,
    gcp_quota_name,
    gcp_vm_quotas,
)
from quota.sizing import NodeGroupSizing, plan_sizings

__all__ = [
    "CPUS_ALL_REGIONS",
    "GPUS_ALL_REGIONS",
    "GPU_FAMILY_QUOTA_ID",
    "VM_FAMILY_QUOTA",
    "VM_FAMILY_QUOTA_ID",
    "Cloud",
    "Contribution",
    "Demand",
    "DemandRow",
    "NodeGroupSizing",
    "QuotaKey",
    "Scope",
    "Source",
    "Unit",
    "aws_demand",
    "aws_quota_code",
    "aws_quota_name",
    "gcp_accelerator_quotas",
    "gcp_cpu_rules",
    "gcp_demand",
    "gcp_machine_family",
    "gcp_vcpus_of",
    "quota_name",
    "reading_of",
    "reading_pick",
    "stack_contributions",
    "stack_demand",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class DemandRow:
    """How much of one quota the stack needs, and which pools need it.

    Attributes:
        key: the quota.
        name: human name of the quota.
        needed: units needed at the stack's peak.
        pools: one line per contributing pool (and the surge / bootstrap rule applied).
        models: provisioning models of the contributing pools (``standard``, ``spot``, ...).
        source: where a service limit's value is documented (``quota.limits``).
        at_min: units held at the stack's minimum scale: every pool's minNodes, or its warm
            placeholders' nodes where more (``gpuPools[].warm``), without surge.
        surge: of ``needed``, the units an upgrade's surge nodes add (``Demand`` docstring).
        own: units the stack's own running VMs hold of this quota (``quota.own``), already in
            the cloud's usage; ``None``: not read (offline, or ``own_error``).
        own_error: why ``own`` could not be read.
        notes: why some pools' demand counts here and not where they would first draw (Spot on
            standard quota while no preemptible quota is granted; E2 under CPUS).
    """

    key: QuotaKey
    name: str
    needed: int
    pools: tuple[str, ...] = field(default_factory=tuple)
    models: frozenset[str] = frozenset()
    source: str = ""
    at_min: int = 0
    surge: int = 0
    own: float | None = None
    own_error: str | None = None
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Contribution:
    """One pool's draw on one quota (before resolving fallbacks)."""

    pool: NodeGroupSizing
    draw: Draw


# A pick resolves a draw to the key it counts against, with a note when a fallback applied.
Pick = Callable[[Draw], tuple[QuotaKey, str | None]]


def first_choice(draw: Draw) -> tuple[QuotaKey, str | None]:
    """The draw's own key (offline: nothing is known about the cloud yet)."""
    return draw.key, None


def quota_name(key: QuotaKey) -> str:
    """Readable name of any quota key."""
    if key.source == "unmapped":
        return unmapped_name(key)
    return aws_quota_name(key.quota) if key.cloud == "aws" else gcp_quota_name(key)


def _beyond_reservation(
    s: NodeGroupSizing, reserved: Mapping[str, int | str] | None
) -> tuple[int, str | None]:
    """(nodes the pool adds to demand, text when a reservation changed that)."""
    if reserved is None or s.reservation_id is None or s.name not in reserved:
        return s.max_nodes, None
    held = reserved[s.name]
    if isinstance(held, str):
        return s.max_nodes, (
            f"{s.max_nodes} nodes (reservation {s.reservation_id} {held}: counted in full)"
        )
    beyond = max(0, s.max_nodes - held)
    return beyond, (
        f"{beyond} nodes beyond reservation {s.reservation_id} ({held} reserved, in usage)"
    )


def reserved_nodes(
    sizings: Iterable[NodeGroupSizing], reservations: Mapping[str, Any]
) -> dict[str, int | str]:
    """Per pool that targets a Capacity Reservation, how many of its nodes the reservation holds
    (in usage already), or why it holds none of them.

    ``reservations``: id -> ``quota.clients.aws.CapacityReservation``. A reservation serves only
    instances matching its type, platform, AZ and tenancy ("Capacity Reservations ... matching
    attributes", https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/ec2-capacity-reservations.html),
    so one in another AZ or of another type holds none of the pool's nodes. Of a matching one,
    the pool can use the free slots plus the slots its own instances fill already: slots taken
    by other instances are someone else's.
    """
    out: dict[str, int | str] = {}
    for s in sizings:
        if s.reservation_id is None:
            continue
        r = reservations.get(s.reservation_id)
        if r is None:
            out[s.name] = "not found holding capacity"
        elif r.shared_in:
            out[s.name] = f"is shared in from account {r.owner_id} and not in this account's usage"
        elif r.instance_type not in s.machine_types:
            out[s.name] = f"is for {r.instance_type}, not the pool's type"
        elif r.az_id and s.zones and r.az_id not in s.zones:
            out[s.name] = f"is in {r.az_id}, not one of the pool's AZs {', '.join(s.zones)}"
        else:
            out[s.name] = min(r.total, r.unused + r.running_in(s.node_group_names))
    return out


def _nodes_text(s: NodeGroupSizing) -> str:
    return f"{s.max_nodes} nodes" if not s.bootstrap else f"{s.max_nodes} bootstrap nodes"


@dataclass(frozen=True, slots=True)
class Demand:
    """Every draw of a stack, summed per quota by ``rows``."""

    cloud: Cloud
    region: str
    contributions: tuple[Contribution, ...]
    surge_rule: str
    # True: every pool's surge adds up (EKS: one ``pulumi up`` updates all node groups at once);
    # False: only the largest single pool's (GKE upgrades one node pool at a time).
    surge_all: bool = False
    # How the cloud marks the VMs of the stack's node groups (``Platform.node_marks``): what
    # the stack itself runs is counted apart (``quota.own``).
    marks: tuple[NodeMarks, ...] = ()

    def keys_to_read(self) -> list[QuotaKey]:
        """Every key a draw or one of its fallbacks may count against, first-seen order (not the
        ``unmapped`` ones: nothing names them to a cloud; ``reading_of`` makes them unknown)."""
        keys: dict[QuotaKey, None] = {}
        for c in self.contributions:
            for d in c.draw.chain():
                if d.key.source != "unmapped":
                    keys[d.key] = None
        return list(keys)

    def rows(
        self,
        pick: Pick = first_choice,
        reserved: Mapping[str, int | str] | None = None,
        own: Mapping[str, Mapping[QuotaKey, float]] | str | None = None,
    ) -> list[DemandRow]:
        """Demand per resolved quota, regional rows first (stable order).

        ``reserved``: per pool that targets an EC2 Capacity Reservation, the instances it holds
        for the pool (a string: why it holds none, ``reserved_nodes``). The reservation's quota is usage
        already (``quota.clients.aws``), so such a pool adds demand only beyond its size.
        ``own``: what the stack's running VMs hold per pool and key (``quota.own``); a string:
        why it could not be read; ``None``: not read.
        """
        acc: dict[QuotaKey, _Acc] = {}
        for c in self.contributions:
            key, note = pick(c.draw)
            a = acc.setdefault(key, _Acc())
            a.add(c, note, reserved, self.surge_all, self.surge_rule)
            if isinstance(own, Mapping) and not c.pool.bootstrap:  # by the draw, resolved as it
                a.own += _own_of_pool(c, own, reserved)
        out = [a.row(key, self.surge_all, self.surge_rule, own) for key, a in acc.items()]
        order = {"region": 0, "global": 1}
        return sorted(out, key=lambda r: order[r.key.scope])


def _own_of_pool(
    c: Contribution,
    own: Mapping[str, Mapping[QuotaKey, float]],
    reserved: Mapping[str, int | str] | None,
) -> float:
    """The pool's running units of the draw, at most what the pool itself demands without its
    surge (per node x the nodes it adds): VMs beyond a lowered maxNodes are removed by the
    scale-down, so they offset nothing another pool on the same row needs."""
    nodes, _ = _beyond_reservation(c.pool, reserved)
    held = (own.get(c.pool.name) or {}).get(c.draw.key, 0.0)
    return min(held, float(c.draw.per_node * nodes))


@dataclass(slots=True)
class _Acc:
    """One quota's draws while ``Demand.rows`` sums them."""

    base: int = 0
    surge: int = 0
    surge_pools: str = ""
    boot: int = 0
    at_min: int = 0
    own: float = 0.0
    why: list[str] = field(default_factory=list)
    models: set[str] = field(default_factory=set)
    rules: dict[str, None] = field(default_factory=dict)
    notes: dict[str, None] = field(default_factory=dict)

    def add(
        self,
        c: Contribution,
        note: str | None,
        reserved: Mapping[str, int | str] | None,
        surge_all: bool,
        surge_rule: str,
    ) -> None:
        s, per = c.pool, c.draw.per_node
        nodes, held = _beyond_reservation(s, reserved)
        self.models.add(s.model)
        why = f"{s.name}: {per} x {_nodes_text(s) if held is None else held}"
        if note:
            why += f" [{note}]"
            self.notes[f"{note} ({s.name})"] = None
        if s.warm:
            n = s.min_nodes
            why += f" (at minimum {n} node{'s' if n != 1 else ''}, {s.warm} of them warm)"
        self.why.append(why)
        if s.bootstrap:
            self.boot += per * s.max_nodes
            return
        self.base += per * nodes
        self.at_min += per * min(s.min_nodes, nodes)
        if per * s.surge:
            self.rules[s.surge_rule or surge_rule] = None
        if surge_all and per * s.surge:
            self.surge += per * s.surge
            self.surge_pools = ", ".join(filter(None, (self.surge_pools, s.name)))
        elif per * s.surge > self.surge:
            self.surge, self.surge_pools = per * s.surge, s.name

    def row(self, key: QuotaKey, surge_all: bool, surge_rule: str, own: object) -> DemandRow:
        steady = self.base + self.surge
        why = list(self.why)
        if self.surge:
            which = "every group" if surge_all else "the largest single pool"
            rules = "; ".join(self.rules) or surge_rule
            why.append(f"surge: +{self.surge} ({self.surge_pools}, {which}; {rules})")
        if self.boot:
            why.append(
                f"bootstrap pool counted as max({self.boot}, {steady}): it is deleted "
                "before the other pools exist"
            )
        needed = max(steady, self.boot)
        return DemandRow(
            key=key,
            name=quota_name(key),
            needed=needed,
            pools=tuple(why),
            models=frozenset(self.models),
            at_min=self.at_min,
            # a bootstrap pool larger than the rest has no surge on top of it
            surge=self.surge if steady >= self.boot else 0,
            own=self.own if isinstance(own, Mapping) else None,
            own_error=own if isinstance(own, str) else None,
            notes=tuple(self.notes),
        )


GKE_SURGE_RULE = "GKE upgrades one node pool at a time"
# Every node group of the stack depends only on the cluster (infra/components/eks.py), so one
# `pulumi up` updates them all at once ("-p, --parallel int  Allow P resource operations to run in
# parallel at once (1 for no parallelism). Defaults to unbounded.",
# https://www.pulumi.com/docs/iac/cli/commands/pulumi_up/): their surges add up.
EKS_SURGE_RULE = (
    "EKS node group update: max(2 x AZs, maxUnavailable) nodes per group, and one pulumi up "
    "updates every group at once"
)


def gcp_contributions(
    region: str, sizings: Iterable[NodeGroupSizing], force_preemptible: bool = False
) -> Demand:
    """Draws of GKE pools in ``region``.

    Raises:
        KeyError: a sizing's GPU type, machine family or disk type has no quota row
            (``quota.sizing.vet_gcp`` reports those as config issues first).
    """
    out: list[Contribution] = []
    for s in sizings:
        for d in gcp_vm_quotas(
            region,
            machine_type=s.machine_types[0],
            vcpus=s.vcpus,
            accelerator=s.gpu_type,
            gpus=s.gpus_per_node,
            model=s.model,
            disk_type=s.disk_type,
            disk_gb=s.disk_gb,
            local_ssds=s.local_ssds,
            external_ip=s.external_ip,
            force_preemptible=force_preemptible,
            declared=s.declared,
        ):
            out.append(Contribution(s, d))
    return Demand("gcp", region, tuple(out), GKE_SURGE_RULE)


def aws_contributions(region: str, sizings: Iterable[NodeGroupSizing]) -> Demand:
    """Draws of EKS node groups in ``region``."""
    out = [
        Contribution(s, d)
        for s in sizings
        for spot in ((False, True) if s.spot_or_on_demand else (s.spot,))
        for d in aws_vm_quotas(region, s.machine_types, s.vcpus, spot, s.declared)
    ]
    return Demand("aws", region, tuple(out), EKS_SURGE_RULE, surge_all=True)


def gcp_demand(region: str, sizings: Iterable[NodeGroupSizing]) -> list[DemandRow]:
    """Offline demand rows of GKE pools in ``region``."""
    return gcp_contributions(region, sizings).rows()


def aws_demand(region: str, sizings: Iterable[NodeGroupSizing]) -> list[DemandRow]:
    """Offline demand rows of EKS node groups in ``region``."""
    return aws_contributions(region, sizings).rows()


def stack_sizings(config: Any, catalog: Catalog, plan: Plan) -> tuple[Cloud, list[NodeGroupSizing]]:
    """The cloud and the node groups of a planned stack (``quota.sizing.plan_sizings``).

    Raises:
        ConfigErrors: the stack cannot be sized (platform without cloud quotas, unknown types).
    """
    return plan_sizings(config, plan, catalog)


def stack_contributions(
    config: Any, catalog: Catalog, plan: Plan, force_preemptible: bool = False
) -> Demand:
    """Every draw of a planned stack in its region (``infra.core.plan.build_plan``), with the
    marks of its node groups."""
    from quota.clouds import QUOTA_CLOUDS

    cloud, sizings = stack_sizings(config, catalog, plan)
    demand = QUOTA_CLOUDS[cloud].contributions(config.region, sizings, force_preemptible)
    return replace(demand, marks=plan.platform.node_marks())


def stack_demand(config: Any, catalog: Catalog, plan: Plan) -> tuple[Cloud, list[DemandRow]]:
    """The cloud and every offline demand row of a planned stack."""
    demand = stack_contributions(config, catalog, plan)
    return demand.cloud, demand.rows()


def reading_of(readings: Mapping[QuotaKey, Reading], key: QuotaKey) -> Reading:
    """What was read for ``key``; an ``unmapped`` key's reading is its reason to be unknown."""
    if key.source == "unmapped":
        return Reading(error=unmapped_reason(key))
    return readings.get(key, Reading(error="not read"))


def reading_pick(readings: Mapping[QuotaKey, Reading]) -> Pick:
    """Resolve draws with what the cloud reported (``rules.FallbackWhen``).

    Spot moves to the standard quota only when the preemptible one is known to be ungranted
    (limit 0, or the region does not report a metric the client library's enum names:
    ``Draw.verified``); E2 moves to CPUS only when the region does not report E2_CPUS. An
    unreadable quota, or an unverified metric name the region does not report, keeps the first
    choice, whose row is then unknown.
    """

    def pick(draw: Draw) -> tuple[QuotaKey, str | None]:
        notes: list[str] = []
        d = draw
        while d.fallback is not None:
            r = readings.get(d.key)
            missing = r is not None and (r.error or "").startswith("quota missing")
            spot = d.when == "preemptible-not-granted" and r is not None
            if spot and missing and not d.verified:
                notes.append(
                    f"{d.key.quota} not reported in {d.key.region} and its name is unverified: "
                    "whether Spot counts on it or on standard quota is unknown"
                )
                break
            if spot and r is not None and (missing or r.limit == 0):
                notes.append(f"{d.key.quota} not granted: Spot counts against standard quota")
            elif d.when == "metric-missing" and missing:
                notes.append(f"{d.key.quota} not reported in {d.key.region}")
            else:
                break
            d = d.fallback
        return d.key, "; ".join(notes) or None

    return pick
