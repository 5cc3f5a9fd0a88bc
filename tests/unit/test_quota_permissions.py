"""The permissions page names every AWS API call the quota client makes."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_SERVICE = {"sq": "servicequotas", "ec2": "ec2", "eks": "eks", "sts": "sts"}


def _calls() -> set[str]:
    """``service:Operation`` of every client call in quota/clients/aws.py (direct calls and
    paginators), read from the source, not from the module's own permission map."""
    src = (ROOT / "quota" / "clients" / "aws.py").read_text()
    found: set[tuple[str, str]] = set()
    for client, method in re.findall(r"\b(?:self\.)?(sq|ec2|eks|sts)\.([a-z_]+)\(", src):
        if method != "get_paginator":
            found.add((client, method))
    for client, op in re.findall(
        r"\b(?:self\.)?(sq|ec2|eks)\.get_paginator\(\s*\"([a-z_]+)\"", src
    ):
        found.add((client, op))
    return {f"{_SERVICE[c]}:{''.join(w.title() for w in m.split('_'))}" for c, m in found}


def _quota_sections() -> str:
    """The text of the permissions page's ``quota.check`` sections (read, request)."""
    page = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
    parts = page.split("\n### ")
    return "\n".join(p for p in parts if p.startswith("`quota.check"))


def test_quota_permissions_list_every_aws_call_the_client_makes() -> None:
    calls = _calls()
    # AWS spells these with an acronym the snake_case name loses
    calls = {c.replace("GetAwsDefault", "GetAWSDefault") for c in calls}
    assert {"ec2:DescribeCapacityReservations", "eks:ListNodegroups"} <= calls
    sections = _quota_sections()
    assert sections, "docs/operations.md has no quota.check permission sections"
    missing = sorted(c for c in calls if f"`{c}`" not in sections)
    assert not missing, f"docs/operations.md quota permissions lack {missing}"
