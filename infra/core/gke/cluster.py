"""GKE cluster rules: release channel, maintenance policy, private nodes and control-plane access.

Pure code; ``plan_cluster`` returns the decided ``GkeClusterPlan`` and the notes for the plan.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import re
from pathlib import Path

from infra.core.config.gke import GkeClusterSpec, MaintenanceSpec
from infra.core.config.location import gcp_region_of
from infra.core.errors import Issues, join_path
from infra.core.gke.maintenance import min_hours_per_32_days
from infra.core.gke.model import (
    IMAGE_STREAMING_ROLE,
    NODE_SA_ROLES,
    AuthorizedNetworkPlan,
    GkeClusterPlan,
    MaintenanceExclusionPlan,
)
from infra.core.gke.names import ProjectNames, project_names
from infra.core.gke.series import series_of
from infra.core.gke.versions import gke_version, support_problem, version_at_least
from infra.core.sizing import GKE_DEFAULT_DISK_TYPE

# https://cloud.google.com/kubernetes-engine/docs/how-to/maintenance-windows-and-exclusions:
# "You must allow at least 48 hours of maintenance availability in a 32-day rolling window. Only
# contiguous availability windows of at least four hours are considered."
MIN_WINDOW_HOURS = 4
MIN_HOURS_PER_32_DAYS = 48
# https://cloud.google.com/kubernetes-engine/docs/concepts/maintenance-windows-and-exclusions#limitations-maint-exclusions:
# a NO_UPGRADES exclusion lasts at most 30 days and at most three may be configured; at most 20
# exclusions in all (quoted in hashicorp/terraform-provider-google#15279). Scopes other than
# NO_UPGRADES need a release channel.
MAX_NO_UPGRADES_DAYS = 30
MAX_NO_UPGRADES = 3
MAX_EXCLUSIONS = 20
# "You can add up to 100 authorized networks (allowlisted CIDR blocks)" (network isolation
# restrictions, https://cloud.google.com/kubernetes-engine/docs/how-to/private-clusters).
MAX_AUTHORIZED_NETWORKS = 100

# GKE's default metric packages for new Standard clusters. enableComponents replaces the whole set,
# so each is listed with the version from which GKE turns it on by default:
# kube state (STORAGE, HPA, POD, DAEMONSET, DEPLOYMENT, STATEFULSET) from 1.29.2-gke.2000 and JOBSET
# from 1.32.1-gke.1357001 (https://cloud.google.com/kubernetes-engine/docs/how-to/kube-state-metrics),
# CADVISOR and KUBELET from 1.29.3-gke.1093000
# (https://cloud.google.com/kubernetes-engine/docs/how-to/cadvisor-kubelet-metrics),
# component names per the MonitoringComponentConfig.Component enum (REST v1).
DEFAULT_MONITORING: tuple[tuple[str, str], ...] = (
    ("SYSTEM_COMPONENTS", "0.0"),
    ("STORAGE", "1.29.2-gke.2000"),
    ("HPA", "1.29.2-gke.2000"),
    ("POD", "1.29.2-gke.2000"),
    ("DAEMONSET", "1.29.2-gke.2000"),
    ("DEPLOYMENT", "1.29.2-gke.2000"),
    ("STATEFULSET", "1.29.2-gke.2000"),
    ("CADVISOR", "1.29.3-gke.1093000"),
    ("KUBELET", "1.29.3-gke.1093000"),
    ("JOBSET", "1.32.1-gke.1357001"),
)
# https://cloud.google.com/kubernetes-engine/docs/concepts/release-channels#no_channel: "No channel"
# is deprecated, allowed only for existing customers, and removed on June 14, 2027.
NO_CHANNEL_REMOVAL = "June 14, 2027"


def plan_cluster(
    cluster: GkeClusterSpec,
    project: str,
    issues: Issues,
    *,
    operator_on: bool,
    stack: str,
    running: bool = False,
    data_dir: Path,
) -> tuple[GkeClusterPlan, list[str]]:
    """The decided cluster and the notes a reviewer should read.

    ``operator_on``: the GPU Operator is deployed, so GKE's managed DCGM stays off.
    ``stack``: the stack's name, part of every project-scoped name (``infra.core.gke.names``).
    ``running``: the cluster already runs (``cluster.existing``, or the observe step found the
    cluster this stack creates), so ``cluster.minMasterVersion`` is not sent at creation again.
    ``data_dir``: the directory of the catalog the plan is built with (its support calendar and
    machine series).
    """
    notes: list[str] = []
    _check_window(cluster.maintenance, issues, notes)
    exclusions = _check_exclusions(cluster.maintenance, cluster.release_channel, issues)
    networks = _authorized_networks(cluster, issues)
    _check_network_keys(cluster, issues, notes)
    _check_nat_network(cluster, project, issues)
    if cluster.authorized_networks and not cluster.existing:
        notes.append(
            "cluster.authorizedNetworks: the machine running `pulumi up` must reach the control "
            "plane from one of these CIDRs, or the Kubernetes objects of this stack fail to apply"
        )
    _check_subnetwork_region(cluster, issues)
    _check_subnetwork_project(cluster, project, issues)
    _check_system_pool_zones(cluster, issues)
    running = running or cluster.existing
    _check_version_and_channel(cluster, issues, notes, running=running, data_dir=data_dir)
    # The operator runs its own dcgm-exporter; GKE's managed DCGM would be a second exporter on
    # the same GPUs. The component list is sent explicitly (GKE's defaults, no DCGM) so GKE's own
    # default never adds it (https://cloud.google.com/kubernetes-engine/docs/how-to/dcgm-metrics).
    dcgm = cluster.dcgm_metrics and not operator_on
    if cluster.node_service_account:
        notes.append(
            f"cluster.nodeServiceAccount: nodes run as {cluster.node_service_account}, which this "
            f"stack neither creates nor grants roles; it needs {', '.join(NODE_SA_ROLES)} "
            f"(and {IMAGE_STREAMING_ROLE} for image streaming)"
        )
    names = project_names(stack, cluster.location, cluster.name)
    plan = _cluster_plan(
        cluster, project, tuple(exclusions), networks, names, dcgm=dcgm, data_dir=data_dir
    )
    if cluster.dcgm_metrics and operator_on and "dcgm_metrics" in cluster.model_fields_set:
        notes.append(
            "cluster.dcgmMetrics: GPU metrics come from the GPU Operator's dcgm-exporter; "
            "GKE's managed DCGM stays off while gpuOperator.enabled is true"
        )
    return plan, notes


def _check_network_keys(cluster: GkeClusterSpec, issues: Issues, notes: list[str]) -> None:
    """Private nodes, Cloud NAT and authorized networks: only on clusters this stack creates."""
    if cluster.cloud_nat and not cluster.private_nodes:
        issues.add("cluster.cloudNat", "only used with cluster.privateNodes: true")
    if cluster.existing:
        for key, on in (
            ("privateNodes", cluster.private_nodes),
            ("cloudNat", cluster.cloud_nat),
            ("authorizedNetworks", cluster.authorized_networks is not None),
        ):
            if on:
                issues.add(
                    join_path("cluster", key),
                    "applies to clusters this stack creates; cluster.existing is true",
                )
    if cluster.cloud_nat and cluster.private_nodes and not cluster.existing:
        # Cloud NAT refuses a second NAT for ranges one already serves: "Can not create new Nats
        # since a Nat with option ALL_SUBNETWORKS_ALL_IP_RANGES exists" (Compute API routers).
        notes.append(
            "cluster.cloudNat: the NAT serves only the cluster's subnetwork; if another NAT in this "
            "region already serves it (or every subnetwork of the network), creating this one "
            "fails: set cloudNat: false and rely on that NAT"
        )
    if cluster.private_nodes and not cluster.cloud_nat and not cluster.existing:
        # Private nodes have no external IP; without NAT they cannot pull nvcr.io / docker.io images
        # (https://cloud.google.com/kubernetes-engine/docs/how-to/private-clusters#docker_hub).
        notes.append(
            "cluster.privateNodes: nodes have no external IPs and this stack creates no Cloud NAT; "
            "GPU Operator images on nvcr.io need one (set cluster.cloudNat: true or provide NAT "
            f"on network {cluster.network or 'default'})"
        )


def transition_issues(old: GkeClusterSpec, new: GkeClusterSpec, issues: Issues) -> None:
    """Changes to a running cluster that ``pulumi up`` cannot make as written.

    ``privateNodes`` true -> false is no change by itself: both private-node blocks are
    Optional+Computed in the provider (terraform-provider-google-beta resource_container_cluster.go
    privateClusterConfig, resource_container_node_pool.go network_config.enable_private_nodes), so
    removing them keeps the live value, and ``--diff`` warns of it (``diff.kept_removals``). With
    the Cloud NAT on it is refused: the NAT (``cloudNat`` needs ``privateNodes``) would be deleted
    while the nodes, still private, need it for nvcr.io."""
    if old.private_nodes and not new.private_nodes and not new.existing and old.cloud_nat:
        issues.add(
            "cluster.privateNodes",
            "true => false is not applied to a running cluster: GKE keeps the nodes private "
            "(the provider keeps the live setting when the block is removed) and its Cloud NAT "
            "would be deleted while they need it; keep privateNodes: true and cloudNat, or "
            "re-create the cluster",
        )


def _check_nat_network(cluster: GkeClusterSpec, project: str, issues: Issues) -> None:
    """Cloud NAT needs the cluster's subnetwork path and a router in the network's own project.

    A Cloud Router is created in the project of the network it belongs to (Compute API
    routers.insert: ``network`` is "URI of the network to which this router belongs"); a Shared
    VPC network lives in its host project, where the host's network admins set up Cloud NAT
    (https://cloud.google.com/nat/docs/overview, "Shared VPC"). Only an auto-mode network has a
    subnetwork named after itself in every region
    (https://cloud.google.com/vpc/docs/vpc#auto-mode-considerations); a custom-mode one does not.
    """
    if not (cluster.cloud_nat and cluster.private_nodes) or cluster.existing:
        return
    net = cluster.network or "default"
    host = re.match(r"projects/([^/]+)/", net)
    if host is not None and host.group(1) != project:
        issues.add(
            "cluster.cloudNat",
            f"true, but cluster.network {net} is in project {host.group(1)} (Shared VPC), not "
            f"{project}: its Cloud Router and NAT belong in that host project; set cloudNat: "
            "false and have the host project serve the cluster's subnetwork",
        )
    elif net.rsplit("/", 1)[-1] != "default" and not cluster.subnetwork:
        issues.add(
            "cluster.subnetwork",
            f"required with cluster.cloudNat: true on network {net}: only an auto-mode network "
            "has a subnetwork named after itself, so the NAT's subnetwork cannot be guessed",
        )


def nat_subnetwork(cluster: GkeClusterSpec, project: str) -> str:
    """The cluster's subnetwork as a resource path: ``subnetwork``, else the auto-mode subnetwork
    named after ``network`` (``default``) in the cluster's region
    (https://cloud.google.com/vpc/docs/vpc#auto-mode-considerations)."""
    name = cluster.subnetwork or (cluster.network or "default").rsplit("/", 1)[-1]
    if "/" in name:
        return name
    region = (gcp_region_of(cluster.location) or (cluster.location, None))[0]
    return f"projects/{project}/regions/{region}/subnetworks/{name}"


def _check_subnetwork_region(cluster: GkeClusterSpec, issues: Issues) -> None:
    """A subnetwork is regional: GKE takes one of the cluster's region (Cluster.subnetwork, v1)."""
    sub, split = cluster.subnetwork, gcp_region_of(cluster.location)
    m = re.search(r"/regions/([^/]+)/", sub or "")
    if m is not None and split is not None and m.group(1) != split[0]:
        issues.add(
            "cluster.subnetwork",
            f"{sub} is in region {m.group(1)}; the cluster is in {split[0]} (cluster.location)",
        )


def _check_subnetwork_project(cluster: GkeClusterSpec, project: str, issues: Issues) -> None:
    """A subnetwork lives in its network's project: a Shared VPC cluster names the host
    project's network and subnetwork (https://cloud.google.com/kubernetes-engine/docs/how-to/
    cluster-shared-vpc: ``--network projects/HOST/global/networks/N --subnetwork
    projects/HOST/regions/R/subnetworks/S``); a bare name is in the cluster's project."""
    if cluster.subnetwork is None:
        return
    net = cluster.network or "default"
    net_project = m.group(1) if (m := re.match(r"projects/([^/]+)/", net)) else project
    sub_project = (
        m.group(1) if (m := re.match(r"projects/([^/]+)/", cluster.subnetwork)) else project
    )
    if net_project != sub_project:
        issues.add(
            "cluster.subnetwork",
            f"{cluster.subnetwork} is in project {sub_project}, but cluster.network {net} is in "
            f"{net_project}: a subnetwork belongs to its network's project (Shared VPC: both in "
            "the host project)",
        )


# "By default, GKE replicates each node pool across three zones of the control plane's region"
# (https://cloud.google.com/kubernetes-engine/docs/concepts/regional-clusters); the system pool is
# created with initialNodeCount 1, which is per zone.
REGIONAL_DEFAULT_ZONES = 3


def _check_system_pool_zones(cluster: GkeClusterSpec, issues: Issues) -> None:
    split = gcp_region_of(cluster.location)
    regional = split is not None and split[1] is None
    sp = cluster.system_pool
    if regional and not cluster.existing and sp.max_nodes < REGIONAL_DEFAULT_ZONES:
        issues.add(
            "cluster.systemPool.maxNodes",
            f"{sp.max_nodes} is below the {REGIONAL_DEFAULT_ZONES} nodes GKE creates for the "
            f"system pool of a regional cluster (one per zone, {REGIONAL_DEFAULT_ZONES} zones); "
            f"set it to at least {REGIONAL_DEFAULT_ZONES}",
        )


def _check_version_and_channel(
    cluster: GkeClusterSpec, issues: Issues, notes: list[str], *, running: bool, data_dir: Path
) -> None:
    mmv = cluster.min_master_version
    if mmv is not None and mmv not in ("latest", "-") and gke_version(mmv) is None:
        # "latest", "1.X", "1.X.Y", "1.X.Y-gke.N" or "-" (UpdateMasterRequest.master_version, v1).
        issues.add(
            "cluster.minMasterVersion",
            f"{mmv!r} is not a GKE version: latest, 1.X, 1.X.Y or 1.X.Y-gke.N",
        )
    elif (problem := support_problem(mmv, cluster.release_channel, data_dir)) and not running:
        issues.add(
            "cluster.minMasterVersion",
            f"{problem}; this plan creates the cluster (no cluster of that name was found "
            "running, or none was read offline)",
        )
    elif problem:
        # terraform-provider-google resource_container_cluster.go (@e03b7622a2): create sends
        # min_master_version as InitialClusterVersion; update upgrades the master only when its
        # current version is lower (cur.LessThan(des)), so a running cluster is left as it is.
        notes.append(
            f"cluster.minMasterVersion: {problem}. The cluster already runs, so `pulumi up` "
            "leaves its control plane as GKE keeps it (the version is sent only when a cluster "
            "is created); recreating it would be refused"
        )
    if cluster.release_channel == "UNSPECIFIED" and not cluster.existing:
        notes.append(
            "cluster.releaseChannel: UNSPECIFIED (No channel) is deprecated, allowed only for "
            f"existing customers, and removed on {NO_CHANNEL_REMOVAL}; GKE then enrolls the "
            "cluster in Stable. Prefer a channel with cluster.maintenance.exclusions "
            "(https://cloud.google.com/kubernetes-engine/docs/concepts/release-channels#no_channel)"
        )


def _cluster_plan(
    cluster: GkeClusterSpec,
    project: str,
    exclusions: tuple[MaintenanceExclusionPlan, ...],
    networks: tuple[AuthorizedNetworkPlan, ...] | None,
    names: ProjectNames,
    *,
    dcgm: bool,
    data_dir: Path,
) -> GkeClusterPlan:
    window = cluster.maintenance.window
    system = cluster.system_pool.machine_type
    series = series_of(system, data_dir)
    return GkeClusterPlan(
        name=cluster.name,
        location=cluster.location,
        existing=cluster.existing,
        release_channel=cluster.release_channel,
        min_master_version=cluster.min_master_version,
        deletion_protection=cluster.deletion_protection,
        network=cluster.network,
        subnetwork=cluster.subnetwork,
        workload_pool=f"{project}.svc.id.goog",
        node_sa_id=names.node_sa_id,
        node_sa_email=cluster.node_service_account,
        router_name=names.router,
        nat_name=names.nat,
        nat_subnetwork=nat_subnetwork(cluster, project),
        system_machine_type=system,
        system_disk_type=series.default_disk_type if series else GKE_DEFAULT_DISK_TYPE,
        system_min=cluster.system_pool.min_nodes,
        system_max=cluster.system_pool.max_nodes,
        maintenance_start=window.start,
        maintenance_end=window.end,
        maintenance_recurrence=window.recurrence,
        maintenance_exclusions=exclusions,
        private_nodes=cluster.private_nodes,
        cloud_nat=cluster.cloud_nat,
        authorized_networks=networks,
        dataplane_v2=cluster.dataplane_v2,
        dcgm_metrics=dcgm,
        monitoring_components=monitoring_components(cluster.min_master_version, dcgm=dcgm),
    )


def monitoring_components(min_master: str | None, *, dcgm: bool) -> tuple[str, ...]:
    """GKE's default packages the cluster's version gets, plus DCGM when asked for."""
    out = [c for c, since in DEFAULT_MONITORING if version_at_least(min_master, since)]
    # https://cloud.google.com/kubernetes-engine/docs/how-to/dcgm-metrics
    return (*out, "DCGM") if dcgm else tuple(out)


# RFC 3339 section 5.6 date-time: full-date "T" full-time, seconds required, an offset required
# (Python's fromisoformat also takes 2026-01-03, 20260103T000000Z or 2026-01-03 00:00, which GKE
# refuses).
_RFC3339 = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})", re.ASCII
)


