"""Stack-config schema for ``platform: eks``: the cluster block and GPU node groups.

Only shapes and enums live here; rules that need the catalog (instance types, AZ offerings, AMI
per architecture, Kubernetes-version rules) live in the ``infra.core.eks`` package.
"""

from __future__ import annotations

from typing import ClassVar, Literal, Self

from pydantic import Field, model_validator

from infra.core import rules
from infra.core.config.base import ClusterBase, Model, PoolBase, TaintSpec
from infra.core.config.entry import PlatformConfig
from infra.core.config.inert import EXISTING_KEEPS_SYSTEM_POOL, Inert, created_cluster_only
from infra.core.config.location import eks_location
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

    type: str | None = Field(
        default=None,  # GPU model (T4, A10G) or the accelerator label (nvidia-tesla-t4)
        description=(
            "The GPU model (`T4`, `A10G`) or accelerator label (`nvidia-tesla-t4`) the instance "
            "type must carry."
        ),
    )
    count: int | None = Field(
        default=None, ge=1, le=16, description="GPUs per node the instance type must carry."
    )


class EksCapacityReservationSpec(Model):
    """Capacity reservations the group launches into (launch template
    CapacityReservationSpecification): a given reservation (``id``: an ODCR or a Capacity
    Block), or any that matches (``preference``). EC2 takes one of the two, not both."""

    id: rules.CapacityReservationId | None = Field(
        default=None,
        description=(
            "Launch into this On-Demand Capacity Reservation or Capacity Block (one AZ; no "
            "placement group). Karpenter: `capacityReservationSelectorTerms: [{id}]`."
        ),
    )
    # open: any open ODCR matching type/AZ, else plain on-demand; capacity-reservations-only:
    # only in a reservation (launch fails without one); none: never in one.
    preference: Literal["capacity-reservations-only", "open", "none"] | None = Field(
        default=None,
        description=(
            "`open`: any open reservation matching type and AZ, else plain on-demand; "
            "`capacity-reservations-only`: only in a reservation (launches fail without one); "
            "`none`: never in one. Karpenter: `open` and `capacity-reservations-only` select "
            "`[{instanceMatchCriteria: open}]`. Not with `id`."
        ),
    )


