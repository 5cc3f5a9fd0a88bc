"""GKE's "at least 48 hours of maintenance availability in a 32-day rolling window" for every
RRULE form the API takes (https://cloud.google.com/kubernetes-engine/docs/how-to/
maintenance-windows-and-exclusions; RRULE: RFC 5545 section 3.3.10).

Expected hours are calendar arithmetic on the rule itself (a period P with one W-hour window
gives floor-or-more 32 days / P windows), never read back from the expansion.
"""

from __future__ import annotations

import datetime as dt

import pytest

from infra.core.gke.maintenance import min_hours_per_32_days
from tests.unit.gke_fixtures import window_errors

SAT = dt.datetime(2026, 1, 3, tzinfo=dt.UTC)  # a Saturday, and the first Saturday of its month
FIRST = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def _h(hours: float) -> dt.timedelta:
    return dt.timedelta(hours=hours)


# (rule, first window start, hours, fewest hours in any 32 days)
EXACT = [
    ("FREQ=DAILY", SAT, 4, 32 * 4),  # 32 whole days, one window each
    ("FREQ=DAILY;INTERVAL=2", SAT, 8, 16 * 8),  # 32 days are 16 periods exactly
    ("FREQ=DAILY;INTERVAL=7", SAT, 8, 4 * 8),  # 4 weeks + 4 days: 4 windows at least
    ("FREQ=WEEKLY;BYDAY=SA", SAT, 8, 4 * 8),
    ("FREQ=WEEKLY", SAT, 8, 4 * 8),  # BYDAY defaults to the first window's weekday
    ("FREQ=WEEKLY;INTERVAL=2;BYDAY=SA,SU", SAT, 8, 2 * 2 * 8),  # 2 fortnights + 4 days
    ("FREQ=DAILY;BYDAY=SA,SU", SAT, 8, 4 * 2 * 8),
]


@pytest.mark.parametrize(("rule", "start", "hours", "want"), EXACT)
def test_fewest_hours_in_32_days_is_the_calendars(rule, start, hours, want):
    assert min_hours_per_32_days(start, start + _h(hours), rule) == want


# (rule, first window start, hours, GKE accepts it)
RULES = [
    ("FREQ=WEEKLY;BYDAY=SA,SU", SAT, 8, True),  # the default: 4 weekends, 64 h
    ("FREQ=WEEKLY;BYDAY=SA", SAT, 8, False),  # 32 h
    ("FREQ=WEEKLY;BYDAY=SA", SAT, 12, True),  # 48 h
    ("FREQ=DAILY;INTERVAL=7", SAT, 8, False),
    ("FREQ=DAILY;INTERVAL=3", SAT, 4, False),  # 10 windows at least: 40 h (test below)
    ("FREQ=DAILY;INTERVAL=3", SAT, 5, True),  # 50 h
    ("FREQ=WEEKLY;INTERVAL=2;BYDAY=SA,SU", SAT, 8, False),
    ("FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,TU,WE,TH,FR,SA,SU", SAT, 8, True),
    ("FREQ=MONTHLY;BYDAY=1SA", SAT, 24, False),  # first Saturdays 28 or 35 days apart
    ("FREQ=MONTHLY;BYDAY=1SA,-1SU", SAT, 24, False),
    ("FREQ=MONTHLY;BYMONTHDAY=1", FIRST, 24, False),
    ("FREQ=MONTHLY;BYMONTHDAY=1", FIRST, 72, True),  # at most 31 days between the 1sts
    ("FREQ=MONTHLY", FIRST, 72, True),  # BYMONTHDAY defaults to the first window's day
    ("FREQ=DAILY;COUNT=10", SAT, 8, False),  # after the tenth window: none
    ("FREQ=DAILY;UNTIL=20260301T000000Z", SAT, 8, False),
]


@pytest.mark.parametrize(("rule", "start", "hours", "ok"), RULES)
def test_every_rrule_form_is_held_to_48_hours_in_every_32_days(rule, start, hours, ok):
    got = min_hours_per_32_days(start, start + _h(hours), rule)
    assert got is not None and (got >= 48) == ok, got


def test_daily_interval_3_with_4_hours_is_40_hours_so_refused():
    # 32 days hold 10 whole 3-day periods and 2 days: at least 10 windows of 4 h, 40 h < 48.
    assert min_hours_per_32_days(SAT, SAT + _h(4), "FREQ=DAILY;INTERVAL=3") == 40


def test_a_rule_part_not_expanded_is_a_note_not_an_error():
    assert min_hours_per_32_days(SAT, SAT + _h(8), "FREQ=MONTHLY;BYDAY=SA;BYSETPOS=1") is None


def test_a_monthly_window_too_short_exits_2_at_the_recurrence():
    reason = window_errors("2026-01-03T00:00:00Z", "2026-01-04T00:00:00Z", "FREQ=MONTHLY;BYDAY=1SA")
    assert "in every 32-day rolling window" in reason["cluster.maintenance.window.recurrence"]
