"""Fake AWS Service Quotas speaking the JSON 1.1 protocol (``POST /``, ``X-Amz-Target``).

State is per region (read from the SigV4 credential scope), so one fake serves every region the
way one endpoint per region would. moto covers EC2; moto's Service Quotas knows only ``vpc``.
"""

from __future__ import annotations

import itertools
import re
from typing import Any
from urllib.parse import urlencode

from tests.fakes.base import FakeService, Request, Response

_TARGET = "ServiceQuotasV20190624."
_JSON = {"Content-Type": "application/x-amz-json-1.1"}
_SCOPE = re.compile(r"Credential=[^/]+/[0-9]+/(?P<region>[a-z0-9-]+)/")


def aws_error(code: str, message: str, status: int = 400) -> Response:
    """A JSON 1.1 error: ``__type`` names the modelled exception."""
    return status, {"__type": code, "message": message}, dict(_JSON)


def access_denied(action: str) -> Response:
    """AccessDeniedException naming the IAM action, as AWS words it."""
    return aws_error(
        "AccessDeniedException",
        f"User: arn:aws:iam::123456789012:user/ci is not authorized to perform: {action}",
    )


THROTTLED = aws_error("TooManyRequestsException", "Rate exceeded")
SERVICE_ERROR = aws_error("ServiceException", "Internal error", 500)


class FakeServiceQuotas(FakeService):
    """Service Quotas: Get(AWSDefault)ServiceQuota, history by quota, RequestServiceQuotaIncrease.

    ``policy`` decides what a new request does: ``"pending"`` (CASE_OPENED), ``"grant"`` (APPROVED,
    applied) or ``("partial", n)`` (APPROVED, n applied).
    """

    def __init__(self, latency: float = 0.0) -> None:
        super().__init__(latency)
        self.applied: dict[tuple[str, str], float] = {}  # (region, code) -> applied value
        self.defaults: dict[str, float] = {}  # code -> AWS default
        self.history: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self.policy: Any = "pending"
        self._ids = itertools.count(1)
        self._clock = itertools.count(1)
        self.route("POST", r"/", "json", self._dispatch_target)

    def op_name(self, op: str, req: Request) -> str:
        return req.headers.get("X-Amz-Target", "").removeprefix(_TARGET) or op

    def not_found(self, method: str, path: str) -> Response:
        return aws_error("UnknownOperationException", f"{method} {path}", 404)

    @staticmethod
    def region_of(req: Request) -> str:
        m = _SCOPE.search(req.headers.get("Authorization", ""))
        return m.group("region") if m else "us-east-1"

    def _dispatch_target(self, req: Request) -> Response:
        op = self.op_name("", req)
        handler = getattr(self, f"_op_{op}", None)
        if handler is None:
            return aws_error("UnknownOperationException", f"{op} is not implemented by this fake")
        return handler(self.region_of(req), req.json())

    def _quota(self, code: str, value: float, region: str) -> dict[str, Any]:
        return {
            "ServiceCode": "ec2",
            "ServiceName": "Amazon Elastic Compute Cloud (Amazon EC2)",
            "QuotaArn": f"arn:aws:servicequotas:{region}:123456789012:ec2/{code}",
            "QuotaCode": code,
            "QuotaName": code,
            "Value": value,
            "Unit": "None",
            "Adjustable": True,
            "GlobalQuota": False,
        }

    def _op_GetServiceQuota(self, region: str, body: dict[str, Any]) -> Response:
        code = body["QuotaCode"]
        if (region, code) not in self.applied:
            return aws_error(
                "NoSuchResourceException",
                f"The request failed because the specified quota {code} has no applied value.",
            )
        return 200, {"Quota": self._quota(code, self.applied[(region, code)], region)}, dict(_JSON)

    def _op_GetAWSDefaultServiceQuota(self, region: str, body: dict[str, Any]) -> Response:
        code = body["QuotaCode"]
        if code not in self.defaults:
            return aws_error(
                "NoSuchResourceException", f"The specified quota {code} does not exist."
            )
        return 200, {"Quota": self._quota(code, self.defaults[code], region)}, dict(_JSON)

    def _op_ListRequestedServiceQuotaChangeHistoryByQuota(
        self, region: str, body: dict[str, Any]
    ) -> Response:
        items = self.history.get((region, body["QuotaCode"]), [])
        return 200, {"RequestedQuotas": items}, dict(_JSON)

    def _op_RequestServiceQuotaIncrease(self, region: str, body: dict[str, Any]) -> Response:
        code, desired = body["QuotaCode"], float(body["DesiredValue"])
        current = self.applied.get((region, code), self.defaults.get(code, 0.0))
        if desired <= current:
            return aws_error(
                "IllegalArgumentException",
                "You must provide a quota value greater than the current quota value.",
            )
        hist = self.history.setdefault((region, code), [])
        if any(h["Status"] in ("PENDING", "CASE_OPENED") for h in hist):
            return aws_error(
                "ResourceAlreadyExistsException",
                "Only one open service quota increase request is allowed per quota.",
            )
        n = next(self._ids)
        req: dict[str, Any] = {
            "Id": f"req-{n}",
            "CaseId": f"case-{n}",
            "ServiceCode": "ec2",
            "QuotaCode": code,
            "DesiredValue": desired,
            "Created": 1_790_000_000 + next(self._clock),
            "Status": "CASE_OPENED",
        }
        if self.policy == "grant":
            req["Status"] = "APPROVED"
            self.applied[(region, code)] = desired
        elif isinstance(self.policy, tuple):
            req["Status"] = "APPROVED"
            self.applied[(region, code)] = float(self.policy[1])
        hist.append(req)
        return 200, {"RequestedQuota": req}, dict(_JSON)