class EksPoolSpec(PoolBase):
    """One EKS managed GPU node group, or with Karpenter one NodePool."""

    # Kubernetes' and the kubelet's rules here; each receiver's own on top (node groups:
    # eks.template.node_group_problems; NodePools: eks.karpenter.pools.karpenter_problems).
    labels: rules.NodeLabels = Field(  # type: ignore[assignment]
        default_factory=dict,
        description=(
            "Extra node labels. A node group (the cluster-autoscaler) takes what EKS takes: key "
            "(prefix included) and value 1-63 characters, no empty value, no key containing "
            "`kubernetes.io/`, `k8s.io/` or `eks.amazonaws.com/`; a Karpenter NodePool takes "
            "an empty value, and no key in the `karpenter.sh` or `karpenter.k8s.aws` domains."
        ),
    )
    taints: list[TaintSpec] = Field(
        default_factory=list,
        description=(
            "Extra node taints, at most 49 (EKS's 50 per node group, one the GPU taint); a node "
            "group's keys are at most 63 characters in all, none with `kubernetes.io/`."
        ),
    )

    # A list only for spot: same-shape types (GPU model, GPU count, vCPUs, CPU architecture) the
    # group may launch; the planner rejects mismatched shapes.
    machine_type: str | list[str] = Field(  # type: ignore[assignment]  # widened from PoolBase's str
        description=(
            "EC2 instance type (`g4dn.xlarge`); a spot pool may list types of one shape (GPU model "
            "and share, GPU count, vCPUs, memory, CPU architecture): the autoscaler sizes the "
            "group from the first."
        )
    )
    gpu: EksGpuSpec | None = Field(
        default=None, description="Optional check of the GPU the instance type carries."
    )
    ami_family: AmiFamily = Field(
        default="al2023",
        description=(
            "`al2023` (`AL2023_*_NVIDIA`) or `bottlerocket` (`BOTTLEROCKET_*_NVIDIA`); the x86_64 "
            "or ARM variant follows the instance type."
        ),
    )
    ami_type: GpuAmiType | None = Field(
        default=None,  # explicit AMI type; overrides amiFamily
        description=(
            "An explicit AMI type, overriding `amiFamily`, checked against the CPU architecture "
            "and the Kubernetes version (`AL2_x86_64_GPU` is refused from Kubernetes 1.33)."
        ),
    )
    disk_size_gb: int = Field(
        default=100,
        ge=20,
        le=16384,
        description="Root volume, GB: encrypted gp3 through the launch template.",
    )
    # AZ IDs; default: every AZ offering all the group's types. Never empty: that plans no subnet.
    zones: list[AzId] | None = Field(
        default=None,
        min_length=1,
        description=(
            "AZ IDs (`usw2-az1`; names differ per account). Omitted: every AZ offering every "
            "instance type of the group; given: no repeats, each checked. `python -m infra.plan "
            "--pin-zones` writes the resolved ones."
        ),
    )
    # One node group per AZ (with CA --balance-similar-node-groups): CA builds a group's template
    # node from one AZ, so a multi-AZ group cannot scale up for a pod pinned to another AZ's EBS
    # volume (kubernetes/autoscaler cluster-autoscaler/cloudprovider/aws/README.md "Common Notes").
    group_per_zone: bool = Field(
        default=False,
        description=(
            "One node group per AZ (`minNodes`/`maxNodes` split over them) and the autoscaler's "
            "`balance-similar-node-groups`, so a pod bound to an EBS volume scales its AZ's group "
            "from zero. Refused with Karpenter."
        ),
    )
    # EFA interfaces, a cluster placement group, one AZ and local NVMe for ephemeral storage.
    hpc: bool = Field(
        default=False,
        description=(
            "EFA interfaces (one per network card), a cluster placement group, one AZ, "
            "kubelet/containerd on a RAID0 of the instance-store NVMe (AL2023); EFA types only; "
            "refused with Karpenter."
        ),
    )
    capacity_reservation: EksCapacityReservationSpec | None = Field(
        default=None,
        description=(
            "Capacity reservations to launch into: `{id}` or `{preference}`, one of the two. With "
            "Karpenter the capacity type `reserved` comes first (alone for "
            "`capacity-reservations-only` and Capacity Blocks, else before `on-demand`)."
        ),
    )
    # ON_DEMAND / SPOT follow ``spot``; CAPACITY_BLOCK needs capacityReservation.id of the block;
    # a list is a Karpenter NodePool's karpenter.sh/capacity-type values.
    capacity_type: (
        Literal["ON_DEMAND", "SPOT", "CAPACITY_BLOCK"] | list[Literal["spot", "on-demand"]] | None
    ) = Field(
        default=None,
        description=(
            "`ON_DEMAND` / `SPOT` (follow `spot`) or `CAPACITY_BLOCK` (needs "
            "`capacityReservation.id` of the block; p4d/p4de/p5/p5e/p5en/p6 only). With "
            "Karpenter also a list, `[spot, on-demand]`: one NodePool allowing both (Karpenter "
            "tries Spot first and falls back to on-demand), priced at the on-demand ceiling with "
            "the Spot floor noted, counted against both quota kinds."
        ),
    )
    # The EKS-optimized AMI release (NodeGroup releaseVersion); default: EKS's latest for the minor.
    release_version: str | None = Field(
        default=None,
        pattern=r"^[0-9]+\.[0-9]+\.[0-9]+-[0-9a-z]+$",
        description=(
            "Pin the EKS-optimized AMI release (node group `releaseVersion`): "
            "`<kubernetes version>-<YYYYMMDD>` on AL2023 (`1.33.5-20251120`), naming "
            "`cluster.kubernetesVersion`'s minor (bump both together), `<version>-<8 hex commit>` "
            "on Bottlerocket (`1.47.0-6154605b`). Node groups only (a Karpenter pool's AMI is its "
            "EC2NodeClass alias). Default: EKS's latest release for the version, taken when the "
            "group is created or its version changes."
        ),
    )


