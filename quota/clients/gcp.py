"""Thin GCP side of the quota check: read limits and usage, file QuotaPreferences.

Google SDKs are imported here and in ``gcp_errors`` (error reasons), ``gcp_usage`` (readings) and
``gcp_requests`` (QuotaPreferences), which only this module uses, and this module only when a GKE
stack is checked. Every call runs with a bounded retry (429 and 5xx included) and a per-call
timeout; errors become readable reasons (permission named, API disabled, throttled, the quota
project missing), never a silent "ok".
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, TypeVar

from google.api_core import retry as gretry
from google.api_core.client_options import ClientOptions
from google.auth.credentials import AnonymousCredentials
from google.cloud.cloudquotas_v1.services.cloud_quotas import CloudQuotasClient
from google.cloud.compute_v1.services.disks import DisksClient
from google.cloud.compute_v1.services.instances import InstancesClient
from google.cloud.compute_v1.services.projects import ProjectsClient
from google.cloud.compute_v1.services.regions import RegionsClient
from google.cloud.compute_v1.services.reservations import ReservationsClient
from google.cloud.service_usage_v1.services.service_usage import ServiceUsageClient

from infra.core.catalog.vendored import Catalog
from quota.arithmetic import Reading
from quota.clients.gcp_errors import describe_error, transient
from quota.clients.gcp_global import global_gpus_fallback
from quota.clients.gcp_requests import COMPUTE, dimensions_of, file_preference, preference_id_of
from quota.clients.gcp_usage import (
    catalog_zones,
    compute_reading,
    family_reading,
    in_region,
    with_family_usage,
    with_reserved_usage,
)
from quota.demand import Demand
from quota.keys import QuotaKey, quota_id_of
from quota.own import Own, gcp_own

C = TypeVar("C")

__all__ = ["GcpQuotaService", "GcpSettings", "dimensions_of", "preference_id_of", "quota_id_of"]

CLOUDQUOTAS = "cloudquotas.googleapis.com"
# The scope every Google client here asks for (their transports' AUTH_SCOPES).
CLOUD_PLATFORM = "https://www.googleapis.com/auth/cloud-platform"
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
    # family quotas and quota increase requests: needed only by a row that reads a family quota
    # (or GPUS_ALL_REGIONS where projects.get lacks it) and by --request (_api_problems)
    CLOUDQUOTAS: "https://cloud.google.com/docs/quotas/api-overview",
    # this very check of the others
    "serviceusage.googleapis.com": "https://cloud.google.com/service-usage/docs/reference/rest",
}


@dataclass(frozen=True, slots=True)
class GcpSettings:
    """Endpoints, the quota project and retry bounds.

    Attributes:
        project: the stack's ``gcp:project``.
        compute_endpoint / quotas_endpoint / usage_endpoint: ``scheme://host:port`` or ``None`` for
            Google's; ``http://`` means a local emulator (anonymous credentials).
        quota_project: the project Google bills and rate-limits the calls to when the
            credentials name none (``GOOGLE_CLOUD_QUOTA_PROJECT``, else the stack's project;
            an ADC file's own quota project comes before the stack's, ``_credentials``).
        retry_initial: first backoff, seconds.
        retry_deadline: total retry budget per call, seconds.
        call_timeout: per-attempt timeout, seconds.
    """

    project: str
    compute_endpoint: str | None = None
    quotas_endpoint: str | None = None
    usage_endpoint: str | None = None
    quota_project: str = ""
    retry_initial: float = 0.5
    retry_deadline: float = 30.0
    call_timeout: float = 20.0

    @classmethod
    def from_env(cls, project: str) -> GcpSettings:
        """Settings from the contract's ``QUOTA_ENDPOINT_*``, ``GOOGLE_CLOUD_QUOTA_PROJECT`` (the
        variable google-auth reads, google.auth.environment_vars) and the ``QUOTA_RETRY_*``
        variables."""
        env = os.environ
        return cls(
            project=project,
            compute_endpoint=env.get("QUOTA_ENDPOINT_COMPUTE") or None,
            quotas_endpoint=env.get("QUOTA_ENDPOINT_CLOUDQUOTAS") or None,
            usage_endpoint=env.get("QUOTA_ENDPOINT_SERVICEUSAGE") or None,
            quota_project=env.get("GOOGLE_CLOUD_QUOTA_PROJECT") or project,
            retry_initial=float(env.get("QUOTA_RETRY_INITIAL", 0.5)),
            retry_deadline=float(env.get("QUOTA_RETRY_DEADLINE", 30.0)),
            call_timeout=float(env.get("QUOTA_CALL_TIMEOUT", 20.0)),
        )


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
        # What the stack's own VMs hold per pool and key (``quota.own``), or why unread: filled
        # by read() when given the demand.
        self.own: Own | str | None = None
        self._lock = threading.Lock()
        self._adc: Any = None
        self._retry = gretry.Retry(
            predicate=transient,
            initial=settings.retry_initial,
            maximum=max(settings.retry_initial, min(8.0, settings.retry_deadline / 2)),
            multiplier=2.0,
            timeout=settings.retry_deadline,
        )

    # --- clients -----------------------------------------------------------------------------
    def _kwargs(self, endpoint: str | None) -> dict[str, Any]:
        """Client arguments: REST, the endpoint, and credentials that name the quota project.

        User credentials (``gcloud auth application-default login``) carry no quota project, and
        APIs such as Cloud Quotas then refuse the call ("... requires a quota project, which is
        not set by default", https://cloud.google.com/docs/authentication/adc-troubleshooting/
        user-creds). ``ClientOptions.quota_project_id`` alone does not reach the REST transport
        (google-cloud-quotas 0.6.3 / google-cloud-compute 1.57.0 ``transports/rest.py``:
        ``__init__`` takes ``quota_project_id`` and does not pass it to the base transport), so
        the credentials are made here with it: every call then sends ``x-goog-user-project``.
        """
        if endpoint and endpoint.startswith("http://"):
            creds: Any = AnonymousCredentials()
            project = self.s.quota_project
        else:
            creds = self._credentials()
            project = getattr(creds, "quota_project_id", None) or self.s.quota_project
        opts = ClientOptions(api_endpoint=endpoint, quota_project_id=project or None)
        return {"transport": "rest", "client_options": opts, "credentials": creds}

    def _credentials(self) -> Any:
        """Application Default Credentials with a quota project, made once.

        google-auth gives them ``GOOGLE_CLOUD_QUOTA_PROJECT`` when set, else keep the ADC file's
        own ``quota_project_id`` (what ``gcloud auth application-default set-quota-project``
        writes; google/auth/_default.py ``_apply_quota_project_id``); only credentials naming
        none get the stack's project. Passing a project to ``default`` would override the file's.
        """
        with self._lock:
            if self._adc is None:
                import google.auth

                creds, _ = google.auth.default(scopes=[CLOUD_PLATFORM])
                named = getattr(creds, "quota_project_id", None)
                if not named and self.s.quota_project and hasattr(creds, "with_quota_project"):
                    creds = creds.with_quota_project(self.s.quota_project)
                self._adc = creds
            return self._adc

    def _client(self, cls: type[C], endpoint: str | None) -> C:
        """One client of ``cls`` per run (its channel reused), made on first use."""
        client = self.__dict__.get(cls.__name__)
        if client is None:
            client = self.__dict__[cls.__name__] = cls(**self._kwargs(endpoint))
        return client

    def regions(self) -> RegionsClient:
        """Compute regions client."""
        return self._client(RegionsClient, self.s.compute_endpoint)

    def projects(self) -> ProjectsClient:
        """Compute projects client."""
        return self._client(ProjectsClient, self.s.compute_endpoint)

    def instances(self) -> InstancesClient:
        """Compute instances client (family usage, the stack's own VMs)."""
        return self._client(InstancesClient, self.s.compute_endpoint)

    def disks(self) -> DisksClient:
        """Compute disks client (the boot disks of the stack's own VMs)."""
        return self._client(DisksClient, self.s.compute_endpoint)

    def reservations(self) -> ReservationsClient:
        """Compute reservations client (reserved GPUs / vCPUs are family usage)."""
        return self._client(ReservationsClient, self.s.compute_endpoint)

    def quotas(self) -> CloudQuotasClient:
        """Cloud Quotas client."""
        return self._client(CloudQuotasClient, self.s.quotas_endpoint)

    def usage(self) -> ServiceUsageClient:
        """Service Usage client."""
        return self._client(ServiceUsageClient, self.s.usage_endpoint)

    def _call(self, fn: Callable[..., Any], **kw: Any) -> Any:
        return fn(retry=self._retry, timeout=self.s.call_timeout, **kw)

    # --- reads ---------------------------------------------------------------------------------
    def read(
        self, keys: Sequence[QuotaKey], demand: Demand | None = None, requesting: bool = False
    ) -> tuple[dict[QuotaKey, Reading], list[str]]:
        """Limit and usage of every key, all calls concurrent (one round trip when nothing fails).

        The required APIs are read in the same round trip (``api_problems``); with ``demand``, the
        VMs and disks of its region too, for what its node pools run (``own``). ``requesting``:
        quota preferences will be filed, so the Cloud Quotas API must be enabled.

        Returns:
            readings per quota key, and notes.
        """
        p = self.s.project
        own_region = demand.region if demand is not None and demand.marks else None
        family_ids = sorted({q for k in keys if (q := k.family_quota_id)})
        # Family keys read their region too: whether preemptible quota is granted there decides
        # if running Spot VMs count as family usage (with_family_usage); so does the own region
        # (its zones).
        family_regions = {k.region for k in keys if k.family_quota_id and k.region}
        listed = sorted(family_regions | ({own_region} if own_region else set()))
        regions = {k.region for k in keys if k.source == "compute-region" and k.region}
        jobs = self._read_jobs(sorted(regions | set(listed)), keys, family_ids)
        # VMs zone by zone, every zone at once (an aggregated list pages serially)
        jobs.update(self._zone_jobs("instances", self._zones(listed)))
        if own_region:
            jobs.update(self._zone_jobs("disks", self._zones([own_region])))
        results = self._run(jobs)
        vms = self._listed(results, listed, "instances") if listed else None
        if own_region:
            self._listed(results, [own_region], "disks")
        readings = {k: self._reading(k, results, vms) for k in keys}
        fallback = global_gpus_fallback(self, readings)
        if demand is not None:
            self.own = self._own(vms, results, demand, own_region)
        usage_endpoint = self.s.usage_endpoint or "serviceusage.googleapis.com"
        quotas_needed = bool(family_ids) or requesting or fallback
        self.api_problems = _api_problems(results["services"], p, usage_endpoint, quotas_needed)
        return readings, []

    def _read_jobs(
        self, regions: Sequence[str], keys: Sequence[QuotaKey], family_ids: Sequence[str]
    ) -> dict[str, Callable[[], Any]]:
        """The first round's calls: required APIs, regions, the project, family quota infos and
        (for family usage) the reservations."""
        p = self.s.project
        jobs: dict[str, Callable[[], Any]] = {"services": self._services}
        for region in regions:
            jobs[f"region:{region}"] = lambda region=region: self._call(
                self.regions().get, project=p, region=region
            )
        if any(k.source == "compute-project" for k in keys):
            jobs["project"] = lambda: self._call(self.projects().get, project=p)
        for qid in family_ids:
            name = f"projects/{p}/locations/global/services/{COMPUTE}/quotaInfos/{qid}"
            jobs[f"family:{qid}"] = lambda name=name: self._call(
                self.quotas().get_quota_info, name=name
            )
        if family_ids:  # Cloud Quotas has no usage: count the family's VMs and reservations
            jobs["reservations"] = lambda: list(
                self._call(self.reservations().aggregated_list, project=p)
            )
        return jobs

    def _reading(self, k: QuotaKey, results: dict[str, Any], vms: Any) -> Reading:
        p = self.s.project
        if k.family_quota_id:
            job, call = f"family:{k.family_quota_id}", "quotaInfos.get"
        elif k.source == "compute-project":
            job, call = "project", "projects.get"
        else:
            job, call = f"region:{k.region}", "regions.get"
        res = results[job]
        if isinstance(res, BaseException):
            return Reading(error=describe_error(res, call, p, self._endpoint(job)))
        if not k.family_quota_id:
            return compute_reading(res, k)
        region = results.get(f"region:{k.region}")
        used = with_family_usage(family_reading(res, k), k, vms, p, self.catalog, region)
        return with_reserved_usage(used, k, results["reservations"], p, self.catalog)

    def _own(self, vms: Any, results: dict[str, Any], demand: Demand, region: str | None) -> Any:
        """What the stack's VMs hold (``quota.own.gcp_own``), or why that is unknown."""
        if region is None:  # the platform marks no VMs: nothing of the stack's is told apart
            return None
        if isinstance(vms, BaseException):
            return describe_error(vms, "instances.list", self.s.project)
        mine = [inst for scoped in in_region(vms, region) for inst in scoped.instances]
        disks: dict[str, tuple[str, int]] = {}
        for job, got in results.items():
            if job.startswith("disks:") and not isinstance(got, BaseException):
                for d in got:  # a zone unread: its boot disks are not counted as the stack's
                    disks[d.self_link] = (d.type_.rsplit("/", 1)[-1], int(d.size_gb))
        return gcp_own(mine, disks, demand.contributions, demand.marks, self.catalog)

    def _run(self, jobs: dict[str, Callable[[], Any]]) -> dict[str, Any]:
        """Every job at once (bounded by ``max_workers``); a result or the exception it raised."""
        if not jobs:
            return {}
        with ThreadPoolExecutor(max_workers=min(len(jobs), self.max_workers)) as pool:
            futures = {k: pool.submit(_capture, fn) for k, fn in jobs.items()}
            return {k: f.result() for k, f in futures.items()}

    def _zones(self, regions: Sequence[str]) -> set[str]:
        return {z for r in regions for z in catalog_zones(self.catalog, r)}

    def _zone_jobs(self, kind: str, zones: set[str]) -> dict[str, Callable[[], Any]]:
        """``instances.list`` or ``disks.list`` of every zone (all pages)."""
        p = self.s.project

        def listing(zone: str) -> list[Any]:
            if kind == "instances":
                return list(self._call(self.instances().list, project=p, zone=zone))
            return list(self._call(self.disks().list, project=p, zone=zone))

        return {f"{kind}:{z}": lambda z=z: listing(z) for z in sorted(zones)}

    def _listed(self, results: dict[str, Any], regions: Sequence[str], kind: str) -> Any:
        """The regions' ``kind`` listings as ``(zones/<zone>, listing)`` pairs, or why unknown.

        Zones come from the catalog, listed in the first round trip; a zone ``regions.get``
        reports that the catalog lacks is listed after it. A region whose zones could not be
        read leaves the usage unknown, never zero.
        """
        listed = {k.split(":", 1)[1] for k in results if k.startswith(f"{kind}:")}
        reported: set[str] = set()
        for r in regions:
            region = results.get(f"region:{r}")
            if isinstance(region, BaseException) or region is None:
                return RuntimeError(f"zones of region {r} unknown (regions.get failed)")
            reported |= {z.rsplit("/", 1)[-1] for z in region.zones}
        results.update(self._run(self._zone_jobs(kind, reported - listed)))
        out: list[tuple[str, Any]] = []
        for zone in sorted(listed | reported):
            got = results[f"{kind}:{zone}"]
            if isinstance(got, BaseException):
                return got
            out.append((f"zones/{zone}", SimpleNamespace(instances=got)))
        return out

    def _endpoint(self, job: str) -> str:
        if job.startswith("family"):
            return self.s.quotas_endpoint or CLOUDQUOTAS
        return self.s.compute_endpoint or "compute.googleapis.com"

    def _services(self) -> Any:
        p = self.s.project
        req = {
            "parent": f"projects/{p}",
            "names": [f"projects/{p}/services/{svc}" for svc in REQUIRED_SERVICES],
        }
        return self._call(self.usage().batch_get_services, request=req)

    # --- requests ------------------------------------------------------------------------------
    # Create or raise the row's QuotaPreference: the service is its first argument.
    request = file_preference


def _capture(fn: Callable[..., Any]) -> Any:
    try:
        return fn()
    except Exception as e:  # noqa: BLE001  # turned into an 'unknown' reason by the caller
        return e


def _api_problems(
    res: Any, project: str, endpoint: str, quotas_needed: bool = True
) -> list[tuple[str, str]]:
    """(API, reason) for each required API that is not enabled; one row if none could be read.

    The Cloud Quotas API counts only when ``quotas_needed``: no row of a stack without family
    quotas reads it, and nothing is requested.
    """
    if isinstance(res, BaseException):
        err = describe_error(res, "services.batchGet", project, endpoint)
        return [("serviceusage.googleapis.com", err)]
    out: list[tuple[str, str]] = []
    required = [a for a in REQUIRED_SERVICES if quotas_needed or a != CLOUDQUOTAS]
    answered = {svc.name.rsplit("/", 1)[-1] for svc in res.services}
    for api in required:
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
        short = svc.name.rsplit("/", 1)[-1]
        if state != "ENABLED" and short in required:
            out.append(
                (
                    short,
                    f"API {short} is {state.lower()} on project {project}: "
                    f"gcloud services enable {short} --project {project}",
                )
            )
    return out
