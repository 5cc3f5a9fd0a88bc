"""The quota classes machines draw on, as data both the planner and the quota preflight read:
GCP machine families' vCPU quota metrics (``data/gcp_cpu_quota_metrics.csv``) and EC2's vCPU quota
classes (``data/aws_quota_classes.csv``), each CSV citing its sources. One reader per table: the
EKS/GKE system-pool checks (``infra.core.system_pool``) and the quota rules (``quota.rules``) ask
the same rows, each from the catalog directory it is given (the plan's).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from infra.core.catalog.vendored import read_rows


@dataclass(frozen=True, slots=True)
class GcpCpuRule:
    """A machine family's vCPU quota (``gcp_cpu_quota_metrics.csv``)."""

    family: str
    metric: str | None
    fallback_metric: str | None
    vm_family: str | None
    spot_metric: str | None
    source: str
    # False: the family draws on GPU quota only (cpu_quota=none in the CSV, sourced there).
    has_vcpu_quota: bool = True


@dataclass(frozen=True, slots=True)
class AwsQuotaClass:
    """One EC2 vCPU quota class (``aws_quota_classes.csv``)."""

    name: str
    family_regex: re.Pattern[str]
    on_demand_code: str
    on_demand_name: str
    spot_code: str
    spot_name: str
    # False: which Spot quota counts this class is not documented (the row is unknown)
    spot_verified: bool = True


@cache
def gcp_cpu_rules(data_dir: Path) -> dict[str, GcpCpuRule]:
    """Machine family -> its vCPU quota rule."""
    return {
        r["family"]: GcpCpuRule(
            r["family"],
            r["on_demand_metric"] or None,
            r["fallback_metric"] or None,
            r["vm_family"] or None,
            r["spot_metric"] or None,
            r["source"],
            r["cpu_quota"] != "none",
        )
        for r in read_rows("gcp_cpu_quota_metrics.csv", data_dir)
    }


@cache
def aws_quota_classes(data_dir: Path) -> tuple[AwsQuotaClass, ...]:
    """EC2 quota classes in match order."""
    return tuple(
        AwsQuotaClass(
            r["class"],
            re.compile(r["family_regex"]),
            r["on_demand_code"],
            r["on_demand_name"],
            r["spot_code"],
            r["spot_name"],
            r["spot_verified"] == "yes",
        )
        for r in read_rows("aws_quota_classes.csv", data_dir)
    )


def gcp_machine_family(machine_type: str) -> str:
    """Machine family of a GCP machine type (``n1-highmem-8`` -> ``n1``)."""
    return machine_type.split("-", 1)[0]


def aws_class_of(instance_type: str, data_dir: Path) -> AwsQuotaClass | None:
    """The quota class counting ``instance_type`` (by family), or ``None`` if no class matches."""
    family = instance_type.split(".", 1)[0]
    classes = aws_quota_classes(data_dir)
    return next((c for c in classes if c.family_regex.fullmatch(family)), None)
