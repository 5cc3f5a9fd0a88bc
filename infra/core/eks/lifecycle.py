"""EKS node-group identity and sizing across replacements: name hash, predecessor, desired size.

Pure code. A node group's name hashes the properties EKS cannot change in place, so changing one
makes a new group created before the old one goes; the new group seeds its desired size from its
predecessor's, clamped into its bounds, and a pool's totals are split over per-AZ groups.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

# EKS node group names: 1-63 characters (CreateNodegroup nodegroupName).
NODE_GROUP_NAME_MAX = 63


def node_group_name(pool: str, zone: str | None, immutable: Mapping[str, object]) -> str:
    """``<pool>[-<az id>]-<8 hex>``: the hash covers the properties EKS replaces a group for.

    CreateNodegroup-only properties (AWS::EKS::Nodegroup createOnlyProperties in the CloudFormation
    resource schema: AmiType, CapacityType, InstanceTypes, Subnets, DiskSize, NodeRole,
    RemoteAccess) force a new node group; with a fixed name the new group could only be created
    after the old one is gone, taking its nodes down first. A name that changes with them lets
    Pulumi create the new group before deleting the old one.
    """
    digest = hashlib.sha256(json.dumps(immutable, sort_keys=True).encode()).hexdigest()[:8]
    return "-".join(p for p in (pool, zone, digest) if p)


def desired_size(current: int | None, min_size: int, max_size: int) -> int:
    """The desired size to send with a scaling update: the live one, clamped into [min, max].

    EKS rejects ``UpdateNodegroupConfig`` whose minimum exceeds the desired size ("Minimum
    capacity N can't be greater than desired size M", terraform-aws-modules/terraform-aws-eks
    #3306, hashicorp/terraform-provider-aws#18310) or whose desired size exceeds the maximum
    ("desiredSize can't be greater than maxSize"). Sending the autoscaler's current value keeps
    its decision; clamping makes a raised minimum or lowered maximum valid in one update.
    ``current`` is ``None`` for a group that does not exist yet: it starts at its minimum.
    """
    if current is None:
        return min_size
    return max(min_size, min(current, max_size))


def predecessor(name: str, existing: list[str]) -> str | None:
    """The group ``name`` replaces: the one other ``<pool>[-<az id>]-<8 hex>`` of the same stem.

    A replacement is created before the old group goes; seeding its desired size from the old
    group's (clamped) keeps the capacity the autoscaler had built instead of dropping to
    ``minSize`` until CA scales up again. ``None`` unless exactly one candidate exists.
    """
    stem = name[: -(len(name.rsplit("-", 1)[-1]) + 1)]
    found = [
        n
        for n in existing
        if n != name
        and n.startswith(stem + "-")
        and len(tail := n[len(stem) + 1 :]) == 8
        and all(c in "0123456789abcdef" for c in tail)
    ]
    return found[0] if len(found) == 1 else None


def split_sizes(total_min: int, total_max: int, zones: int) -> list[tuple[int, int]]:
    """Pool totals spread over per-AZ groups: sizes differ by at most one, first AZs first."""

    def spread(total: int) -> list[int]:
        q, r = divmod(total, zones)
        return [q + (k < r) for k in range(zones)]

    return list(zip(spread(total_min), spread(total_max), strict=True))
