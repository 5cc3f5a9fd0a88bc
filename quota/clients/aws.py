"""Thin AWS side of the quota check: Service Quotas limits, EC2 usage, increase requests.

boto3 is imported here only, and this module only when an EKS stack is checked. Endpoints follow
the standard ``AWS_ENDPOINT_URL`` / ``AWS_ENDPOINT_URL_<SERVICE>`` variables (boto3 reads them).
"""

from __future__ import annotations

import dataclasses
import os
import re
import threading
from collections import defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import boto3.session
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError, EndpointConnectionError

from infra.core.catalog.vendored import Catalog
from quota.arithmetic import Reading, Status
from quota.demand import Demand, DemandRow, QuotaKey
from quota.own import Ec2Instance, Own, aws_own, aws_types_to_size, pool_of
from quota.rules import aws_quota_code

SERVICE_CODE = "ec2"
# IAM action per operation, named in "permission denied" reasons.
_ACTION = {
    "GetServiceQuota": "servicequotas:GetServiceQuota",
    "GetAWSDefaultServiceQuota": "servicequotas:GetAWSDefaultServiceQuota",
    "DescribeInstances": "ec2:DescribeInstances",
    "GetRole": "iam:GetRole",
    "DescribeSpotInstanceRequests": "ec2:DescribeSpotInstanceRequests",
    "DescribeInstanceTypes": "ec2:DescribeInstanceTypes",
    "ListRequestedServiceQuotaChangeHistoryByQuota": (
        "servicequotas:ListRequestedServiceQuotaChangeHistoryByQuota"
    ),
    "RequestServiceQuotaIncrease": "servicequotas:RequestServiceQuotaIncrease",
    "ListNodegroups": "eks:ListNodegroups",
    "DescribeCapacityReservations": "ec2:DescribeCapacityReservations",
    "GetCallerIdentity": "sts:GetCallerIdentity",
}
_DENIED = frozenset({"AccessDeniedException", "AccessDenied", "UnauthorizedOperation"})
_THROTTLED = frozenset(
    {"TooManyRequestsException", "ThrottlingException", "Throttling", "RequestLimitExceeded"}
)


# CapacityReservation.State values that hold On-Demand quota (``_reservations``).
HOLDING_RESERVATION_STATES = frozenset({"assessing", "scheduled", "pending", "active", "delayed"})


@dataclass(frozen=True, slots=True)
class CapacityReservation:
    """One EC2 Capacity Reservation (ODCR or Capacity Block) that holds On-Demand quota."""

    id: str
    instance_type: str
    state: str
    total: int
    available: int
    az_id: str = ""
    owner_id: str = ""
    # Reservations shared in from another account hold that account's quota, not this one's.
    shared_in: bool = False
    # Instances running in it per EKS node group (the ``eks:nodegroup-name`` tag; "" untagged).
    running: tuple[tuple[str, int], ...] = ()

    @property
    def unused(self) -> int:
        """Reserved instances no instance runs in (those running are DescribeInstances' usage):
        ``AvailableInstanceCount`` once active; the whole count before (nothing can run yet)."""
        return self.available if self.state == "active" else self.total

    def running_in(self, node_groups: Sequence[str]) -> int:
        """Instances of these EKS node groups already running inside the reservation."""
        return sum(n for g, n in self.running if g in node_groups)


@dataclass(frozen=True, slots=True)
class AwsSettings:
    """Region and retry bounds.

    Attributes:
        region: the stack's region (quotas are per account and region).
        max_attempts: botocore standard-mode attempts (the default 3 is few for low-TPS quota APIs).
        call_timeout: connect/read timeout per attempt, seconds.
    """

    region: str
    max_attempts: int = 8
    call_timeout: float = 20.0

    @classmethod
    def from_env(cls, region: str) -> AwsSettings:
        """Settings with ``QUOTA_AWS_MAX_ATTEMPTS`` / ``QUOTA_CALL_TIMEOUT`` overrides."""
        env = os.environ
        return cls(
            region=region,
            max_attempts=int(env.get("QUOTA_AWS_MAX_ATTEMPTS", 8)),
            call_timeout=float(env.get("QUOTA_CALL_TIMEOUT", 20.0)),
        )