class EksSystemPoolSpec(Model):
    """The small CPU node group that runs the cluster-autoscaler and other system pods."""

    machine_type: rules.Ec2InstanceType = Field(
        default="m6i.large",
        description=(
            "A CPU type of a known vCPU quota class, size `large`/`Nxlarge` or a smaller size "
            "listed in `aws_cpu_small_sizes.csv`; a Graviton type gets `AL2023_ARM_64_STANDARD`, "
            "others `AL2023_x86_64_STANDARD`."
        ),
    )
    min_nodes: int = Field(
        default=2,
        ge=1,
        le=100,
        description="Fewest system nodes; with Karpenter the group's fixed size.",
    )
    max_nodes: int = Field(
        default=3,
        ge=1,
        le=100,
        description="Most system nodes; with Karpenter it must equal `minNodes` (nothing scales it).",
    )
    disk_size_gb: int = Field(default=50, ge=20, le=16384, description="Root volume, GB.")


class EksVpcSpec(Model):
    """The network: a new VPC (``cidr``), or an existing one (``id`` + ``privateSubnets``)."""

    cidr: rules.VpcCidr = Field(
        default="10.0.0.0/16", description="The new VPC's range, a `10.N.0.0/16`; not with `id`."
    )
    id: rules.VpcId | None = Field(
        default=None, description="An existing VPC, with `privateSubnets`."
    )
    # AZ ID -> private subnet ID. AZ IDs let the offline plan keep only AZs offering a type.
    private_subnets: dict[AzId, rules.SubnetId] | None = Field(
        default=None,
        description=(
            "Existing private subnets: AZ ID -> subnet ID, at least two AZs the control plane "
            "supports, each subnet for one AZ only."
        ),
    )
    # New VPC only: one NAT gateway (cheaper; an AZ outage cuts every AZ's egress) or one per AZ
    # (each AZ keeps egress on its own; one NAT hourly charge per AZ).
    nat_gateways: Literal["single", "perAz"] = Field(
        default="single",
        description=(
            "New VPC only: `single`, one NAT gateway (cheapest; an outage of its AZ cuts every "
            "AZ's egress), or `perAz`, one per AZ where a node group runs (with Karpenter: every "
            "AZ with a private subnet), each AZ keeping its own egress at one NAT hourly charge "
            "each. A change moves nodes' egress IPs."
        ),
    )
    # New VPC, ``single`` only: the AZ ID of the one NAT gateway (default: the first control-plane
    # AZ at creation, then wherever it runs).
    nat_zone: AzId | None = Field(
        default=None,
        description=(
            "New VPC, `single` only: the AZ ID of the NAT gateway (any of the VPC's AZ IDs). "
            "Default: the first control-plane AZ on the first deploy, then wherever it runs. "
            "Changing it moves the gateway: a new gateway and Elastic IP (egress address), every "
            "private route moved to it, the old one deleted."
        ),
    )


class EksAccessEntrySpec(Model):
    """An IAM principal allowed into the cluster (EKS access entries, authentication mode API)."""

    principal_arn: rules.IamPrincipalArn = Field(
        description="One IAM role or user ARN: no wildcards, no STS session; each principal once."
    )
    policy: AccessPolicy = Field(
        default="cluster-admin", description="The EKS access policy (`AmazonEKS*Policy`) it gets."
    )
    # scope the policy to these namespaces; default cluster
    namespaces: list[rules.AccessScopeNamespace] | None = Field(
        default=None,
        description=(
            "Scope the policy to these namespaces (DNS-1123 labels, optionally ending in `*`); "
            "omitted: the whole cluster; an empty list is an error, not a cluster-wide grant."
        ),
    )

    @model_validator(mode="after")
    def _namespaces_name_some(self) -> Self:
        # EKS AccessScope: "namespaces ... A value is required if you specified namespace for
        # Type" (https://docs.aws.amazon.com/eks/latest/APIReference/API_AccessScope.html); an
        # empty list would be sent as a cluster scope, the widest grant, for a narrow intent.
        if self.namespaces is not None and not self.namespaces:
            raise RuleError(
                "[]: a namespace scope needs at least one namespace (EKS AccessScope); omit "
                "namespaces for the whole cluster, or list the namespaces",
                at=("namespaces",),
            )
        return self


