"""GKE as a ``Platform`` (``infra.core.platform``): the GKE plan and every answer shared code asks
of it. ``plan`` is the registry's entry (``infra.core.platforms``)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from infra.core.catalog.shapes import ShapeRules, with_declared_shapes
from infra.core.catalog.vendored import Catalog
from infra.core.config.base import PoolBase
from infra.core.config.gke import GkeClusterSpec, GkePoolSpec
from infra.core.config.stack import StackConfig
from infra.core.errors import ConfigIssue, Issues, join_path
from infra.core.gke import nodes, sent
from infra.core.gke.cluster import transition_issues
from infra.core.gke.model import GkePlan, GkePoolPlan
from infra.core.gke.neighbours import deployed_names
from infra.core.gke.observed import GkeObserved
from infra.core.gke.planner import gke_pool_outputs, plan_gke
from infra.core.gke.presets import PRESETS
from infra.core.labels import GKE_ACCELERATOR_LABEL, GKE_COMPUTE_CLASS_LABEL
from infra.core.nodes import PoolNodes, daemonset_memory_mib
from infra.core.platform import (
    Features,
    NativeSharing,
    NodeMarks,
    NodeRuntime,
    Platform,
    PoolView,
    Preset,
    PricedPool,
)
from infra.core.platform_defaults import PlannedPlatform, planned_as
from infra.core.pools import PoolHints, spec_of
from infra.core.sharing import mig_instances_per_gpu, schedulable_gpus

if TYPE_CHECKING:
    from infra.core.catalog.pricing import Prices
    from infra.core.platform_cost import Line
    from infra.core.sent import Claim
    from infra.core.sizing import NodeGroupSizing

# Why GKE refuses a shape that leaves a node's nvidia.com/gpu at 0, at any minNodes: running nodes
# carry cloud.google.com/gke-accelerator (GPULabel in kubernetes/autoscaler cluster-autoscaler/
# cloudprovider/gce/gce_cloud_provider.go), and cluster-autoscaler treats a node with its GPU label
# and 0 allocatable nvidia.com/gpu as unready (processors/customresources/gpu_processor.go
# FilterOutNodesWithUnreadyResources) and keeps scaling up for it; at minNodes 0 the scale-from-zero
# template knows only nvidia.com/gpu too (cloudprovider/gce/templates.go BuildNodeFromTemplate).
ZERO_GPU_RULE = (
    "on running GKE nodes, which carry cloud.google.com/gke-accelerator: cluster-autoscaler "
    "treats such a node as not ready and scales up for it again, and its scale-from-zero "
    "template knows only nvidia.com/gpu"
)

FEATURES = Features(
    autoscaler="gke",
    autoscaler_gpu_label=nodes.GCE_GPU_LABEL,
    zero_gpu_rule=ZERO_GPU_RULE,
    # GKE labels every GPU node with its accelerator type, the value a Flyte task selects.
    accelerator_label=GKE_ACCELERATOR_LABEL,
    gpu_type_is_accelerator=True,
    partition_label=nodes.GKE_PARTITION_LABEL,
    gpu_present_label=True,
    mig_reboot=True,
    critical_pod_quota=True,
    cloud="gcp",
    places="ZONES",
    labelled_by="GKE (accelerator, partition size) and the node pool's labels",
    unlabelled_fix="its nodes drop the label (MIG mixed or renamed time-slicing: no whole GPU)",
    operator_off="GKE's own driver and device plugin then serve this stack's pools",
)

# GKE's own GPU node setup (the operator off): containerd runs runc, and GKE's device plugin hands a
# container the /dev/nvidiaN node of each GPU it was allocated and nothing else
# (GoogleCloudPlatform/container-engine-accelerators pkg/gpu/nvidia/beta_plugin.go@0129f83e
# Allocate: one DeviceSpec per requested device ID), so NVIDIA_VISIBLE_DEVICES opens nothing.
GKE_NODE_RUNTIME = NodeRuntime(
    default_runtime="runc",
    nvidia_handler=False,
    accept_envvar=None,
    accept_mounts=None,
    device_list="device nodes of the allocated GPUs",
    source=(
        "GoogleCloudPlatform/container-engine-accelerators pkg/gpu/nvidia/beta_plugin.go@0129f83e "
        "Allocate (one DeviceSpec per allocated GPU; no nvidia runtime on GKE's containerd)"
    ),
)

# GKE sends gpuModel as guestAccelerators[].type and selects nodes by the
# cloud.google.com/gke-accelerator label, both the Compute accelerator type name (nvidia-l4,
# nvidia-b200; https://cloud.google.com/compute/docs/gpus), never the marketing name.
_GKE_ACCELERATOR = re.compile(r"nvidia-[a-z0-9]+(?:-[a-z0-9]+)*", re.ASCII)


def _accelerator_type(model: str, catalog: Catalog, path: str, issues: Issues) -> bool:
    if model in catalog.gcp_accelerators() or _GKE_ACCELERATOR.fullmatch(model):
        return True
    known = {catalog.gcp_model(a).model.lower(): a for a in catalog.gcp_accelerators()}
    hint = known.get(model.lower()) or f"nvidia-{model.lower()}"
    issues.add(
        join_path(path, "gpuModel"),
        f"{model!r} is not a GKE accelerator type (did you mean {hint!r}?): GKE takes the "
        "Compute Engine accelerator type name (lowercase nvidia-...)",
    )
    return False


SHAPES = ShapeRules(cloud="gcp", places="zones", check_model=_accelerator_type)


def plan(
    config: StackConfig, catalog: Catalog, issues: Issues, observed: GkeObserved | None = None
) -> GkePlatform:
    """The GKE platform of ``config``: its declared shapes added to ``catalog``, then planned."""
    catalog, notes = with_declared_shapes(config, catalog, issues, SHAPES)
    gke = plan_gke(config, catalog, issues, observed)
    return GkePlatform(config, gke, catalog, FEATURES, notes)


def gke_plan(platform: Platform) -> GkePlan:
    """The GkePlan a stack's ``Plan.platform`` holds (for this platform's components)."""
    return planned_as(platform, GkePlatform, "gke").plan


@dataclass(frozen=True, slots=True)
class GkePlatform(PlannedPlatform[GkeClusterSpec, GkePlan]):
    """A planned GKE stack (``shape_notes``: the notes of its declared shapes)."""

    shape_notes: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return "gke"

    @property
    def pools(self) -> tuple[PoolHints, ...]:
        return tuple(p.hints for p in self.plan.pools)

    @property
    def notes(self) -> tuple[str, ...]:
        return (*self.shape_notes, *self.plan.notes)

    @property
    def offline_assumptions(self) -> tuple[str, ...]:
        c = self.plan.cluster
        if not c.existing:
            return ()  # a cluster the stack creates: nothing is read
        return (
            f"GKE cluster {c.name} exists and runs Workload Identity; its endpoint and CA are "
            "placeholders",
            "it runs no node pool of this stack yet: the pools get a first deploy's names "
            "(a running pool keeps its own)",
        )

    def deployed_names(self, outputs: Mapping[str, Any] | None) -> Mapping[str, str | None]:
        return deployed_names(self.plan, outputs.get("gpuPools") if outputs is not None else None)

    # --- the GPU Operator and the workloads ------------------------------------------------------
    def presets(self) -> Mapping[str, Preset]:
        return PRESETS

    def default_preset(self, pools: Sequence[PoolHints]) -> str:
        first = pools[0] if pools else None
        operator = first is not None and first.driver == "operator"
        return "gke-operator-driver" if operator else "gke-google-driver"

    def driver_key(self, index: int, pool: PoolBase) -> str:
        return join_path("gpuPools", index, "gpu", "driver")

    @property
    def kubernetes_version(self) -> str | None:
        return self.cluster.min_master_version

    @property
    def stated_cpu_nodes(self) -> int | None:
        if self.cluster.cpu_nodes is not None:
            return self.cluster.cpu_nodes
        return None if self.cluster.existing else self.cluster.system_pool.max_nodes

    def workload_selector(self, h: PoolHints) -> dict[str, str]:
        selector = dict(h.node_selector)
        # A pod selects a ComputeClass by GKE_COMPUTE_CLASS_LABEL and GKE picks any of the class's
        # priorities (https://cloud.google.com/kubernetes-engine/docs/concepts/
        # about-custom-compute-classes); gke-accelerator would pin one pool's GPU and defeat it.
        if GKE_COMPUTE_CLASS_LABEL not in selector:
            selector.setdefault(GKE_ACCELERATOR_LABEL, h.gpu_type)
        return selector

    def native_sharing(self, h: PoolHints, pool: PoolBase) -> NativeSharing | None:
        # The pool's own node pool decides (a fallback alternative has its own gpu block); a pool
        # the planner refused has only its gpuPools entry.
        own = next((p for p in self.plan.pools if p.name == h.name), None)
        if own is not None:
            partition, clients = own.partition_size, own.max_shared_clients_per_gpu
            # The config's spelling (gpu.sharing.strategy) of GPUSharingConfig's strategy.
            s = own.sharing_strategy
            strategy = s.lower().replace("_", "-") if s else None
        elif isinstance(pool, GkePoolSpec) and pool.name == h.name:
            sharing = pool.gpu.sharing
            partition = pool.gpu.partition_size
            clients = sharing.max_shared_clients_per_gpu if sharing else None
            strategy = sharing.strategy if sharing else None
        else:
            return None
        if partition is None and strategy is None:
            return None
        return NativeSharing(
            partition,
            strategy,
            clients,
            # GPUs x partitions x clients (https://cloud.google.com/kubernetes-engine/docs/how-to/
            # timesharing-gpus#enable-gke).
            schedulable_gpus(h.gpus_per_node, partition, clients, h.mig_profiles),
            what="GKE's own GPU sharing or partitioning (gpu.sharing / gpu.partitionSize)",
        )

    def node_runtime(self, h: PoolHints) -> NodeRuntime | None:
        return GKE_NODE_RUNTIME

    def request_only(self, h: PoolHints) -> str | None:
        p = next((p for p in self.plan.pools if p.name == h.name), None)
        if p is None or not p.queued_provisioning:
            return None
        # "nodes can be only obtained through queuing via the Cluster Autoscaler
        # ProvisioningRequest API" (container v1 NodePool.QueuedProvisioning.enabled).
        return "queued provisioning gets nodes only through a ProvisioningRequest"

    @property
    def count_remedy(self) -> str:
        return (
            "the GCE autoscaler template counts the instance's physical GPUs (cluster-autoscaler "
            "cloudprovider/gce/templates.go BuildCapacity), so a scale-up from zero adds a node per "
            "pending slot; use GKE's own sharing or partitioning (gpu.sharing, gpu.partitionSize), "
            "which GKE's autoscaler counts, or minNodes >= 1 in a single zone (it then copies a "
            "running node; totalMinNodeCount leaves any zone of several empty)"
        )

    @property
    def system_daemonset_mib(self) -> int:
        return daemonset_memory_mib("gke", self.catalog.data_dir)

    def node_memory_mib(self, h: PoolHints) -> int:
        return nodes.gke_node_memory_mib(h)

    def carried_labels(
        self, h: PoolHints, pool: PoolBase, patched: Mapping[str, str]
    ) -> dict[str, str]:
        labels = {**h.labels, GKE_ACCELERATOR_LABEL: h.gpu_type}
        if isinstance(pool, GkePoolSpec) and pool.gpu.partition_size:
            labels[nodes.GKE_PARTITION_LABEL] = str(pool.gpu.partition_size)
        return labels

    # --- checks ----------------------------------------------------------------------------------
    def receiver_issues(self) -> Iterator[ConfigIssue]:
        return sent.receiver_issues(self.config, self.plan)

    def claims(self) -> Iterator[Claim]:
        return sent.claims(self.config, self.plan)

    def pool_nodes(
        self, operator: bool, patched: Mapping[str, Mapping[str, str]]
    ) -> dict[str, PoolNodes]:
        specs = {p.name: (i, p) for i, p in enumerate(self.config.pools)}
        out: dict[str, PoolNodes] = {}
        for p in self.plan.pools:
            spec = spec_of(specs, p.hints)[1]
            assert isinstance(spec, GkePoolSpec)
            template = nodes.gke_template_node(p) if p.zone_may_be_empty else None
            out[p.name] = PoolNodes(nodes.gke_running_node(p, spec, operator), template)
        return out

    def transition_issues(self, old: StackConfig, issues: Issues) -> None:
        transition_issues(old.cluster, self.cluster, issues)

    # --- outputs and views -----------------------------------------------------------------------
    def pool_outputs(self, per_pool: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
        # Schedulable GPUs per node; pools bound to a ComputeClass share one class-only entry.
        return gke_pool_outputs(self.plan, per_pool)

    @property
    def outputs(self) -> dict[str, Any]:
        return {"gkeNotes": list(self.plan.notes)} if self.plan.notes else {}

    def priced_pools(self) -> tuple[tuple[PricedPool, ...], PricedPool | None]:
        from infra.core.gke.cost import priced_pools

        return priced_pools(self.plan)

    def cost_lines(self, warm: Mapping[str, int], prices: Prices) -> list[Line]:
        from infra.core.gke.cost import cost_lines

        return cost_lines(self.plan, warm, prices)

    @property
    def usage_based(self) -> str:
        from infra.core.gke.cost import usage_based

        return usage_based(self.catalog.prices)

    @property
    def cluster_limits(self) -> tuple[tuple[str, int], ...]:
        limits = self.plan.cluster.auto_provisioning_limits
        return tuple((lim.resource_type, lim.maximum) for lim in limits or ())

    def pool_view(self, h: PoolHints) -> PoolView:
        p = next(p for p in self.plan.pools if p.name == h.name)
        parts: list[str] = []
        factor: int | None = 1
        if p.partition_size:
            per = mig_instances_per_gpu(p.partition_size, h.mig_profiles)
            parts.append(f"GKE MIG {p.partition_size}" + (f" x{per}" if per else ""))
            factor = per
        if p.sharing_strategy:
            clients = p.max_shared_clients_per_gpu or 1
            parts.append(f"GKE {p.sharing_strategy.lower().replace('_', '-')} x{clients}")
            factor = None if factor is None else factor * clients
        return PoolView(
            places=tuple(p.node_locations),
            capacity=_capacity(p),
            min_nodes=p.nodes_at_min,
            sharing=tuple(parts),
            factor=factor,
            alloc=p.schedulable_gpus or None,  # what GKE's device plugin advertises
        )

    @property
    def system_machine(self) -> str:
        return self.plan.cluster.system_machine_type

    def table_notes(self) -> list[str]:
        """With cluster-level node auto-provisioning on: that it is, and its limits."""
        limits = self.plan.cluster.auto_provisioning_limits
        if not limits:
            return []
        caps = ", ".join(
            f"{lim.resource_type} {lim.maximum}{' GB' if lim.resource_type == 'memory' else ''}"
            for lim in limits
        )
        return [f"node auto-provisioning: on (cluster-wide resource limits {caps})"]

    def pool_lines(self) -> list[str]:
        out = []
        for p in self.plan.pools:
            how = (
                f"auto-created by ComputeClass {p.compute_class}, planned"
                if p.auto_create
                else "location policy ANY,"
            )
            out.append(f"  {p.name}: {p.machine_type} ({how} totals {p.total_min}-{p.total_max})")
        return out

    def chosen_zones(self) -> dict[str, tuple[str, ...]]:
        return {p.name: tuple(p.node_locations) for p in self.plan.pools}

    @property
    def zones_widen(self) -> str | None:
        return "the node pool's nodeLocations gain it in place"

    # --- quotas ----------------------------------------------------------------------------------
    def quota_sizings(self, catalog: Catalog, issues: Issues) -> list[NodeGroupSizing]:
        from infra.core.gke.capacity import gke_sizings

        return gke_sizings(self.config, self.plan, catalog, issues)

    def node_marks(self) -> tuple[NodeMarks, ...]:
        from infra.core.gke.capacity import gke_node_marks

        return gke_node_marks(self.plan)


def _capacity(p: GkePoolPlan) -> str:
    if p.spot:
        return "spot"
    if p.flex_start:
        return "flex-start"
    if p.queued_provisioning:
        return "queued"
    kind = p.reservation_type
    if kind not in (None, "NO_RESERVATION"):
        return f"reservation {p.reservation_name or kind.lower()}"
    return "on-demand"