def _time(value: str, path: str, issues: Issues) -> dt.datetime | None:
    """An RFC 3339 timestamp with a zone (GKE stores UTC)."""
    try:
        t = dt.datetime.fromisoformat(value) if _RFC3339.fullmatch(value) else None
    except ValueError:
        t = None
    if t is None or t.tzinfo is None:
        issues.add(
            path, f"{value!r} is not an RFC 3339 time with a zone, e.g. 2026-01-03T00:00:00Z"
        )
        return None
    return t


def _check_window(m: MaintenanceSpec, issues: Issues, notes: list[str]) -> None:
    path = "cluster.maintenance.window"
    w = m.window
    start = _time(w.start, join_path(path, "start"), issues)
    end = _time(w.end, join_path(path, "end"), issues)
    if start is None or end is None:
        return
    hours = (end - start).total_seconds() / 3600
    if hours < MIN_WINDOW_HOURS:
        issues.add(
            join_path(path, "end"),
            f"the window lasts {hours:g} h; GKE counts only windows of at least "
            f"{MIN_WINDOW_HOURS} contiguous hours",
        )
        return
    if (problem := rrule_problem(w.recurrence)) is not None:
        issues.add(join_path(path, "recurrence"), problem)
        return
    per_32 = min_hours_per_32_days(start, end, w.recurrence)
    if per_32 is None:
        notes.append(
            f"cluster.maintenance.window.recurrence {w.recurrence!r}: not checked against GKE's "
            f"{MIN_HOURS_PER_32_DAYS} h per 32 days (rule parts beyond FREQ, INTERVAL, BYDAY, "
            "BYMONTHDAY, BYMONTH, WKST, COUNT and UNTIL are not expanded)"
        )
        return
    if per_32 < MIN_HOURS_PER_32_DAYS:
        issues.add(
            join_path(path, "recurrence"),
            f"{w.recurrence} with a {hours:g} h window allows {per_32:g} h in some 32 days; GKE "
            f"needs at least {MIN_HOURS_PER_32_DAYS} h in every 32-day rolling window",
        )