_EC2_NS = "http://ec2.amazonaws.com/doc/2016-11-15/"


class Relay(FakeService):
    """Any AWS endpoint in front of moto: relays every request unchanged (with this fake's latency
    and faults), so the real boto3 client sees one endpoint per service."""

    def __init__(self, moto_url: str, latency: float = 0.0) -> None:
        super().__init__(latency)
        self.moto_url = moto_url
        for method in ("GET", "POST", "PUT", "DELETE", "PATCH"):
            self.route(method, r"/.*", "relay", self._handle)

    def op_name(self, op: str, req: Request) -> str:
        from urllib.parse import parse_qs

        if req.method == "POST" and b"Action=" in req.body:
            return (parse_qs(req.body.decode()).get("Action") or [op])[0]
        return req.headers.get("X-Amz-Target") or f"{req.method} {req.path}"

    def _handle(self, req: Request) -> Response:
        return self._relay(req)

    def _relay(self, req: Request) -> Response:
        import urllib.error
        import urllib.request

        skip = {"host", "content-length", "connection"}
        headers = {k: v for k, v in req.headers.items() if k.lower() not in skip}
        query = f"?{urlencode(req.query, doseq=True)}" if req.query else ""
        out = urllib.request.Request(
            self.moto_url + req.path + query,
            data=req.body if req.method != "GET" else None,
            headers=headers,
            method=req.method,
        )
        try:
            with urllib.request.urlopen(out, timeout=30) as resp:
                kind = resp.headers.get("Content-Type") or "application/json"
                return resp.status, resp.read(), {"Content-Type": kind}
        except urllib.error.HTTPError as e:
            return e.code, e.read(), {"Content-Type": e.headers.get("Content-Type", "text/xml")}


class Ec2WithReservations(Relay):
    """EC2 in front of moto: answers DescribeCapacityReservations itself (moto 5.2 lacks it) and
    relays every other action to moto unchanged, so the real boto3 client sees one EC2 endpoint.

    ``reservations`` are CapacityReservation items (API field names, camelCase as in the XML:
    ``capacityReservationId``, ``instanceType``, ``totalInstanceCount``,
    ``availableInstanceCount``, ``state``, ``reservationType``), per region.
    """

    def __init__(self, moto_url: str, latency: float = 0.0) -> None:
        super().__init__(moto_url, latency)
        self.reservations: dict[str, list[dict[str, Any]]] = {}

    def _handle(self, req: Request) -> Response:
        if self.op_name("", req) == "DescribeCapacityReservations":
            return self._describe(req)
        return self._relay(req)

    def _describe(self, req: Request) -> Response:
        from urllib.parse import parse_qs
        from xml.sax.saxutils import escape

        form = parse_qs(req.body.decode())
        # Filter.N.Name=state with Filter.N.Value.M: the states the caller asked for
        states: set[str] | None = None
        for k, v in form.items():
            if k.endswith(".Name") and v == ["state"]:
                prefix = k.removesuffix("Name")
                states = {x[0] for kk, x in form.items() if kk.startswith(f"{prefix}Value.")}
        region = FakeServiceQuotas.region_of(req)
        items = ""
        for r in self.reservations.get(region, []):
            if states is not None and r.get("state") not in states:
                continue
            fields = "".join(f"<{k}>{escape(str(v))}</{k}>" for k, v in r.items())
            items += f"<item>{fields}</item>"
        body = (
            f'<?xml version="1.0" encoding="UTF-8"?><DescribeCapacityReservationsResponse '
            f'xmlns="{_EC2_NS}"><requestId>fake</requestId><capacityReservationSet>{items}'
            "</capacityReservationSet></DescribeCapacityReservationsResponse>"
        )
        return 200, body.encode(), {"Content-Type": "text/xml;charset=UTF-8"}
