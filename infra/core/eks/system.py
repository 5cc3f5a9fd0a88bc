"""The CPU system node group of a created EKS cluster (cluster-autoscaler, CoreDNS, the operator).

Pure code: its instance type (checked), AMI per CPU architecture, AZs (the control plane's), name
hash and size; with Karpenter its fixed size, since nothing scales it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from infra.core.catalog.vendored import Catalog
from infra.core.config.eks import EksClusterSpec
from infra.core.eks.groups import UPDATE_MAX_UNAVAILABLE
from infra.core.eks.lifecycle import FrozenAzs, node_group_name
from infra.core.eks.network import EksNetworkPlan
from infra.core.errors import Issues
from infra.core.labels import POOL_LABEL
from infra.core.system_pool import aws_architecture, aws_system_type_problem

SYSTEM_GROUP = "system"
# The system (CPU) group's AMI per CPU architecture; AL2023 is the EKS default OS from Kubernetes
# 1.30 (botocore data eks/2017-11-01/service-2.json AMITypes).
SYSTEM_AMI_TYPES: Mapping[str, str] = {
    "x86_64": "AL2023_x86_64_STANDARD",
    "arm64": "AL2023_ARM_64_STANDARD",
}
SYSTEM_AMI_TYPE = SYSTEM_AMI_TYPES["x86_64"]


@dataclass(frozen=True, slots=True, kw_only=True)
class EksSystemGroupPlan:
    """The CPU node group for system pods (cluster-autoscaler, CoreDNS, the operator)."""

    name: str
    node_group_name: str
    instance_types: tuple[str, ...]
    ami_type: str
    min_size: int
    max_size: int
    disk_size_gib: int
    labels: Mapping[str, str]
    az_ids: tuple[str, ...] = ()
    update_max_unavailable: int = UPDATE_MAX_UNAVAILABLE
    # A created VPC's AZs come from the catalog: a refresh must not widen (replace) a live group.
    frozen: FrozenAzs | None = None
    desired_size: int = 0  # the size sent (live.live_desired_size)
    send_desired: bool = True  # False: left to the autoscaler (live.sends_desired_size)


def plan_system(
    cluster: EksClusterSpec, network: EksNetworkPlan | None, catalog: Catalog, issues: Issues
) -> EksSystemGroupPlan | None:
    if cluster.existing:
        return None
    sp = cluster.system_pool
    if sp.min_nodes > sp.max_nodes:
        issues.add(
            "cluster.systemPool.minNodes", f"{sp.min_nodes} is above maxNodes {sp.max_nodes}"
        )
    if problem := aws_system_type_problem(sp.machine_type, catalog):
        issues.add("cluster.systemPool.machineType", problem)
    max_size = _system_max(cluster, issues)
    azs = network.control_plane_az_ids if network is not None else ()
    ami_type = SYSTEM_AMI_TYPES[aws_architecture(sp.machine_type)]
    immutable = {
        "instanceTypes": [sp.machine_type],
        "amiType": ami_type,
        "capacityType": "ON_DEMAND",
        "subnets": list(azs),
    }
    return EksSystemGroupPlan(
        name=SYSTEM_GROUP,
        node_group_name=node_group_name(SYSTEM_GROUP, None, immutable),
        instance_types=(sp.machine_type,),
        ami_type=ami_type,
        min_size=sp.min_nodes,
        max_size=max_size,
        disk_size_gib=sp.disk_size_gb,
        labels={POOL_LABEL: SYSTEM_GROUP},
        az_ids=tuple(azs),
        frozen=(
            FrozenAzs(
                pool=SYSTEM_GROUP,
                hash_base={k: v for k, v in immutable.items() if k != "subnets"},
                candidates=tuple(azs),
                max_azs=len(azs),
            )
            if network is not None and network.create
            else None
        ),
    )


def _system_max(cluster: EksClusterSpec, issues: Issues) -> int:
    """The system group's maxSize: its maxNodes, or minNodes with Karpenter, where nothing scales
    it (no cluster-autoscaler; the NodePools are GPU pools, and "Karpenter won't launch capacity
    to run itself", Karpenter troubleshooting), so plan, cost and quota show the fixed size."""
    sp = cluster.system_pool
    if cluster.autoscaler.kind != "karpenter":
        return sp.max_nodes
    if "max_nodes" in sp.model_fields_set and sp.max_nodes != sp.min_nodes:
        issues.add(
            "cluster.systemPool.maxNodes",
            f"{sp.max_nodes} with cluster.autoscaler.kind: karpenter: nothing scales the system "
            "node group (no cluster-autoscaler; Karpenter launches GPU nodes only), so it stays at "
            f"minNodes ({sp.min_nodes}); set minNodes to the size it needs, or drop maxNodes",
        )
    return sp.min_nodes
