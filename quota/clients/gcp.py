"""Thin GCP side of the quota check: read limits and usage, file QuotaPreferences.

Google SDKs are imported here and in ``gcp_errors`` (error reasons) / ``gcp_usage`` (readings),
which only this module uses, and this module only when a GKE stack is checked. Every call runs
with a bounded retry (429 and 5xx included) and a per-call timeout; errors become readable
reasons (permission named, API disabled, throttled), never a silent "ok".
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from google.api_core import exceptions as gexc
from google.api_core import retry as gretry
from google.api_core.client_options import ClientOptions
from google.auth.credentials import AnonymousCredentials
from google.cloud.cloudquotas_v1.services.cloud_quotas import CloudQuotasClient
from google.cloud.cloudquotas_v1.types import cloudquotas as cq_req
from google.cloud.cloudquotas_v1.types import resources as cq
from google.cloud.compute_v1.services.instances import InstancesClient
from google.cloud.compute_v1.services.projects import ProjectsClient
from google.cloud.compute_v1.services.regions import RegionsClient
from google.cloud.compute_v1.services.reservations import ReservationsClient
from google.cloud.service_usage_v1.services.service_usage import ServiceUsageClient

from infra.core.catalog.vendored import Catalog
from quota.arithmetic import Reading
from quota.clients.gcp_errors import describe_error, transient
from quota.clients.gcp_usage import (
    catalog_zones,
    compute_reading,
    family_reading,
    with_family_usage,
    with_reserved_usage,
)
from quota.demand import DemandRow
from quota.keys import QuotaKey, quota_id_of
from quota.rules import GPUS_ALL_REGIONS

__all__ = ["GcpQuotaService", "GcpSettings", "dimensions_of", "preference_id_of", "quota_id_of"]

COMPUTE = "compute.googleapis.com"
# APIs a GKE stack needs, each with why: a disabled one fails `pulumi up` or this check.
REQUIRED_SERVICES = {
    # nodes, disks, addresses and their quotas
    "compute.googleapis.com": "https://cloud.google.com/compute/docs/reference/rest/v1",
    # the cluster and node pools
    "container.googleapis.com": "https://cloud.google.com/kubernetes-engine/docs/how-to/"
    "creating-a-regional-cluster (enable the Kubernetes Engine API)",
    # the node service account and its role bindings
    "iam.googleapis.com": "https://cloud.google.com/iam/docs/service-accounts-create",
    # project IAM policy bindings for the node service account
    "cloudresourcemanager.googleapis.com": "https://cloud.google.com/resource-manager/reference/"
    "rest/v1/projects/setIamPolicy",
    # family quotas and quota increase requests
    "cloudquotas.googleapis.com": "https://cloud.google.com/docs/quotas/api-overview",
    # this very check of the others
    "serviceusage.googleapis.com": "https://cloud.google.com/service-usage/docs/reference/rest",
}


@dataclass(frozen=True, slots=True)
class GcpSettings:
    """Endpoints and retry bounds.

    Attributes:
        project: the stack's ``gcp:project``.
        compute_endpoint / quotas_endpoint / usage_endpoint: ``scheme://host:port`` or ``None`` for
            Google's; ``http://`` means a local emulator (anonymous credentials).
        retry_initial: first backoff, seconds.
        retry_deadline: total retry budget per call, seconds.
        call_timeout: per-attempt timeout, seconds.
    """

    project: str
    compute_endpoint: str | None = None
    quotas_endpoint: str | None = None
    usage_endpoint: str | None = None
    retry_initial: float = 0.5
    retry_deadline: float = 30.0
    call_timeout: float = 20.0

    @classmethod
    def from_env(cls, project: str) -> GcpSettings:
        """Settings from the contract's ``QUOTA_ENDPOINT_*`` and the ``QUOTA_RETRY_*`` variables."""
        env = os.environ
        return cls(
            project=project,
            compute_endpoint=env.get("QUOTA_ENDPOINT_COMPUTE") or None,
            quotas_endpoint=env.get("QUOTA_ENDPOINT_CLOUDQUOTAS") or None,
            usage_endpoint=env.get("QUOTA_ENDPOINT_SERVICEUSAGE") or None,
            retry_initial=float(env.get("QUOTA_RETRY_INITIAL", 0.5)),
            retry_deadline=float(env.get("QUOTA_RETRY_DEADLINE", 30.0)),
            call_timeout=float(env.get("QUOTA_CALL_TIMEOUT", 20.0)),
        )


