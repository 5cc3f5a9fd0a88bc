"""The AMI of an EKS GPU node group: its type per family and architecture, and a pinned release.

Pure code, used by ``infra.core.eks.instance_types``: the NVIDIA AMI type of the instance types'
architecture (or the given one, checked), and whether a pinned ``releaseVersion`` can serve the
cluster's Kubernetes version.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping

from infra.core.config.eks import EksClusterSpec

# "Kubernetes version 1.32 is the last version for which Amazon EKS will release AL2 AMIs"
# (https://docs.aws.amazon.com/eks/latest/userguide/eks-ami-deprecation-faqs.html).
AL2_LAST_MINOR = 32

# AMI type per (family, CPU architecture); botocore data eks/2017-11-01/service-2.json AMITypes.
_AMI_BY_FAMILY: Mapping[tuple[str, str], str] = {
    ("al2023", "x86_64"): "AL2023_x86_64_NVIDIA",
    ("al2023", "arm64"): "AL2023_ARM_64_NVIDIA",
    ("bottlerocket", "x86_64"): "BOTTLEROCKET_x86_64_NVIDIA",
    ("bottlerocket", "arm64"): "BOTTLEROCKET_ARM_64_NVIDIA",
}
_AMI_ARCH: Mapping[str, str] = {
    "AL2023_x86_64_NVIDIA": "x86_64",
    "AL2023_ARM_64_NVIDIA": "arm64",
    "BOTTLEROCKET_x86_64_NVIDIA": "x86_64",
    "BOTTLEROCKET_ARM_64_NVIDIA": "arm64",
    "AL2_x86_64_GPU": "x86_64",
}


def choose_ami_type(
    architecture: str, family: str, explicit: str | None, kubernetes_version: str
) -> tuple[str | None, str | None]:
    """Pick the group's AMI type: (ami_type, None) or (None, reason the explicit one fails)."""
    if explicit is None:
        return _AMI_BY_FAMILY[(family, architecture)], None
    if explicit == "AL2_x86_64_GPU" and kubernetes_minor(kubernetes_version) > AL2_LAST_MINOR:
        return None, (
            f"AL2_x86_64_GPU has no AMIs for Kubernetes {kubernetes_version} (AL2 ends at 1."
            f"{AL2_LAST_MINOR}, end of support 2025-11-26); use AL2023_x86_64_NVIDIA or "
            "BOTTLEROCKET_x86_64_NVIDIA"
        )
    if _AMI_ARCH[explicit] != architecture:
        return None, (
            f"{explicit} is for {_AMI_ARCH[explicit]} but the instance types are {architecture}; "
            f"use {_AMI_BY_FAMILY[(family, architecture)]}"
        )
    return explicit, None


# releaseVersion per AMI family (see release_version_problem for the sources).
RELEASE_FORMATS = {
    "al": re.compile(r"1\.\d+\.\d+-\d{8}"),
    "bottlerocket": re.compile(r"\d+\.\d+\.\d+-[0-9a-f]{8}"),
}
RELEASE_SHAPES = {
    "al": "<kubernetes version>-<YYYYMMDD> (e.g. 1.34.2-20260714)",
    "bottlerocket": "<bottlerocket version>-<8 hex commit> (e.g. 1.47.0-6154605b)",
}


def release_version_problem(
    release: str | None, ami_type: str | None, cluster: EksClusterSpec
) -> str | None:
    """Why a pinned AMI release cannot serve the cluster's Kubernetes version, or ``None``.

    An Amazon Linux release is built per Kubernetes minor and named after it:
    ``<kubernetes version>-<build date>``, e.g. ``1.36.2-20260714`` (awslabs/amazon-eks-ami
    CHANGELOG.md, "Release version"); EKS refuses one of another minor. Bottlerocket's releases
    carry its own version and an 8-hex commit, not Kubernetes': ``1.47.0-6154605b`` on a
    BOTTLEROCKET_x86_64 node group (aws-controllers-k8s/community#2644).
    """
    if release is None or ami_type is None:
        return None
    family = next((f for f in RELEASE_FORMATS if ami_type.upper().startswith(f.upper())), None)
    if family is None:
        return None
    if not RELEASE_FORMATS[family].fullmatch(release):
        return (
            f"{release!r} is not an {ami_type} release version: "
            f"{RELEASE_SHAPES[family]} expected; leave releaseVersion unset for EKS's latest"
        )
    if family != "al":
        return None
    built = release.rsplit("-", 1)[1]
    try:  # the build date of an AMI EKS published: a day that exists
        datetime.date(int(built[:4]), int(built[4:6]), int(built[6:]))
    except ValueError:
        return (
            f"{release!r}: {built} is not a date (YYYYMMDD), so no {ami_type} release has this "
            "version; leave releaseVersion unset for EKS's latest"
        )
    minor = ".".join(release.split(".")[:2])
    version = cluster.planned_version
    if minor == version:
        return None
    return (
        f"{release!r} is an EKS-optimized Amazon Linux release for Kubernetes {minor}, but "
        f"cluster.kubernetesVersion is {version}: pin a "
        f"{version}.x-<date> release or leave releaseVersion unset (EKS's "
        "latest for the version)"
    )


def kubernetes_minor(version: str) -> int:
    """The minor of a ``1.<minor>`` Kubernetes version."""
    return int(version.split(".")[1])


# Written on each EC2NodeClass: the SSM parameter its alias resolves through (the row
# metadata.annotations.gpu-infra/ami-parameter of data/node_disruption.csv).
AMI_PARAMETER_ANNOTATION = "gpu-infra/ami-parameter"


def karpenter_ami_parameter(family: str, alias_version: str, kubernetes: str, arch: str) -> str:
    """The SSM parameter an EC2NodeClass alias ``family@alias_version`` resolves the NVIDIA AMI
    through, for the cluster's Kubernetes minor and the pool's CPU architecture.

    As Karpenter builds it (aws/karpenter-provider-aws @ 1d927085
    pkg/providers/amifamily/al2023.go ``resolvePath``; bottlerocket.go ``DescribeImageQuery``,
    which drops the release's leading ``v``): the minor is part of the name, so one pinned alias
    is another AMI on every Kubernetes minor, and every node launched before drifts
    (pkg/cloudprovider/drift.go ``isAMIDrifted``).
    """
    if family == "bottlerocket":
        return f"/aws/service/bottlerocket/aws-k8s-{kubernetes}-nvidia/{arch}/{alias_version.lstrip('v')}/image_id"
    name = f"amazon-eks-node-al2023-{arch}-nvidia-{kubernetes}-{alias_version}"
    return f"/aws/service/eks/optimized-ami/{kubernetes}/amazon-linux-2023/{arch}/nvidia/{name}/image_id"
