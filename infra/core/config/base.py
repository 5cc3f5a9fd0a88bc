"""Shared pieces of the stack-config schema: the strict base model and fields every platform has.

Per-platform schemas (``gke``, ``eks``, ``kubernetes`` in this package) build on these. Keys are
camelCase in the stack file; unknown keys are rejected so a typo never becomes a silent default.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

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

    key: rules.TaintKey = Field(description="Taint key: a qualified name, as a label key.")
    value: rules.TaintValue = Field(
        default="", description="Taint value: a label value, may be empty."
    )
    effect: TaintEffect = Field(
        default="NoSchedule",
        description="Kubernetes spelling; each cloud maps it onto its own enum (GKE `NO_SCHEDULE`).",
    )


class SharingSpec(Model):
    """GPU sharing done by the NVIDIA device plugin (the GPU Operator), not by the cloud."""

    strategy: Literal["time-slicing"] = Field(
        default="time-slicing",
        description="The device plugin's time-slicing: each GPU is advertised `replicas` times.",
    )
    replicas: int = Field(
        ge=2,
        le=48,  # 1 would not share; 48 is the device plugin's practical ceiling
        description=(
            "Pods that share one GPU. The device plugin's ConfigMap sets "
            "`failRequestsGreaterThanOne: true`: a pod asking for 2 slices is refused instead of "
            "getting two slices of one GPU."
        ),
    )
    # Advertise the replicas as nvidia.com/gpu.shared instead of nvidia.com/gpu, so a workload
    # knowingly asks for a shared GPU (NVIDIA/k8s-device-plugin api/config/v1/replicas.go).
    rename_by_default: bool = Field(
        default=False,
        description=(
            "Advertise the slices as `nvidia.com/gpu.shared` instead of `nvidia.com/gpu`, so a "
            "workload knowingly asks for a shared GPU (NVIDIA/k8s-device-plugin "
            "`api/config/v1/replicas.go`). Refused on GKE: a node with GKE's accelerator label and "
            "0 `nvidia.com/gpu` is not ready to the cluster-autoscaler."
        ),
    )


class MigSpec(Model):
    """MIG partitioning managed by the GPU Operator's MIG manager."""

    strategy: Literal["single", "mixed"] = Field(
        default="single",
        description=(
            "`single`: every GPU is split into one profile and the node advertises "
            "`nvidia.com/gpu` = GPUs x instances; `mixed`: one `nvidia.com/mig-<profile>` per "
            "profile of the layout and 0 `nvidia.com/gpu`. A `mixed` layout that partitions every "
            "GPU is refused on GKE (use `single` or `gpu.partitionSize`)."
        ),
    )
    # A layout from the MIG manager's config, e.g. ``all-1g.5gb`` (``single``) or ``all-balanced``
    # (``mixed``). Required: no layout suits every GPU and workload, so none is assumed.
    config: str = Field(
        min_length=1,
        description=(
            "The mig-parted layout, set as the node label `nvidia.com/mig.config`: `all-disabled` "
            "or `all-<profile>` (`single`), also `all-balanced` (`mixed` only: the device plugin "
            "refuses a `single` node with more than one MIG device type); `all-enabled` creates no "
            "MIG devices and is refused. Profiles and layouts come from NVIDIA mig-parted's default "
            "config (`infra/core/data/nvidia_mig_profiles.csv`; `+me` profiles are "
            "`all-<profile>.me`)."
        ),
    )


class ShapeSpec(Model):
    """A machine / instance type the catalog lacks, as the stack declares it (the user's facts)."""

    gpu_model: str = Field(
        min_length=1,
        description="GKE: the accelerator type (`nvidia-b200`, not `B200`); EKS: the GPU model.",
    )
    gpus: int = Field(ge=1, le=16, description="GPUs per node.")
    vcpus: int = Field(ge=1, le=4096, description="vCPUs per node.")
    memory_gb: float = Field(gt=0, le=65536, description="Memory per node, GB.")