def describe_error(exc: BaseException, op: str, attempts: int) -> str:
    """One sentence for a failed AWS call: permission, throttling, missing quota, timeout.

    A connection failure names the endpoint only (not the operation), so every row it hits
    carries the same reason and the report prints it once.
    """
    if isinstance(exc, EndpointConnectionError):
        url = str(exc.kwargs.get("endpoint_url", ""))
        host = urlsplit(url).netloc or url
        cause = exc.kwargs.get("error")
        return f"cannot connect to {host}: {cause or 'connection failed'}"
    if isinstance(exc, ClientError):
        code = exc.response.get("Error", {}).get("Code", "")
        msg = exc.response.get("Error", {}).get("Message", "")
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        if code in _DENIED:
            m = re.search(r"perform: ([a-z0-9-]+:[A-Za-z]+)", msg)
            return f"{op}: permission denied: {m.group(1) if m else _ACTION.get(op, op)}"
        if code in _THROTTLED:
            return f"{op}: throttled ({code}) after {attempts} attempts"
        if status and int(status) >= 500:
            return f"{op}: service error {status} ({code}) after {attempts} attempts"
        return f"{op}: {code}: {msg}"
    if isinstance(exc, BotoCoreError):
        name = type(exc).__name__
        if "Timeout" in name:
            return f"{op}: timed out after {attempts} attempts"
        if name == "NoCredentialsError":
            return f"{op}: no AWS credentials (set AWS_PROFILE or run aws sso login)"
        return f"{op}: {exc}"
    return f"{op}: {type(exc).__name__}: {exc}"


