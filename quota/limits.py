"""Service limits that are not compute quotas but stop ``pulumi up`` all the same (pure).

EKS: managed node groups per cluster and nodes per managed node group (Service Quotas, service code
``eks``, read live); GKE: nodes per node pool zone and nodes per cluster (documented system limits).
Facts and sources: ``quota/data/service_limits.csv``. Each is one row beside the compute quotas:
the stack's count against the limit, ``unknown`` (never ``ok``) when the limit or the count of what
already exists cannot be established.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from infra.core.catalog.vendored import read_rows
from quota.arithmetic import Reading
from quota.demand import DemandRow
from quota.keys import Cloud, QuotaKey

DATA_DIR = Path(__file__).parent / "data"
FILE = "service_limits.csv"


@dataclass(frozen=True, slots=True)
class ServiceLimit:
    """One row of ``service_limits.csv``."""

    cloud: Cloud
    limit: str
    quota: str
    scope: str  # cluster | group
    unit: str
    value: int
    name: str
    source: str


@cache
def service_limits() -> dict[str, ServiceLimit]:
    """Limit name -> its facts."""
    return {
        r["limit"]: ServiceLimit(
            r["cloud"],  # type: ignore[arg-type]
            r["limit"],
            r["quota"],
            r["scope"],
            r["unit"],
            int(r["value"]),
            r["name"],
            r["source"],
        )
        for r in read_rows(FILE, DATA_DIR)
    }


def limit_key(lim: ServiceLimit, region: str) -> QuotaKey:
    """The check key of a service limit (read from Service Quotas on AWS, documented on GKE)."""
    source = "servicequotas-eks" if lim.cloud == "aws" else "documented"
    return QuotaKey(lim.cloud, "region", region, lim.quota, lim.unit, source)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class LimitDemand:
    """The stack's count against each service limit, and what already exists outside it.

    Attributes:
        rows: one demand row per limit.
        existing_cluster: the stack attaches to a cluster it does not create, whose other node
            groups / nodes count too (``own_groups`` names this stack's, to tell them apart).
        cluster: the cluster's name.
        own_groups: the node group / pool names this stack plans.
        notes: per quota, what the row's verdict leaves out (added to its reason).
    """

    rows: tuple[DemandRow, ...]
    existing_cluster: bool
    cluster: str
    own_groups: frozenset[str]
    # per quota: what its verdict leaves out (added to the row's reason)
    notes: tuple[tuple[str, str], ...] = ()


def _row(
    lim: ServiceLimit, region: str, needed: int, why: list[str], at_min: int = 0, surge: int = 0
) -> DemandRow:
    return DemandRow(
        key=limit_key(lim, region),
        name=lim.name,
        needed=needed,
        pools=tuple(why),
        source=lim.source,
        at_min=at_min,
        surge=surge,
    )


def eks_limits(plan: Any, region: str, sizings: Any = ()) -> LimitDemand:
    """Node groups per cluster and nodes per node group of a planned EKS stack (plus the
    deployed groups a replacement keeps beside their successors, ``sizing.with_replacements``)."""
    groups = list(plan.platform.limit_groups())  # (pool, node group, max size)
    lims = service_limits()
    per_cluster = lims["managed-node-groups-per-cluster"]
    per_group = lims["nodes-per-managed-node-group"]
    counts: dict[str, int] = {}
    for pool, _, _ in groups:
        counts[pool] = counts.get(pool, 0) + 1
    largest = max(groups, key=lambda x: x[2], default=None)
    why = [f"{p}: {n} node group(s)" for p, n in counts.items()]
    replaced = [s for s in sizings if s.replaced_groups]
    why += [f"{s.name}: {s.replaced_groups} node group(s)" for s in replaced]
    total = len(groups) + sum(s.replaced_groups for s in replaced)
    # Node groups exist at any size: all of them count at minimum too.
    rows = [_row(per_cluster, region, total, why, at_min=total)]
    if largest is not None:
        # Its pool's nodes at minimum (minNodes, or warm where more, as the INSTANCES rows count
        # them), at most the group's size.
        at_min = {s.name: s.min_nodes for s in sizings}.get(largest[0], 0)
        why_group = [f"{largest[1]}: maxSize {largest[2]} (the largest)"]
        rows.append(_row(per_group, region, largest[2], why_group, min(at_min, largest[2])))
    platform = plan.platform
    return LimitDemand(
        tuple(rows),
        bool(platform.existing),
        platform.cluster_name,
        frozenset(ng for _, ng, _ in groups),
    )


def gke_limits(plan: Any, region: str, sizings: Any) -> LimitDemand:
    """Nodes per node pool zone and nodes per cluster of a planned GKE stack."""
    lims = service_limits()
    per_zone = lims["nodes-per-node-pool-zone"]
    per_cluster = lims["nodes-per-cluster"]
    own = [s for s in sizings if not s.bootstrap]
    # The limit caps each zone of a pool; a pool's totalMaxNodeCount (infra/components/gke.py)
    # spans its zones, so it cannot fit only when its total exceeds 1,000 in every zone: the
    # demand is the total over the pool's zones, rounded up (no zones listed: the cluster's, one
    # counted, the conservative side). https://cloud.google.com/kubernetes-engine/quotas
    # An auto-created pool has no total spread over its zones: GKE may create it in one zone
    # ("Zones lists zones considered for node autoprovisioning", ComputeClass CRD
    # priorities[].location.zones), so all its nodes count in one.
    zone_counts = [
        (s.name, s.max_nodes if s.auto_created else -(-s.max_nodes // max(1, len(s.zones))))
        for s in own
    ]
    top = max(zone_counts, key=lambda x: x[1], default=("-", 0))
    # At minimum (minNodes, or warm where more, as the GPU rows count them), no surge.
    zone_min = max(
        (s.min_nodes if s.auto_created else -(-s.min_nodes // max(1, len(s.zones))) for s in own),
        default=0,
    )
    surge = max((s.surge for s in own), default=0)  # GKE upgrades one pool at a time
    total = sum(s.max_nodes for s in own) + surge
    rows = (
        _row(
            per_zone, region, top[1], [f"{top[0]}: {top[1]} nodes per zone (the largest)"], zone_min
        ),
        _row(
            per_cluster,
            region,
            total,
            [f"{s.name}: {s.max_nodes} nodes" for s in own] + [f"surge: +{surge}"] * bool(surge),
            sum(s.min_nodes for s in own),
            surge,
        ),
    )
    platform = plan.platform
    # An existing cluster's other node pools count toward nodes per cluster too; reading them
    # needs the Container API client (google-cloud-container), which this tool does not depend
    # on. The row is judged on this stack's pools and says so, instead of failing every GKE
    # stack on an existing cluster as unknown.
    notes = ((per_cluster.quota, GKE_OTHER_POOLS_NOT_COUNTED.format(platform.cluster_name)),)
    return LimitDemand(
        rows,
        bool(platform.existing),
        platform.cluster_name,
        frozenset(s.name for s in own),
        notes if platform.existing else (),
    )


# An EKS limit Service Quotas lists no value for: the documented default (service_limits.csv).
DOCUMENTED_DEFAULT_NOTE = "Service Quotas lists no value here: the documented default applies"

GKE_OTHER_POOLS_NOT_COUNTED = (
    "this stack's pools only: the existing cluster {}'s other node pools are not counted "
    "(gcloud container node-pools list shows them)"
)


def limit_reading(
    row: DemandRow,
    demand: LimitDemand,
    limit: float | None = None,
    others: int | None = None,
) -> Reading:
    """Limit and usage of one limit row.

    Args:
        limit: the value read (Service Quotas); ``None``: the documented one.
        others: node groups of an existing cluster that this stack does not plan (``None``:
            not counted).

    Per-group limits cap one group: nothing else uses them. Per-cluster limits are shared with
    the cluster's other node groups / pools: none for a cluster the stack creates, ``others``
    for an existing one, and unknown when those could not be counted.
    """
    lim = next(x for x in service_limits().values() if x.quota == row.key.quota)
    value = float(lim.value) if limit is None else limit
    if lim.scope == "group" or not demand.existing_cluster:
        return Reading(limit=value, usage=0.0)
    if any(q == row.key.quota for q, _ in demand.notes):  # judged on the stack's own count
        return Reading(limit=value, usage=0.0)
    if others is not None:
        return Reading(limit=value, usage=float(others))
    return Reading(
        limit=value,
        error=f"usage not read: the existing cluster {demand.cluster}'s other node groups and "
        "pools count toward this limit too",
    )


def stack_limits(cloud: Cloud, plan: Any, region: str, sizings: Any) -> LimitDemand:
    """The service-limit rows of a planned stack (its cloud's ``quota.clouds`` entry)."""
    from quota.clouds import QUOTA_CLOUDS

    return QUOTA_CLOUDS[cloud].service_limits(plan, region, sizings)


def limit_readings(
    demand: LimitDemand,
    values: dict[str, float | str | None] | None = None,
    others: int | str | None = None,
) -> dict[QuotaKey, Reading]:
    """A reading per limit row from what was read (AWS) or documented (GKE: ``values`` None).

    ``values``: per quota code the value read, ``None`` for the documented default (Service
    Quotas lists none), or why it is unknown. ``others``: the existing cluster's other node
    groups (a string: why they could not be counted).
    """
    out: dict[QuotaKey, Reading] = {}
    for row in demand.rows:
        got = (values or {}).get(row.key.quota)
        if isinstance(got, str):
            out[row.key] = Reading(error=got)
            continue
        reading = limit_reading(row, demand, got, others if isinstance(others, int) else None)
        if isinstance(others, str) and reading.error is not None:
            reading = Reading(limit=reading.limit, error=f"usage unreadable: {others}")
        out[row.key] = reading
    return out