class EksAutoscalerSpec(Model):
    """What scales the GPU nodes: the cluster-autoscaler over managed node groups, or Karpenter
    (one NodePool and EC2NodeClass per GPU pool, no GPU node groups)."""

    kind: Literal["cluster-autoscaler", "karpenter"] = Field(
        default="cluster-autoscaler",
        description=(
            "`cluster-autoscaler`: GPU pools are managed node groups; `karpenter`: each GPU pool "
            "is an EC2NodeClass and a NodePool (no GPU node group; the system group stays one), "
            "and the Karpenter controller with its IAM role, interruption queue and EventBridge "
            "rules replaces the cluster-autoscaler. Karpenter: new clusters only, `minNodes: 0`, "
            "no `groupPerZone` or `hpc`."
        ),
    )
    enabled: bool = Field(
        default=True,
        description=(
            "Install the cluster-autoscaler; `false` with `kind: karpenter` is an error (the "
            "NodePools need the controller and its CRDs)."
        ),
    )
    # "priority": gpu-infra writes the priorities ConfigMap (spot groups first, on-demand after).
    expander: Literal["least-waste", "random", "most-pods", "priority"] = Field(
        default="least-waste",
        description=(
            "The cluster-autoscaler's expander; `priority` tries spot groups first with on-demand "
            "as the fallback (needs both). Not with `kind: karpenter`."
        ),
    )
    # How the CA pod gets AWS credentials: IRSA (the cluster's IAM OIDC provider, created if
    # missing) or EKS Pod Identity (the eks-pod-identity-agent add-on, no OIDC provider).
    identity: Literal["irsa", "pod-identity"] = Field(
        default="irsa",
        description=(
            "How the autoscaler and the add-ons get AWS credentials: `irsa` (the cluster's IAM "
            "OIDC provider, created if an existing cluster has none) or `pod-identity` (EKS Pod "
            "Identity: new clusters get the agent add-on, existing ones must have it)."
        ),
    )
    # A GPU node counts as unneeded below this GPU utilisation (CA --scale-down-gpu-...).
    scale_down_gpu_utilization_threshold: float = Field(
        default=0.5,
        gt=0,
        le=1,
        description=(
            "A GPU node is unneeded below this GPU utilisation "
            "(`--scale-down-gpu-utilization-threshold`). Not with `kind: karpenter`."
        ),
    )
    # Its receiver, and so its rule, follows kind (_duration_of_its_receiver): the
    # cluster-autoscaler's --scale-down-unneeded-time, or each NodePool's consolidateAfter.
    scale_down_unneeded_time: str = Field(
        default="10m",
        description=(
            "How long a node stays unneeded before it is removed: the cluster-autoscaler's "
            "`--scale-down-unneeded-time` (any Go duration, such as `10m` or `1h30m`), or with "
            "Karpenter each NodePool's `consolidateAfter` (the CRD's pattern, or `Never`)."
        ),
    )
    # Karpenter: how long a node may drain before its pods are deleted regardless of PDBs and
    # karpenter.sh/do-not-disrupt. 48h, the value of Karpenter's NodePool example (aws/karpenter-
    # provider-aws v1.14.1 website/content/en/v1.14/concepts/nodepools.md): two days for a GPU job
    # to finish or checkpoint.
    termination_grace_period: rules.NodePoolTerminationGracePeriod = Field(
        default="48h",
        description=(
            "`kind: karpenter` only: how long a node may drain before Karpenter deletes its pods "
            "regardless of PodDisruptionBudgets and `karpenter.sh/do-not-disrupt` (each NodePool's "
            "`template.spec.terminationGracePeriod`); the default is the Karpenter NodePool "
            "example's. Without one a drain, and so a destroy, can wait forever on a blocking "
            "pod. Changing it drifts (replaces) the pools' nodes."
        ),
    )

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

    name: rules.EksClusterName = Field(  # type: ignore[assignment]  # EKS's own rule (CreateCluster)
        description=(
            "Letters (case-sensitive), digits, `-` and `_`, starting alphanumeric, at most 100 "
            "characters (EKS `CreateCluster`)."
        )
    )

    # EKS CreateCluster API reference: a name taken in the region is ResourceInUseException.
    REFUSAL: ClassVar[str] = (
        "EKS CreateCluster answers ResourceInUseException (Cluster already exists)"
    )

    def where(self, project: str | None, region: str | None) -> str:
        del project
        return f"EKS cluster {self.name} in {region}"

    # None: the planner decides it from the catalog the plan is built with (eks.planner).
    kubernetes_version: rules.EksVersion | None = Field(
        default=None,
        description=(
            "`1.NN`, one EKS still runs (standard support plus 12 months, "
            "`infra/core/data/eks_standard_support.csv`); with the cluster-autoscaler one with a "
            "pinned autoscaler image (1.29-1.36), with Karpenter 1.30-1.36. Every node group "
            "(`version`) and managed add-on follows it. Omitted: the newest version in standard "
            "support on the later of today and the calendar's date (a note says so: set it, so "
            "that a calendar refresh does not upgrade a running cluster); a new cluster on a "
            "version in extended support is warned about."
        ),
    )
    vpc: EksVpcSpec = Field(
        default_factory=EksVpcSpec, description="The network: a new VPC or an existing one."
    )
    endpoint_public_access: bool = Field(
        default=True, description="Public API endpoint; the private endpoint is always on."
    )
    public_access_cidrs: rules.PublicAccessCidrs | None = Field(
        default=None,
        description=(
            "Limit the public endpoint to these IPv4 CIDRs: valid, none inside a non-public "
            "block, at most 40."
        ),
    )
    system_pool: EksSystemPoolSpec = Field(
        default_factory=EksSystemPoolSpec,
        description="The CPU node group for system pods; not created with `existing: true`.",
    )
    access_entries: list[EksAccessEntrySpec] = Field(
        default_factory=list, description="IAM principals allowed into the cluster."
    )
    autoscaler: EksAutoscalerSpec = Field(
        default_factory=EksAutoscalerSpec, description="What scales the GPU nodes."
    )

    def system_pool_range(self) -> tuple[int, int] | None:
        return self.system_pool.min_nodes, self.system_pool.max_nodes

    @property
    def planned_version(self) -> str:
        """``kubernetesVersion`` as planned: the stack's, or the default the EKS planner decided
        from its catalog (``infra.core.eks.planner``); asked before that decision, an error."""
        if self.kubernetes_version is None:
            raise ValueError("cluster.kubernetesVersion: asked before the planner decided it")
        return self.kubernetes_version


