"""Google API errors as one readable reason: permission named, API disabled, throttled, unreachable.

Every failure becomes a sentence the quota report prints; none is swallowed into "ok".
"""

from __future__ import annotations

import re

from google.api_core import exceptions as gexc

# IAM permission each call needs, named in "permission denied" reasons when the server does not.
# Source: the "IAM Permissions" section of each method's REST reference,
# https://cloud.google.com/compute/docs/reference/rest/v1 (regions, projects, instances, disks,
# reservations), https://cloud.google.com/docs/quotas/reference/rest (quotaInfos,
# quotaPreferences) and https://cloud.google.com/service-usage/docs/reference/rest/v1/services/
# batchGet. The one home of the call -> permission map (docs/operations.md lists them, tested).
PERMISSION = {
    "regions.get": "compute.regions.get",
    "regions.list": "compute.regions.list",
    "projects.get": "compute.projects.get",
    "quotaInfos.get": "cloudquotas.quotas.get",
    "instances.aggregatedList": "compute.instances.list",
    "instances.list": "compute.instances.list",
    "disks.list": "compute.disks.list",
    "reservations.aggregatedList": "compute.reservations.list",
    "services.batchGet": "serviceusage.services.get",
    "quotaPreferences.get": "cloudquotas.quotas.get",
    "quotaPreferences.list": "cloudquotas.quotas.get",
    "quotaPreferences.create": "cloudquotas.quotas.update",
    "quotaPreferences.update": "cloudquotas.quotas.update",
}


# Using a quota project takes serviceusage.services.use on it ("To use a project as a quota
# project, the user needs the roles/serviceusage.serviceUsageConsumer IAM role, which contains the
# serviceusage.services.use permission, on that project", https://cloud.google.com/docs/quotas/
# set-quota-project): every call of this check sends one.
QUOTA_PROJECT_PERMISSION = "serviceusage.services.use"
# The project of gcloud's own OAuth client: the consumer Google names when user credentials
# carry no quota project (terraform-provider-google#18337: "consumer": "projects/764086051850").
GCLOUD_CLIENT_PROJECT = "projects/764086051850"


def transient(exc: BaseException) -> bool:
    # Cloud Quotas' default retry covers only 503; 429 storms and other 5xx are transient too.
    return isinstance(
        exc,
        gexc.TooManyRequests
        | gexc.InternalServerError
        | gexc.BadGateway
        | gexc.ServiceUnavailable
        | gexc.GatewayTimeout,
    )


def connection_cause(exc: BaseException) -> str | None:
    """The innermost reason of a connection failure (refused, DNS), ``None`` for other errors."""
    import requests  # google-auth's REST transport

    if not isinstance(exc, requests.exceptions.ConnectionError) or isinstance(
        exc, requests.exceptions.Timeout
    ):
        return None
    text = str(exc)
    m = re.search(r"\[Errno -?[0-9]+\] ([^'\")]+)", text)
    return m.group(1).strip() if m else text


def describe_error(exc: BaseException, call: str, project: str, endpoint: str = "") -> str:
    """One sentence for a failed Google call: permission, disabled API, throttling, timeout.

    A connection failure names the endpoint only (not the call), so that every row it hits
    carries the same reason and the report can print it once.
    """
    cause = connection_cause(exc)
    if cause is not None:
        return f"cannot connect to {endpoint or 'the Google API endpoint'}: {cause}"
    if isinstance(exc, gexc.RetryError):
        cause = exc.cause
        if isinstance(cause, gexc.TooManyRequests):
            return f"{call}: throttled (429) after retries"
        if cause is not None:
            return f"{call}: still failing after retries: {describe_error(cause, call, project)}"
        return f"{call}: timed out after retries"
    if isinstance(exc, gexc.GoogleAPICallError):
        reason = getattr(exc, "reason", None)
        meta = getattr(exc, "metadata", None) or {}
        if quota_project_missing(exc):
            svc = meta.get("service") or "the API"
            return (
                f"{call}: {svc} needs a quota project and the credentials carry none "
                "(application-default user credentials): run `gcloud auth application-default "
                f"set-quota-project {project}` or set GOOGLE_CLOUD_QUOTA_PROJECT={project}"
            )
        if reason == "USER_PROJECT_DENIED":
            return (
                f"{call}: permission denied: {QUOTA_PROJECT_PERMISSION} on the quota project "
                "(roles/serviceusage.serviceUsageConsumer; GOOGLE_CLOUD_QUOTA_PROJECT names "
                f"another one), project {project}"
            )
        if reason == "SERVICE_DISABLED":
            svc = meta.get("service") or "the API"
            return (
                f"{call}: API {svc} is disabled on project {project} "
                f"(gcloud services enable {svc} --project {project})"
            )
        if isinstance(exc, gexc.Forbidden | gexc.Unauthorized):
            perm = (
                meta.get("permission") or _permission_in(exc.message) or PERMISSION.get(call, call)
            )
            return f"{call}: permission denied: {perm} on project {project}"
        if isinstance(exc, gexc.TooManyRequests):
            return f"{call}: throttled (429) after retries"
        return f"{call}: HTTP {exc.code}: {exc.message}"
    text = type(exc).__name__
    if "Timeout" in text or "timed out" in str(exc):
        return f"{call}: timed out"
    return f"{call}: {text}: {exc}"


def quota_project_missing(exc: BaseException) -> bool:
    """Whether ``exc`` is Google's answer to a call whose credentials carry no quota project.

    It comes as reason SERVICE_DISABLED for gcloud's own project, not the stack's: "Your
    application is authenticating by using local Application Default Credentials. The
    cloudquotas.googleapis.com API requires a quota project, which is not set by default"
    (googleapis/google-auth-library-python#1459, GoogleCloudPlatform/cloud-foundation-fabric#2622;
    consumer projects/764086051850, hashicorp/terraform-provider-google#18337, #24500).
    """
    if not isinstance(exc, gexc.GoogleAPICallError):
        return False
    meta = getattr(exc, "metadata", None) or {}
    if getattr(exc, "reason", None) != "SERVICE_DISABLED":
        return False
    return "requires a quota project" in (exc.message or "") or (
        meta.get("consumer") == GCLOUD_CLIENT_PROJECT
    )


def _permission_in(message: str | None) -> str | None:
    m = re.search(
        r"'([a-z]+\.[a-zA-Z]+\.[a-zA-Z]+)' permission|permission '?([a-z]+\.[a-zA-Z.]+)",
        message or "",
    )
    return (m.group(1) or m.group(2)) if m else None
