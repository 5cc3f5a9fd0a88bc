"""Fake Google REST services: Compute (regions/projects, aggregated accelerator and machine
types), Cloud Quotas (QuotaInfo, QuotaPreference) and Service Usage (services get/batchGet).

They speak the JSON the real google-cloud-* REST transports send and parse (camelCase, int64 as
strings, errors as ``{"error": {code, message, status, details: [ErrorInfo]}}``).
"""

from __future__ import annotations

import copy
import itertools
from typing import Any

from tests.fakes.base import FakeService, Request, Response

_PROJECT = r"/(?:compute/)?v1/projects/(?P<p>[^/]+)"
ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"


def google_error(
    code: int,
    status: str,
    message: str,
    reason: str | None = None,
    domain: str = "googleapis.com",
    **metadata: str,
) -> Response:
    """A Google JSON error response."""
    err: dict[str, Any] = {"code": code, "message": message, "status": status}
    if reason:
        err["details"] = [
            {"@type": ERROR_INFO, "reason": reason, "domain": domain, "metadata": metadata}
        ]
    return code, {"error": err}, {}


def permission_denied(permission: str, project: str = "demo-project") -> Response:
    """403 naming the missing IAM permission (as Compute and Cloud Quotas answer)."""
    return google_error(
        403,
        "PERMISSION_DENIED",
        f"Required '{permission}' permission for 'projects/{project}'",
        "IAM_PERMISSION_DENIED",
        "iam.googleapis.com",
        permission=permission,
    )


def service_disabled(service: str, project: str = "demo-project") -> Response:
    """403 SERVICE_DISABLED, as any Google API answers when it is not enabled on the project."""
    return google_error(
        403,
        "PERMISSION_DENIED",
        f"{service} API has not been used in project {project} before or it is disabled.",
        "SERVICE_DISABLED",
        service=service,
        consumer=f"projects/{project}",
    )


def quota_project_required(service: str) -> Response:
    """The 403 Google answers a call made with user credentials that carry no quota project
    (GoogleCloudPlatform/cloud-foundation-fabric#2622; consumer: gcloud's own project,
    hashicorp/terraform-provider-google#18337)."""
    return google_error(
        403,
        "PERMISSION_DENIED",
        "Your application is authenticating by using local Application Default Credentials. "
        f"The {service} API requires a quota project, which is not set by default. To learn how "
        "to set your quota project, see https://cloud.google.com/docs/authentication/"
        "adc-troubleshooting/user-creds .",
        "SERVICE_DISABLED",
        service=service,
        consumer="projects/764086051850",
    )


THROTTLED = google_error(
    429,
    "RESOURCE_EXHAUSTED",
    "Quota exceeded for quota metric 'Read requests'",
    "RATE_LIMIT_EXCEEDED",
)
UNAVAILABLE = google_error(503, "UNAVAILABLE", "The service is currently unavailable.")
INTERNAL = google_error(500, "INTERNAL", "Internal error encountered.")


