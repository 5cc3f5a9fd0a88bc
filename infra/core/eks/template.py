"""What an EKS GPU group's nodes look like: labels, taints, GPU resources, the CA node template.

Pure code: the labels and taints every GPU node carries (checked against EKS's limits), the GPU
resources it advertises (whole, shared or MIG), and the cluster-autoscaler node-template tags that
let CA scale the group from zero, each checked against the ASG tag limits.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from infra.core import rules
from infra.core.catalog.vendored import Catalog, GpuModel
from infra.core.config.eks import EksPoolSpec
from infra.core.eks import autoscaler
from infra.core.eks.efa import EFA_HUGEPAGES_2MI, EFA_RESOURCE, EfaLayout
from infra.core.eks.instance_types import GroupShape
from infra.core.eks.storage import ephemeral_storage_gi
from infra.core.errors import Issues, RuleError, join_path
from infra.core.labels import EKS_ACCELERATOR_LABEL, GPU_PRESENT_LABEL, POOL_LABEL, STACK_LABEL
from infra.core.pools import Taint
from infra.core.sharing import advertised_gpu_resources, operator_node_labels, pool_mig

# The device-plugin convention: key nvidia.com/gpu, effect NoSchedule, and a value - CA drops a
# managed node group taint without a value when it reads DescribeNodegroup (kubernetes/autoscaler
# cluster-autoscaler/cloudprovider/aws/aws_manager.go getManagedNodegroupInfo, taints need a value).
GPU_TAINT = Taint("nvidia.com/gpu", "true", "NoSchedule")
# Labels the planner owns on every GPU group; users may not redefine them.
RESERVED_LABELS = (GPU_PRESENT_LABEL, EKS_ACCELERATOR_LABEL, POOL_LABEL, STACK_LABEL)

# "Maximum of 50 taints per node group" (aws.eks.NodeGroup taints, pulumi-aws schema,
# https://www.pulumi.com/registry/packages/aws/api-docs/eks/nodegroup/#taints_python).
MAX_TAINTS = 50


def gpu_labels(
    pool_name: str,
    accelerator_label: str,
    user: Mapping[str, str],
    stack: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Labels of a GPU group's nodes: the user's plus the GPU, accelerator and pool labels, and on
    a cluster the stack does not own its stack label (``stack``: ``neighbours.stack_node_labels``)."""
    return {
        **user,
        GPU_PRESENT_LABEL: "true",
        EKS_ACCELERATOR_LABEL: accelerator_label,
        POOL_LABEL: pool_name,
        **(stack or {}),
    }


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeLabels:
    """Step 4 (labels and taints) and what the GPU resources look like to a pod."""

    labels: dict[str, str]
    taints: tuple[Taint, ...]
    gpu_count: int
    extra: Mapping[str, int | str]
    model: GpuModel


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeTemplate:
    """Step 5 (autoscaler template): the CA node-template tags and the storage behind them."""

    tags: Mapping[str, str]
    local_nvme: bool
    nodefs_gib: float


def node_group_problems(i: int, pool: EksPoolSpec, issues: Issues) -> None:
    """The EKS node-group API's own label and taint rules (rules.check_eks_node_labels,
    rules.check_eks_taint_key): stricter than a NodePool's, so checked for node groups only."""
    at = join_path("gpuPools", i)
    try:
        rules.check_eks_node_labels(pool.labels)
    except RuleError as e:
        issues.add(join_path(at, "labels", *e.at), str(e))
    for k, t in enumerate(pool.taints):
        try:
            rules.check_eks_taint_key(t.key)
        except ValueError as e:
            issues.add(join_path(at, "taints", k, "key"), str(e))