class AwsQuotaService:
    """Reads and requests EC2 vCPU quotas in one region (one client per service, thread-shared)."""

    def __init__(
        self, settings: AwsSettings, catalog: Catalog, session: boto3.session.Session | None = None
    ) -> None:
        self.s = settings
        self.catalog = catalog
        config = Config(
            region_name=settings.region,
            retries={"max_attempts": settings.max_attempts, "mode": "standard"},
            connect_timeout=settings.call_timeout,
            read_timeout=settings.call_timeout,
            max_pool_connections=20,
        )
        # One session shared across regions (--where) loads the service models once.
        session = session or boto3.session.Session(region_name=settings.region)
        self.sq = session.client("service-quotas", region_name=settings.region, config=config)
        self.ec2 = session.client("ec2", region_name=settings.region, config=config)
        self._session, self._config = session, config
        # Clients made on first use from several threads: a boto3 session is not thread-safe.
        self._lock = threading.Lock()
        self._clients: dict[str, Any] = {}
        self.reservations: dict[str, CapacityReservation] = {}  # filled by read()
        # What the stack's own instances hold per pool and key (``quota.own``), or why unread:
        # filled by read() when given the demand.
        self.own: Own | str | None = None
        # (reservation id, node group) -> instances running in it, filled by _instance_counts
        self._in_reservation: defaultdict[tuple[str, str], int] = defaultdict(int)

    def _client(self, name: str) -> Any:
        """The ``name`` client, made once."""
        with self._lock:
            client = self._clients.get(name)
            if client is None:
                client = self._session.client(name, region_name=self.s.region, config=self._config)
                self._clients[name] = client
            return client

    @property
    def eks(self) -> Any:
        """EKS client (only an existing cluster's node groups are listed)."""
        return self._client("eks")

    def role_exists(self, role: str) -> tuple[Status, str]:
        """``(status, reason)``: ``ok`` when IAM GetRole finds ``role``, ``short`` when it answers
        NoSuchEntity, ``unknown`` on any other failure (never ok)."""
        iam = self._client("iam")
        try:
            iam.get_role(RoleName=role)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "NoSuchEntity":
                return "short", f"GetRole: {role} does not exist in this account"
            return "unknown", describe_error(exc, "GetRole", self.s.max_attempts)
        except BotoCoreError as exc:
            return "unknown", describe_error(exc, "GetRole", self.s.max_attempts)
        return "ok", f"{role} exists"

    # --- reads ---------------------------------------------------------------------------------
    def read(
        self, keys: Sequence[QuotaKey], demand: Demand | None = None, requesting: bool = False
    ) -> tuple[dict[QuotaKey, Reading], list[str]]:
        """Limit (applied, else default) and vCPU usage of every key, all at once; with
        ``demand``, what its node groups' own instances hold (``own``) from the same listing.
        (``requesting``: as the GCP client takes it; nothing more is read here for requests.)"""
        del requesting
        codes = list(dict.fromkeys(k.quota for k in keys))
        with ThreadPoolExecutor(max_workers=len(codes) + 1) as pool:
            usage_f = pool.submit(_capture, lambda: self._usage(set(codes), demand))
            limit_f = {c: pool.submit(_capture, lambda c=c: self._limit(c)) for c in codes}
            usage = usage_f.result()
            limits = {c: f.result() for c, f in limit_f.items()}
        if isinstance(usage, BaseException) and demand is not None and demand.marks:
            op = getattr(usage, "operation_name", None) or "DescribeInstances"
            self.own = describe_error(usage, op, self.s.max_attempts)
        readings: dict[QuotaKey, Reading] = {}
        for k in keys:
            lim = limits[k.quota]
            if isinstance(lim, BaseException):
                op = getattr(lim, "operation_name", None) or "GetServiceQuota"
                readings[k] = Reading(error=describe_error(lim, op, self.s.max_attempts))
            elif isinstance(lim, str):
                readings[k] = Reading(error=lim)
            elif isinstance(usage, BaseException):
                op = getattr(usage, "operation_name", None) or "DescribeInstances"
                err = describe_error(usage, op, self.s.max_attempts)
                if err.startswith("cannot connect"):
                    readings[k] = Reading(limit=lim, error=err)
                else:
                    readings[k] = Reading(limit=lim, error=f"usage unreadable: {err}")
            else:
                readings[k] = Reading(limit=lim, usage=float(usage.get(k.quota, 0)))
        return readings, []

    def _limit(self, code: str, service: str = SERVICE_CODE) -> float | str:
        """Applied value, else the AWS default; a string says why neither exists.

        Both are asked at once (one round trip): a quota never changed has no applied value
        (GetServiceQuota answers NoSuchResourceException, aws/aws-cli#6629) and the default
        applies.
        """
        kw = {"ServiceCode": service, "QuotaCode": code}
        with ThreadPoolExecutor(max_workers=2) as pool:
            applied_f = pool.submit(_capture, lambda: self.sq.get_service_quota(**kw))
            default_f = pool.submit(_capture, lambda: self.sq.get_aws_default_service_quota(**kw))
            applied, default = applied_f.result(), default_f.result()
        for got in (applied, default):
            if not isinstance(got, BaseException):
                return float(got["Quota"]["Value"])
            if not _no_such_resource(got):
                raise got
        return f"quota missing: {code} not found for {service} in {self.s.region}"

    def read_service_limits(
        self, codes: Sequence[str], cluster: str | None, own: frozenset[str]
    ) -> tuple[dict[str, float | str | None], int | str | None]:
        """EKS limits (``eks`` Service Quotas) and, for an existing ``cluster``, how many of its
        managed node groups this stack does not plan (EKS ListNodegroups).

        Returns:
            per code the value (``None``: Service Quotas lists none, the documented default
            applies; a string: why it is unknown), and the other groups' count (``None`` when
            not asked; a string: why unknown).
        """

        def limit(code: str) -> float | str | None:
            try:
                got = self._limit(code, "eks")
            except Exception as e:  # noqa: BLE001  # an 'unknown' reason
                op = getattr(e, "operation_name", None) or "GetServiceQuota"
                return describe_error(e, op, self.s.max_attempts)
            return None if isinstance(got, str) else got

        def others() -> int | str | None:
            if cluster is None:
                return None
            try:
                names = [
                    n
                    for page in self.eks.get_paginator("list_nodegroups").paginate(
                        clusterName=cluster
                    )
                    for n in page.get("nodegroups", [])
                ]
            except Exception as e:  # noqa: BLE001  # an 'unknown' reason
                return describe_error(e, "ListNodegroups", self.s.max_attempts)
            return sum(1 for n in names if n not in own)

        with ThreadPoolExecutor(max_workers=len(codes) + 1) as pool:
            other_f = pool.submit(others)
            values = dict(zip(codes, pool.map(limit, codes), strict=True))
            return values, other_f.result()

    def _usage(self, codes: set[str], demand: Demand | None = None) -> dict[str, int]:
        """vCPUs per quota code: pending and running instances (spot by InstanceLifecycle), open
        Spot requests and the unused part of Capacity Reservations, read concurrently; with
        ``demand``, what its own instances hold is set on ``own``."""
        marks = demand.marks if demand is not None else ()
        with ThreadPoolExecutor(max_workers=4) as pool:
            inst_f = pool.submit(self._instance_counts, marks)
            spot_f = pool.submit(self._open_spot_counts)
            res_f = pool.submit(self._reservations)
            acct_f = pool.submit(_capture, self._account)
            counts, mine = inst_f.result()
            for k, n in spot_f.result().items():
                counts[k] += n
            self.reservations = self._attributed(res_f.result(), acct_f.result())
        for r in self.reservations.values():
            if not r.shared_in:
                counts[(r.instance_type, False)] += r.unused
        # Code first: vCPUs are looked up (maybe with an EC2 call) only for types that count here.
        counted = [
            (t, c, n)
            for (t, spot), n in counts.items()
            if n and (c := aws_quota_code(t, spot)) in codes
        ]
        vcpus = self._vcpus({t for t, _, _ in counted} | aws_types_to_size(mine, marks))
        if demand is not None and marks:  # no marks: nothing of the stack's is told apart
            self.own = aws_own(mine, demand.contributions, marks, vcpus)
        out: dict[str, int] = defaultdict(int)
        for itype, code, n in counted:
            out[code] += n * vcpus[itype]
        return dict(out)

    def _instance_counts(
        self, marks: Sequence[Any] = ()
    ) -> tuple[defaultdict[tuple[str, bool], int], list[Ec2Instance]]:
        """Pending and running instances per (type, Spot), and those carrying one of ``marks``
        (the stack's node groups' tags)."""
        counts: defaultdict[tuple[str, bool], int] = defaultdict(int)
        mine: list[Ec2Instance] = []
        self._in_reservation.clear()
        pages = self.ec2.get_paginator("describe_instances").paginate(
            Filters=[{"Name": "instance-state-name", "Values": ["pending", "running"]}]
        )
        for page in pages:
            for res in page.get("Reservations", []):
                for inst in res.get("Instances", []):
                    spot = inst.get("InstanceLifecycle") == "spot"
                    counts[(inst["InstanceType"], spot)] += 1
                    tags = {t.get("Key"): t.get("Value") for t in inst.get("Tags", [])}
                    rid = inst.get("CapacityReservationId") or ""
                    if rid:
                        self._in_reservation[(rid, tags.get("eks:nodegroup-name") or "")] += 1
                    if marks and pool_of(tags, marks) is not None:
                        mine.append(Ec2Instance(inst["InstanceType"], spot, tags, rid))
        return counts, mine

    def _account(self) -> str:
        """This account's id (STS GetCallerIdentity needs no permission)."""
        return str(self._client("sts").get_caller_identity()["Account"])

    def _attributed(
        self, found: dict[str, CapacityReservation], account: str | BaseException
    ) -> dict[str, CapacityReservation]:
        """Reservations with the instances running in them per node group and whether they are
        shared in from another owner (account unknown: treated as this account's, which counts
        their unused part as usage, the conservative side)."""
        out: dict[str, CapacityReservation] = {}
        for rid, r in found.items():
            running = tuple((g, n) for (i, g), n in self._in_reservation.items() if i == rid)
            shared = isinstance(account, str) and bool(r.owner_id) and r.owner_id != account
            out[rid] = dataclasses.replace(r, running=running, shared_in=shared)
        return out

    def _open_spot_counts(self) -> dict[tuple[str, bool], int]:
        # Open (not yet fulfilled) Spot requests count against the Spot vCPU quota too.
        # https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/using-spot-limits.html
        counts: defaultdict[tuple[str, bool], int] = defaultdict(int)
        spot_pages = self.ec2.get_paginator("describe_spot_instance_requests").paginate(
            Filters=[{"Name": "state", "Values": ["open"]}]
        )
        for page in spot_pages:
            for req in page.get("SpotInstanceRequests", []):
                itype = req.get("LaunchSpecification", {}).get("InstanceType")
                if itype:
                    counts[(itype, True)] += 1
        return counts

    def _reservations(self) -> dict[str, CapacityReservation]:
        """Capacity Reservations that hold On-Demand quota, by id.

        "Capacity Reservations count toward your On-Demand Instance quotas, even if they are
        unused" (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/ec2-capacity-reservations.html);
        the states that hold capacity or are about to: assessing, scheduled, pending, active,
        delayed (CapacityReservation.State, https://docs.aws.amazon.com/AWSEC2/latest/APIReference/
        API_CapacityReservation.html). Instances running inside one are already counted by
        DescribeInstances, so only its unused part is added (``CapacityReservation.unused``).
        A reservation shared in from another account (``OwnerId``) is left out of usage: it
        holds its owner's quota (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/
        capacity-reservation-sharing.html: the owner manages it). Capacity Blocks come in the same
        answer and are counted alike, the conservative reading of the sentence above.
        """
        out: dict[str, CapacityReservation] = {}
        pages = self.ec2.get_paginator("describe_capacity_reservations").paginate(
            Filters=[{"Name": "state", "Values": sorted(HOLDING_RESERVATION_STATES)}]
        )
        for page in pages:
            for r in page.get("CapacityReservations", []):
                if r.get("State") not in HOLDING_RESERVATION_STATES:
                    continue
                out[r["CapacityReservationId"]] = CapacityReservation(
                    r["CapacityReservationId"],
                    r["InstanceType"],
                    r.get("State", ""),
                    int(r.get("TotalInstanceCount", 0)),
                    int(r.get("AvailableInstanceCount", 0)),
                    az_id=r.get("AvailabilityZoneId", ""),
                    owner_id=r.get("OwnerId", ""),
                )
        return out

    def _vcpus(self, types: set[str]) -> dict[str, int]:
        """DefaultVCpus per instance type: catalog first, EC2 for the rest (one call)."""
        out: dict[str, int] = {}
        for t in types:
            inst = self.catalog.aws_instance(t)
            if inst is not None:
                out[t] = inst.vcpus
        missing = sorted(types - set(out))
        for i in range(0, len(missing), 100):
            resp = self.ec2.describe_instance_types(InstanceTypes=missing[i : i + 100])
            for it in resp.get("InstanceTypes", []):
                out[it["InstanceType"]] = int(it["VCpuInfo"]["DefaultVCpus"])
        return out

    # --- requests ------------------------------------------------------------------------------
    def request(
        self, row: DemandRow, desired: int, current: float, force: bool = False
    ) -> dict[str, Any]:
        """File an increase to ``desired`` (``aws_requests.file_request``)."""
        from quota.clients.aws_requests import file_request

        return file_request(
            self.sq, self.s.region, self.s.max_attempts, row, desired, current, force
        )


def _no_such_resource(exc: BaseException) -> bool:
    return (
        isinstance(exc, ClientError)
        and exc.response.get("Error", {}).get("Code") == "NoSuchResourceException"
    )


def _capture(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except Exception as e:  # noqa: BLE001  # turned into an 'unknown' reason by the caller
        return e
