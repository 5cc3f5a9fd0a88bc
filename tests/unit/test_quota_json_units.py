"""The quota docs name every row unit a quota.check row may carry, so strict consumers can filter
(docs/quota.md in full, and the README lists them, as the outside contract says)."""

from __future__ import annotations

import typing
from pathlib import Path

from quota.keys import Unit
from quota.report import role_check

ROOT = Path(__file__).resolve().parents[2]


def test_quota_docs_name_every_unit_a_quota_row_may_carry_and_the_role_row_as_a_prerequisite():
    page = (ROOT / "docs" / "quota.md").read_text(encoding="utf-8")
    start = page.index("A row's `unit` is what it counts")
    section = page[start : page.index("\n\n", start)]
    assert all(f"`{u}`" in section for u in typing.get_args(Unit))
    assert "`AWSServiceRoleForEC2Spot`" in section and "prerequisite check" in section


def test_readme_lists_every_unit_a_quota_row_may_carry():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("a row's `unit` is")
    line = readme[start : readme.index("\n- ", start)]
    assert all(f"`{u}`" in line for u in typing.get_args(Unit))


def test_a_role_row_is_unit_role_with_no_limit_and_no_request():
    row = role_check("aws", "AWSServiceRoleForEC2Spot", "spot pools", ("ok", "exists")).as_json()
    assert row["unit"] == "role" and row["quota"] == "AWSServiceRoleForEC2Spot"
    assert row["limit"] is None and row["request"] is None
