"""Identity of a quota check (pure, shared by the rules, the demand and the clients)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Cloud = Literal["gcp", "aws"]
Scope = Literal["region", "global"]
# GPUs / vCPUs (the contract's units), then what else a node consumes: VMs, external IPv4
# addresses, disk GB, an API that must be enabled, and an IAM role that must exist.
Unit = Literal["GPUs", "vCPUs", "VMs", "addresses", "GB", "API", "node groups", "nodes", "role"]
# Where a limit is read from: Compute regions.get / projects.get, a Cloud Quotas family quota,
# AWS Service Quotas, or Service Usage (required APIs); "servicequotas-eks" / "documented": a
# service limit (quota.limits); "iam": a role that must exist (IAM GetRole); "unmapped": a quota this project cannot
# name (a declared gpuPools[].shape whose GPU or machine family has no row in its tables), never
# read and always unknown.
Source = Literal[
    "compute-region",
    "compute-project",
    "cloudquotas",
    "servicequotas",
    "serviceusage",
    "unmapped",
    "servicequotas-eks",
    "documented",
    "iam",
]

# Service limits (quota.limits): EKS limits read from Service Quotas (service code eks), GKE
# limits documented only.
SERVICE_LIMIT_SOURCES = ("servicequotas-eks", "documented")

# Cloud Quotas family quotas (no Compute metric); dimensions region + gpu_family / vm_family.
# https://cloud.google.com/docs/quotas/terminology
GPU_FAMILY_QUOTA_ID = "GPUS-PER-GPU-FAMILY-per-project-region"
VM_FAMILY_QUOTA_ID = "CPUS-PER-VM-FAMILY-per-project-region"
VM_FAMILY_QUOTA = "CPUS_PER_VM_FAMILY"  # the row's `quota` for VM_FAMILY_QUOTA_ID


@dataclass(frozen=True, slots=True)
class QuotaKey:
    """Identity of one quota check.

    Attributes:
        cloud: ``gcp`` | ``aws``.
        scope: ``region`` | ``global``.
        region: region for regional quotas, ``None`` for global ones.
        quota: GCP Compute metric (``NVIDIA_T4_GPUS``), ``CPUS_PER_VM_FAMILY``, an API name
            (``container.googleapis.com``) or AWS quota code (``L-DB2E81BA``).
        unit: what the quota counts.
        source: which API holds the limit.
        gpu_family: Cloud Quotas ``gpu_family`` dimension for GPU family quotas.
        vm_family: Cloud Quotas ``vm_family`` dimension for VM family quotas.
    """

    cloud: Cloud
    scope: Scope
    region: str | None
    quota: str
    unit: Unit
    source: Source
    gpu_family: str | None = None
    vm_family: str | None = None

    @property
    def is_metric(self) -> bool:
        """A quota the cloud holds, with a limit to read and raise (not a required API, not an
        ``unmapped`` quota this project cannot name)."""
        return self.source not in ("serviceusage", "unmapped", *SERVICE_LIMIT_SOURCES)

    @property
    def is_service_limit(self) -> bool:
        """A limit that is not a compute quota (``quota.limits``): judged, never requested here."""
        return self.source in SERVICE_LIMIT_SOURCES

    @property
    def family_quota_id(self) -> str | None:
        """The Cloud Quotas quota id of a family key (``None`` for Compute metrics)."""
        if self.gpu_family:
            return GPU_FAMILY_QUOTA_ID
        if self.vm_family:
            return VM_FAMILY_QUOTA_ID
        return None


def quota_id_of(key: QuotaKey) -> str:
    """Cloud Quotas quota id (``NVIDIA_T4_GPUS`` -> ``NVIDIA-T4-GPUS-per-project-region``).

    Compute metric names map onto ids by this rule (https://cloud.google.com/docs/quotas/
    implement-common-use-cases: ``CPUS-per-project-region``).
    """
    if key.family_quota_id:
        return key.family_quota_id
    suffix = "per-project" if key.scope == "global" else "per-project-region"
    return f"{key.quota.replace('_', '-')}-{suffix}"


def unmapped_key(cloud: Cloud, region: str, what: str, unit: Unit) -> QuotaKey:
    """The key of a quota this project cannot name: ``what`` is the GPU type or machine family."""
    return QuotaKey(cloud, "region", region, f"unknown:{what}", unit, "unmapped")


def unverified_key(cloud: Cloud, region: str, what: str, unit: Unit, code: str) -> QuotaKey:
    """The key of a quota whose mapping onto ``code`` is not verified (an unknown row):
    ``what`` is the model and family, as ``unmapped_key`` takes it."""
    return QuotaKey(cloud, "region", region, f"unverified:{code}:{what}", unit, "unmapped")


def _unverified_parts(key: QuotaKey) -> tuple[str, str] | None:
    """(code, what) of an ``unverified_key``; ``None`` for any other key."""
    if not key.quota.startswith("unverified:"):
        return None
    code, what = key.quota.removeprefix("unverified:").split(":", 1)
    return code, what


def _unmapped_parts(key: QuotaKey) -> tuple[str, str]:
    """(what, model) of an unmapped key: ``preemptible:a5`` -> (``a5``, ``preemptible``)."""
    what = key.quota.removeprefix("unknown:")
    for model in ("preemptible", "spot"):
        if what.startswith(f"{model}:"):
            return what.removeprefix(f"{model}:"), model
    return what, ""


def unmapped_name(key: QuotaKey) -> str:
    """Readable name of an unmapped key (``nvidia-b300 GPUs, preemptible (no known quota)``)."""
    if (unverified := _unverified_parts(key)) is not None:
        code, what = unverified
        return f"{what} {key.unit} ({code} unverified)"
    what, model = _unmapped_parts(key)
    of = what if key.unit == "GPUs" else f"{what} family"
    return f"{of} {key.unit}{f', {model}' if model else ''} (no known quota)"


def unmapped_reason(key: QuotaKey) -> str:
    """Why an ``unmapped`` row is unknown, and what to do about it."""
    if (unverified := _unverified_parts(key)) is not None:
        code, what = unverified
        return (
            f"which quota counts {what} {key.unit} is not documented ({code} by analogy only): "
            "check this quota in the cloud console"
        )
    what, model = _unmapped_parts(key)
    kind = "GPU" if key.unit == "GPUs" else "instance family" if key.cloud == "aws" else "family"
    quota = f"{model} {key.unit}" if model else key.unit
    return (
        f"no known {quota} quota for {kind} {what!r} (a declared gpuPools[].shape): "
        "check this quota in the cloud console"
    )