# RFC 5545 section 3.3.10 recur-rule-part names; each at most once, FREQ required.
_RRULE_PARTS = frozenset(
    [
        "FREQ",
        "UNTIL",
        "COUNT",
        "INTERVAL",
        "BYSECOND",
        "BYMINUTE",
        "BYHOUR",
        "BYDAY",
        "BYMONTHDAY",
        "BYYEARDAY",
        "BYWEEKNO",
        "BYMONTH",
        "BYSETPOS",
        "WKST",
    ]
)
_WEEKDAY = re.compile(r"[+-]?(?:[1-9]|[1-4]\d|5[0-3])?(?:MO|TU|WE|TH|FR|SA|SU)", re.ASCII)


def rrule_problem(rule: str) -> str | None:
    """Why ``rule`` is not an RFC 5545 RRULE as GKE parses it, or None."""
    parts = [p.partition("=") for p in rule.split(";")]
    names = [n for n, _, _ in parts]
    unknown = sorted(set(names) - _RRULE_PARTS)
    if unknown:
        return f"{rule!r}: {', '.join(unknown)} is not an RFC 5545 rule part"
    if len(set(names)) != len(names):
        return f"{rule!r}: a rule part is given twice (RFC 5545 allows each once)"
    if "UNTIL" in names and "COUNT" in names:
        return f"{rule!r}: UNTIL and COUNT exclude each other (RFC 5545 3.3.10)"
    days = next((v for n, _, v in parts if n == "BYDAY"), None)
    if days is not None and not all(_WEEKDAY.fullmatch(d) for d in days.split(",")):
        return f"{rule!r}: BYDAY takes MO, TU, WE, TH, FR, SA, SU (RFC 5545 3.3.10)"
    return None


