"""quota.check's table at 80 columns: every row's quota, need, limit, usage and status on one line;
a reason every row shares printed once with what to do; colour only on a terminal."""

from __future__ import annotations

import io

import pytest

from quota.check import main
from quota.demand import DemandRow
from quota.keys import QuotaKey
from quota.report import Check, action_for, render

STATUSES = ("ok", "short", "unknown")


def _table(*args: str, columns: int = 80) -> list[str]:
    out = io.StringIO()
    main(list(args), out=out, err=io.StringIO())
    return out.getvalue().splitlines()


@pytest.mark.parametrize("stack", ["eks-g4dn", "gke-t4", "gke-a100-mig", "eks-hpc"])
def test_at_80_columns_every_row_line_fits_and_ends_with_its_status(stack, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    lines = _table("--stack", stack, "--offline")
    rows = [ln for ln in lines if ln.split(" ")[0] in ("global",) or ln[:2] in ("us", "eu")]
    assert rows, lines
    assert all(len(ln) <= 80 for ln in lines if not ln.startswith("  ")), lines
    assert all(ln.split()[-1] in STATUSES for ln in rows), rows


def test_eks_rows_show_the_quota_name_below_the_code(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    lines = _table("--stack", "eks-g4dn", "--offline")
    i = next(i for i, ln in enumerate(lines) if "L-DB2E81BA" in ln)
    assert lines[i].split()[-1] == "unknown"
    assert lines[i + 1].strip() == "Running On-Demand G and VT instances"


def _check(quota: str, reason: str) -> Check:
    key = QuotaKey("gcp", "region", "us-central1", quota, "GPUs", "compute")
    return Check(demand=DemandRow(key=key, name=quota, needed=1), reason=reason)


def test_an_error_every_row_shares_prints_once_with_the_action():
    why = "DefaultCredentialsError: Your default credentials were not found."
    checks = [_check("A", f"regions.get: {why}"), _check("B", f"projects.get: {why}")]
    out = io.StringIO()
    render("s", "gcp", checks, out, width=80, colour=False)
    text = out.getvalue()
    assert text.count("DefaultCredentialsError") == 1
    assert "gcloud auth application-default login" in text and "--offline" in text


def test_different_reasons_stay_on_their_rows():
    checks = [_check("A", "quota missing: no limit reported"), _check("B", "usage not available")]
    out = io.StringIO()
    render("s", "gcp", checks, out, width=80, colour=False)
    assert "every row" not in out.getvalue() and out.getvalue().count("    ") >= 2


def test_no_aws_credentials_suggest_a_profile_or_offline():
    assert "AWS_PROFILE" in action_for("GetServiceQuota: no AWS credentials")


def test_status_is_coloured_only_when_colour_is_on():
    checks = [_check("A", "x")]
    plain, coloured = io.StringIO(), io.StringIO()
    render("s", "gcp", checks, plain, width=80, colour=False)
    render("s", "gcp", checks, coloured, width=80, colour=True)
    assert "\033[" not in plain.getvalue() and "\033[33munknown" in coloured.getvalue()
