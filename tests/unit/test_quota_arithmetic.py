"""Verdicts, request sizes, JSON rows and exit codes (pure)."""

from __future__ import annotations

from quota.arithmetic import Reading, desired_value, verdict
from quota.demand import DemandRow, QuotaKey
from quota.report import Check, document, exit_code, offline_checks

KEY = QuotaKey("gcp", "region", "us-central1", "NVIDIA_T4_GPUS", "GPUs", "compute-region")
ROW = DemandRow(key=KEY, name="NVIDIA T4 GPUs", needed=21, pools=("gpu-t4: 1 x 21",))


def test_ok_needs_needed_within_limit_minus_usage() -> None:
    assert verdict(21, Reading(limit=24, usage=3))[0] == "ok"
    assert verdict(21, Reading(limit=24, usage=4))[0] == "short"


def test_unread_limit_is_unknown_never_ok() -> None:
    assert verdict(0, Reading())[0] == "unknown"
    assert verdict(1, Reading(error="regions.get: permission denied"))[0] == "unknown"


def test_minus_one_limit_is_unknown() -> None:
    assert verdict(1, Reading(limit=-1, usage=0))[0] == "unknown"


def test_missing_usage_proves_short_but_never_ok() -> None:
    assert verdict(24, Reading(limit=16, usage=None))[0] == "short"
    assert verdict(8, Reading(limit=16, usage=None))[0] == "unknown"


def test_desired_is_ceil_of_usage_plus_needed() -> None:
    assert desired_value(21, Reading(limit=8, usage=1.5)) == 23


def test_no_request_at_or_below_the_current_limit() -> None:
    assert desired_value(20, Reading(limit=24, usage=4)) is None  # exactly at the limit
    assert desired_value(4, Reading(limit=24, usage=4)) is None
    assert desired_value(4, Reading(limit=None)) is None
    assert desired_value(4, Reading(limit=-1)) is None


def test_json_row_has_the_contract_keys() -> None:
    c = Check.judged(ROW, Reading(limit=24.0, usage=3.0))
    doc = document("gke-t4", "gcp", [c])
    row = doc["checks"][0]
    assert set(row) >= {
        "scope",
        "region",
        "quota",
        "name",
        "unit",
        "needed",
        "limit",
        "usage",
        "status",
        "reason",
        "request",
    }
    assert (row["limit"], row["usage"], row["status"]) == (24, 3, "ok")
    assert doc["stack"] == "gke-t4" and doc["cloud"] == "gcp"


def test_fractional_values_never_overstate_headroom_in_json() -> None:
    c = Check.judged(ROW, Reading(limit=24.5, usage=2.5))
    assert (c.as_json()["limit"], c.as_json()["usage"]) == (24, 3)


def test_every_short_row_has_a_request_above_its_limit() -> None:
    for needed, reading in [
        (20, Reading(limit=24, usage=4.5)),
        (0, Reading(limit=4, usage=5)),
        (1, Reading(limit=23.5, usage=23)),
    ]:
        assert verdict(needed, reading)[0] == "short"
        want = desired_value(needed, reading)
        assert want is not None and reading.limit is not None and want > reading.limit


def test_unreadable_usage_is_still_short_when_the_demand_alone_exceeds_the_limit() -> None:
    assert verdict(25, Reading(limit=24, error="usage unreadable: x"))[0] == "short"
    assert verdict(24, Reading(limit=24, error="usage unreadable: x"))[0] == "unknown"


def test_no_request_is_sized_when_usage_is_unknown() -> None:
    # short from the limit alone; ceil(0 + needed) could be granted and still be short
    reading = Reading(limit=24)
    assert verdict(25, reading)[0] == "short"
    assert desired_value(25, reading) is None


def test_exit_codes_short_then_unknown_then_ok() -> None:
    ok = Check(demand=ROW, status="ok")
    short = Check(demand=ROW, status="short")
    unknown = Check(demand=ROW, status="unknown")
    assert exit_code([ok]) == 0
    assert exit_code([ok, unknown]) == 3
    assert exit_code([unknown, short]) == 1
    assert exit_code(offline_checks([ROW]), offline=True) == 0


def test_connection_failures_are_collapsed_even_beside_a_declared_shapes_unknown_rows():
    from quota.demand import DemandRow
    from quota.keys import QuotaKey, unmapped_key, unmapped_reason
    from quota.report import Check, collapse_connection_failures

    down = "cannot connect to http://127.0.0.1:9: refused"
    read = QuotaKey("gcp", "region", "us-central1", "CPUS", "vCPUs", "compute-region")
    never = unmapped_key("gcp", "us-central1", "nvidia-b300", "GPUs")
    checks = [
        Check(demand=DemandRow(key=read, name="CPUs", needed=8), reason=down),
        Check(demand=DemandRow(key=never, name="b300", needed=8), reason=unmapped_reason(never)),
    ]
    assert collapse_connection_failures(checks) == [down]
    assert checks[1].reason == unmapped_reason(never)  # its own reason, not "unreachable"
