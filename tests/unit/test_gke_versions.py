"""GKE's support calendar: a minor past its end of support exits 2 naming minMasterVersion and
the day, judged on max(the schedule's reading, today).

Expected dates are the GKE release schedule's (https://cloud.google.com/kubernetes-engine/docs/
release-schedule, as transcribed in gke_standard_support.csv) and GKE's 24-month rule for the
Extended channel (https://cloud.google.com/kubernetes-engine/versioning).
"""

from __future__ import annotations

import pytest

from infra.core.catalog.gke_versions import extended_support_ends, gke_support
from infra.core.catalog.vendored import DATA_DIR
from infra.core.config.stack import parse
from infra.core.errors import ConfigErrors
from infra.core.plan import build_plan
from tests.conftest import gke_config


def _refusal(version: str, channel: str = "REGULAR") -> str | None:
    raw = gke_config()
    raw["gpu-infra:cluster"] = {
        **raw["gpu-infra:cluster"],
        "minMasterVersion": version,
        "releaseChannel": channel,
    }
    try:
        build_plan(parse(raw, "t"))
    except ConfigErrors as e:
        return next((i.reason for i in e.issues if i.path == "cluster.minMasterVersion"), None)
    return None


# (today, minMasterVersion, channel, the end-of-support day named, or None: accepted)
CALENDAR = [
    ("2026-07-01", "1.33", "REGULAR", None),
    ("2026-08-03", "1.33", "REGULAR", "2026-08-03"),  # the day standard support ends
    ("2026-08-02", "1.33.2-gke.1240000", "REGULAR", None),
    ("2026-12-07", "1.34", "RAPID", "2026-10-01"),
    ("2026-12-07", "1.35", "STABLE", None),
    ("2026-12-07", "1.36", "REGULAR", None),  # newer than the schedule: no known date
    ("2026-12-07", "1.23", "REGULAR", "older"),  # older than every row
    ("2026-12-07", "1.34", "EXTENDED", None),  # Extended: 2025-09-30 + 24 months
    ("2027-09-30", "1.34", "EXTENDED", "2027-09-30"),
    ("2026-12-07", "latest", "REGULAR", None),
]


@pytest.mark.parametrize(("today", "version", "channel", "ended"), CALENDAR)
def test_a_minor_past_its_gke_support_exits_2_naming_min_master_version_and_the_day(
    monkeypatch, today, version, channel, ended
):
    monkeypatch.setenv("GPU_INFRA_TODAY", today)
    reason = _refusal(version, channel)
    if ended is None:
        assert reason is None, reason
    else:
        assert reason is not None and ended in reason and f"supported as of {today}" in reason


def test_the_support_rule_never_judges_before_the_schedule_was_read(monkeypatch):
    monkeypatch.setenv("GPU_INFRA_TODAY", "2020-01-01")
    reason = _refusal("1.31")  # standard support ended 2026-01-16, before the reading
    assert reason is not None and "supported as of 2026-02-19" in reason


def test_extended_support_ends_24_months_after_regular_availability():
    assert extended_support_ends(gke_support(DATA_DIR)["1.34"][0]) == "2027-09-30"
    assert extended_support_ends("2024-02-29") == "2026-02-28"  # no 29 February in 2026


def test_every_row_ends_standard_support_after_its_regular_availability():
    for version, (regular, standard) in gke_support(DATA_DIR).items():
        assert regular < standard <= extended_support_ends(regular), version