def _check_exclusions(
    m: MaintenanceSpec, channel: str, issues: Issues
) -> list[MaintenanceExclusionPlan]:
    out: list[MaintenanceExclusionPlan] = []
    base = "cluster.maintenance.exclusions"
    if len(m.exclusions) > MAX_EXCLUSIONS:
        issues.add(base, f"{len(m.exclusions)} exclusions; GKE accepts at most {MAX_EXCLUSIONS}")
    no_upgrades = [e for e in m.exclusions if e.scope == "NO_UPGRADES"]
    if len(no_upgrades) > MAX_NO_UPGRADES:
        issues.add(
            base,
            f"{len(no_upgrades)} NO_UPGRADES exclusions; GKE accepts at most {MAX_NO_UPGRADES}",
        )
    names: set[str] = set()
    for k, e in enumerate(m.exclusions):
        path = join_path(base, k)
        if e.name in names:
            issues.add(join_path(path, "name"), f"{e.name!r} is used twice")
        names.add(e.name)
        start = _time(e.start, join_path(path, "start"), issues)
        end = _time(e.end, join_path(path, "end"), issues)
        if e.scope != "NO_UPGRADES" and channel == "UNSPECIFIED":
            issues.add(
                join_path(path, "scope"),
                f"{e.scope} needs a release channel; cluster.releaseChannel is UNSPECIFIED "
                "(use NO_UPGRADES)",
            )
        if start is None or end is None:
            continue
        if end <= start:
            issues.add(join_path(path, "end"), f"{e.end} is not after start {e.start}")
        elif e.scope == "NO_UPGRADES" and end - start > dt.timedelta(days=MAX_NO_UPGRADES_DAYS):
            issues.add(
                join_path(path, "end"),
                f"a NO_UPGRADES exclusion lasts at most {MAX_NO_UPGRADES_DAYS} days "
                f"({(end - start).days} days given); use NO_MINOR_UPGRADES or "
                "NO_MINOR_OR_NODE_UPGRADES for longer holds",
            )
        out.append(MaintenanceExclusionPlan(e.name, e.start, e.end, e.scope))
    return out