def preference_id_of(key: QuotaKey) -> str:
    """Deterministic QuotaPreference id: one preference per quota and dimensions, reused forever."""
    parts = ["gpu-infra", quota_id_of(key)]
    for fam in (key.gpu_family, key.vm_family):
        if fam:
            parts.append(fam.replace("_", "-"))
    if key.region:
        parts.append(key.region)
    return "-".join(parts).lower()


def dimensions_of(key: QuotaKey) -> dict[str, str]:
    """QuotaPreference dimensions (empty for global quotas)."""
    dims: dict[str, str] = {}
    if key.region:
        dims["region"] = key.region
    if key.gpu_family:
        dims["gpu_family"] = key.gpu_family
    if key.vm_family:
        dims["vm_family"] = key.vm_family
    return dims


class GcpQuotaService:
    """Reads and requests GCP quotas for one project (one client per API, shared by threads)."""

    def __init__(
        self, settings: GcpSettings, catalog: Catalog | None = None, max_workers: int = 64
    ) -> None:
        self.s = settings
        self.max_workers = max_workers  # concurrent calls per read (--where reads many regions)
        self.catalog = catalog or Catalog.load()
        # (API, reason) for every required API that is not enabled or could not be read.
        self.api_problems: list[tuple[str, str]] = []
        self._retry = gretry.Retry(
            predicate=transient,
            initial=settings.retry_initial,
            maximum=max(settings.retry_initial, min(8.0, settings.retry_deadline / 2)),
            multiplier=2.0,
            timeout=settings.retry_deadline,
        )

    # --- clients -----------------------------------------------------------------------------
    def _kwargs(self, endpoint: str | None) -> dict[str, Any]:
        kw: dict[str, Any] = {"transport": "rest"}
        if endpoint:
            kw["client_options"] = ClientOptions(api_endpoint=endpoint)
            if endpoint.startswith("http://"):
                kw["credentials"] = AnonymousCredentials()
        return kw

    def _once(self, name: str, make: Callable[[], Any]) -> Any:
        client = self.__dict__.get(name)
        if client is None:
            client = self.__dict__[name] = make()
        return client

    def regions(self) -> RegionsClient:
        """Compute regions client."""
        return self._once(
            "_regions", lambda: RegionsClient(**self._kwargs(self.s.compute_endpoint))
        )

    def projects(self) -> ProjectsClient:
        """Compute projects client."""
        return self._once(
            "_projects", lambda: ProjectsClient(**self._kwargs(self.s.compute_endpoint))
        )

    def instances(self) -> InstancesClient:
        """Compute instances client (GPU family usage)."""
        return self._once(
            "_instances", lambda: InstancesClient(**self._kwargs(self.s.compute_endpoint))
        )

    def reservations(self) -> ReservationsClient:
        """Compute reservations client (reserved GPUs / vCPUs are family usage)."""
        return self._once(
            "_reservations", lambda: ReservationsClient(**self._kwargs(self.s.compute_endpoint))
        )

    def quotas(self) -> CloudQuotasClient:
        """Cloud Quotas client."""
        return self._once(
            "_quotas", lambda: CloudQuotasClient(**self._kwargs(self.s.quotas_endpoint))
        )

    def usage(self) -> ServiceUsageClient:
        """Service Usage client."""
        return self._once(
            "_usage", lambda: ServiceUsageClient(**self._kwargs(self.s.usage_endpoint))
        )

    def _call(self, fn: Callable[..., Any], **kw: Any) -> Any:
        return fn(retry=self._retry, timeout=self.s.call_timeout, **kw)

    # --- reads ---------------------------------------------------------------------------------
    def read(self, keys: Sequence[QuotaKey]) -> tuple[dict[QuotaKey, Reading], list[str]]:
        """Limit and usage of every key, all calls concurrent (one round trip when nothing fails).

        The required APIs are read in the same round trip; ``api_problems`` holds the result.

        Returns:
            readings per quota key, and notes.
        """
        p = self.s.project
        # Family keys read their region too: whether preemptible quota is granted there decides
        # if running Spot VMs count as family usage (with_family_usage).
        regions = sorted(
            {
                k.region
                for k in keys
                if (k.source == "compute-region" or k.family_quota_id) and k.region
            }
        )
        want_project = any(k.source == "compute-project" for k in keys)
        family_ids = sorted({q for k in keys if (q := k.family_quota_id)})
        jobs: dict[str, Callable[[], Any]] = {"services": self._services}
        for region in regions:
            jobs[f"region:{region}"] = lambda region=region: self._call(
                self.regions().get, project=p, region=region
            )
        if want_project:
            jobs["project"] = lambda: self._call(self.projects().get, project=p)
        for qid in family_ids:
            name = f"projects/{p}/locations/global/services/{COMPUTE}/quotaInfos/{qid}"
            jobs[f"family:{qid}"] = lambda name=name: self._call(
                self.quotas().get_quota_info, name=name
            )
        family_regions = sorted({k.region for k in keys if k.family_quota_id and k.region})
        if family_ids:  # Cloud Quotas has no usage: count the family's VMs and reservations
            # VMs zone by zone, every zone at once (an aggregated list pages serially)
            zones = {z for r in family_regions for z in catalog_zones(self.catalog, r)}
            jobs.update(self._zone_jobs(zones))
            jobs["reservations"] = lambda: list(
                self._call(self.reservations().aggregated_list, project=p)
            )
        results = self._run(jobs)
        if family_ids:
            results["instances"] = self._vms_by_zone(results, family_regions)

        readings: dict[QuotaKey, Reading] = {}
        for k in keys:
            if k.family_quota_id:
                job, call = f"family:{k.family_quota_id}", "quotaInfos.get"
            elif k.source == "compute-project":
                job, call = "project", "projects.get"
            else:
                job, call = f"region:{k.region}", "regions.get"
            res = results[job]
            if isinstance(res, BaseException):
                readings[k] = Reading(error=describe_error(res, call, p, self._endpoint(job)))
            elif k.family_quota_id:
                readings[k] = with_reserved_usage(
                    with_family_usage(
                        family_reading(res, k),
                        k,
                        results["instances"],
                        p,
                        self.catalog,
                        results.get(f"region:{k.region}"),
                    ),
                    k,
                    results["reservations"],
                    p,
                    self.catalog,
                )
            else:
                readings[k] = compute_reading(res, k)
        self._global_gpus_fallback(readings)
        usage_endpoint = self.s.usage_endpoint or "serviceusage.googleapis.com"
        self.api_problems = _api_problems(results["services"], p, usage_endpoint)
        return readings, []

    def _run(self, jobs: dict[str, Callable[[], Any]]) -> dict[str, Any]:
        """Every job at once (bounded by ``max_workers``); a result or the exception it raised."""
        if not jobs:
            return {}
        with ThreadPoolExecutor(max_workers=min(len(jobs), self.max_workers)) as pool:
            futures = {k: pool.submit(_capture, fn) for k, fn in jobs.items()}
            return {k: f.result() for k, f in futures.items()}

    def _zone_jobs(self, zones: set[str]) -> dict[str, Callable[[], Any]]:
        p = self.s.project
        return {
            f"instances:{z}": lambda z=z: list(self._call(self.instances().list, project=p, zone=z))
            for z in sorted(zones)
        }

    def _vms_by_zone(self, results: dict[str, Any], regions: Sequence[str]) -> Any:
        """The family regions' VMs as ``(zones/<zone>, listing)`` pairs, or why they are unknown.

        Zones come from the catalog, listed in the first round trip; a zone ``regions.get``
        reports that the catalog lacks is listed after it. A region whose zones could not be
        read leaves the usage unknown, never zero.
        """
        listed = {k.removeprefix("instances:") for k in results if k.startswith("instances:")}
        reported: set[str] = set()
        for r in regions:
            region = results.get(f"region:{r}")
            if isinstance(region, BaseException) or region is None:
                return RuntimeError(f"zones of region {r} unknown (regions.get failed)")
            reported |= {z.rsplit("/", 1)[-1] for z in region.zones}
        results.update(self._run(self._zone_jobs(reported - listed)))
        out: list[tuple[str, Any]] = []
        for zone in sorted(listed | reported):
            got = results[f"instances:{zone}"]
            if isinstance(got, BaseException):
                return got
            out.append((f"zones/{zone}", SimpleNamespace(instances=got)))
        return out

    def _global_gpus_fallback(self, readings: dict[QuotaKey, Reading]) -> None:
        """GPUS_ALL_REGIONS missing from projects.get (new projects): read its Cloud Quotas value.

        Quota id per the public quota error ("metric name = compute.googleapis.com/
        gpus_all_regions, limit name = GPUS-ALL-REGIONS-per-project, dimensions = global: global").
        Cloud Quotas has no usage, so the row can be short from the limit alone, never ok.
        """
        key = next(
            (
                k
                for k, r in readings.items()
                if k.quota == GPUS_ALL_REGIONS
                and k.source == "compute-project"
                and (r.error or "").startswith("quota missing")
            ),
            None,
        )
        if key is None:
            return
        p = self.s.project
        qid = "GPUS-ALL-REGIONS-per-project"
        name = f"projects/{p}/locations/global/services/{COMPUTE}/quotaInfos/{qid}"
        info = _capture(lambda: self._call(self.quotas().get_quota_info, name=name))
        if isinstance(info, BaseException):
            err = describe_error(info, "quotaInfos.get", p, self._endpoint("family"))
            readings[key] = Reading(error=f"{readings[key].error}; fallback {qid}: {err}")
            return
        for d in info.dimensions_infos:
            if not dict(d.dimensions):  # the project-wide value
                readings[key] = Reading(
                    limit=float(d.details.value),
                    usage=None,
                    error=f"usage not available: {GPUS_ALL_REGIONS} read from Cloud Quotas {qid}",
                )
                return

    def _endpoint(self, job: str) -> str:
        if job.startswith("family"):
            return self.s.quotas_endpoint or "cloudquotas.googleapis.com"
        return self.s.compute_endpoint or "compute.googleapis.com"

    def _services(self) -> Any:
        p = self.s.project
        req = {
            "parent": f"projects/{p}",
            "names": [f"projects/{p}/services/{svc}" for svc in REQUIRED_SERVICES],
        }
        return self._call(self.usage().batch_get_services, request=req)

    # --- requests ------------------------------------------------------------------------------
    def request(
        self, row: DemandRow, desired: int, email: str, justification: str
    ) -> dict[str, Any]:
        """Create or raise the row's QuotaPreference to ``desired`` (idempotent).

        A preference for the same quota id and dimensions may exist under any id (the console
        makes its own): that one is reused, updated with its etag, never duplicated. One that
        already asks for at least ``desired`` (pending or settled) is reported, not re-filed; one
        that asks for less is raised, even while it is pending (``reconciling``): left alone it
        would be granted short. A partial grant is reported with its granted value.
        https://cloud.google.com/docs/quotas/reference/rest/v1/projects.locations.quotaPreferences
        """
        p = self.s.project
        key = row.key
        qid, dims = quota_id_of(key), dimensions_of(key)
        parent = f"projects/{p}/locations/global"
        base: dict[str, Any] = {"quotaId": qid, "desired": desired}
        info_name = f"{parent}/services/{COMPUTE}/quotaInfos/{qid}"
        with ThreadPoolExecutor(max_workers=2) as pool:
            info_f = pool.submit(
                _capture, lambda: self._call(self.quotas().get_quota_info, name=info_name)
            )
            list_f = pool.submit(_capture, lambda: self._preferences(parent))
            info, prefs = info_f.result(), list_f.result()
        if isinstance(info, BaseException):
            return {**base, "action": "failed", "status": describe_error(info, "quotaInfos.get", p)}
        blocked = _ineligible(info)
        if blocked:
            return {**base, "action": "ineligible", "status": blocked}
        if isinstance(prefs, BaseException):
            err = describe_error(prefs, "quotaPreferences.list", p)
            return {**base, "action": "failed", "status": err}
        existing = _same_quota(prefs, qid, dims, preference_id_of(key))
        pid = existing.name.rsplit("/", 1)[-1] if existing else preference_id_of(key)
        base = {
            "id": pid,
            **base,
            "follow": f"gcloud beta quotas preferences describe {pid} --project={p}",
        }
        # A pending preference asking for less than the need is raised (with its etag) rather
        # than left to be granted short; one asking for at least as much is left to reconcile.
        if existing is not None and int(existing.quota_config.preferred_value) >= desired:
            return {
                **base,
                **_preference_state(existing),
                "action": _held_action(existing, desired),
            }
        pref = cq.QuotaPreference(
            name=f"{parent}/quotaPreferences/{pid}",
            service=COMPUTE,
            quota_id=qid,
            dimensions=dims,
            quota_config=cq.QuotaConfig(preferred_value=desired),
            justification=justification,
            contact_email=email,
            etag=existing.etag if existing is not None else "",
        )
        try:
            return {**base, **self._write(pref, parent, pid, existing)}
        except Exception as e:  # noqa: BLE001  # reported per row, the run goes on
            call = "quotaPreferences.create" if existing is None else "quotaPreferences.update"
            if existing is not None and existing.reconciling:  # still pending, for too little
                state = {**_preference_state(existing), "status": describe_error(e, call, p)}
                return {**base, **state, "action": "pending"}
            return {**base, "action": "failed", "status": describe_error(e, call, p)}

    def _write(self, pref: Any, parent: str, pid: str, existing: Any) -> dict[str, Any]:
        """Create the preference, or update ``existing`` over its etag; the new state."""
        if existing is None:
            try:
                out = self._call(
                    self.quotas().create_quota_preference,
                    parent=parent,
                    quota_preference=pref,
                    quota_preference_id=pid,
                )
                return {**_preference_state(out), "action": "created"}
            except gexc.Conflict:
                pref.etag = ""  # created concurrently: fall through to the upsert
        upd = cq_req.UpdateQuotaPreferenceRequest(
            quota_preference=pref, allow_missing=existing is None
        )
        out = self._call(self.quotas().update_quota_preference, request=upd)
        raised = {"was": int(existing.quota_config.preferred_value)} if existing else {}
        return {**_preference_state(out), **raised, "action": "updated"}

    def _preferences(self, parent: str) -> list[Any]:
        """Every QuotaPreference of the project (all pages).

        No server-side filter: the documented filters cover state, type and time only, and the
        quota id and dimensions are matched here.
        """
        req = cq_req.ListQuotaPreferencesRequest(parent=parent)
        return list(self._call(self.quotas().list_quota_preferences, request=req))