_INERT = (
    EXISTING_KEEPS_SYSTEM_POOL,
    # infra/components/eks.py: access entries and endpoint settings are eks.Cluster arguments.
    created_cluster_only("endpointPublicAccess", "publicAccessCidrs", "accessEntries"),
    # eks.network.plan_network: with a given VPC its subnets are used, the CIDR never read.
    Inert("cluster.vpc", "id", "*", ("cidr",), "the given VPC keeps its own address range"),
    # eks.planner: the autoscaler's values are built only when it is enabled.
    Inert(
        "cluster.autoscaler",
        "enabled",
        False,
        ("expander", "scaleDownGpuUtilizationThreshold", "scaleDownUnneededTime"),
        "no cluster-autoscaler is installed",
    ),
    # eks.planner: with karpenter no cluster-autoscaler is planned; these are its flags
    # (--expander, --scale-down-gpu-utilization-threshold). scaleDownUnneededTime stays: it is
    # each NodePool's disruption.consolidateAfter (eks.karpenter.plan).
    Inert(
        "cluster.autoscaler",
        "kind",
        "karpenter",
        ("expander", "scaleDownGpuUtilizationThreshold"),
        "they are cluster-autoscaler flags (Karpenter scales down by its NodePools' "
        "disruption settings)",
    ),
    # eks.karpenter.pools: terminationGracePeriod is a NodePool field; node groups have none.
    Inert(
        "cluster.autoscaler",
        "kind",
        "cluster-autoscaler",
        ("terminationGracePeriod",),
        "it is a Karpenter NodePool setting",
    ),
)
CONFIG = PlatformConfig(EksClusterSpec, EksPoolSpec, ("EKS", "EKS"), eks_location, _INERT)
