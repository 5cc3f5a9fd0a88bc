"""EKS node-group identity and sizing across replacements: name hash, predecessor, desired size.

Pure code. A node group's name hashes the properties EKS cannot change in place, so changing one
makes a new group created before the old one goes; the new group seeds its desired size from its
predecessor's, clamped into its bounds, and a pool's totals are split over per-AZ groups.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations

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


def owned_name(name: str, stack: str | None) -> str:
    """``name`` with the stack in its hash: a node group on a cluster the stack does not own.

    EKS node group names are unique per cluster (CreateNodegroup: ResourceInUseException), and the
    hash of ``node_group_name`` covers only the group's properties, so two stacks with the same
    pool on one shared cluster would name the same group: the second stack's deploy fails, or
    reads the first's as its own. Same stem and length; ``stack`` ``None`` leaves it as it is
    (a cluster the stack creates holds only its own groups, whose names stay).
    """
    if stack is None:
        return name
    stem = name.rsplit("-", 1)[0]
    key = json.dumps({"group": name, "stack": stack}, sort_keys=True).encode()
    return f"{stem}-{hashlib.sha256(key).hexdigest()[:8]}"


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


def subnet_hash_inputs(azs: Sequence[str], given: Mapping[str, str]) -> dict[str, object]:
    """The subnet part of a node group name's hash: its AZ IDs, and given subnets by ID.

    subnet_ids force a new node group (terraform-provider-aws internal/service/eks/
    node_group.go: ForceNew); the name must change with them, or the replacement fails
    "already exists". Created subnets are fixed per AZ ID (network.subnet_cidrs keys CIDRs on
    the AZ number).
    """
    ids = [given[a] for a in azs if a in given]
    return {"subnets": list(azs), **({"subnetIds": ids} if ids else {})}


@dataclass(frozen=True, slots=True, kw_only=True)
class FrozenAzs:
    """How a group whose AZs the catalog chose was named, to recognise it under fewer AZs.

    Attributes:
        pool: the pool name (the name's stem).
        hash_base: the hashed properties other than subnets.
        candidates: every AZ ID the group could use now.
        max_azs: how many AZs it uses (one for hpc).
        given_subnets: AZ ID -> given subnet ID.
        stack: the stack in the name's hash (``owned_name``), on a cluster it does not own.
    """

    pool: str
    hash_base: Mapping[str, object]
    candidates: tuple[str, ...]
    max_azs: int
    given_subnets: Mapping[str, str] = field(default_factory=dict)
    stack: str | None = None


# AZ sets tried at most (2^8: every subset of a region's AZs; us-east-1 has 6).
_MAX_CANDIDATES = 8


def live_name(
    name: str, az_ids: tuple[str, ...], frozen: FrozenAzs | None, existing: Sequence[str]
) -> tuple[str, tuple[str, ...]]:
    """The name and AZs to deploy: the planned ones, or a live group's that differs only in AZs.

    A catalog refresh that adds an AZ changes the AZs of every group that did not list
    ``zones``, and so its name: EKS would replace the group (subnets force a new one) although
    nothing the user wrote changed. A live group of the same pool whose name is the hash over
    the same properties and a smaller set of today's AZs (one AZ for hpc) is that group before
    the refresh: it keeps its name and AZs, never widened. Listing ``zones`` moves it on.
    """
    if name in existing or frozen is None or len(frozen.candidates) > _MAX_CANDIDATES:
        return name, az_ids
    live = set(existing)
    for k in range(min(frozen.max_azs, len(frozen.candidates)), 0, -1):
        for azs in combinations(frozen.candidates, k):
            inputs = {**frozen.hash_base, **subnet_hash_inputs(azs, frozen.given_subnets)}
            legacy = node_group_name(frozen.pool, None, inputs)
            # A running group named before the stack entered the hash keeps that name too.
            for candidate in (owned_name(legacy, frozen.stack), legacy):
                if candidate in live:
                    return candidate, azs
    return name, az_ids
