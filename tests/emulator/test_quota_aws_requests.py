"""quota.check --request on EKS stacks: an increase filed once, never while one is pending, and
not again after a refusal of as much or less (the Service Quotas change history).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.emulator import quota_aws_fixtures
from tests.emulator.quota_aws_fixtures import G, R, run
from tests.emulator.quota_cli import row
from tests.fakes import aws as a

pytestmark = pytest.mark.emulator

# Fixtures this module shares with its siblings (quota_aws_fixtures).
env = quota_aws_fixtures.env
probe = quota_aws_fixtures.probe


def test_request_filed_once_when_run_twice(env: dict[str, Any]) -> None:
    env["sq"].applied[(R, G)] = 32.0
    code, doc = run("--request")
    req = row(doc, G)["request"]
    assert code == 1 and req["action"] == "created" and req["desired"] == 104
    assert req["caseId"] == "case-1"
    code, doc = run("--request")
    again = row(doc, G)["request"]
    assert again["action"] == "pending" and again["caseId"] == "case-1"
    assert env["sq"].calls["RequestServiceQuotaIncrease"] == 1


def test_no_request_while_one_is_pending(env: dict[str, Any]) -> None:
    _history(env["sq"], "PENDING", 48.0, case_id="case-77")
    _, doc = run("--request")
    req = row(doc, G)["request"]
    assert req["action"] == "pending" and req["caseId"] == "case-77"
    assert env["sq"].calls["RequestServiceQuotaIncrease"] == 0


def test_no_request_for_rows_within_the_limit(env: dict[str, Any]) -> None:
    code, doc = run("--request")
    assert code == 0 and all(c["request"] is None for c in doc["checks"])
    assert env["sq"].calls["ListRequestedServiceQuotaChangeHistoryByQuota"] == 0


def test_partial_grant_is_reported_and_not_refiled(env: dict[str, Any]) -> None:
    env["sq"].applied[(R, G)] = 32.0
    env["sq"].policy = ("partial", 64)
    run("--request")
    code, doc = run("--request")
    g = row(doc, G)
    assert code == 1 and g["limit"] == 64 and g["status"] == "short"
    assert g["request"]["action"] == "partially-granted" and g["request"]["requested"] == 104
    assert env["sq"].calls["RequestServiceQuotaIncrease"] == 1


def test_denied_request_for_the_same_value_is_reported_and_force_files_anew(
    env: dict[str, Any],
) -> None:
    sq: a.FakeServiceQuotas = env["sq"]
    _history(sq, "DENIED", 104.0, case_id="case-9")
    code, doc = run("--request")
    req = row(doc, G)["request"]
    assert code == 1 and (req["action"], req["caseId"]) == ("denied", "case-9")
    assert sq.calls["RequestServiceQuotaIncrease"] == 0
    _, doc = run("--request", "--force")
    assert row(doc, G)["request"]["action"] == "created"
    assert sq.calls["RequestServiceQuotaIncrease"] == 1


def _past(
    request_id: str, case_id: str, desired: float, status: str, created: int
) -> dict[str, Any]:
    """One earlier request for the GPU quota as the change history lists it (Service Quotas API
    RequestedServiceQuotaChange: Id, CaseId, QuotaCode, DesiredValue, Status, Created)."""
    return {
        "Id": request_id,
        "CaseId": case_id,
        "QuotaCode": G,
        "DesiredValue": desired,
        "Status": status,
        "Created": created,
    }


def _history(sq: a.FakeServiceQuotas, status: str, desired: float, case_id: str = "case-5") -> None:
    """The GPU quota applied at 32 with one earlier request (``status``) for ``desired``."""
    sq.applied[(R, G)] = 32.0
    sq.history[(R, G)] = [_past("old", case_id, desired, status, 1)]


@pytest.mark.parametrize("status", ["DENIED", "NOT_APPROVED"])
def test_refusal_of_a_smaller_request_blocks_asking_for_more(
    env: dict[str, Any], status: str
) -> None:
    _history(env["sq"], status, 64.0)  # refused 64; this run wants 104
    _, doc = run("--request")
    req = row(doc, G)["request"]
    assert (req["action"], req["caseId"]) == ("denied", "case-5")
    assert env["sq"].calls["RequestServiceQuotaIncrease"] == 0


def test_refusal_of_a_larger_request_does_not_block_a_smaller_one(env: dict[str, Any]) -> None:
    _history(env["sq"], "DENIED", 500.0)
    _, doc = run("--request")
    assert row(doc, G)["request"]["action"] == "created"


@pytest.mark.parametrize("status", ["CASE_CLOSED", "INVALID_REQUEST"])
def test_case_closed_and_invalid_request_are_not_refusals(env: dict[str, Any], status: str) -> None:
    _history(env["sq"], status, 104.0)
    _, doc = run("--request")
    assert row(doc, G)["request"]["action"] == "created"


def test_denied_then_approved_history_files_a_new_request(env: dict[str, Any]) -> None:
    sq: a.FakeServiceQuotas = env["sq"]
    sq.applied[(R, G)] = 64.0  # the later approval applied 64
    sq.history[(R, G)] = [
        _past("r1", "case-1", 104.0, "DENIED", 1),
        _past("r2", "case-2", 64.0, "APPROVED", 2),
    ]
    code, doc = run("--request")
    req = row(doc, G)["request"]
    assert code == 1 and req["action"] == "created" and req["desired"] == 104
    assert any("case-1" in c and "later approved" in c for c in req["context"])
    assert sq.calls["RequestServiceQuotaIncrease"] == 1


def test_refusal_at_or_below_the_applied_value_does_not_block(env: dict[str, Any]) -> None:
    sq: a.FakeServiceQuotas = env["sq"]
    sq.applied[(R, G)] = 96.0  # raised since (say by AWS itself) past the refused 80
    sq.history[(R, G)] = [
        _past("r1", "case-3", 80.0, "DENIED", 5),
    ]
    _, doc = run("--request")
    req = row(doc, G)["request"]
    assert req["action"] == "created" and "applied value" in req["context"][0]


def test_refusal_after_the_latest_approval_still_blocks(env: dict[str, Any]) -> None:
    sq: a.FakeServiceQuotas = env["sq"]
    sq.applied[(R, G)] = 64.0
    sq.history[(R, G)] = [
        _past("r1", "case-1", 64.0, "APPROVED", 1),
        _past("r2", "case-2", 104.0, "DENIED", 2),
    ]
    _, doc = run("--request")
    req = row(doc, G)["request"]
    assert (req["action"], req["caseId"]) == ("denied", "case-2")
    assert env["sq"].calls["RequestServiceQuotaIncrease"] == 0


def test_an_open_request_for_less_reads_pending_for_less_and_says_file_again_after_it_settles(
    env: dict[str, Any],
) -> None:
    from quota.report import _request_text

    _history(env["sq"], "PENDING", 48.0, case_id="case-77")
    _, doc = run("--request")
    req = row(doc, G)["request"]
    assert _request_text(req).startswith("pending for 48 (needs 104)")
    assert _request_text(req).endswith("; file again for 104 after it settles")
