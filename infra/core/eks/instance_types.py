"""EKS instance types and purchase options: which types a GPU group may use, and how it buys them.

Pure code, used by ``infra.core.eks.groups``: every type known, an NVIDIA type with an EKS NVIDIA
AMI, spot lists of one shape; ON_DEMAND / SPOT / CAPACITY_BLOCK with their reservation rules;
``plan_shape``, the first step of a group's plan (types, gpu block, AMI and capacity type).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from infra.core.catalog.vendored import AwsGpuFamily, AwsInstance, Catalog
from infra.core.config.eks import EksClusterSpec, EksPoolSpec
from infra.core.eks.ami import choose_ami_type
from infra.core.errors import Issues, join_path


def check_types(
    i: int, pool: EksPoolSpec, catalog: Catalog, issues: Issues, *, karpenter: bool = False
) -> tuple[list[str], list[AwsInstance]] | None:
    """The group's instance types, each known, an NVIDIA type with an EKS NVIDIA AMI (``karpenter``:
    the pool is a NodePool, which says why the types must share one shape)."""
    mt_path = join_path("gpuPools", i, "machineType")
    names = [pool.machine_type] if isinstance(pool.machine_type, str) else list(pool.machine_type)

    def type_path(j: int) -> str:
        return mt_path if isinstance(pool.machine_type, str) else join_path(mt_path, j)

    if not names:
        issues.add(mt_path, "an empty list; give one instance type or same-shape spot types")
        return None
    if len(names) > 1 and not pool.spot and not karpenter:
        issues.add(
            mt_path,
            f"{len(names)} instance types on an on-demand group; a list is for spot pools "
            "(spot: true) only",
        )
    if len(set(names)) != len(names):
        issues.add(mt_path, f"lists an instance type twice: {names}")

    instances: list[AwsInstance] = []
    architectures: list[str] = []
    for j, name in enumerate(names):
        family_name = name.split(".", 1)[0]
        inst = catalog.aws_instance(name)
        fam = catalog.aws_family(family_name)
        if fam is None:
            issues.add(
                type_path(j),
                f"{name!r} is not an NVIDIA GPU instance type (family {family_name!r} has no "
                f"NVIDIA GPU per EC2 DescribeInstanceTypes; NVIDIA families: "
                f"{', '.join(catalog.aws_families())})",
            )
            continue
        if not fam.eks_nvidia_ami:
            issues.add(
                type_path(j),
                f"{name!r} has an NVIDIA GPU, but the EKS NVIDIA AMIs do not support the "
                f"{family_name} family ({fam.note or 'no driver for its GPU'})",
            )
            continue
        if inst is None:
            sizes = catalog.aws_sizes(family_name)
            issues.add(
                type_path(j),
                f"{name!r} is not a known {family_name} size (known: {', '.join(sizes)})"
                if sizes
                else f"{name!r}: EC2 offers no {family_name} size in any region the catalog "
                "lists (DescribeInstanceTypeOfferings)",
            )
            continue
        instances.append(inst)
        architectures.append(fam.architecture)
    if len(instances) != len(names):
        return None

    _check_one_shape(instances, architectures, type_path, issues, karpenter=karpenter)
    if karpenter:
        # Several sizes of one GPU shape: the smallest first, so what is sized from the first
        # type (the pool's hints: the scheduling proof, the workloads' requests) fits every node
        # the NodePool may launch; limits, cost and quota take the largest (karpenter.pools).
        order = sorted(
            range(len(names)), key=lambda j: (instances[j].vcpus, instances[j].memory_gib)
        )
        names, instances = [names[j] for j in order], [instances[j] for j in order]
    return names, instances


def _check_one_shape(
    instances: list[AwsInstance],
    architectures: list[str],
    type_path: Callable[[int], str],
    issues: Issues,
    *,
    karpenter: bool,
) -> None:
    """Every type of the pool shares the first one's shape (GPU, vCPUs, memory, architecture)."""
    first = instances[0]
    for j, inst in enumerate(instances[1:], start=1):
        diffs = [
            f"{what} {b} vs {a}"
            for what, a, b in (
                ("GPU model", first.gpu_model, inst.gpu_model),
                ("GPUs", first.gpus, inst.gpus),
                ("GPU share", first.gpu_fraction, inst.gpu_fraction),
                ("vCPUs", first.vcpus, inst.vcpus),
                ("memory GiB", first.memory_gib, inst.memory_gib),
                ("architecture", architectures[0], architectures[j]),
            )
            # A Karpenter pool may hold several sizes of one GPU shape (vCPUs and memory vary).
            if a != b and not (karpenter and what in ("vCPUs", "memory GiB"))
        ]
        why = (
            "a Karpenter pool's GPU resources, node labels and scheduling proof are those of one "
            "GPU shape, so its types must share GPU model, GPU count and CPU architecture "
            "(sizes may differ in vCPUs and memory)"
            if karpenter
            else "the cluster-autoscaler sizes a group from its first type, so spot types must "
            "share GPU model, GPU count, vCPUs, memory and CPU architecture"
        )
        if diffs:
            issues.add(
                type_path(j),
                f"{inst.name!r} differs from {first.name!r} ({'; '.join(diffs)}); {why}",
            )