def _same_quota(prefs: Sequence[Any], qid: str, dims: dict[str, str], own: str) -> Any:
    """The preference for ``qid`` with exactly ``dims``: ours if it exists, else the newest."""
    same = [
        x
        for x in prefs
        if x.quota_id == qid and x.service in ("", COMPUTE) and dict(x.dimensions) == dims
    ]
    for x in same:
        if x.name.rsplit("/", 1)[-1] == own:
            return x
    return max(same, key=lambda x: str(x.update_time or x.create_time), default=None)


def _capture(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except Exception as e:  # noqa: BLE001  # turned into an 'unknown' reason by the caller
        return e


def _ineligible(info: Any) -> str | None:
    """Why Cloud Quotas will not take an increase for this quota (``None``: it will)."""
    if info.is_fixed:
        return f"{info.quota_id} is fixed and cannot be changed"
    elig = info.quota_increase_eligibility
    # An unset eligibility message reads as not eligible; only an explicit False blocks.
    if "quota_increase_eligibility" in info and not elig.is_eligible:
        reason = getattr(elig.ineligibility_reason, "name", str(elig.ineligibility_reason))
        return f"not eligible for an increase: {reason}"
    return None


def _preference_state(pref: Any) -> dict[str, Any]:
    qc = pref.quota_config
    out: dict[str, Any] = {
        "status": "pending" if pref.reconciling else (qc.state_detail or "settled"),
        "preferred": int(qc.preferred_value),
        "granted": None if qc.granted_value is None else int(qc.granted_value),
    }
    if qc.trace_id:
        out["traceId"] = qc.trace_id
    return out


def _held_action(pref: Any, desired: int) -> str:
    """What an existing preference asking for >= desired means: pending, partial, or granted."""
    if pref.reconciling:
        return "pending"
    granted = pref.quota_config.granted_value
    if granted is not None and int(granted) < desired:
        return "partially-granted"
    return "already-requested"


def _api_problems(res: Any, project: str, endpoint: str) -> list[tuple[str, str]]:
    """(API, reason) for each required API that is not enabled; one row if none could be read."""
    if isinstance(res, BaseException):
        err = describe_error(res, "services.batchGet", project, endpoint)
        return [("serviceusage.googleapis.com", err)]
    out: list[tuple[str, str]] = []
    answered = {svc.name.rsplit("/", 1)[-1] for svc in res.services}
    for api in REQUIRED_SERVICES:
        if api not in answered:  # never fail open: an API the answer leaves out is not enabled
            out.append(
                (
                    api,
                    f"API {api} missing from Service Usage's answer for project {project}: "
                    f"not known to be enabled (gcloud services enable {api} --project {project})",
                )
            )
    for svc in res.services:
        state = getattr(svc.state, "name", str(svc.state))
        if state != "ENABLED":
            short = svc.name.rsplit("/", 1)[-1]
            out.append(
                (
                    short,
                    f"API {short} is {state.lower()} on project {project}: "
                    f"gcloud services enable {short} --project {project}",
                )
            )
    return out