def plan_labels(
    i: int,
    pool: EksPoolSpec,
    shape: GroupShape,
    catalog: Catalog,
    issues: Issues,
    stack: Mapping[str, str] | None = None,
) -> NodeLabels:
    """Node labels and taints (``stack``: the stack label, see ``gpu_labels``), and the GPU
    resources the nodes advertise."""
    for key in pool.labels:
        if key in RESERVED_LABELS:
            issues.add(
                join_path("gpuPools", i, "labels", key), "set by gpu-infra on every GPU node group"
            )
    labels = gpu_labels(pool.name, shape.family.accelerator_label, pool.labels, stack)
    # Per-pool device-plugin (time-slicing) and MIG-manager configs are picked by node label.
    labels.update(operator_node_labels(pool))
    if len(pool.taints) + 1 > MAX_TAINTS:
        issues.add(
            join_path("gpuPools", i, "taints"),
            f"{len(pool.taints)} taints plus gpu-infra's {GPU_TAINT.key} exceed EKS's "
            f"{MAX_TAINTS} per node group",
        )
    taints = [GPU_TAINT]
    for k, t in enumerate(pool.taints):
        if t.key == GPU_TAINT.key:
            issues.add(
                join_path("gpuPools", i, "taints", k, "key"),
                f"{t.key!r} is already tainted {GPU_TAINT.value}:{GPU_TAINT.effect} "
                "on every GPU group",
            )
            continue
        taints.append(Taint(t.key, t.value, t.effect))
    model = catalog.gcp_model(shape.family.accelerator_label)
    # NVIDIA's MIG table (mig-parted), not GKE's shorter list: the one MIG source for templates.
    mig_facts = pool_mig(shape.first.gpu_model, shape.family.accelerator_label, catalog.data_dir)
    gpu_count, extra = advertised_gpu_resources(shape.first.gpus, pool.sharing, pool.mig, mig_facts)
    if gpu_count == 0:
        # MIG mixed or renamed time-slicing: nodes advertise nvidia.com/mig-* or
        # nvidia.com/gpu.shared and zero nvidia.com/gpu. CA treats a node
        # carrying the GPU label without allocatable nvidia.com/gpu as not ready yet and keeps
        # scaling up for it (kubernetes/autoscaler cluster-autoscaler/processors/customresources/
        # gpu_processor.go FilterOutNodesWithUnreadyResources); without the label CA judges the
        # node by CPU/memory and its MIG resources like any extended resource.
        labels.pop(EKS_ACCELERATOR_LABEL, None)
    return NodeLabels(
        labels=labels,
        taints=tuple(taints),
        gpu_count=gpu_count,
        extra=extra,
        model=model,
    )


def plan_template(
    i: int, pool: EksPoolSpec, shape: GroupShape, efa: EfaLayout, node: NodeLabels, issues: Issues
) -> NodeTemplate:
    """The CA node-template tags (labels, taints, resources), each checked against ASG limits."""
    first, ami = shape.first, shape.ami
    # hpc on AL2023: kubelet and containerd on a RAID0 of the instance-store NVMe (nodeadm
    # NodeConfig spec.instance.localStorage.strategy RAID0, https://awslabs.github.io/
    # amazon-eks-ami/nodeadm/doc/api/#localstoragestrategy); Bottlerocket mounts no instance store.
    local_nvme = (
        pool.hpc and first.local_storage_gb > 0 and ami is not None and ami.startswith("AL2023")
    )
    storage_gib = first.local_storage_gb * 1e9 / 2**30 if local_nvme else pool.disk_size_gb
    resources: dict[str, int | str] = {
        **node.extra,
        "ephemeral-storage": f"{ephemeral_storage_gi(storage_gib, ami or '', local_nvme)}Gi",
    }
    if efa.count:
        # What an EFA pod requests (node-efa.html example: vpc.amazonaws.com/efa and
        # hugepages-2Mi); at zero nodes CA knows them only from node-template/resources/<name>
        # tags (kubernetes/autoscaler cluster-autoscaler/cloudprovider/aws/README.md;
        # aws_manager.go buildNodeFromTemplate).
        resources[EFA_RESOURCE] = efa.count
        resources["hugepages-2Mi"] = EFA_HUGEPAGES_2MI
    tags = autoscaler.node_template_tags(node.labels, list(node.taints), node.gpu_count, resources)
    for key, value in tags.items():
        bad = autoscaler.check_tag(key, value)
        if bad is not None:
            issues.add(join_path("gpuPools", i, "labels"), bad)
    if len(tags) > autoscaler.TEMPLATE_TAG_BUDGET:
        issues.add(
            join_path("gpuPools", i, "labels"),
            f"{len(tags)} cluster-autoscaler node-template tags (labels + taints + resources) "
            f"exceed {autoscaler.TEMPLATE_TAG_BUDGET}: an ASG holds {autoscaler.ASG_TAG_LIMIT} "
            f"tags, EKS and gpu-infra set {autoscaler.MANAGED_ASG_TAGS} themselves and a few "
            "are left for yours; drop labels",
        )
    return NodeTemplate(tags=tags, local_nvme=local_nvme, nodefs_gib=storage_gib)
