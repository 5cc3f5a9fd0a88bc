"""Shared pieces of the stack-config schema: the strict base model and fields every platform has.

Per-platform schemas (``gke``, ``eks``, ``kubernetes`` in this package) build on these. Keys are
camelCase in the stack file; unknown keys are rejected so a typo never becomes a silent default.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from infra.core import rules

# GPU pool names: GKE's node-pool rule (rules.check_pool_name). An on-prem cluster's name only
# labels our outputs; the same rule keeps it a plain, short name.
PoolName = rules.PoolName
ClusterName = rules.PoolName
NamespaceName = rules.NamespaceName  # a DNS-1123 label


class Model(BaseModel):
    """Strict, frozen, camelCase model: unknown keys are errors, nothing is coerced."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        strict=True,
        alias_generator=to_camel,
        populate_by_name=True,
        # Validators are built on first use, so a GKE stack never pays for the EKS schema.
        defer_build=True,
    )


TaintEffect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]


class TaintSpec(Model):
    """An extra node taint, Kubernetes spelling (``NoSchedule``); each cloud maps it to its own enum."""

    key: rules.TaintKey
    value: rules.TaintValue = ""
    effect: TaintEffect = "NoSchedule"


class SharingSpec(Model):
    """GPU sharing done by the NVIDIA device plugin (the GPU Operator), not by the cloud."""

    strategy: Literal["time-slicing"] = "time-slicing"
    replicas: int = Field(
        ge=2, le=48
    )  # 1 would not share; 48 is the device plugin's practical ceiling
    # Advertise the replicas as nvidia.com/gpu.shared instead of nvidia.com/gpu, so a workload
    # knowingly asks for a shared GPU (NVIDIA/k8s-device-plugin api/config/v1/replicas.go).
    rename_by_default: bool = False


class MigSpec(Model):
    """MIG partitioning managed by the GPU Operator's MIG manager."""

    strategy: Literal["single", "mixed"] = "single"
    # A layout from the MIG manager's config, e.g. ``all-1g.5gb`` (``single``) or ``all-balanced``
    # (``mixed``). Required: no layout suits every GPU and workload, so none is assumed.
    config: str = Field(min_length=1)


class ShapeSpec(Model):
    """A machine / instance type the catalog lacks, as the stack declares it (the user's facts)."""

    gpu_model: str = Field(min_length=1)  # GKE: the accelerator type (nvidia-b200); EKS: the model
    gpus: int = Field(ge=1, le=16)
    vcpus: int = Field(ge=1, le=4096)
    memory_gb: float = Field(gt=0, le=65536)


class PoolBase(Model):
    """Fields every GPU pool has, whatever the platform."""

    name: PoolName
    machine_type: str = Field(min_length=1)
    min_nodes: int = Field(default=0, ge=0, le=1000)
    max_nodes: int = Field(ge=1, le=1000)
    spot: bool = False
    labels: rules.NodeLabels = Field(default_factory=dict)
    taints: list[TaintSpec] = Field(default_factory=list)
    # Operator-level sharing and MIG (see infra.core.operator); on GKE exclusive with gpu.sharing.
    sharing: SharingSpec | None = None
    mig: MigSpec | None = None
    smoke_test: bool = False  # opt-in: the nvidia-smi Job scales a GPU node up
    # Nodes kept ready by low-priority placeholder pods (infra.core.warm); 0 keeps the $0 idle cost.
    warm: int = Field(default=0, ge=0, le=1000)
    shape: ShapeSpec | None = (
        None  # escape hatch for a type the catalog lacks (infra.core.catalog.shapes)
    )


class ClusterBase(Model):
    """Fields every cluster block has."""

    name: ClusterName
    location: str = Field(min_length=1)
    existing: bool = False
