"""AWS quota increase requests: the history first, then one RequestServiceQuotaIncrease at most.

Used by ``quota.clients.aws`` only (boto3 is imported there). The first request of an account
makes Service Quotas create its service-linked role (AWSServiceRoleForServiceQuotas), as the
caller: ``iam:CreateServiceLinkedRole`` (the ServiceQuotasFullAccess managed policy grants it,
https://docs.aws.amazon.com/servicequotas/latest/userguide/security-iam-awsmanpol.html).
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from quota.clients.aws import SERVICE_CODE, describe_error
from quota.demand import DemandRow

# Requests AWS still works on; a new one for the same quota fails with ResourceAlreadyExists.
OPEN_STATUSES = frozenset({"PENDING", "CASE_OPENED"})
# Refusals: "can't be approved by Service Quotas" (RequestedServiceQuotaChange.Status,
# https://docs.aws.amazon.com/servicequotas/2019-06-24/apireference/API_RequestedServiceQuotaChange.html).
# CASE_CLOSED means "check the support case" and INVALID_REQUEST a bad ContextId ARN: neither is one.
REFUSED_STATUSES = frozenset({"DENIED", "NOT_APPROVED"})


def file_request(
    sq: Any,
    region: str,
    attempts: int,
    row: DemandRow,
    desired: int,
    current: float,
    force: bool = False,
) -> dict[str, Any]:
    """File an increase to ``desired`` unless an open or equal-or-larger request exists.

    A refusal (DENIED / NOT_APPROVED) of a request for at most ``desired`` is reported with its
    case id instead of asking again for as much or more; a larger refused request does not
    block a smaller one, and a refusal at or below the applied value or older than a later
    approval no longer blocks anything (listed under ``context``). An approved request for at
    least ``desired`` that left the limit below it is a partial grant. ``force`` files anew
    (an open request still stands: AWS takes one per quota).
    """
    code = row.key.quota
    follow = (
        f"aws service-quotas list-requested-service-quota-change-history-by-quota "
        f"--service-code ec2 --quota-code {code} --region {region}"
    )
    base: dict[str, Any] = {"desired": desired, "follow": follow}
    try:
        history = _history(sq, code)
    except (ClientError, BotoCoreError) as e:
        op = "ListRequestedServiceQuotaChangeHistoryByQuota"
        return {**base, "action": "failed", "status": describe_error(e, op, attempts)}
    open_ = [h for h in history if h.get("Status") in OPEN_STATUSES]
    if open_:
        state = _req_state(open_[0])
        if state.get("requested", desired) < desired:  # AWS takes one open request per quota
            state["hint"] = f"file again for {desired} after it settles"
        return {**base, **state, "action": "pending"}
    if not force:
        held = _held_back(history, desired, current, base)
        if held is not None:
            return held
    try:
        resp = sq.request_service_quota_increase(
            ServiceCode=SERVICE_CODE, QuotaCode=code, DesiredValue=float(desired)
        )
    except ClientError as e:
        err = e.response.get("Error", {}).get("Code")
        if err == "ResourceAlreadyExistsException":
            return {**base, "action": "pending", "status": "an open request already exists"}
        if err == "QuotaExceededException":
            status = "too many open quota requests in the account"
            return {**base, "action": "failed", "status": status}
        status = describe_error(e, "RequestServiceQuotaIncrease", attempts)
        return {**base, "action": "failed", "status": status}
    except BotoCoreError as e:
        status = describe_error(e, "RequestServiceQuotaIncrease", attempts)
        return {**base, "action": "failed", "status": status}
    return {**base, **_req_state(resp["RequestedQuota"]), "action": "created"}


def _held_back(
    history: list[dict[str, Any]], desired: int, current: float, base: dict[str, Any]
) -> dict[str, Any] | None:
    """What stands in the way of a new request (a refusal, a partial grant), if anything;
    refusals that no longer do are added to ``base`` as ``context``."""
    refused, moot = _refusals(history, desired, current)
    if moot:  # shown as context: they no longer stand in the way
        base["context"] = [
            f"{h.get('Status')} {_value(h)} (case {h.get('CaseId', '-')}): {why}" for h, why in moot
        ]
    if refused:
        state = {**_req_state(refused[0]), "current": int(current)}
        return {**base, **state, "action": "denied", "hint": "--force files it again"}
    partial = [
        h
        for h in history
        if h.get("Status") == "APPROVED" and float(h.get("DesiredValue", 0)) >= desired
    ]
    if partial:
        state = {**_req_state(partial[0]), "current": int(current)}
        return {**base, **state, "action": "partially-granted", "hint": "--force files it again"}
    return None


def _history(sq: Any, code: str) -> list[dict[str, Any]]:
    """Requests for ``code`` in the client's region, newest first."""
    out: list[dict[str, Any]] = []
    kw: dict[str, Any] = {"ServiceCode": SERVICE_CODE, "QuotaCode": code}
    while True:
        resp = sq.list_requested_service_quota_change_history_by_quota(**kw)
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