def _authorized_networks(
    cluster: GkeClusterSpec, issues: Issues
) -> tuple[AuthorizedNetworkPlan, ...] | None:
    nets = cluster.authorized_networks
    if nets is None:
        return None
    path = "cluster.authorizedNetworks"
    if not nets:
        # An empty list locks the public endpoint to nobody: `pulumi up` then fails halfway, when
        # it reaches the Kubernetes objects (https://cloud.google.com/kubernetes-engine/docs/how-to/authorized-networks).
        issues.add(
            path,
            "must not be empty (it would admit no one, this stack's deploy included); "
            "list the CIDRs that reach the control plane, or omit the key",
        )
    elif len(nets) > MAX_AUTHORIZED_NETWORKS:
        issues.add(path, f"{len(nets)} CIDR blocks; GKE accepts at most {MAX_AUTHORIZED_NETWORKS}")
    out: list[AuthorizedNetworkPlan] = []
    for k, n in enumerate(nets):
        path = join_path("cluster", "authorizedNetworks", k, "cidr")
        try:
            net = ipaddress.ip_network(n.cidr, strict=True)
        except ValueError:
            issues.add(path, f"{n.cidr!r} is not a CIDR block such as 203.0.113.0/24")
            continue
        out.append(AuthorizedNetworkPlan(str(net), n.name))
    return tuple(out)
