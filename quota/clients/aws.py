"""Thin AWS side of the quota check: Service Quotas limits, EC2 usage, increase requests.

boto3 is imported here only, and this module only when an EKS stack is checked. Endpoints follow
the standard ``AWS_ENDPOINT_URL`` / ``AWS_ENDPOINT_URL_<SERVICE>`` variables (boto3 reads them).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
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
from quota.demand import DemandRow, QuotaKey
from quota.rules import aws_quota_code

SERVICE_CODE = "ec2"
# Requests AWS still works on; a new one for the same quota fails with ResourceAlreadyExists.
OPEN_STATUSES = frozenset({"PENDING", "CASE_OPENED"})
# Refusals: "can't be approved by Service Quotas" (RequestedServiceQuotaChange.Status,
# https://docs.aws.amazon.com/servicequotas/2019-06-24/apireference/API_RequestedServiceQuotaChange.html).
# CASE_CLOSED means "check the support case" and INVALID_REQUEST a bad ContextId ARN: neither is one.
REFUSED_STATUSES = frozenset({"DENIED", "NOT_APPROVED"})
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
        self.reservations: dict[str, CapacityReservation] = {}  # filled by read()
        # (reservation id, node group) -> instances running in it, filled by _instance_counts
        self._in_reservation: defaultdict[tuple[str, str], int] = defaultdict(int)

    @functools.cached_property
    def eks(self) -> Any:
        """EKS client (only an existing cluster's node groups are listed)."""
        return self._session.client("eks", region_name=self.s.region, config=self._config)

    def role_exists(self, role: str) -> tuple[Status, str]:
        """``(status, reason)``: ``ok`` when IAM GetRole finds ``role``, ``short`` when it answers
        NoSuchEntity, ``unknown`` on any other failure (never ok)."""
        iam = self._session.client("iam", region_name=self.s.region, config=self._config)
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
    def read(self, keys: Sequence[QuotaKey]) -> tuple[dict[QuotaKey, Reading], list[str]]:
        """Limit (applied, else default) and vCPU usage of every key, concurrently."""
        codes = list(dict.fromkeys(k.quota for k in keys))
        with ThreadPoolExecutor(max_workers=len(codes) + 1) as pool:
            usage_f = pool.submit(_capture, lambda: self._usage(set(codes)))
            limit_f = {c: pool.submit(_capture, lambda c=c: self._limit(c)) for c in codes}
            usage = usage_f.result()
            limits = {c: f.result() for c, f in limit_f.items()}
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
        """Applied value, falling back to the AWS default; a string says why neither exists."""
        try:
            q = self.sq.get_service_quota(ServiceCode=service, QuotaCode=code)
        except ClientError as e:
            if e.response.get("Error", {}).get("Code") != "NoSuchResourceException":
                raise
            # No applied value (never changed): the default applies. aws/aws-cli#6629
            try:
                q = self.sq.get_aws_default_service_quota(ServiceCode=service, QuotaCode=code)
            except ClientError as e2:
                if e2.response.get("Error", {}).get("Code") != "NoSuchResourceException":
                    raise
                return f"quota missing: {code} not found for {service} in {self.s.region}"
        return float(q["Quota"]["Value"])

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

    def _usage(self, codes: set[str]) -> dict[str, int]:
        """vCPUs per quota code: pending and running instances (spot by InstanceLifecycle), open
        Spot requests and the unused part of Capacity Reservations, read concurrently."""
        with ThreadPoolExecutor(max_workers=4) as pool:
            inst_f = pool.submit(self._instance_counts)
            spot_f = pool.submit(self._open_spot_counts)
            res_f = pool.submit(self._reservations)
            acct_f = pool.submit(_capture, self._account)
            counts = inst_f.result()
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
        vcpus = self._vcpus({t for t, _, _ in counted})
        out: dict[str, int] = defaultdict(int)
        for itype, code, n in counted:
            out[code] += n * vcpus[itype]
        return dict(out)

    def _instance_counts(self) -> defaultdict[tuple[str, bool], int]:
        counts: defaultdict[tuple[str, bool], int] = defaultdict(int)
        self._in_reservation.clear()
        pages = self.ec2.get_paginator("describe_instances").paginate(
            Filters=[{"Name": "instance-state-name", "Values": ["pending", "running"]}]
        )
        for page in pages:
            for res in page.get("Reservations", []):
                for inst in res.get("Instances", []):
                    spot = inst.get("InstanceLifecycle") == "spot"
                    counts[(inst["InstanceType"], spot)] += 1
                    if rid := inst.get("CapacityReservationId"):
                        tags = {t.get("Key"): t.get("Value") for t in inst.get("Tags", [])}
                        self._in_reservation[(rid, tags.get("eks:nodegroup-name") or "")] += 1
        return counts

    def _account(self) -> str:
        """This account's id (STS GetCallerIdentity needs no permission)."""
        sts = self._session.client("sts", region_name=self.s.region, config=self._config)
        return str(sts.get_caller_identity()["Account"])

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
        """File an increase to ``desired`` unless an open or equal-or-larger request exists.

        A refusal (DENIED / NOT_APPROVED) of a request for at most ``desired`` is reported with its
        case id instead of asking again for as much or more; a larger refused request does not
        block a smaller one, and a refusal at or below the applied value or older than a later
        approval no longer blocks anything (listed under ``context``). An approved request for at least ``desired`` that left the limit below it
        is a partial grant. ``force`` files anew.
        """
        code = row.key.quota
        follow = (
            f"aws service-quotas list-requested-service-quota-change-history-by-quota "
            f"--service-code ec2 --quota-code {code} --region {self.s.region}"
        )
        base: dict[str, Any] = {"desired": desired, "follow": follow}
        try:
            history = self._history(code)
        except (ClientError, BotoCoreError) as e:
            op = "ListRequestedServiceQuotaChangeHistoryByQuota"
            return {
                **base,
                "action": "failed",
                "status": describe_error(e, op, self.s.max_attempts),
            }
        open_ = [h for h in history if h.get("Status") in OPEN_STATUSES]
        if open_:
            h = open_[0]
            return {**base, **_req_state(h), "action": "pending"}
        if not force:
            refused, moot = _refusals(history, desired, current)
            if moot:  # shown as context: they no longer stand in the way
                base["context"] = [
                    f"{h.get('Status')} {_value(h)} (case {h.get('CaseId', '-')}): {why}"
                    for h, why in moot
                ]
            if refused:
                h = refused[0]
                return {**base, **_req_state(h), "action": "denied", "current": int(current)}
            partial = [
                h
                for h in history
                if h.get("Status") == "APPROVED" and float(h.get("DesiredValue", 0)) >= desired
            ]
            if partial:
                h = partial[0]
                state = {**_req_state(h), "current": int(current)}
                return {**base, **state, "action": "partially-granted"}
        try:
            resp = self.sq.request_service_quota_increase(
                ServiceCode=SERVICE_CODE, QuotaCode=code, DesiredValue=float(desired)
            )
        except ClientError as e:
            err = e.response.get("Error", {}).get("Code")
            if err == "ResourceAlreadyExistsException":
                return {**base, "action": "pending", "status": "an open request already exists"}
            if err == "QuotaExceededException":
                return {
                    **base,
                    "action": "failed",
                    "status": "too many open quota requests in the account",
                }
            return {
                **base,
                "action": "failed",
                "status": describe_error(e, "RequestServiceQuotaIncrease", self.s.max_attempts),
            }
        except BotoCoreError as e:
            return {
                **base,
                "action": "failed",
                "status": describe_error(e, "RequestServiceQuotaIncrease", self.s.max_attempts),
            }
        return {**base, **_req_state(resp["RequestedQuota"]), "action": "created"}

    def _history(self, code: str) -> list[dict[str, Any]]:
        """Requests for ``code`` in this region, newest first."""
        out: list[dict[str, Any]] = []
        kw: dict[str, Any] = {"ServiceCode": SERVICE_CODE, "QuotaCode": code}
        while True:
            resp = self.sq.list_requested_service_quota_change_history_by_quota(**kw)
            out.extend(resp.get("RequestedQuotas", []))
            if not resp.get("NextToken"):
                break
            kw["NextToken"] = resp["NextToken"]
        return sorted(out, key=_created, reverse=True)


def _created(h: dict[str, Any]) -> float:
    """A history entry's creation time as epoch seconds (boto3 parses ``Created`` to datetime)."""
    c = h.get("Created")
    if c is None:
        return 0.0
    return c.timestamp() if hasattr(c, "timestamp") else float(c)


def _value(h: dict[str, Any]) -> int:
    return int(float(h.get("DesiredValue", 0)))


def _refusals(
    history: list[dict[str, Any]], desired: int, current: float
) -> tuple[list[dict[str, Any]], list[tuple[dict[str, Any], str]]]:
    """(refusals that still block asking for ``desired``, refusals that no longer matter + why).

    A refusal blocks only a request for at least as much as was refused. It no longer matters
    when the applied value has since reached what was refused (the limit moved past it), or when
    a later request was approved (AWS reviewed the quota again after it).
    """
    approved = [_created(h) for h in history if h.get("Status") == "APPROVED"]
    latest_approval = max(approved, default=None)
    blocking: list[dict[str, Any]] = []
    moot: list[tuple[dict[str, Any], str]] = []
    for h in history:
        if h.get("Status") not in REFUSED_STATUSES or _value(h) > desired:
            continue
        if _value(h) <= current:
            moot.append((h, f"at or below the applied value {current:g}"))
        elif latest_approval is not None and _created(h) < latest_approval:
            moot.append((h, "older than a later approved request"))
        else:
            blocking.append(h)
    return blocking, moot


def _req_state(h: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"status": h.get("Status"), "id": h.get("Id")}
    if h.get("CaseId"):
        out["caseId"] = h["CaseId"]
    if h.get("Created"):
        out["since"] = str(h["Created"])
    if "DesiredValue" in h:
        out["requested"] = int(float(h["DesiredValue"]))
    return out


def _capture(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except Exception as e:  # noqa: BLE001  # turned into an 'unknown' reason by the caller
        return e
