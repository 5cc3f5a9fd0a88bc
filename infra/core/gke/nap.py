"""Cluster-level node auto-provisioning, enabled only where a ComputeClass needs it to auto-create.

Pure code. Below GKE 1.33.3-gke.1136000 a ComputeClass auto-creates node pools only with
cluster-level node auto-provisioning on (gke_feature_versions.csv, compute-class-auto-creation).
A stack that creates its cluster then enables it, with resource limits that let every pool of the
cluster reach its ``maxNodes``: "Any auto-provisioning limits that you define are enforced based on
the total CPU and memory resources used across all node pools, not just auto-provisioned pools.
The cluster autoscaler does not create new nodes if doing so would exceed one of the defined
limits. If limits are already exceeded, GKE doesn't delete the nodes"
(https://cloud.google.com/kubernetes-engine/docs/concepts/node-auto-provisioning#resource_limits;
pulumi_gcp / terraform ``cluster_autoscaling.resource_limits``: "These limits will apply to node
pool autoscaling in addition to node auto-provisioning"). A cluster the stack does not create
keeps its own settings, so there a version below the gate stays refused (``autocreate``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from infra.core.catalog.vendored import Catalog, read_rows
from infra.core.gke.model import GkePoolPlan, ResourceLimitPlan
from infra.core.gke.versions import feature_versions, gke_version, version_at_least
from infra.core.system_pool import gcp_vcpus_of

NAP_DOC = "https://cloud.google.com/kubernetes-engine/docs/concepts/node-auto-provisioning"


def cluster_nap_needed(min_master: str | None, data_dir: Path) -> bool:
    """Whether every release ``cluster.minMasterVersion`` may name is below the version from which
    a ComputeClass auto-creates pools without node auto-provisioning. An unset version, an alias
    of the channel's default or one that may name either side is not: it stays refused."""
    floor = feature_versions(data_dir)["compute-class-auto-creation"]
    return (
        min_master is not None
        and gke_version(min_master) is not None
        and not version_at_least(min_master, floor)
    )


@dataclass(frozen=True, slots=True)
class NodeShape:
    """What one node of a pool counts against the limits."""

    vcpus: int
    memory_gb: float
    accelerator: str | None = None
    accelerators: int = 0


def resource_limits(
    pools: Sequence[GkePoolPlan], system: NodeShape, system_max: int
) -> tuple[ResourceLimitPlan, ...]:
    """``cpu`` and ``memory`` (GB; ResourceLimit: "For memory, value should be in GB", GKE REST
    v1) at every pool's ``maxNodes`` plus the system pool's, and one limit per GPU type, named as
    the accelerator type (ResourceLimit.resourceType: "cpu", "memory" or gpu-specific string), at
    the sum of ``maxNodes`` x GPUs per node of the pools with that type. Minimums are 0: the
    cluster's pools keep their own minimums."""
    shapes = [(system, system_max)] + [
        (NodeShape(p.vcpus, p.memory_gib, p.accelerator, p.accelerator_count), p.total_max)
        for p in pools
    ]
    gpus: dict[str, int] = {}
    for shape, n in shapes:
        if shape.accelerator is not None:
            gpus[shape.accelerator] = gpus.get(shape.accelerator, 0) + n * shape.accelerators
    cpu = sum(s.vcpus * n for s, n in shapes)
    memory = math.ceil(sum(s.memory_gb * n for s, n in shapes))
    return (
        ResourceLimitPlan("cpu", cpu),
        ResourceLimitPlan("memory", memory),
        *(ResourceLimitPlan(t, gpus[t]) for t in sorted(gpus)),
    )


@functools.cache
def _max_gb_per_vcpu(data_dir: Path) -> dict[str, float]:
    rows = read_rows("gcp_memory_per_vcpu.csv", data_dir)
    return {r["class"]: float(r["max_gb_per_vcpu"]) for r in rows}


def system_shape(machine_type: str, catalog: Catalog) -> NodeShape | None:
    """The system pool's node: the catalog's shape (N1 and GPU types), else a predefined type's
    vCPUs times the most memory per vCPU of its class (gcp_memory_per_vcpu.csv); ``None`` when
    neither is known."""
    m = catalog.gcp_machine(machine_type)
    if m is not None:
        return NodeShape(m.vcpus, m.memory_gib)
    vcpus = gcp_vcpus_of(machine_type, catalog)
    parts = machine_type.split("-")
    per_vcpu = _max_gb_per_vcpu(catalog.data_dir).get(parts[1]) if len(parts) == 3 else None
    if vcpus is None or per_vcpu is None:
        return None
    return NodeShape(vcpus, vcpus * per_vcpu)