class FakeCompute(FakeService):
    """Compute Engine: regions.get, projects.get, aggregated acceleratorTypes / machineTypes."""

    def __init__(self, latency: float = 0.0) -> None:
        super().__init__(latency)
        # (project, region) -> metric -> [limit, usage]
        self.regions: dict[tuple[str, str], dict[str, list[float]]] = {}
        self.projects: dict[str, dict[str, list[float]]] = {}
        self.quota_warning: dict[tuple[str, str], str] = {}
        self.accelerator_types: dict[str, list[dict[str, Any]]] = {}  # zone -> items
        self.machine_types: dict[str, list[dict[str, Any]]] = {}  # zone -> items
        self.instances: dict[str, list[dict[str, Any]]] = {}  # zone -> Instance JSON
        self.disks: dict[str, list[dict[str, Any]]] = {}  # zone -> Disk JSON
        self.reservations: dict[str, list[dict[str, Any]]] = {}  # zone -> Reservation JSON
        self.zones: dict[str, list[str]] = {}  # region -> zones regions.get reports
        self.route("GET", _PROJECT + r"/regions/(?P<r>[^/]+)", "regions.get", self._region)
        self.route("GET", _PROJECT + r"/regions", "regions.list", self._region_list)
        self.route(
            "GET", _PROJECT + r"/zones/(?P<z>[^/]+)/instances", "instances.list", self._zone_list
        )
        self.route("GET", _PROJECT + r"/zones/(?P<z>[^/]+)/disks", "disks.list", self._zone_disks)
        self.route("GET", _PROJECT, "projects.get", self._project)
        self.route(
            "GET",
            _PROJECT + r"/aggregated/instances",
            "instances.aggregatedList",
            self._agg("instances"),
        )
        self.route(
            "GET",
            _PROJECT + r"/aggregated/reservations",
            "reservations.aggregatedList",
            self._agg("reservations"),
        )
        self.route(
            "GET",
            _PROJECT + r"/aggregated/acceleratorTypes",
            "acceleratorTypes.aggregatedList",
            self._agg("acceleratorTypes"),
        )
        self.route(
            "GET",
            _PROJECT + r"/aggregated/machineTypes",
            "machineTypes.aggregatedList",
            self._agg("machineTypes"),
        )

    def set_region(self, project: str, region: str, **quotas: tuple[float, float]) -> None:
        """Set regional quotas: ``NVIDIA_T4_GPUS=(limit, usage)``."""
        self.regions.setdefault((project, region), {}).update(
            {k: list(v) for k, v in quotas.items()}
        )

    def set_project(self, project: str, **quotas: tuple[float, float]) -> None:
        """Set global quotas: ``GPUS_ALL_REGIONS=(limit, usage)``."""
        self.projects.setdefault(project, {}).update({k: list(v) for k, v in quotas.items()})

    def set_limit(self, project: str, region: str | None, metric: str, limit: float) -> None:
        """Raise a limit (what an approved QuotaPreference does)."""
        table = self.regions[(project, region)] if region else self.projects[project]
        table.setdefault(metric, [0.0, 0.0])[0] = float(limit)

    def add_instance(
        self,
        zone: str,
        accelerator: str | None,
        count: int,
        status: str = "RUNNING",
        spot: bool = False,
        machine_type: str = "a3-highgpu-8g",
        *,
        model: str | None = None,
        labels: dict[str, str] | None = None,
        external_ip: bool = False,
        boot_disk: tuple[str, int] | None = None,
        local_ssds: int = 0,
    ) -> dict[str, Any]:
        """A VM of ``machine_type`` with ``count`` GPUs of type ``accelerator`` in ``zone``.

        ``model``: its Scheduling.provisioningModel (default SPOT with ``spot``, else STANDARD);
        ``boot_disk``: (disk type, GB) of a boot disk listed by ``disks.list`` too.
        """
        items = self.instances.setdefault(zone, [])
        accs = (
            [
                {
                    "acceleratorType": f"projects/p/zones/{zone}/acceleratorTypes/{accelerator}",
                    "acceleratorCount": count,
                }
            ]
            if accelerator
            else []
        )
        name = f"vm-{zone}-{len(items)}"
        disks: list[dict[str, Any]] = []
        if boot_disk is not None:
            link = f"https://www.googleapis.com/compute/v1/projects/p/zones/{zone}/disks/{name}"
            self.disks.setdefault(zone, []).append(
                {
                    "name": name,
                    "selfLink": link,
                    "sizeGb": str(boot_disk[1]),
                    "type": f"https://www.googleapis.com/compute/v1/projects/p/zones/{zone}/"
                    f"diskTypes/{boot_disk[0]}",
                }
            )
            disks.append({"boot": True, "type": "PERSISTENT", "source": link})
        disks += [{"type": "SCRATCH", "diskSizeGb": "375"} for _ in range(local_ssds)]
        nic: dict[str, Any] = {"name": "nic0"}
        if external_ip:
            nic["accessConfigs"] = [{"name": "external-nat", "natIP": "203.0.113.7"}]
        vm = {
            "name": name,
            "machineType": f"projects/p/zones/{zone}/machineTypes/{machine_type}",
            "status": status,
            "scheduling": {"provisioningModel": model or ("SPOT" if spot else "STANDARD")},
            "guestAccelerators": accs,
            "labels": dict(labels or {}),
            "disks": disks,
            "networkInterfaces": [nic],
        }
        items.append(vm)
        return vm

    def add_reservation(
        self,
        zone: str,
        machine_type: str,
        count: int,
        in_use: int = 0,
        status: str = "READY",
        accelerator: str | None = None,
        accelerator_count: int = 0,
    ) -> None:
        """A specific reservation of ``count`` VMs (``in_use`` of them running in it)."""
        items = self.reservations.setdefault(zone, [])
        props: dict[str, Any] = {"machineType": machine_type}
        if accelerator:
            props["guestAccelerators"] = [
                {"acceleratorType": accelerator, "acceleratorCount": accelerator_count}
            ]
        items.append(
            {
                "name": f"res-{len(items)}",
                "zone": f"projects/p/zones/{zone}",
                "status": status,
                "specificReservation": {
                    "count": str(count),
                    "inUseCount": str(in_use),
                    "instanceProperties": props,
                },
            }
        )

    @staticmethod
    def _quotas(table: dict[str, list[float]]) -> list[dict[str, Any]]:
        return [{"metric": m, "limit": v[0], "usage": v[1]} for m, v in table.items()]

    def _region(self, req: Request) -> Response:
        p, r = req.match["p"], req.match["r"]
        if (p, r) not in self.regions:
            return google_error(
                404, "NOT_FOUND", f"The resource 'projects/{p}/regions/{r}' was not found"
            )
        body: dict[str, Any] = {
            "kind": "compute#region",
            "name": r,
            "status": "UP",
            "quotas": self._quotas(self.regions[(p, r)]),
        }
        if r in self.zones:
            body["zones"] = [
                f"https://www.googleapis.com/compute/v1/projects/{p}/zones/{z}"
                for z in self.zones[r]
            ]
        if (p, r) in self.quota_warning:
            body["quotas"] = []
            body["quotaStatusWarning"] = {
                "code": "UNREACHABLE",
                "message": self.quota_warning[(p, r)],
            }
        return 200, body, {}

    def _region_list(self, req: Request) -> Response:
        """regions.list: every region of the project set here, quotas included."""
        p = req.match["p"]
        items = [
            {"kind": "compute#region", "name": r, "status": "UP", "quotas": self._quotas(q)}
            for (pp, r), q in sorted(self.regions.items())
            if pp == p
        ]
        return 200, {"kind": "compute#regionList", "items": items}, {}

    def _zone_disks(self, req: Request) -> Response:
        """disks.list of one zone."""
        return 200, {"kind": "compute#diskList", "items": self.disks.get(req.match["z"], [])}, {}

    def _zone_list(self, req: Request) -> Response:
        """instances.list of one zone, in pages of two (clients must follow nextPageToken)."""
        items = self.instances.get(req.match["z"], [])
        start = int((req.query.get("pageToken") or ["0"])[0])
        body: dict[str, Any] = {"kind": "compute#instanceList", "items": items[start : start + 2]}
        if start + 2 < len(items):
            body["nextPageToken"] = str(start + 2)
        return 200, body, {}

    def _project(self, req: Request) -> Response:
        p = req.match["p"]
        if p not in self.projects:
            return google_error(404, "NOT_FOUND", f"The resource 'projects/{p}' was not found")
        return (
            200,
            {"kind": "compute#project", "name": p, "quotas": self._quotas(self.projects[p])},
            {},
        )

    def _agg(self, kind: str) -> Any:
        def handler(req: Request) -> Response:
            data = {
                "acceleratorTypes": self.accelerator_types,
                "machineTypes": self.machine_types,
                "instances": self.instances,
                "reservations": self.reservations,
            }[kind]
            items = {f"zones/{z}": {kind: v} for z, v in sorted(data.items())}
            return 200, {"kind": f"compute#{kind}AggregatedList", "items": items}, {}

        return handler


