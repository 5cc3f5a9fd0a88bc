"""``--pin-zones``: write the zones the plan resolved back into the stack file as ``zones``.

A pool without ``zones`` runs in every zone / AZ ID the catalog offers its GPU in; a refreshed
catalog that lists one more would widen it. On EKS the subnets are in the node group's name hash
and ``subnetIds`` forces a new group (terraform-provider-aws internal/service/eks/node_group.go:
ForceNew), so widening would replace the group (a deploy keeps a live one instead); a GKE pool's
``nodeLocations`` gain the zone in place. Pinning writes the resolution down, so only an edit to
the file moves a pool.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from infra.core.plan import Plan


def resolved_zones(plan: Plan) -> dict[int, tuple[str, ...]]:
    """``gpuPools`` index -> the zones (GKE) or AZ IDs (EKS) the plan chose for a pool that lists
    none (a pool the plan gave no zones, such as one on an existing on-prem cluster, is left)."""
    return plan.platform.unpinned_zones()


def pin_zones(path: Path, plan: Plan, out: Callable[[str], object] = print) -> int:
    """Write ``zones`` for every pool of ``plan`` that has none into ``path``; say what was pinned.

    Raises:
        ConfigErrors: the file cannot take the keys (see ``stackfile.edit.with_pool_keys``).
    """
    from infra.core.stackfile.edit import with_pool_keys
    from infra.core.stackfile.reader import encoding_of

    zones = resolved_zones(plan)
    if not zones:
        out(f"{path}: every pool already lists its zones; nothing to pin")
        return 0
    values = {i: f"[{', '.join(z)}]" for i, z in zones.items()}
    raw = path.read_bytes()
    bom, codec = encoding_of(raw)  # written back as read: BOM and encoding kept
    text = with_pool_keys(raw[len(bom) :].decode(codec), "zones", values)
    path.write_bytes(bom + text.encode(codec))
    names = [s.name for s in plan.config.pools]
    for i, v in values.items():
        out(f"{path}: gpuPools[{i}] ({names[i]}): zones: {v}")
    return 0