CapacityType = Literal["ON_DEMAND", "SPOT", "CAPACITY_BLOCK", "SPOT_OR_ON_DEMAND"]


def _capacity_list(
    i: int, pool: EksPoolSpec, issues: Issues, karpenter: bool
) -> CapacityType | None:
    """A ``capacityType`` list: one value stands for ``SPOT`` / ``ON_DEMAND``; both is a Karpenter
    NodePool allowing both ("Karpenter prioritizes Spot offerings if the NodePool allows Spot and
    on-demand instances", aws/karpenter-provider-aws website/content/en/docs/concepts/
    scheduling.md "Capacity Type"); a node group has one capacity type (CreateNodegroup
    capacityType)."""
    path = join_path("gpuPools", i, "capacityType")
    given = list(pool.capacity_type or ())
    if not given or len(set(given)) != len(given):
        issues.add(path, f"{given}: list spot, on-demand or both, each once")
        return None
    if len(given) == 1:
        return "SPOT" if given[0] == "spot" else "ON_DEMAND"
    if not karpenter:
        issues.add(
            path,
            f"{given}: a node group has one capacity type (ON_DEMAND or SPOT); a Karpenter "
            "NodePool may allow both (cluster.autoscaler.kind: karpenter)",
        )
        return None
    if pool.capacity_reservation is not None:
        issues.add(
            join_path("gpuPools", i, "capacityReservation"),
            "a capacity reservation holds on-demand capacity; not with spot in capacityType",
        )
        return None
    return "SPOT_OR_ON_DEMAND"


