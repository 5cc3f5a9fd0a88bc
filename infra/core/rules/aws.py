"""Field rules for AWS values: EKS versions, instance types, cluster names, AZ IDs, CIDRs, IAM ARNs."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable

from infra.core.errors import RuleError, shown
from infra.core.rules._common import _DNS1123_LABEL, _full, _matching
from infra.core.rules.limits import limit

# --- AWS ----------------------------------------------------------------------------------------

# EKS takes "1.X" (CreateCluster version: https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateCluster.html).
_RE_EKS_VERSION = re.compile(r"^1\.[0-9]{2}$")


check_eks_version = _matching(
    "check_eks_version",
    _RE_EKS_VERSION,
    "is not an EKS Kubernetes version such as 1.33 (major.minor)",
    doc="An EKS Kubernetes version: ``1.X`` (no patch, no ``v``).",
)


# EC2 instance type names: family[generation][attributes].size
# (https://docs.aws.amazon.com/ec2/latest/instancetypes/instance-type-names.html).
_RE_EC2_TYPE = re.compile(
    r"^[a-z][a-z0-9-]*\.(?:nano|micro|small|medium|large|[0-9]*xlarge|metal(?:-[0-9]+xl)?)$"
)


check_ec2_instance_type = _matching(
    "check_ec2_instance_type",
    _RE_EC2_TYPE,
    "is not an EC2 instance type such as m6i.large (family.size)",
    doc="An EC2 instance type name such as m6i.large.",
)


# EKS CreateCluster name: letters (case-sensitive), digits, '-' and '_', starting with a letter or
# digit, 1-100 characters (https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateCluster.html).
_RE_EKS_CLUSTER = _full(r"[0-9A-Za-z][A-Za-z0-9_-]{0,99}")


check_eks_cluster_name = _matching(
    "check_eks_cluster_name",
    _RE_EKS_CLUSTER,
    "is not an EKS cluster name: letters, digits, '-' and '_', starting with a letter or digit, "
    "at most 100 characters",
    doc="An EKS cluster name as CreateCluster accepts it.",
)


# AZ IDs look like usw2-az1 (https://docs.aws.amazon.com/ram/latest/userguide/working-with-az-ids.html);
# AZ names (us-west-2a) map to different physical AZs in each account.
_RE_AZ_ID = re.compile(
    r"^[a-z]{2,4}[0-9]+(-[a-z]{3}[0-9]+)?-az[0-9]+$"
)  # local zones: usw2-lax1-az1
_RE_AZ_NAME = re.compile(r"^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-[0-9]+[a-z]$")


def check_az_id(v: str) -> str:
    """An AZ ID (usw2-az1); an AZ name is explained as such."""
    if _RE_AZ_ID.fullmatch(v):
        return v
    if _RE_AZ_NAME.fullmatch(v):
        raise ValueError(
            f"{shown(v)} is an AZ name; give AZ IDs such as usw2-az1 (names map to different "
            "zones in each account: aws ec2 describe-availability-zones shows the ZoneId)"
        )
    raise ValueError(f"{shown(v)} is not an AZ ID such as usw2-az1")


# EKS access policy scope: Kubernetes namespace names; "You can use wildcard characters for a
# namespace name" at its end, e.g. dev-* (https://docs.aws.amazon.com/eks/latest/userguide/access-policies.html).
_RE_SCOPE_NAMESPACE = _full(rf"{_DNS1123_LABEL}|[a-z0-9][-a-z0-9]*\*")


check_access_scope_namespace = _matching(
    "check_access_scope_namespace",
    _RE_SCOPE_NAMESPACE,
    "is not a namespace or namespace prefix: a DNS-1123 label (lowercase, digits, '-', "
    "at most 63), optionally ending in '*' (dev-*)",
    max_len=limit("k8s.dns1123_label"),
    doc="A namespace an EKS access policy is scoped to: a DNS-1123 label, or a prefix ending in ``*``.",
)


# EKS public endpoint: at most 40 CIDR blocks
# (https://docs.aws.amazon.com/eks/latest/userguide/service-quotas.html, "Public endpoint access
# CIDR ranges per cluster"); it is reached from the internet, so private ranges never match.
MAX_EKS_PUBLIC_CIDRS = limit("eks.public_access_cidrs")
# Ranges never seen as a source on the internet: RFC 1918 private, loopback, link-local, CGNAT
# (RFC 6598), "this network", multicast and reserved (IANA IPv4 special-purpose registry).
_NON_PUBLIC = tuple(
    ipaddress.IPv4Network(n)
    for n in (
        "0.0.0.0/8",
        "10.0.0.0/8",
        "100.64.0.0/10",
        "127.0.0.0/8",
        "169.254.0.0/16",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "224.0.0.0/4",
        "240.0.0.0/4",
    )
)


def check_ipv4_cidr(v: str) -> str:
    """An IPv4 network in CIDR form with no host bits set (10.0.0.0/16, not 10.0.0.1/16)."""
    try:
        net = ipaddress.IPv4Network(v, strict=True)
    except ValueError as e:
        raise ValueError(
            f"{shown(v)} is not an IPv4 CIDR block: {shown(str(e), 120)[1:-1]}"
        ) from None
    if "/" not in v:
        raise ValueError(f"{shown(v)} needs a prefix length, e.g. {net}/32")
    return v


def check_public_access_cidrs(v: list[str]) -> list[str]:
    """EKS ``publicAccessCidrs``: valid, public IPv4 blocks, at most 40."""
    if len(v) > MAX_EKS_PUBLIC_CIDRS:
        raise ValueError(f"{len(v)} CIDR blocks; EKS allows at most {MAX_EKS_PUBLIC_CIDRS}")
    for i, cidr in enumerate(v):
        try:
            check_ipv4_cidr(cidr)
        except ValueError as e:
            raise RuleError(str(e), at=(i,)) from None
        net = ipaddress.IPv4Network(cidr)
        # Inside a non-public block, never merely overlapping one: 0.0.0.0/1 + 128.0.0.0/1 is the
        # whole internet split in two and valid (it spans private ranges, as 0.0.0.0/0 does).
        if any(net.subnet_of(n) for n in _NON_PUBLIC):
            raise RuleError(
                f"{cidr} is not a public range; the public endpoint is reached from the "
                "internet (use the private endpoint for VPC-internal access)",
                at=(i,),
            )
    return v


# A private VPC range (RFC 1918, as VPC CIDRs: https://docs.aws.amazon.com/vpc/latest/userguide/vpc-cidr-blocks.html),
# /16 (the planner splits it into /19 subnets per AZ).
def check_vpc_cidr(v: str) -> str:
    """A /16 inside 10.0.0.0/8 for the new VPC."""
    check_ipv4_cidr(v)
    net = ipaddress.IPv4Network(v)
    if net.prefixlen != 16 or not net.subnet_of(ipaddress.IPv4Network("10.0.0.0/8")):
        raise ValueError(f"{shown(v)} must be a /16 inside 10.0.0.0/8, e.g. 10.0.0.0/16")
    return v


# IAM role/user ARNs: arn:PARTITION:iam::ACCOUNT:role/PATH/NAME, names of [\w+=,.@-] up to 64
# (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html#reference_iam-quotas-names).
# EKS access entries take one existing principal; no wildcards, no STS session ARNs
# (EKS CreateAccessEntry API reference, principalArn).
_RE_IAM_PRINCIPAL = re.compile(
    r"^arn:aws(?:-cn|-us-gov|-iso|-iso-[a-z])?:iam::[0-9]{12}:(?:role|user)"
    r"/(?:[\w+=,.@-]+/)*[\w+=,.@-]{1,64}$",
    re.ASCII,  # IAM names are ASCII; Python's \w is not
)


def check_iam_principal_arn(v: str) -> str:
    """An IAM role or user ARN as EKS access entries accept it."""
    if "*" in v or "?" in v:
        raise ValueError(
            f"{shown(v)}: access entries name one principal; wildcards are not allowed"
        )
    if ":sts::" in v or ":assumed-role/" in v:
        raise ValueError(
            f"{shown(v)} is an STS session; access entries take the IAM role ARN "
            "(arn:aws:iam::ACCOUNT:role/NAME)"
        )
    if len(v) > 2048 or not _RE_IAM_PRINCIPAL.fullmatch(v):
        raise ValueError(
            f"{shown(v)} is not an IAM role or user ARN such as arn:aws:iam::111122223333:role/admins"
        )
    return v


# EC2 resource IDs: the resource type's prefix, a hyphen, then 8 characters (IDs issued before
# 2016) or 17 (every ID since mid-2018), lowercase hex ("Resource IDs",
# https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/resource-ids.html); no other length exists.
EC2_ID_LENGTHS = (8, 17)


def _ec2_id(name: str, prefix: str, what: str) -> Callable[[str], str]:
    hex_ = "|".join(f"[0-9a-f]{{{n}}}" for n in EC2_ID_LENGTHS)
    return _matching(
        name,
        _full(rf"{prefix}-(?:{hex_})"),
        f"is not {what} ID: {prefix}- and 8 or 17 lowercase hex digits "
        f"(e.g. {prefix}-0123456789abcdef0)",
        doc=f"{what[0].upper()}{what[1:]} ID as EC2 issues them: ``{prefix}-`` and 8 or 17 hex.",
    )


check_vpc_id = _ec2_id("check_vpc_id", "vpc", "a VPC")
check_subnet_id = _ec2_id("check_subnet_id", "subnet", "a subnet")
check_capacity_reservation_id = _ec2_id(
    "check_capacity_reservation_id", "cr", "a capacity reservation"
)