class FakeCloudQuotas(FakeService):
    """Cloud Quotas v1: QuotaInfo get and QuotaPreference create/get/patch (what the client calls).

    ``policy`` decides what a new or raised preference does: ``"pending"`` (reconciling),
    ``"grant"`` (granted in full, limit raised through ``on_grant``) or ``("partial", n)``.
    """

    def __init__(self, latency: float = 0.0) -> None:
        super().__init__(latency)
        self.infos: dict[str, dict[str, Any]] = {}  # quota id -> QuotaInfo JSON
        self.prefs: dict[str, dict[str, Any]] = {}  # preference id -> QuotaPreference JSON
        self.absent: set[str] = set()  # quota ids with no QuotaInfo at all
        self.policy: Any = "pending"
        # As Google does: a caller with a token (user credentials) must name a quota project.
        self.require_quota_project = True
        self.on_grant: Any = None  # callable(pref JSON, granted value)
        self.patched_etags: list[str | None] = []  # the etag each PATCH carried
        self._trace = itertools.count(1)
        base = r"/v1/projects/(?P<p>[^/]+)/locations/global"
        self.route(
            "GET",
            base + r"/services/(?P<s>[^/]+)/quotaInfos/(?P<q>[^/]+)",
            "quotaInfos.get",
            self._info,
        )
        self.route(
            "GET", base + r"/quotaPreferences/(?P<id>[^/]+)", "quotaPreferences.get", self._get
        )
        self.route("POST", base + r"/quotaPreferences", "quotaPreferences.create", self._create)
        self.route("GET", base + r"/quotaPreferences", "quotaPreferences.list", self._list)
        self.route(
            "PATCH",
            base + r"/quotaPreferences/(?P<id>[^/]+)",
            "quotaPreferences.patch",
            self._patch,
        )

    def guard(self, op: str, req: Request) -> Response | None:
        headers = {k.lower(): v for k, v in req.headers.items()}
        token = headers.get("authorization", "").startswith("Bearer ")
        if self.require_quota_project and token and not headers.get("x-goog-user-project"):
            return quota_project_required("cloudquotas.googleapis.com")
        return None

    def set_family(
        self,
        project: str,
        rows: list[tuple[dict[str, str], int]] | list[tuple[dict[str, str], int, list[str]]],
        qid: str = "GPUS-PER-GPU-FAMILY-per-project-region",
    ) -> None:
        """QuotaInfo of a family quota: ``[({"region": r, "gpu_family": f}, value), ...]``; a
        third item lists the row's ``applicableLocations`` (default: its region)."""
        dim = "vm_family" if "VM-FAMILY" in qid else "gpu_family"
        self.infos[qid] = {
            "name": f"projects/{project}/locations/global/services/compute.googleapis.com/quotaInfos/{qid}",
            "quotaId": qid,
            "metric": f"compute.googleapis.com/{qid.split('-per-')[0].lower().replace('-', '_')}",
            "service": "compute.googleapis.com",
            "dimensions": ["region", dim],
            "dimensionsInfos": [
                {
                    "dimensions": r[0],
                    "details": {"value": str(r[1])},
                    "applicableLocations": list(r[2]) if len(r) > 2 else [r[0].get("region", "")],
                }
                for r in rows
            ],
        }

    def _info(self, req: Request) -> Response:
        q = req.match["q"]
        info = self.infos.get(q)
        if info is None and q not in self.absent:
            # Like the real service, every Compute quota has a QuotaInfo; eligible by default.
            info = {
                "name": f"projects/{req.match['p']}/locations/global/services/{req.match['s']}/quotaInfos/{q}",
                "quotaId": q,
                "service": req.match["s"],
                "quotaIncreaseEligibility": {"isEligible": True},
            }
        if info is None:
            return google_error(404, "NOT_FOUND", f"quota info {req.match['q']} not found")
        return 200, info, {}

    def _get(self, req: Request) -> Response:
        pref = self.prefs.get(req.match["id"])
        if pref is None:
            return google_error(404, "NOT_FOUND", f"quota preference {req.match['id']} not found")
        return 200, pref, {}

    def _store(self, pid: str, project: str, body: dict[str, Any]) -> dict[str, Any]:
        if not body.get("contactEmail"):
            raise ValueError("contactEmail required for increases")
        pref = copy.deepcopy(body)
        pref.pop("contactEmail", None)  # input only
        pref["name"] = f"projects/{project}/locations/global/quotaPreferences/{pid}"
        pref["etag"] = f"etag-{next(self._trace)}"  # a new etag on every write
        qc = pref.setdefault("quotaConfig", {})
        preferred = int(qc.get("preferredValue", 0))
        qc["traceId"] = f"trace-{next(self._trace)}"
        if self.policy == "pending":
            pref["reconciling"] = True
            qc["stateDetail"] = "Pending review"
        else:
            granted = preferred if self.policy == "grant" else int(self.policy[1])
            pref["reconciling"] = False
            qc["grantedValue"] = str(granted)
            qc["stateDetail"] = f"Quota request approved to {granted}"
            if self.on_grant is not None:
                self.on_grant(pref, granted)
        self.prefs[pid] = pref
        return pref

    def _create(self, req: Request) -> Response:
        pid = (req.query.get("quotaPreferenceId") or [""])[0]
        if not pid:
            return google_error(400, "INVALID_ARGUMENT", "quotaPreferenceId required by this fake")
        if pid in self.prefs:
            return google_error(409, "ALREADY_EXISTS", f"quota preference {pid} already exists")
        try:
            return 200, self._store(pid, req.match["p"], req.json()), {}
        except ValueError as e:
            return google_error(400, "INVALID_ARGUMENT", str(e))

    def _list(self, req: Request) -> Response:
        """All preferences, in pages of two (so clients must follow nextPageToken)."""
        items = [self.prefs[k] for k in sorted(self.prefs)]
        start = int((req.query.get("pageToken") or ["0"])[0])
        body: dict[str, Any] = {"quotaPreferences": items[start : start + 2]}
        if start + 2 < len(items):
            body["nextPageToken"] = str(start + 2)
        return 200, body, {}

    def _patch(self, req: Request) -> Response:
        pid = req.match["id"]
        allow_missing = (req.query.get("allowMissing") or ["false"])[0] == "true"
        if pid not in self.prefs and not allow_missing:
            return google_error(404, "NOT_FOUND", f"quota preference {pid} not found")
        sent = req.json().get("etag")
        self.patched_etags.append(sent)
        held = self.prefs.get(pid, {}).get("etag")
        if sent and held and sent != held:  # optimistic concurrency, as the API documents
            return google_error(409, "ABORTED", f"etag mismatch for quota preference {pid}")
        try:
            return 200, self._store(pid, req.match["p"], req.json()), {}
        except ValueError as e:
            return google_error(400, "INVALID_ARGUMENT", str(e))


