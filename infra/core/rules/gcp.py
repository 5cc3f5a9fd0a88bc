"""Field rules for Google Cloud values: project IDs, GCE labels/names, GKE versions, machine types, networks."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from infra.core.errors import RuleError, did_you_mean, shown
from infra.core.rules._common import _RE_RFC1035_LABEL, _full, _matching
from infra.core.rules.limits import limit

# --- Google Cloud -------------------------------------------------------------------------------
# Project IDs: 6-30 lowercase letters, digits, hyphens; start with a letter, not end with a hyphen
# (https://cloud.google.com/resource-manager/docs/creating-managing-projects#before_you_begin);
# legacy domain-scoped IDs are "example.com:my-project".
_GCP_PROJECT_ID = r"[a-z][-a-z0-9]{4,28}[a-z0-9]"
_RE_GCP_PROJECT = _full(rf"(?:[a-z0-9][-a-z0-9.]*[a-z0-9]:)?{_GCP_PROJECT_ID}")


def check_gcp_project_id(v: Any) -> str:
    """A GCP project ID (not its display name or number)."""
    if not isinstance(v, str) or not _RE_GCP_PROJECT.fullmatch(v):
        raise ValueError(
            f"{shown(v)} is not a project ID: 6-30 lowercase letters, digits and '-', starting "
            "with a letter (the ID, not the display name)"
        )
    return v


# GCE labels: keys 1-63 of [a-z0-9_-] starting with a letter, values 0-63 of [a-z0-9_-]
# (https://cloud.google.com/compute/docs/labeling-resources#requirements; international letters
# are also allowed there and accepted here).
_GCE_LABEL_KEY_MAX, _GCE_LABEL_VALUE_MAX = limit("gce.label_key"), limit("gce.label_value")
_RE_GCE_LABEL_KEY = re.compile(rf"^[^\W\d_][\w-]{{0,{_GCE_LABEL_KEY_MAX - 1}}}$")
_RE_GCE_LABEL_VALUE = re.compile(rf"^[\w-]{{0,{_GCE_LABEL_VALUE_MAX}}}$")


def check_gce_labels(v: Mapping[str, str]) -> Mapping[str, str]:
    """GCE resource labels: lowercase keys and values, at most 64 labels."""
    if len(v) > (most := limit("gce.labels_per_resource")):
        raise ValueError(f"{len(v)} labels; GCE allows at most {most} per resource")
    for key, value in v.items():
        if not _RE_GCE_LABEL_KEY.fullmatch(key) or key != key.lower():
            raise RuleError(
                f"{shown(key)} is not a GCE label key: 1-{_GCE_LABEL_KEY_MAX} lowercase "
                "letters, digits, '_' or '-', starting with a letter",
                at=(key,),
            )
        if not _RE_GCE_LABEL_VALUE.fullmatch(value) or value != value.lower():
            raise RuleError(
                f"{shown(value)} is not a GCE label value: at most {_GCE_LABEL_VALUE_MAX} "
                "lowercase letters, digits, '_' or '-'",
                at=(key,),
            )
    return v


check_gce_resource_name = _matching(
    "check_gce_resource_name",
    _RE_RFC1035_LABEL,
    "is not a GCE resource name: lowercase letters, digits and '-', starting with a letter, "
    "at most 63 characters",
    max_len=limit("gce.resource_name"),
    doc="A GCE resource name (RFC 1035 label, at most 63): reservations, networks, subnetworks.",
)


def check_reservation_name(v: str) -> str:
    """A reservation: its name, or ``projects/P/reservations/NAME`` for a shared one.

    Source: GKE consuming reservations (https://cloud.google.com/kubernetes-engine/docs/how-to/consuming-reservations).
    """
    parts = v.split("/")
    if len(parts) == 4 and parts[0] == "projects" and parts[2] == "reservations":
        check_gcp_project_id(parts[1])
        check_gce_resource_name(parts[3])
        return v
    return check_gce_resource_name(v)


# GKE version aliases: "latest", "1.X", "1.X.Y", "1.X.Y-gke.N", "-" (container v1 API,
# UpdateMasterRequest.masterVersion / Cluster.initialClusterVersion).
_RE_GKE_VERSION = re.compile(r"^(latest|-|[1-9][0-9]*\.[0-9]+(\.[0-9]+(-gke\.[0-9]+)?)?)$")


check_gke_version = _matching(
    "check_gke_version",
    _RE_GKE_VERSION,
    "is not a GKE version: latest, 1.X, 1.X.Y or 1.X.Y-gke.N (e.g. 1.33)",
    doc="A GKE version or alias: ``latest``, ``1.33``, ``1.33.5``, ``1.33.5-gke.1``.",
)


# GCE machine type names: family-type-vCPUs, e.g. e2-standard-4, n2-highmem-8, c3-standard-4-lssd
# (https://cloud.google.com/compute/docs/machine-resource); e2 shared-core: e2-micro/-small/-medium.
_RE_GCE_MACHINE = re.compile(
    r"^(?:[a-z][a-z0-9]*-(?:standard|highmem|highcpu|megagpu|ultragpu|highgpu|edgegpu|ultramem|"
    r"megamem|hypermem|custom)(?:-[0-9]+)?(?:-[a-z0-9]+)*|e2-(?:micro|small|medium)|"
    r"[fg]1-(?:micro|small)|(?:[a-z][a-z0-9]*-)?custom-[0-9]+-[0-9]+(?:-ext)?)$"
)


check_gce_machine_type = _matching(
    "check_gce_machine_type",
    _RE_GCE_MACHINE,
    "is not a GCE machine type such as e2-standard-4 or n2-highmem-8 (family-type-vCPUs)",
    doc="A GCE machine type name (family-type-vCPUs).",
)


# GKE Cluster.name: up to 40 lowercase letters, digits and '-', starting with a letter, ending with
# a letter or digit (google.cloud.container_v1.types.Cluster.name).
def _gke_name(most: int) -> re.Pattern[str]:
    return _full(rf"[a-z](?:[-a-z0-9]{{0,{most - 2}}}[a-z0-9])?")


_GKE_CLUSTER_MAX, _GKE_POOL_MAX = limit("gke.cluster_name"), limit("gke.node_pool_name")
_RE_GKE_CLUSTER = _gke_name(_GKE_CLUSTER_MAX)


check_gke_cluster_name = _matching(
    "check_gke_cluster_name",
    _RE_GKE_CLUSTER,
    "is not a GKE cluster name: lowercase letters, digits and '-', starting with a letter, "
    f"ending with a letter or digit, at most {_GKE_CLUSTER_MAX} characters",
    doc="A GKE cluster name (container v1 ``Cluster.name``).",
)


# GKE NodePool.name, the same grammar; the API's refusal reads "Invalid value for field
# "node_pool.name": ... Must be a match of regex '(?:[a-z](?:[-a-z0-9]{0,38}[a-z0-9])?)' (... no
# longer than 40 characters)" (https://github.com/pulumi/pulumi-gcp/issues/1510). EKS node-group
# names (at most 63 letters, digits, '-', '_', starting alphanumeric: aws.eks.NodeGroup
# nodeGroupName, https://www.pulumi.com/registry/packages/aws/api-docs/eks/nodegroup/) take every
# such name, so it is every platform's pool-name rule.
check_pool_name = _matching(
    "check_pool_name",
    _gke_name(_GKE_POOL_MAX),
    "must be lowercase letters, digits and '-', start with a letter, end with a letter or digit, "
    f"at most {_GKE_POOL_MAX} characters",
    doc="A GPU pool name: GKE's node-pool rule, which EKS node groups also accept.",
)


# GKE Cluster.network / subnetwork: a name, or the resource path of a (Shared VPC) network
# (container v1 Cluster.network "the name of the Google Compute Engine network"; resource paths
# projects/P/global/networks/N, projects/P/regions/R/subnetworks/N:
# https://cloud.google.com/compute/docs/naming-resources).
_RE_GCE_NETWORK_PATH = _full(rf"projects/{_GCP_PROJECT_ID}/global/networks/([^/]+)")
_RE_GCE_SUBNETWORK_PATH = _full(
    rf"projects/{_GCP_PROJECT_ID}/regions/[a-z]+-[a-z]+[0-9]+/subnetworks/([^/]+)"
)


def _gce_name_or_path(v: str, path: re.Pattern[str], what: str, form: str) -> str:
    """An RFC 1035 name, or the resource path ``path`` whose last segment is one."""
    m = path.fullmatch(v)
    try:
        check_gce_resource_name(m.group(1) if m else v)
    except ValueError:
        raise ValueError(
            f"{shown(v)} is not a {what}: an RFC 1035 name (lowercase, starting with a letter, "
            f"at most 63) or {form}"
        ) from None
    return v


def check_gce_network(v: str) -> str:
    """A VPC network: RFC 1035 name or ``projects/P/global/networks/N``."""
    return _gce_name_or_path(
        v, _RE_GCE_NETWORK_PATH, "network", "projects/PROJECT/global/networks/NAME"
    )


def check_gce_subnetwork(v: str) -> str:
    """A subnetwork: RFC 1035 name or ``projects/P/regions/R/subnetworks/N``."""
    return _gce_name_or_path(
        v, _RE_GCE_SUBNETWORK_PATH, "subnetwork", "projects/PROJECT/regions/REGION/subnetworks/NAME"
    )


# IAM CreateServiceAccountRequest.account_id: "must be 6-30 characters long, and match the regular
# expression [a-z]([-a-z0-9]*[a-z0-9])" (IAM admin API v1). A user-managed account's email is
# ACCOUNT_ID@PROJECT_ID.iam.gserviceaccount.com
# (https://cloud.google.com/iam/docs/service-account-overview#user-managed). The Compute Engine
# default account (PROJECT_NUMBER-compute@developer.gserviceaccount.com) holds Editor; GKE's
# hardening guide says to run nodes as a least-privilege account instead
# (https://cloud.google.com/kubernetes-engine/docs/how-to/hardening-your-cluster#use_least_privilege_sa).
GCP_SERVICE_ACCOUNT_ID = r"[a-z][-a-z0-9]{4,28}[a-z0-9]"
# "Each Local SSD disk is 375 GiB" (https://cloud.google.com/compute/docs/disks/local-ssd): what a
# local_ssd_count bills and draws on the Local SSD quota.
LOCAL_SSD_GB = 375
_RE_GCP_SA_EMAIL = _full(
    rf"{GCP_SERVICE_ACCOUNT_ID}@{_GCP_PROJECT_ID}(?:\.[a-z0-9][-a-z0-9.]*[a-z0-9])?"
    r"\.iam\.gserviceaccount\.com"
)


def check_gcp_service_account_email(v: str) -> str:
    """A user-managed service account's email (never the Compute Engine default account)."""
    if _RE_GCP_SA_EMAIL.fullmatch(v):
        return v
    why = (
        "the Compute Engine default account holds Editor; run nodes as a least-privilege account"
        if v.endswith("-compute@developer.gserviceaccount.com")
        else "expected ACCOUNT_ID@PROJECT_ID.iam.gserviceaccount.com"
    )
    raise ValueError(f"{shown(v)} is not a user-managed service account: {why}")


# Maintenance recurrence: an RFC 5545 RRULE (GKE MaintenanceWindow.recurringWindow.recurrence),
# FREQ first, KEY=VALUE parts separated by ';', one line.
_RE_RRULE = _full(r"FREQ=(?:DAILY|WEEKLY|MONTHLY)(?:;[A-Z]+=[A-Z0-9,+:-]+)*")


check_rrule = _matching(
    "check_rrule",
    _RE_RRULE,
    "is not an RFC 5545 RRULE such as FREQ=WEEKLY;BYDAY=SA,SU "
    "(FREQ=DAILY|WEEKLY|MONTHLY, then ;KEY=VALUE parts)",
    max_len=512,
    doc="A GKE maintenance recurrence such as ``FREQ=WEEKLY;BYDAY=SA,SU``.",
)


# --- GPU names as consoles write them -----------------------------------------------------------
def gpu_type_hint(value: object, known: list[str] | tuple[str, ...]) -> str:
    """``"; did you mean 'nvidia-tesla-t4'?"`` for console wording (``NVIDIA T4``), else ``""``.

    The Cloud Console shows display names ("NVIDIA T4", "NVIDIA A100 40GB"); the API takes the
    accelerator type name (https://cloud.google.com/compute/docs/gpus#gpu-models).
    """
    if not isinstance(value, str):
        return ""
    norm = "-".join(value.lower().replace("_", " ").replace("-", " ").split())
    if not norm.startswith("nvidia-"):
        norm = f"nvidia-{norm}"
    tesla = norm.replace("nvidia-tesla-", "nvidia-").replace("nvidia-", "nvidia-tesla-", 1)
    for guess in (
        norm,
        tesla,
        tesla.removesuffix("-40gb"),
        norm.replace("nvidia-tesla-", "nvidia-"),
    ):
        if guess in known:
            return f"; did you mean '{guess}'?"
    return did_you_mean(norm, known, cutoff=0.9)
