"""The permissions page names every API call the quota clients make, on both clouds."""

from __future__ import annotations

import re
from pathlib import Path

from quota.clients.gcp_errors import PERMISSION, QUOTA_PROJECT_PERMISSION

ROOT = Path(__file__).resolve().parents[2]
CLIENTS = ROOT / "quota" / "clients"
_SERVICE = {"sq": "servicequotas", "ec2": "ec2", "eks": "eks", "sts": "sts", "iam": "iam"}


def _aws_calls() -> set[str]:
    """``service:Operation`` of every client call in quota/clients/aws*.py (direct calls and
    paginators), read from the source, not from the module's own permission map."""
    src = "\n".join(p.read_text() for p in sorted(CLIENTS.glob("aws*.py")))
    found: set[tuple[str, str]] = set()
    for client, method in re.findall(r"\b(?:self\.)?(sq|ec2|eks|sts|iam)\.([a-z_]+)\(", src):
        if method != "get_paginator":
            found.add((client, method))
    for client, op in re.findall(
        r"\b(?:self\.)?(sq|ec2|eks)\.get_paginator\(\s*\"([a-z_]+)\"", src
    ):
        found.add((client, op))
    for name in re.findall(r"self\._client\(\"([a-z]+)\"\)\.([a-z_]+)\(", src):
        found.add(name)
    return {f"{_SERVICE[c]}:{''.join(w.title() for w in m.split('_'))}" for c, m in found}


# The REST method each google-cloud-* client method calls (the client libraries' method names for
# https://cloud.google.com/compute/docs/reference/rest/v1, .../docs/quotas/reference/rest and
# .../service-usage/docs/reference/rest).
_GCP_REST = {
    ("regions", "get"): "regions.get",
    ("regions", "list"): "regions.list",
    ("projects", "get"): "projects.get",
    ("instances", "list"): "instances.list",
    ("instances", "aggregated_list"): "instances.aggregatedList",
    ("disks", "list"): "disks.list",
    ("reservations", "aggregated_list"): "reservations.aggregatedList",
    ("quotas", "get_quota_info"): "quotaInfos.get",
    ("quotas", "list_quota_preferences"): "quotaPreferences.list",
    ("quotas", "create_quota_preference"): "quotaPreferences.create",
    ("quotas", "update_quota_preference"): "quotaPreferences.update",
    ("usage", "batch_get_services"): "services.batchGet",
}


def _gcp_calls() -> set[str]:
    """The REST methods quota/clients/gcp*.py call (``self.<client>().<method>``)."""
    src = "\n".join(p.read_text() for p in sorted(CLIENTS.glob("gcp*.py")))
    found = set(re.findall(r"\b(?:self|svc)\.([a-z]+)\(\)\.([a-z_]+)\b", src))
    unknown = found - set(_GCP_REST)
    assert not unknown, f"map these client methods to their REST method: {sorted(unknown)}"
    return {_GCP_REST[f] for f in found}


def _quota_sections() -> str:
    """The text of the permissions page's ``quota.check`` sections (read, request)."""
    page = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
    parts = page.split("\n### ")
    return "\n".join(p for p in parts if p.startswith("`quota.check"))


def test_quota_permissions_list_every_aws_call_the_client_makes() -> None:
    calls = _aws_calls()
    # AWS spells these with an acronym the snake_case name loses
    calls = {c.replace("GetAwsDefault", "GetAWSDefault") for c in calls}
    assert {"ec2:DescribeCapacityReservations", "eks:ListNodegroups", "iam:GetRole"} <= calls
    sections = _quota_sections()
    assert sections, "docs/operations.md has no quota.check permission sections"
    missing = sorted(c for c in calls if f"`{c}`" not in sections)
    assert not missing, f"docs/operations.md quota permissions lack {missing}"


def test_aws_requests_name_the_service_linked_role_service_quotas_creates() -> None:
    # the first request makes Service Quotas create AWSServiceRoleForServiceQuotas as the caller
    # (ServiceQuotasFullAccess grants iam:CreateServiceLinkedRole for it)
    request = _quota_sections().split("`quota.check --request`", 1)[1]
    assert "`iam:CreateServiceLinkedRole`" in request and "servicequotas.amazonaws.com" in request


def test_quota_permissions_list_every_gcp_permission_the_clients_calls_need() -> None:
    calls = _gcp_calls()
    assert {"disks.list", "instances.list", "reservations.aggregatedList"} <= calls
    sections = _quota_sections()
    needed = {PERMISSION[c] for c in calls} | {QUOTA_PROJECT_PERMISSION}
    missing = sorted(p for p in needed if f"`{p}`" not in sections)
    assert not missing, f"docs/operations.md quota permissions lack {missing}"
