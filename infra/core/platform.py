"""The platform seam: everything shared code asks of the platform a stack runs on.

Modelled on aws/karpenter-provider-aws ``pkg/providers/amifamily/resolver.go``: one interface
(``AMIFamily`` there, ``Platform`` here) with one implementation per kind, one switch that picks the
implementation by name (``GetAMIFamily`` there, ``plan_platform`` over the registry
``infra.core.platforms`` here), and a value of
feature flags per implementation (``FeatureFlags``, here ``Features``) that shared code reads instead
of asking which kind it has. A stack's ``Plan`` holds its platform's plan through ``Platform``; the
implementations live in their packages (``infra.core.gke.platform``, ``infra.core.eks.platform``,
``infra.core.kubernetes.platform``), and only they and their components know the concrete types.

Every answer is a platform-neutral value: pool hints, nodes for the scheduling proof, priced nodes
for the cost estimate, quota sizings, receiver issues and claims, plan-table rows. Shared code never
tests a platform's name or reads a platform's config schema.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from infra.core.platforms import ENTRIES, load

if TYPE_CHECKING:
    from pathlib import Path

    from infra.core.catalog.pricing import Prices
    from infra.core.catalog.vendored import Catalog
    from infra.core.config.base import PoolBase
    from infra.core.config.stack import StackConfig
    from infra.core.errors import ConfigIssue, Issues
    from infra.core.nodes import PoolNodes
    from infra.core.observed import Observed
    from infra.core.platform_cost import Line
    from infra.core.pools import PoolHints
    from infra.core.sent import Claim
    from infra.core.sizing import NodeGroupSizing

# Who adds and removes a GPU pool's nodes as pods need them: GKE's cluster autoscaler (node pools
# and ComputeClasses), the cluster-autoscaler gpu-infra installs on EKS, or Karpenter.
Autoscaler = Literal["gke", "cluster-autoscaler", "karpenter"]
Cloud = Literal["gcp", "aws"]
# cluster-autoscaler's flag: a pod with a priority below it never triggers a scale-up
# (kubernetes/autoscaler cluster-autoscaler/config/flags/flags.go); ``Platform.expendable_cutoff``
# reads it back from the plan.
CUTOFF_FLAG = "expendable-pods-priority-cutoff"
# Pods below the cutoff (default -10) never trigger a scale-up: IsExpendablePod is
# `priority < cutoff` (kubernetes/autoscaler cluster-autoscaler/core/utils/expendable.go; the
# default in cluster-autoscaler/config/flags/flags.go).
EXPENDABLE_CUTOFF_DEFAULT = -10


# Resource-name formats an older gpu-infra left in a running stack (``lifecycle.legacy_formats``), which
# ``Platform.legacy_state_issues`` checks an edit against: pulumi-eks access entries keyed
# ``entry<j>`` by list position.
POSITIONAL_ACCESS_ENTRIES = "positional-access-entries"


@dataclass(frozen=True, slots=True, kw_only=True)
class Features:
    """What a platform does for the GPU pools it runs: one value per platform (per autoscaler kind
    on EKS), read by shared code in place of the platform's name.

    Attributes:
        autoscaler: who scales the GPU pools; ``None``: nothing gpu-infra runs does (platform
            kubernetes, or ``cluster.autoscaler.enabled: false``), so nothing adds a node for a
            Pending pod.
        autoscaler_gpu_label: the label cluster-autoscaler's cloud provider tells GPU nodes by
            (its ``GPULabel``): a node carrying it with 0 ``nvidia.com/gpu`` is unready to it;
            ``None``: no cluster-autoscaler scales the pools.
        zero_gpu_rule: why a pool shape that leaves a running node's ``nvidia.com/gpu`` at 0 is
            refused (the platform labels every GPU node with that label whatever its sharing);
            ``None``: not refused.
        accelerator_label: the node label whose value names a pool's accelerator (Flyte's
            ``gpu-device-node-label``; gpu-infra patches it onto listed on-prem nodes).
        gpu_type_is_accelerator: a pool's ``gpu_type`` already is that accelerator name.
        partition_label: the label the platform's own GPU partitioning puts on nodes (the
            partition size); ``None``: the platform partitions nothing itself.
        gpu_present_label: gpu-infra labels the pools' nodes ``nvidia.com/gpu.present`` up front
            when the operator runs (GKE), instead of leaving it to the operator's NFD.
        mig_reboot: nodes are cloud VMs that reboot to apply a MIG geometry.
        critical_pod_quota: the platform caps system-critical pods outside kube-system, so the
            operator's namespace needs a ResourceQuota admitting them (GKE).
        listed_nodes: pools list the existing nodes gpu-infra labels (on-prem), so a missing label
            is fixed under ``nodes``, not ``labels``.
        own_hardware: the nodes are the user's machines: no cloud bills them, and no cloud node
            image sets up their container runtime.
        cloud: the cloud whose quotas, prices and service limits apply; ``None``: none.
        managed_node_groups: pools are managed node groups, which a replacement creates before it
            deletes the old ones (the quota preflight's ``--diff`` counts both).
        places: what the plan table calls where a pool's nodes run.
        labelled_by: who puts the accelerator labels on the pools' nodes (Flyte ``labelledBy``).
        unlabelled_fix: how a pool whose nodes carry no accelerator label gets one.
        operator_off: on a cluster the stack does not create, what serves its pools with the GPU
            Operator off (the operator is refused there unless it may manage every GPU node);
            ``""``: never refused (the cluster is the user's own).
    """

    autoscaler: Autoscaler | None
    autoscaler_gpu_label: str | None = None
    zero_gpu_rule: str | None = None
    accelerator_label: str
    gpu_type_is_accelerator: bool = False
    partition_label: str | None = None
    gpu_present_label: bool = False
    mig_reboot: bool = False
    critical_pod_quota: bool = False
    listed_nodes: bool = False
    own_hardware: bool = False
    cloud: Cloud | None = None
    managed_node_groups: bool = False
    places: str
    labelled_by: str
    unlabelled_fix: str
    operator_off: str = ""


@dataclass(frozen=True, slots=True)
class NativeSharing:
    """A pool's GPUs shared or partitioned by the platform itself (GKE time-sharing, MPS, MIG
    partitions), as its device plugin advertises them."""

    partition_size: str | None
    strategy: str | None
    clients_per_gpu: int | None
    # nvidia.com/gpu per node: GPUs x partitions x clients.
    slots: int
    # What it is called, with the config keys that turn it on (for messages).
    what: str = "the platform's own GPU sharing"


@dataclass(frozen=True, slots=True)
class NodePlace:
    """One place a pool's nodes may run, as a price row names it: a GCP machine type (with its
    GPUs) in a zone, or an EC2 instance type in an AZ ID."""

    cloud: Cloud
    machine_type: str
    zone: str
    accelerator: str | None = None
    count: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class PricedPool:
    """A pool's nodes as the cost estimate prices them (``infra.core.cost``): per node the highest
    price over its places, and its node range.

    Attributes:
        machine: what is priced, for the note when no price is known.
        bound: the note replacing it when a price is known but is only an upper bound.
        extra: a note added either way (why the minimum differs from the stack's minNodes).
        max_enforced: the provider caps the pool at ``max_nodes``.
        drift_nodes: nodes ``max_nodes`` counts beyond the pool's maxNodes.
        spot_or_on_demand: the pool may launch Spot or on-demand (a Karpenter NodePool allowing
            both): priced at the on-demand ceiling, its Spot floor noted.
    """

    name: str
    places: tuple[NodePlace, ...]
    spot: bool
    min_nodes: int
    max_nodes: int
    machine: str
    bound: str = ""
    extra: str = ""
    max_enforced: bool = True
    drift_nodes: int = 0
    spot_or_on_demand: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class PoolView:
    """What the plan table shows of one pool beside its hints: where its nodes run, how they are
    bought, its nodes at minimum and the platform's own sharing (parts of the SHARING/MIG cell and
    the allocatable units per physical GPU they make; ``None``: layout-dependent)."""

    places: tuple[str, ...]
    capacity: str
    min_nodes: int
    sharing: tuple[str, ...] = ()
    factor: int | None = 1
    # What the platform's device plugin advertises per node, when it says (overrides the cell).
    alloc: int | None = None


# One Helm value a preset sets: (path, value, why); the operator planner prefixes the preset's name.
PresetSetting = tuple[str, Any, str]


@dataclass(frozen=True, slots=True)
class PresetInputs:
    """What a preset's settings depend on: chart ``version`` (``cdi``: CDI on by default there),
    the cluster's ``kubernetes_version``, the ``pools`` it runs and the plan's catalog ``data_dir``."""

    version: str
    cdi: bool
    kubernetes_version: str | None
    pools: Sequence[PoolHints]
    data_dir: Path


@dataclass(frozen=True, slots=True)
class Preset:
    """A GPU Operator preset (``gpuOperator.preset``): how the chart is set up for one kind of node
    a platform runs. Each platform answers its own (``Platform.presets``); a subclass overrides
    what its nodes need, this base says "nothing of its own".

    Attributes:
        name: the preset's name in the stack file.
        device_plugin: the operator runs the device plugin (``False``: the node image's does).
        mig_manager: the operator runs the MIG manager (``False``: the node image's does).
        toolkit: the operator installs the container toolkit (``False``: the node image ships it).
        device_plugin_config: where the node image's own device plugin is configured (for the
            message when the operator's is off).
    """

    name: str
    device_plugin: bool = True
    mig_manager: bool = True
    toolkit: bool = True
    device_plugin_config: str = ""

    def problem(self, h: PoolHints) -> str | None:
        """Why this preset cannot serve pool ``h``, or ``None``."""
        return None

    def settings(self, at: PresetInputs) -> list[PresetSetting]:
        """The chart values this preset overrides, given ``at`` (``PresetInputs``)."""
        return []

    def notes(self, version: str, cdi: bool) -> list[str]:
        """Where the preset departs from NVIDIA's or the distribution's documented setup."""
        return []

    def version_problem(
        self, version: str, cdi: bool, kubernetes_version: str | None, data_dir: Path
    ) -> str | None:
        """Why chart ``version`` cannot run under this preset, or ``None``."""
        return None

    def before_release(self, pools: Sequence[PoolHints]) -> tuple[dict[str, Any], ...]:
        """Objects the preset's nodes need before the release installs (a driver installer)."""
        return ()


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeRuntime:
    """The container runtime a platform's GPU nodes bring when the GPU Operator does not install
    the container toolkit on them: what decides whether a pod sees a GPU it did not request.

    Attributes:
        default_runtime: containerd's default runtime (``nvidia``, ``runc``, or ``the image's``
            when the platform does not say: taken as possibly ``nvidia``).
        nvidia_handler: containerd has an ``nvidia`` runtime handler a RuntimeClass can name.
        accept_envvar: the toolkit honours ``NVIDIA_VISIBLE_DEVICES`` from unprivileged containers
            (``None``: no toolkit on the node).
        accept_mounts: the toolkit reads the device plugin's volume-mount device list.
        device_list: the platform's own device plugin's strategy (``None``: the plugin is not the
            platform's).
        source: where each of these comes from.
    """

    default_runtime: str
    nvidia_handler: bool
    accept_envvar: bool | None
    accept_mounts: bool | None
    device_list: str | None
    source: str


@dataclass(frozen=True, slots=True)
class NodeMarks:
    """How the cloud marks every VM of one of the stack's node groups: the EC2 tags or GCE labels it
    puts on them, by which the quota preflight tells what the stack itself runs from the rest of
    the account's usage (``Platform.node_marks``).

    Attributes:
        pool: the quota sizing the VMs belong to (``NodeGroupSizing.name``).
        group: the EKS node group, Karpenter NodePool or GKE node pool the marks name.
        marks: every ``(key, value)`` a VM carries (all of them must match).
    """

    pool: str
    group: str
    marks: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class ServiceRole:
    """A role the cloud account must already have for the plan to work (the stack cannot create
    it), with why and the one-off command that creates it."""

    cloud: Cloud
    name: str
    why: str
    fix: str


class Platform(Protocol):
    """One stack's platform as planned: its plan, and every answer shared code needs from it."""

    # --- what it is ------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """The registry's key (``platform`` in the stack file)."""
        ...

    @property
    def features(self) -> Features: ...

    @property
    def pools(self) -> tuple[PoolHints, ...]:
        """Platform-neutral hints of every GPU pool (GKE fallback pools included), in plan order."""
        ...

    @property
    def notes(self) -> tuple[str, ...]:
        """What a person should know before deploying (declared shapes, the planner's notes)."""
        ...

    @property
    def offline_assumptions(self) -> tuple[str, ...]:
        """What an offline plan (nothing observed) assumes of the live platform, which its
        observe step would read on ``pulumi up`` (``--json`` ``observed.assumed``)."""
        ...

    def deployed_names(self, outputs: Mapping[str, Any] | None) -> Mapping[str, str | None]:
        """The names of in-cluster objects an offline plan assumes (a first deploy's), each mapped
        to the name the deployed stack runs under, from its outputs (``pulumi stack output
        --json``); ``None``: unknown (no outputs, or they do not show it). Empty: nothing assumed."""
        ...

    @property
    def catalog(self) -> Catalog:
        """The catalog the platform planned with: vendored data plus the stack's declared shapes."""
        ...

    @property
    def cluster_name(self) -> str: ...

    @property
    def existing(self) -> bool:
        """The stack attaches to a cluster it does not create."""
        ...

    # --- the GPU Operator and the workloads ------------------------------------------------------
    def presets(self) -> Mapping[str, Preset]:
        """The GPU Operator presets that can serve this platform's nodes, by name."""
        ...

    def default_preset(self, pools: Sequence[PoolHints]) -> str:
        """The preset for ``pools`` when ``gpuOperator.preset`` names none."""
        ...

    def driver_key(self, index: int, pool: PoolBase) -> str:
        """The config key that decides where ``gpuPools[index]``'s driver comes from."""
        ...

    @property
    def kubernetes_version(self) -> str | None:
        """The cluster's Kubernetes version as the stack pins it; ``None``: not pinned."""
        ...

    @property
    def stated_cpu_nodes(self) -> int | None:
        """The cluster's CPU nodes at most, as the stack states them or creates them."""
        ...

    def listed_nodes(self, pool: str) -> tuple[str, ...]:
        """The existing nodes a pool lists for gpu-infra to label (on-prem); ``()`` elsewhere."""
        ...

    def workload_selector(self, h: PoolHints) -> dict[str, str]:
        """The node selector a workload uses to land on pool ``h``."""
        ...

    def native_sharing(self, h: PoolHints, pool: PoolBase) -> NativeSharing | None:
        """The platform's own sharing or partitioning of pool ``h`` (``pool``: its gpuPools entry)."""
        ...

    def carried_labels(
        self, h: PoolHints, pool: PoolBase, patched: Mapping[str, str]
    ) -> dict[str, str]:
        """The labels pool ``h``'s nodes really carry (``patched``: what gpu-infra labels its
        listed nodes with)."""
        ...

    def request_only(self, h: PoolHints) -> str | None:
        """Why a Pending pod alone never brings up a node of pool ``h`` (its nodes come only
        through a request the stack's outputs do not carry); ``None``: a pod reaches it."""
        ...

    @property
    def count_remedy(self) -> str:
        """What to do where the platform's autoscaler counts a GPU resource other than a running
        node advertises (why it does, and the fix or the alternative)."""
        ...

    @property
    def system_daemonset_mib(self) -> int:
        """Memory (MiB) the platform's own DaemonSets request on every GPU node (CNI, kube-proxy,
        CSI, logging, metrics, its device plugin), as published for it."""
        ...

    def node_memory_mib(self, h: PoolHints) -> int:
        """The least allocatable memory (MiB) a node of pool ``h`` has, by the receiver's own
        model: the autoscaler's template, the running node, every instance type Karpenter may
        launch. JupyterHub's whole-node guarantee is cut from it."""
        ...

    def warm_note(self, pools: str) -> str | None:
        """Why the warm placeholders of ``pools`` may warm no node where ``features.autoscaler``
        is ``None`` (nothing gpu-infra runs adds a node for a Pending pod)."""
        ...

    def node_runtime(self, h: PoolHints) -> NodeRuntime | None:
        """The container runtime pool ``h``'s nodes bring without the operator's toolkit;
        ``None``: unknown (the user's own hosts)."""
        ...

    # --- checks ----------------------------------------------------------------------------------
    def receiver_issues(self) -> Iterator[ConfigIssue]:
        """Every name, label, taint and tag of the platform's own objects its receiver refuses."""
        ...

    def namespace_claims(self) -> Iterator[Claim]:
        """Namespaces the platform's plan creates (claimed before the stack's own)."""
        ...

    def claims(self) -> Iterator[Claim]:
        """Cloud names and Helm releases the platform's plan creates."""
        ...

    def pool_nodes(
        self, operator: bool, patched: Mapping[str, Mapping[str, str]]
    ) -> dict[str, PoolNodes]:
        """Per pool the node a pod must fit as it runs and where the autoscaler imagines one
        (``operator``: the GPU Operator runs; ``patched``: labels gpu-infra puts on listed nodes)."""
        ...

    def pod_documents(self) -> Iterator[tuple[str, Any]]:
        """Every document of the platform's plan that may name a pod's priority class."""
        ...

    @property
    def expendable_cutoff(self) -> int | None:
        """The autoscaler's ``--expendable-pods-priority-cutoff`` as planned; ``None``: its default."""
        ...

    def transition_issues(self, old: StackConfig, issues: Issues) -> None:
        """Changes from the running ``old`` stack that ``pulumi up`` would not make as written."""
        ...

    def legacy_state_issues(self, old: Platform, legacy: frozenset[str], issues: Issues) -> None:
        """Changes ``pulumi up`` cannot make over a stack whose resources an older gpu-infra
        named in one of the ``legacy`` formats (``lifecycle.legacy_formats``)."""
        ...

    # --- outputs and views -----------------------------------------------------------------------
    def pool_outputs(self, per_pool: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
        """The ``gpuPools`` stack output from the per-pool scheduling hints."""
        ...

    @property
    def outputs(self) -> dict[str, Any]:
        """Stack outputs of the platform's own."""
        ...

    def priced_pools(self) -> tuple[tuple[PricedPool, ...], PricedPool | None]:
        """The GPU pools and the system pool as the cost estimate prices them."""
        ...

    def cost_lines(self, warm: Mapping[str, int], prices: Prices) -> list[Line]:
        """What the stack costs besides its nodes at ``prices`` (``warm``: per pool its warm
        nodes)."""
        ...

    @property
    def cluster_limits(self) -> tuple[tuple[str, int], ...]:
        """Cluster-wide resource limits that cap auto-created pools, ``(resource, maximum)``."""
        ...

    @property
    def usage_based(self) -> str:
        """What the platform bills by use, which no plan can price (listed as unpriced)."""
        ...

    def pool_view(self, h: PoolHints) -> PoolView: ...

    @property
    def system_machine(self) -> str:
        """The system pool's machine or instance types (``-``: none)."""
        ...

    @property
    def system_fixed(self) -> bool:
        """Nothing scales the system pool."""
        ...

    def table_notes(self) -> list[str]:
        """Plan-table lines after the system pool (the autoscaler, auto-provisioning)."""
        ...

    def pool_lines(self) -> list[str]:
        """Plan-table lines per pool: its machine and node range, or types and AMI."""
        ...

    def unpinned_zones(self) -> dict[int, tuple[str, ...]]:
        """``gpuPools`` index -> the zones the plan chose for a pool that lists none."""
        ...

    @property
    def zones_widen(self) -> str | None:
        """What a catalog refresh that offers a pool one more zone does to it, in place;
        ``None``: nothing moves (a live node group keeps its AZs)."""
        ...

    # --- quotas ----------------------------------------------------------------------------------
    def quota_sizings(self, catalog: Catalog, issues: Issues) -> list[NodeGroupSizing]:
        """Every node pool or group and what it can grow to (the system and bootstrap pools too)."""
        ...

    def limit_groups(self) -> tuple[tuple[str, str, int], ...]:
        """``(pool, node group, max size)`` of every managed node group the stack creates."""
        ...

    def node_group_pools(self) -> dict[str, str]:
        """Managed node group name -> the pool it belongs to."""
        ...

    def node_marks(self) -> tuple[NodeMarks, ...]:
        """The tags or labels the cloud puts on the VMs of each node group the stack plans."""
        ...

    def service_roles(self) -> tuple[ServiceRole, ...]:
        """Roles the account must already have."""
        ...


def plan_platform(
    config: StackConfig, catalog: Catalog, issues: Issues, observed: Observed
) -> Platform:
    """Plan ``config``'s platform (its declared shapes added to ``catalog``) by the registry's
    planner of it, over its own part of what the observe step read; problems go to ``issues``."""
    entry = ENTRIES[config.platform]
    plan = load(entry.planner)
    if entry.observation is None:  # it reads nothing (an existing cluster's kubeconfig)
        planned: Platform = plan(config, catalog, issues)
    else:
        planned = plan(config, catalog, issues, observed.part(load(entry.observation)))
    return planned