class PoolBase(Model):
    """Fields every GPU pool has, whatever the platform."""

    name: PoolName = Field(
        description=(
            "Pool name: lowercase letters, digits and `-`, starting with a letter, at most 40 "
            "characters (GKE's node-pool rule; EKS node groups accept it too). Not `system` unless "
            "`cluster.existing: true` (the system pool owns that name). On an existing GKE/EKS "
            "cluster another stack may use the same name: the node pools, node groups and node "
            "labels carry the stack."
        )
    )
    machine_type: str = Field(
        min_length=1,
        description=(
            "GKE machine type (`n1-highmem-8`, `g2-standard-8`) or EKS instance type "
            "(`g4dn.xlarge`), checked against the catalog; on `platform: kubernetes` a free-form "
            "name of the nodes' machine."
        ),
    )
    min_nodes: int = Field(
        default=0,
        ge=0,
        le=1000,
        description="Fewest nodes: a pool total, not per zone. Must be 0 on a Karpenter pool.",
    )
    max_nodes: int = Field(
        ge=1,
        le=1000,
        description=(
            "Most nodes: a pool total, not per zone; what cost at maximum and the quota demand "
            "count."
        ),
    )
    spot: bool = Field(
        default=False,
        description=(
            "Spot capacity at spot prices: GKE Spot VMs, EKS `SPOT` node groups, Karpenter's "
            "`spot` capacity type."
        ),
    )
    labels: rules.NodeLabels = Field(
        default_factory=dict,
        description=(
            "Extra node labels: qualified-name keys and label values (at most 63 characters); no "
            "self-set `kubernetes.io` labels on GKE and EKS nodes (kubelet `--node-labels`)."
        ),
    )
    taints: list[TaintSpec] = Field(
        default_factory=list,
        description=(
            "Extra node taints, each `{key, value, effect}`; the GPU taint is always declared. "
            "They are added to the operator's operand and NFD-worker tolerations."
        ),
    )
    # Operator-level sharing and MIG (see infra.core.operator); on GKE exclusive with gpu.sharing.
    sharing: SharingSpec | None = Field(
        default=None,
        description=(
            "GPU time-slicing by the GPU Operator's device plugin; on GKE exclusive with "
            "`gpu.sharing` and `gpu.partitionSize`."
        ),
    )
    mig: MigSpec | None = Field(
        default=None, description="MIG partitions made by the GPU Operator's MIG manager."
    )
    smoke_test: bool = Field(
        default=False,
        description=(
            "Run a pinned CUDA `nvidia-smi` Job on this pool after the operator, in the "
            "`gpu-smoke-test` namespace (opt-in: it scales a GPU node up)."
        ),
    )
    # Nodes kept ready by low-priority placeholder pods (infra.core.warm); 0 keeps the $0 idle cost.
    warm: int = Field(
        default=0,
        ge=0,
        le=1000,
        description=(
            "Nodes kept ready by low-priority placeholder pods (0: none, $0 idle cost); at most "
            "`maxNodes`; on a GKE pool with `fallback` it warms the ComputeClass. Refused on a GKE "
            "`queuedProvisioning` pool and an EKS `CAPACITY_BLOCK` pool."
        ),
    )
    shape: ShapeSpec | None = Field(
        default=None,  # escape hatch for a type the catalog lacks (infra.core.catalog.shapes)
        description=(
            "A machine / instance type the catalog lacks, declared with the pool's `zones` (GKE "
            "zones, EKS AZ IDs): planned with a note that these facts are yours, everything else "
            "still checked; `quota.check` reports a quota it cannot name as `unknown`. An error "
            "for a type the catalog knows."
        ),
    )

    def listed_nodes(self) -> tuple[str, ...]:
        """The nodes this pool lists by name (an on-prem pool's ``nodes``); none for a pool whose
        nodes the cloud makes."""
        return ()


@dataclass(frozen=True, slots=True)
class ClusterIdentity:
    """Which cluster a stack's cluster block names, as two stacks on one cluster share it.

    Attributes:
        key: the config key that tells this cluster from another (what to change to move off it).
        value: its value.
        where: the cluster, in words; equal for two stacks on the same cluster.
        refusal: what the cloud answers a second create of it (the rule), ``""``: never created.
    """

    key: str
    value: str
    where: str
    refusal: str = ""


class ClusterBase(Model):
    """Fields every cluster block has."""

    name: ClusterName = Field(
        description=(
            "Cluster name; on `platform: kubernetes` it only names the outputs (lowercase letters, "
            "digits, `-`, starting with a letter, at most 40 characters)."
        )
    )
    location: str = Field(
        min_length=1,
        description=(
            "GKE: a region (regional cluster) or a zone (zonal cluster); EKS: the AWS region; "
            "`platform: kubernetes`: free text (a site or rack)."
        ),
    )
    existing: bool = Field(
        default=False,
        description=(
            "Attach GPU pools and the operator to a cluster that exists instead of creating one "
            "(EKS: requires `cluster.vpc.privateSubnets`)."
        ),
    )

    def system_pool_range(self) -> tuple[int, int] | None:
        """(``minNodes``, ``maxNodes``) of the system pool this block describes, ``None`` for a
        cluster that has none in its block."""
        return None

    # What the cloud answers a second create of a cluster of this name ("": never created).
    REFUSAL: ClassVar[str] = ""

    def where(self, project: str | None, region: str | None) -> str:
        """The cluster this block names, in words (``project``, ``region``: the stack's)."""
        del project, region
        return f"cluster {self.name} at {self.location}"

    def identity(self, project: str | None, region: str | None) -> ClusterIdentity:
        """The cluster this block names (``project``, ``region``: the stack's)."""
        return ClusterIdentity("cluster.name", self.name, self.where(project, region), self.REFUSAL)