ALL_REQUIRED_APIS = (
    "compute.googleapis.com",
    "container.googleapis.com",
    "iam.googleapis.com",
    "cloudresourcemanager.googleapis.com",
    "cloudquotas.googleapis.com",
    "serviceusage.googleapis.com",
)


class FakeOAuth(FakeService):
    """Google's OAuth token endpoint for user credentials (a refresh token in, an access token
    out), so Application Default Credentials work against the fakes."""

    def __init__(self) -> None:
        super().__init__()
        self.route("POST", r"/token", "token", self._token)

    def _token(self, req: Request) -> Response:
        del req
        return 200, {"access_token": "fake-token", "expires_in": 3600, "token_type": "Bearer"}, {}


class FakeServiceUsage(FakeService):
    """Service Usage v1: services.batchGet (what the client calls)."""

    def __init__(self, latency: float = 0.0) -> None:
        super().__init__(latency)
        self.enabled: set[str] = set(ALL_REQUIRED_APIS)
        self.omitted: set[str] = set()  # names left out of batchGet's answer
        self.route(
            "GET", r"/v1/projects/(?P<p>[^/]+)/services:batchGet", "services.batchGet", self._batch
        )

    def _svc(self, project: str, name: str) -> dict[str, Any]:
        state = "ENABLED" if name in self.enabled else "DISABLED"
        return {
            "name": f"projects/{project}/services/{name}",
            "parent": f"projects/{project}",
            "state": state,
        }

    def _batch(self, req: Request) -> Response:
        names = [n.rsplit("/", 1)[-1] for n in req.query.get("names", [])]
        names = [n for n in names if n not in self.omitted]
        return 200, {"services": [self._svc(req.match["p"], n) for n in names]}, {}
