"""EKS as a ``Platform`` (``infra.core.platform``): the EKS plan and every answer shared code asks
of it, node groups under the cluster-autoscaler or Karpenter NodePools alike (Karpenter is this
platform's feature: ``Features.autoscaler``). ``plan`` is the registry's entry
(``infra.core.platforms``)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from infra.core.catalog.shapes import ShapeRules, with_declared_shapes
from infra.core.catalog.vendored import Catalog
from infra.core.config.base import PoolBase
from infra.core.config.eks import EksClusterSpec, EksPoolSpec
from infra.core.config.stack import StackConfig
from infra.core.eks import bootstrap, nodes, sent
from infra.core.eks.access import positional_entry_issues
from infra.core.eks.groups import EksGroupPlan
from infra.core.eks.karpenter import pools as karpenter_pools
from infra.core.eks.karpenter.nodes import karpenter_nodes
from infra.core.eks.live import offline_assumptions
from infra.core.eks.node_model import ec2_gpu_count, nodeadm_allocatable_mib
from infra.core.eks.observed import EksObserved
from infra.core.eks.planner import EksPlan, plan_eks
from infra.core.eks.presets import PRESETS
from infra.core.errors import ConfigIssue, Issues, join_path
from infra.core.labels import EKS_ACCELERATOR_LABEL
from infra.core.nodes import PoolNodes, daemonset_memory_mib
from infra.core.platform import (
    CUTOFF_FLAG,
    POSITIONAL_ACCESS_ENTRIES,
    Autoscaler,
    Features,
    NodeMarks,
    NodeRuntime,
    Platform,
    PoolView,
    Preset,
    PricedPool,
    ServiceRole,
)
from infra.core.platform_defaults import PlannedPlatform, planned_as
from infra.core.pools import PoolHints

if TYPE_CHECKING:
    from infra.core.catalog.pricing import Prices
    from infra.core.platform_cost import Line
    from infra.core.sent import Claim
    from infra.core.sizing import NodeGroupSizing

SHAPES = ShapeRules(
    cloud="aws",
    places="AZ IDs (usw2-az1)",
    assumed=(
        "; assumed x86_64 on the EKS NVIDIA AMI; kube-reserved sized for the most ENI-limited "
        "pods of any GPU type on file (nodeadm and Karpenter reserve for the type's real ENI "
        "limits, read from EC2), so the notebook guarantee may leave memory unused"
    ),
)


def eks_features(cluster: EksClusterSpec) -> Features:
    """EKS's features under the stack's ``cluster.autoscaler`` (kind and enabled)."""
    a = cluster.autoscaler
    karpenter = a.kind == "karpenter"
    scaler: Autoscaler | None = None
    if a.enabled:
        scaler = "karpenter" if karpenter else "cluster-autoscaler"
    return Features(
        autoscaler=scaler,
        # Only cluster-autoscaler reads it (its AWS provider's GPULabel); Karpenter, or no
        # autoscaler, leaves a 0-GPU node carrying it alone.
        autoscaler_gpu_label=nodes.AWS_GPU_LABEL if scaler == "cluster-autoscaler" else None,
        # gpu-infra puts it on EKS GPU node groups and NodePools (infra.core.eks.template).
        accelerator_label=EKS_ACCELERATOR_LABEL,
        mig_reboot=True,
        cloud="aws",
        managed_node_groups=True,
        places="AZ IDS",
        labelled_by=(
            "the Karpenter NodePool's template labels (gpu-infra)"
            if karpenter
            else "the node group's labels (gpu-infra)"
        ),
        unlabelled_fix="its nodes drop the label (MIG mixed or renamed time-slicing: no whole GPU)",
        operator_off="the NVIDIA device plugin chart then runs on this stack's node groups only",
    )


def plan(
    config: StackConfig, catalog: Catalog, issues: Issues, observed: EksObserved | None = None
) -> EksPlatform:
    """The EKS platform of ``config``: its declared shapes added to ``catalog``, then planned."""
    catalog, notes = with_declared_shapes(config, catalog, issues, SHAPES)
    eks = plan_eks(config, catalog, issues, observed)
    return EksPlatform(config, eks, catalog, eks_features(config.cluster), notes)


def eks_plan(platform: Platform) -> EksPlan:
    """The EksPlan a stack's ``Plan.platform`` holds (for this platform's components)."""
    return planned_as(platform, EksPlatform, "eks").plan


@dataclass(frozen=True, slots=True)
class EksPlatform(PlannedPlatform[EksClusterSpec, EksPlan]):
    """A planned EKS stack (``shape_notes``: the notes of its declared shapes)."""

    shape_notes: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return "eks"

    @property
    def pools(self) -> tuple[PoolHints, ...]:
        return tuple(g.hints for g in self.plan.groups)

    @property
    def notes(self) -> tuple[str, ...]:
        return (*self.shape_notes, *self.plan.notes)

    @property
    def offline_assumptions(self) -> tuple[str, ...]:
        return offline_assumptions(self.plan)

    # --- the GPU Operator and the workloads ------------------------------------------------------
    def presets(self) -> Mapping[str, Preset]:
        return PRESETS

    def default_preset(self, pools: Sequence[PoolHints]) -> str:
        image = pools[0].node_image.upper() if pools else ""
        return "eks-bottlerocket" if image.startswith("BOTTLEROCKET") else "eks-al2023"

    def driver_key(self, index: int, pool: PoolBase) -> str:
        # The AMI type, given explicitly or derived from amiFamily.
        given = isinstance(pool, EksPoolSpec) and pool.ami_type is not None
        return join_path("gpuPools", index, "amiType" if given else "amiFamily")

    @property
    def kubernetes_version(self) -> str | None:
        return self.plan.kubernetes_version or None  # as planned (a default: the catalog's)

    @property
    def stated_cpu_nodes(self) -> int | None:
        return None if self.cluster.existing else self.cluster.system_pool.max_nodes

    def workload_selector(self, h: PoolHints) -> dict[str, str]:
        selector = dict(h.node_selector)
        if EKS_ACCELERATOR_LABEL in h.labels:
            selector.setdefault(EKS_ACCELERATOR_LABEL, h.labels[EKS_ACCELERATOR_LABEL])
        return selector

    def node_runtime(self, h: PoolHints) -> NodeRuntime | None:
        return bootstrap.node_runtime(h.node_image, self.catalog.data_dir)

    def carried_labels(
        self, h: PoolHints, pool: PoolBase, patched: Mapping[str, str]
    ) -> dict[str, str]:
        return {**h.labels}

    @property
    def count_remedy(self) -> str:
        if self.features.autoscaler == "karpenter":
            return (
                "Karpenter sizes a node by its instance type's physical GPUs (aws/karpenter-"
                "provider-aws pkg/providers/instancetype/types.go nvidiaGPUs) and launches a node "
                "per pending slot; only a NodeOverlay (alpha, feature gate NodeOverlay) could "
                "declare the slots, which gpu-infra does not plan: use the cluster-autoscaler "
                "(its ASG node-template resources tag carries the count) for this pool's sharing"
            )
        return (
            "the cluster-autoscaler's AWS template takes the ASG's node-template resources tag "
            "over the instance type's GPUs (cloudprovider/aws/aws_manager.go); the tag must "
            "carry what a node advertises"
        )

    @property
    def system_daemonset_mib(self) -> int:
        # The Pod Identity agent's DaemonSet runs where the stack asks for it (or finds it).
        agent = self.plan.identity == "pod-identity"
        data = self.catalog.data_dir
        return daemonset_memory_mib("eks", data) + (
            daemonset_memory_mib("eks-pod-identity", data) if agent else 0
        )

    def node_memory_mib(self, h: PoolHints) -> int:
        g = next((g for g in self.plan.groups if g.hints.name == h.name), None)
        if g is None:  # not a planned pool: its type is unknown, so the most reserve
            return nodeadm_allocatable_mib("", h.memory_gib, self.catalog.data_dir)
        # The running node the scheduling proof judges pods against (Karpenter's node for an
        # instance type reserves what nodeadm does: karpenter.nodes.karpenter_memory_mib).
        return nodes.running_memory_mib(g, self._type_memory_gib(g, h), self.catalog.data_dir)

    def _karpenter_shape(self, instance_type: str, h: PoolHints) -> tuple[float, str, int]:
        """(memory GiB, GPU model, GPUs) of a type as EC2 describes it, what Karpenter and the
        cluster-autoscaler's instance table read."""
        inst = self.catalog.aws_instance(instance_type)
        if inst is None:  # a declared shape: what the pool declares
            return h.memory_gib, h.gpu_type, h.gpus_per_node
        return inst.memory_gib, inst.gpu_model, ec2_gpu_count(inst.gpus, inst.gpu_fraction)

    def _type_memory_gib(self, g: EksGroupPlan, h: PoolHints) -> dict[str, float]:
        """Memory (GiB) per instance type of the group (``h``: its hints). A node group's types
        share one shape, the pool's; a Karpenter NodePool's may differ in size, each as EC2
        describes it (a declared shape: what the pool declares)."""
        out: dict[str, float] = {}
        for t in g.instance_types:
            inst = self.catalog.aws_instance(t) if g.karpenter is not None else None
            out[t] = inst.memory_gib if inst is not None else h.memory_gib
        return out

    def warm_note(self, pools: str) -> str | None:
        return (
            f"gpuPools warm ({pools}): cluster.autoscaler.enabled is false, so nothing adds a "
            "node for a Pending placeholder unless the cluster runs its own autoscaler; the "
            "JupyterHub and Kubeflow choices promise no warm node"
        )

    # --- checks ----------------------------------------------------------------------------------
    def receiver_issues(self) -> Iterator[ConfigIssue]:
        return sent.receiver_issues(self.config, self.plan)

    def namespace_claims(self) -> Iterator[Claim]:
        return sent.namespace_claims(self.plan)

    def claims(self) -> Iterator[Claim]:
        return sent.claims(self.config, self.plan)

    def pool_nodes(
        self, operator: bool, patched: Mapping[str, Mapping[str, str]]
    ) -> dict[str, PoolNodes]:
        specs = {p.name: p for p in self.config.pools}
        out: dict[str, PoolNodes] = {}
        data = self.catalog.data_dir
        for g in self.plan.groups:
            memory = self._type_memory_gib(g, g.hints)
            running = nodes.eks_running_node(g, specs[g.hints.name], memory, data)
            if g.karpenter is not None:
                shapes = {t: self._karpenter_shape(t, g.hints) for t in g.instance_types}
                launchable, problems = karpenter_nodes(g, shapes, data)
                out[g.hints.name] = PoolNodes(running, None, tuple(launchable), tuple(problems))
                continue
            template = None
            if g.group_may_be_empty:
                _, _, gpus = self._karpenter_shape(g.instance_types[0], g.hints)
                template = nodes.eks_template_node(g, gpus)
            out[g.hints.name] = PoolNodes(running, template)
        return out

    def pod_documents(self) -> Iterator[tuple[str, Any]]:
        if self.plan.autoscaler is not None:
            yield "cluster-autoscaler values", self.plan.autoscaler.values
        for dp in (self.plan.device_plugin, self.plan.efa_device_plugin):
            if dp is not None:
                yield f"{dp.chart} values", dp.values

    @property
    def expendable_cutoff(self) -> int | None:
        if self.plan.autoscaler is None:
            return None
        extra = self.plan.autoscaler.values.get("extraArgs") or {}
        if isinstance(extra, Mapping) and CUTOFF_FLAG in extra:
            return int(str(extra[CUTOFF_FLAG]))
        return None

    def legacy_state_issues(self, old: Platform, legacy: frozenset[str], issues: Issues) -> None:
        if POSITIONAL_ACCESS_ENTRIES in legacy and isinstance(old, EksPlatform):
            before = [e.principal_arn for e in old.plan.access_entries]
            positional_entry_issues(
                before, [e.principal_arn for e in self.plan.access_entries], issues
            )

    # --- outputs and views -----------------------------------------------------------------------
    def priced_pools(self) -> tuple[tuple[PricedPool, ...], PricedPool | None]:
        from infra.core.eks.cost import priced_pools

        return priced_pools(self.plan)

    def cost_lines(self, warm: Mapping[str, int], prices: Prices) -> list[Line]:
        from infra.core.eks.cost import eks_lines

        return eks_lines(self.plan, self.config.region or "", prices, warm)

    @property
    def usage_based(self) -> str:
        return "NAT data processing (per GB), data transfer, load balancers, CloudWatch"

    def pool_view(self, h: PoolHints) -> PoolView:
        g = next(g for g in self.plan.groups if g.name == h.name)
        capacity = g.capacity_type.lower().replace("_", "-")
        if g.capacity_reservation_id and capacity == "on-demand":
            capacity = "on-demand (ODCR)"
        return PoolView(places=tuple(g.az_ids), capacity=capacity, min_nodes=h.min_nodes)

    @property
    def system_machine(self) -> str:
        system = self.plan.system
        return ", ".join(system.instance_types) if system is not None else "-"

    @property
    def system_fixed(self) -> bool:
        # With Karpenter nothing scales the system group (eks.system._system_max).
        return self.plan.karpenter is not None

    def table_notes(self) -> list[str]:
        """With ``autoscaler.kind: karpenter``: the controller in place of the cluster-autoscaler."""
        k = self.plan.karpenter
        if k is None:
            return []
        return [
            f"autoscaler: Karpenter {k.version} in {k.namespace} on the system pool, interruption "
            f"queue {k.queue_name} (no cluster-autoscaler)"
        ]

    def pool_lines(self) -> list[str]:
        out = []
        for g in self.plan.groups:
            out.append(f"  {g.name}: {', '.join(g.instance_types)}, AMI {g.ami_type}")
            if g.karpenter is not None:
                spec = g.karpenter.node_pool["spec"]
                alias = g.karpenter.node_class["spec"]["amiSelectorTerms"][0]["alias"]
                out.append(
                    f"    Karpenter NodePool {g.karpenter.name} (weight {spec['weight']}, "
                    f"limits {', '.join(f'{k}={v}' for k, v in spec['limits'].items())}), "
                    f"EC2NodeClass {alias}"
                )
        return out

    def chosen_zones(self) -> dict[str, tuple[str, ...]]:
        return {g.name: tuple(g.az_ids) for g in self.plan.groups}

    @property
    def zones_widen(self) -> str | None:
        # A live node group keeps its AZs (components/eks_nodes); a NodePool's requirement moves.
        if self.cluster.autoscaler.kind != "karpenter":
            return None
        return "the Karpenter NodePool's zone requirement gains it in place"

    # --- quotas ----------------------------------------------------------------------------------
    def quota_sizings(self, catalog: Catalog, issues: Issues) -> list[NodeGroupSizing]:
        from infra.core.eks.capacity import eks_sizings

        return eks_sizings(self.config, self.plan, catalog, issues)

    def limit_groups(self) -> tuple[tuple[str, str, int], ...]:
        eks = self.plan
        groups = [(g.name, ng.name, ng.max_size) for g in eks.groups for ng in g.node_groups]
        if eks.system is not None and not eks.existing:
            groups.append((eks.system.name, eks.system.name, eks.system.max_size))
        return tuple(groups)

    def node_group_pools(self) -> dict[str, str]:
        eks = self.plan
        pool_of = {ng.name: g.name for g in eks.groups for ng in g.node_groups}
        if eks.system is not None:
            pool_of[eks.system.node_group_name] = eks.system.name
        return pool_of

    def node_marks(self) -> tuple[NodeMarks, ...]:
        from infra.core.eks.capacity import eks_node_marks

        return eks_node_marks(self.plan)

    def service_roles(self) -> tuple[ServiceRole, ...]:
        if not karpenter_pools.needs_spot_role(self.plan.groups):
            return ()
        fix = (
            "Karpenter's spot launches fail without it: run `aws iam create-service-linked-role "
            f"--aws-service-name {karpenter_pools.SPOT_SERVICE}` once per account"
        )
        role = karpenter_pools.SPOT_SERVICE_LINKED_ROLE
        return (ServiceRole("aws", role, "Karpenter spot pools", fix),)
