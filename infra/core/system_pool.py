"""The system pool's machine type: a CPU type whose vCPUs and vCPU quota are known.

Both CLIs plan through here (``build_plan``), so ``python -m infra.plan`` refuses what the quota
preflight could not count, with the same message.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from infra.core.catalog.quota_classes import aws_class_of, gcp_cpu_rules
from infra.core.catalog.vendored import Catalog, read_rows

# Standard-class sizes: vCPUs per size (https://aws.amazon.com/ec2/instance-types/), for CPU
# instances, which the GPU catalog does not list. Only sizes whose count holds across families;
# "medium" is 1 vCPU on a1/m6g but 2 on t3, so smaller sizes come per family from a data file.
_AWS_SIZE_VCPUS = {"large": 2, "xlarge": 4}
# Predefined GCE types end in their vCPU count (https://cloud.google.com/compute/docs/machine-resource).
_GCP_VCPUS_SUFFIX = re.compile(r"[a-z0-9]+-[a-z]+-([0-9]+)", re.ASCII)


def aws_vcpus_from_name(instance_type: str, data_dir: Path) -> int | None:
    """vCPUs of ``family.large`` / ``family.Nxlarge``, or of a smaller size the data file
    ``aws_cpu_small_sizes.csv`` of the catalog in ``data_dir`` lists for the family (t3.medium);
    ``None`` for other sizes."""
    family, _, size = instance_type.partition(".")
    if size in _AWS_SIZE_VCPUS:
        return _AWS_SIZE_VCPUS[size]
    if m := re.fullmatch(r"([0-9]+)xlarge", size, re.ASCII):
        return 4 * int(m.group(1))
    for regex, row_size, vcpus in _aws_small_sizes(data_dir):
        if row_size == size and regex.fullmatch(family):
            return vcpus
    return None


@cache
def _aws_small_sizes(data_dir: Path) -> tuple[tuple[re.Pattern[str], str, int], ...]:
    return tuple(
        (re.compile(r["family_regex"]), r["size"], int(r["vcpus"]))
        for r in read_rows("aws_cpu_small_sizes.csv", data_dir)
    )


# EC2 type names: after the generation digit, "g" marks AWS Graviton (arm64) processors, and
# a1 is the first Graviton ("Instance type naming conventions",
# https://docs.aws.amazon.com/ec2/latest/instancetypes/instance-type-names.html).
_AWS_FAMILY = re.compile(r"([a-z]+)([0-9]+)([a-z-]*)", re.ASCII)


def aws_architecture(instance_type: str) -> str:
    """``arm64`` for Graviton families (m7g, t4g, c6gn, a1), else ``x86_64``."""
    family = instance_type.split(".", 1)[0]
    m = _AWS_FAMILY.fullmatch(family)
    graviton = family == "a1" or (m is not None and "g" in m.group(3))
    return "arm64" if graviton else "x86_64"


def gcp_vcpus_of(machine_type: str, catalog: Catalog) -> int | None:
    """vCPUs of a GCP machine type: from the catalog, else from a predefined type's name."""
    m = catalog.gcp_machine(machine_type)
    if m is not None:
        return m.vcpus
    if match := _GCP_VCPUS_SUFFIX.fullmatch(machine_type):
        return int(match.group(1))
    return None


def _gcp_cpu_families(data_dir: Path) -> frozenset[str]:
    # Families drawing on a regional vCPU quota (gcp_cpu_quota_metrics.csv cites its sources).
    return frozenset(f for f, r in gcp_cpu_rules(data_dir).items() if r.has_vcpu_quota)


def aws_system_type_problem(instance_type: str, catalog: Catalog) -> str | None:
    """Why ``instance_type`` cannot run the EKS system group, or ``None``."""
    if catalog.aws_instance(instance_type) is not None:
        return f"{instance_type!r} is a GPU instance type; the system group should be CPU only"
    family = instance_type.split(".", 1)[0]
    if aws_class_of(instance_type, catalog.data_dir) is None:
        return (
            f"{instance_type!r}: family {family!r} matches no EC2 vCPU quota class the quota "
            "preflight knows; use a general-purpose type such as m6i.large"
        )
    if aws_vcpus_from_name(instance_type, catalog.data_dir) is None:
        return (
            f"{instance_type!r}: vCPUs of this size are not known (large and Nxlarge sizes are, "
            "and t2/t3/t3a/t4g and Graviton smaller sizes); use e.g. m6i.large or t3.medium"
        )
    return None


def gcp_system_type_problem(machine_type: str, catalog: Catalog) -> str | None:
    """Why ``machine_type`` cannot run the GKE system pool, or ``None``."""
    family = machine_type.split("-", 1)[0]
    families = _gcp_cpu_families(catalog.data_dir)
    if family not in families:
        return (
            f"{machine_type!r}: family {family!r} has no known vCPU quota; known: "
            f"{', '.join(sorted(families))}"
        )
    if gcp_vcpus_of(machine_type, catalog) is None:
        return (
            f"{machine_type!r} is not a predefined GCP machine type (vCPUs unknown: custom and "
            "shared-core types are not counted by the quota preflight); use e.g. e2-standard-4"
        )
    return None