def choose_capacity_type(
    i: int, pool: EksPoolSpec, first: AwsInstance, issues: Issues, karpenter: bool = False
) -> CapacityType | None:
    """ON_DEMAND / SPOT from ``spot``; CAPACITY_BLOCK with its EKS rules; a list (Karpenter)."""
    path = join_path("gpuPools", i, "capacityType")
    if isinstance(pool.capacity_type, list):
        chosen = _capacity_list(i, pool, issues, karpenter)
        if chosen in ("SPOT", "ON_DEMAND") and (chosen == "SPOT") != pool.spot:
            issues.add(path, f"{pool.capacity_type} contradicts spot: {str(pool.spot).lower()}")
            return None
        return chosen
    want = pool.capacity_type or ("SPOT" if pool.spot else "ON_DEMAND")
    if (want == "SPOT") != pool.spot:
        issues.add(path, f"{want} contradicts spot: {str(pool.spot).lower()}")
        return None
    cr = pool.capacity_reservation
    cr_path = join_path("gpuPools", i, "capacityReservation")
    if cr is not None and pool.spot:
        issues.add(cr_path, "a capacity reservation holds on-demand capacity; not with spot: true")
    if cr is not None and (cr.id is None) == (cr.preference is None):
        # RunInstances CapacityReservationSpecification: "You can specify only one parameter
        # at a time. If you specify CapacityReservationPreference and CapacityReservationTarget,
        # the request fails." (https://docs.aws.amazon.com/AWSEC2/latest/APIReference/
        # API_CapacityReservationSpecification.html)
        issues.add(
            cr_path,
            "give id (target one reservation) or preference (open / capacity-reservations-only"
            " / none), not both and not neither: EC2 takes one of them",
        )
    if want == "CAPACITY_BLOCK":
        # Managed node groups with Capacity Blocks: a launch template targeting the block
        # (InstanceMarketOptions.MarketType capacity-block + CapacityReservationTarget) and
        # capacityType CAPACITY_BLOCK (https://docs.aws.amazon.com/eks/latest/userguide/
        # capacity-blocks-mng.html).
        if cr is None or cr.id is None:
            issues.add(cr_path, "CAPACITY_BLOCK needs capacityReservation.id of the block (cr-...)")
            return None
        if pool.warm:
            # "make sure that the desired size of the node group is set to 0" to upgrade, and EKS
            # scales the group to 0 forty minutes before the reservation ends
            # (https://docs.aws.amazon.com/eks/latest/userguide/capacity-blocks-mng.html).
            issues.add(
                join_path("gpuPools", i, "warm"),
                f"{pool.warm}: a Capacity Block node group runs only inside its reservation and "
                "is scaled to 0 by EKS 40 minutes before it ends (and must be at 0 to upgrade); "
                "warm placeholders would keep asking for nodes outside it; set warm 0 (the "
                "block is paid for whether its nodes run or not)",
            )
        if first.family not in CAPACITY_BLOCK_FAMILIES:
            issues.add(
                path,
                f"Capacity Blocks are sold for {', '.join(CAPACITY_BLOCK_FAMILIES)} only, not "
                f"{first.name} (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/"
                "capacity-blocks-using.html)",
            )
    return want


# Instance families Capacity Blocks for ML are offered for (EC2 User Guide "Capacity Blocks for
# ML", supported instance types: https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/
# ec2-capacity-blocks.html).
CAPACITY_BLOCK_FAMILIES = ("p4d", "p4de", "p5", "p5e", "p5en", "p6-b200", "p6-b300", "trn1", "trn2")


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupShape:
    """Step 1 (instance types and capacity): what every node of the pool is."""

    names: tuple[str, ...]
    instances: tuple[AwsInstance, ...]
    family: AwsGpuFamily
    ami: str | None
    capacity_type: CapacityType | None

    @property
    def first(self) -> AwsInstance:
        """The type CA sizes the node template from."""
        return self.instances[0]


def plan_shape(
    i: int, pool: EksPoolSpec, cluster: EksClusterSpec, catalog: Catalog, issues: Issues
) -> GroupShape | None:
    """Instance types (checked against the catalog), the gpu block, AMI type and capacity type."""
    checked = check_types(
        i, pool, catalog, issues, karpenter=cluster.autoscaler.kind == "karpenter"
    )
    if checked is None:
        return None
    names, instances = checked
    first = instances[0]
    fam = catalog.aws_family(first.family)
    assert fam is not None  # checked above
    if pool.gpu is not None:
        if pool.gpu.type is not None and pool.gpu.type not in (
            first.gpu_model,
            fam.accelerator_label,
        ):
            issues.add(
                join_path("gpuPools", i, "gpu", "type"),
                f"{pool.gpu.type!r} does not match {first.name} ({first.gpu_model}, "
                f"{fam.accelerator_label}); gpu is optional on EKS",
            )
        if pool.gpu.count is not None and pool.gpu.count != first.gpus:
            issues.add(
                join_path("gpuPools", i, "gpu", "count"),
                f"{pool.gpu.count} but {first.name} has {first.gpus} GPU(s)",
            )
    ami, why = choose_ami_type(
        fam.architecture, pool.ami_family, pool.ami_type, cluster.planned_version
    )
    if why is not None:
        issues.add(join_path("gpuPools", i, "amiType"), why)
    karpenter = cluster.autoscaler.kind == "karpenter"
    capacity_type = choose_capacity_type(i, pool, first, issues, karpenter)
    return GroupShape(
        names=tuple(names),
        instances=tuple(instances),
        family=fam,
        ami=ami,
        capacity_type=capacity_type,
    )
