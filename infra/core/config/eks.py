"""Stack-config schema for ``platform: eks``: the cluster block and GPU node groups.

Only shapes and enums live here; rules that need the catalog (instance types, AZ offerings, AMI
per architecture, Kubernetes-version rules) live in the ``infra.core.eks`` package.
"""

from __future__ import annotations

from typing import Literal, Self

from pydantic import Field, model_validator

from infra.core import rules
from infra.core.config.base import ClusterBase, Model, PoolBase, TaintSpec
from infra.core.errors import RuleError

# EKS managed node group AMI types accepted for GPU groups (botocore ``eks`` ``AMITypes``, NVIDIA
# variants only). AL2_x86_64_GPU is listed so the planner can reject it with the reason (EOS
# 2025-11-26, no AMIs for Kubernetes >= 1.33) instead of a bare "not allowed".
GpuAmiType = Literal[
    "AL2023_x86_64_NVIDIA",
    "AL2023_ARM_64_NVIDIA",
    "BOTTLEROCKET_x86_64_NVIDIA",
    "BOTTLEROCKET_ARM_64_NVIDIA",
    "AL2_x86_64_GPU",
]
# The OS family a pool asks for; the planner picks the x86_64/ARM variant from the instance type.
AmiFamily = Literal["al2023", "bottlerocket"]
# What an access entry may do, mapped onto the EKS access policies (AmazonEKS*Policy).
AccessPolicy = Literal["cluster-admin", "admin", "edit", "view"]

# AZ IDs (usw2-az1), not names: names map to different AZs in every account.
AzId = rules.AzId


class EksGpuSpec(Model):
    """Optional check of the GPU the instance type carries; derived from the catalog when absent."""

    type: str | None = None  # GPU model (T4, A10G) or the accelerator label (nvidia-tesla-t4)
    count: int | None = Field(default=None, ge=1, le=16)


class EksCapacityReservationSpec(Model):
    """Capacity reservations the group launches into (launch template
    CapacityReservationSpecification): a given reservation (``id``: an ODCR or a Capacity
    Block), or any that matches (``preference``). EC2 takes one of the two, not both."""

    id: rules.CapacityReservationId | None = None
    # open: any open ODCR matching type/AZ, else plain on-demand; capacity-reservations-only:
    # only in a reservation (launch fails without one); none: never in one.
    preference: Literal["capacity-reservations-only", "open", "none"] | None = None


class EksTaintSpec(TaintSpec):
    """A node-group taint as the EKS API takes it (key at most 63 characters, no kubernetes.io/)."""

    key: rules.EksTaintKey  # type: ignore[assignment]


class EksPoolSpec(PoolBase):
    """One EKS managed GPU node group."""

    labels: rules.EksNodeLabels = Field(default_factory=dict)  # type: ignore[assignment]
    taints: list[EksTaintSpec] = Field(default_factory=list)  # type: ignore[assignment]

    # A list only for spot: same-shape types (GPU model, GPU count, vCPUs, CPU architecture) the
    # group may launch; the planner rejects mismatched shapes.
    machine_type: str | list[str]  # type: ignore[assignment]  # widened from PoolBase's str
    gpu: EksGpuSpec | None = None
    ami_family: AmiFamily = "al2023"
    ami_type: GpuAmiType | None = None  # explicit AMI type; overrides amiFamily
    disk_size_gb: int = Field(default=100, ge=20, le=16384)
    # AZ IDs; default: every AZ offering all the group's types. Never empty: that plans no subnet.
    zones: list[AzId] | None = Field(default=None, min_length=1)
    # One node group per AZ (with CA --balance-similar-node-groups): CA builds a group's template
    # node from one AZ, so a multi-AZ group cannot scale up for a pod pinned to another AZ's EBS
    # volume (kubernetes/autoscaler cluster-autoscaler/cloudprovider/aws/README.md "Common Notes").
    group_per_zone: bool = False
    # EFA interfaces, a cluster placement group, one AZ and local NVMe for ephemeral storage.
    hpc: bool = False
    capacity_reservation: EksCapacityReservationSpec | None = None
    # ON_DEMAND / SPOT follow ``spot``; CAPACITY_BLOCK needs capacityReservation.id of the block.
    capacity_type: Literal["ON_DEMAND", "SPOT", "CAPACITY_BLOCK"] | None = None
    # The EKS-optimized AMI release (NodeGroup releaseVersion); default: EKS's latest for the minor.
    release_version: str | None = Field(default=None, pattern=r"^[0-9]+\.[0-9]+\.[0-9]+-[0-9a-z]+$")


