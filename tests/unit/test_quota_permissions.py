"""The README's permission table names every AWS API call the quota client makes."""

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


def _quota_rows() -> str:
    readme = (ROOT / "README.md").read_text()
    return "\n".join(line for line in readme.splitlines() if line.startswith("| `quota.check"))


def test_readme_quota_permission_table_lists_every_aws_call_the_client_makes() -> None:
    calls = _calls()
    # AWS spells these with an acronym the snake_case name loses
    calls = {c.replace("GetAwsDefault", "GetAWSDefault") for c in calls}
    assert {"ec2:DescribeCapacityReservations", "eks:ListNodegroups"} <= calls
    rows = _quota_rows()
    missing = sorted(c for c in calls if f"`{c}`" not in rows)
    assert not missing, f"README quota permission table lacks {missing}"