class EksSystemPoolSpec(Model):
    """The small CPU node group that runs the cluster-autoscaler and other system pods."""

    machine_type: rules.Ec2InstanceType = "m6i.large"
    min_nodes: int = Field(default=2, ge=1, le=100)
    max_nodes: int = Field(default=3, ge=1, le=100)
    disk_size_gb: int = Field(default=50, ge=20, le=16384)


class EksVpcSpec(Model):
    """The network: a new VPC (``cidr``), or an existing one (``id`` + ``privateSubnets``)."""

    cidr: rules.VpcCidr = "10.0.0.0/16"
    id: rules.VpcId | None = None
    # AZ ID -> private subnet ID. AZ IDs let the offline plan keep only AZs offering a type.
    private_subnets: dict[AzId, rules.SubnetId] | None = None
    # New VPC only: one NAT gateway (cheaper; an AZ outage cuts every AZ's egress) or one per AZ
    # (each AZ keeps egress on its own; one NAT hourly charge per AZ).
    nat_gateways: Literal["single", "perAz"] = "single"
    # New VPC, ``single`` only: the AZ ID of the one NAT gateway (default: the first control-plane
    # AZ at creation, then wherever it runs).
    nat_zone: AzId | None = None


class EksAccessEntrySpec(Model):
    """An IAM principal allowed into the cluster (EKS access entries, authentication mode API)."""

    principal_arn: rules.IamPrincipalArn
    policy: AccessPolicy = "cluster-admin"
    # scope the policy to these namespaces; default cluster
    namespaces: list[rules.AccessScopeNamespace] | None = None


class EksAutoscalerSpec(Model):
    """What scales the GPU nodes: the cluster-autoscaler over managed node groups, or Karpenter
    (one NodePool and EC2NodeClass per GPU pool, no GPU node groups)."""

    kind: Literal["cluster-autoscaler", "karpenter"] = "cluster-autoscaler"
    enabled: bool = True
    # "priority": gpu-infra writes the priorities ConfigMap (spot groups first, on-demand after).
    expander: Literal["least-waste", "random", "most-pods", "priority"] = "least-waste"
    # How the CA pod gets AWS credentials: IRSA (the cluster's IAM OIDC provider, created if
    # missing) or EKS Pod Identity (the eks-pod-identity-agent add-on, no OIDC provider).
    identity: Literal["irsa", "pod-identity"] = "irsa"
    # A GPU node counts as unneeded below this GPU utilisation (CA --scale-down-gpu-...).
    scale_down_gpu_utilization_threshold: float = Field(default=0.5, gt=0, le=1)
    # Its receiver, and so its rule, follows kind (_duration_of_its_receiver): the
    # cluster-autoscaler's --scale-down-unneeded-time, or each NodePool's consolidateAfter.
    scale_down_unneeded_time: str = "10m"
    # Karpenter: how long a node may drain before its pods are deleted regardless of PDBs and
    # karpenter.sh/do-not-disrupt. 48h, the value of Karpenter's NodePool example (aws/karpenter-
    # provider-aws v1.14.1 website/content/en/v1.14/concepts/nodepools.md): two days for a GPU job
    # to finish or checkpoint.
    termination_grace_period: rules.NodePoolTerminationGracePeriod = "48h"

    @model_validator(mode="after")
    def _duration_of_its_receiver(self) -> Self:
        check = (
            rules.check_consolidate_after if self.kind == "karpenter" else rules.check_go_duration
        )
        try:
            check(self.scale_down_unneeded_time)
        except ValueError as e:
            raise RuleError(str(e), at=("scaleDownUnneededTime",)) from None
        return self


class EksClusterSpec(ClusterBase):
    """The EKS cluster: created with pulumi-eks or attached with ``existing: true``."""

    name: rules.EksClusterName  # type: ignore[assignment]  # EKS's own rule (CreateCluster)

    kubernetes_version: rules.EksVersion = "1.33"
    vpc: EksVpcSpec = Field(default_factory=EksVpcSpec)
    endpoint_public_access: bool = True
    public_access_cidrs: rules.PublicAccessCidrs | None = None
    system_pool: EksSystemPoolSpec = Field(default_factory=EksSystemPoolSpec)
    access_entries: list[EksAccessEntrySpec] = Field(default_factory=list)
    autoscaler: EksAutoscalerSpec = Field(default_factory=EksAutoscalerSpec)
