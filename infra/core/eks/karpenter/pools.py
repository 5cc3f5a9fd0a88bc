"""One GPU pool as a Karpenter EC2NodeClass and NodePool (``cluster.autoscaler.kind: karpenter``).

Pure code. The pool is first decided as for a node group (``infra.core.eks.groups.plan_group``:
instance types, AMI, AZs, labels, taints, sharing); ``plan_karpenter_pool`` turns that decision
into the two manifests, and ``karpenter_problems`` refuses what has no Karpenter meaning.
Field semantics: aws/karpenter-provider-aws v1.14.1 website/content/en/docs/concepts/
nodepools.md, nodeclasses.md and disruption.md (cited below as nodepools.md etc.).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from infra.core.catalog.pins import pins
from infra.core.catalog.vendored import table
from infra.core.config.eks import EksPoolSpec
from infra.core.eks.ami import AMI_PARAMETER_ANNOTATION, karpenter_ami_parameter
from infra.core.eks.bootstrap import node_user_data
from infra.core.eks.karpenter.crds import NODECLASS_API, NODEPOOL_API, validate
from infra.core.eks.karpenter.names import discovery_tag
from infra.core.errors import Issues, join_path
from infra.core.labels import POOL_LABEL
from infra.core.pools import GPU_RESOURCE
from infra.core.rules.durations import go_duration_ns

if TYPE_CHECKING:
    from infra.core.eks.groups import EksGroupPlan

# The role placeholder of a planned EC2NodeClass: the component sends the cluster's node IAM role
# name (spec.role: "which IAM identity nodes should assume", nodeclasses.md "spec.role"), known only
# at deploy time. The system managed node group runs under the same role, and EKS creates the
# EC2_LINUX access entry of a managed node group's role itself
# (https://docs.aws.amazon.com/eks/latest/userguide/creating-access-entries.html), so the nodes
# Karpenter launches with it join without an entry of their own.
NODE_ROLE_PLACEHOLDER = "<the cluster's node IAM role>"

# Well-known labels Karpenter schedules on (nodepools.md "Well-Known Labels"; the Kubernetes
# ones: https://kubernetes.io/docs/reference/labels-annotations-taints/).
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
CAPACITY_TYPE_LABEL = "karpenter.sh/capacity-type"
ZONE_ID_LABEL = "topology.k8s.aws/zone-id"
ARCH_LABEL = "kubernetes.io/arch"
GPU_NAME_LABEL = "karpenter.k8s.aws/instance-gpu-name"
GPU_COUNT_LABEL = "karpenter.k8s.aws/instance-gpu-count"
# EC2 architecture -> kubernetes.io/arch value.
_ARCH = {"x86_64": "amd64", "arm64": "arm64"}

# Spot pools before on-demand ones: when a pod fits several NodePools, "Karpenter will use the
# NodePool with the highest weight" (nodepools.md "spec.weight"; 1-100 by the CRD).
SPOT_WEIGHT = 20
ON_DEMAND_WEIGHT = 10

# Consolidation only of empty nodes: WhenEmptyOrUnderutilized also evicts running pods to repack
# them onto cheaper nodes (karpenter-provider-aws v1.14 concepts/disruption.md "Consolidation"), which restarts GPU jobs and notebooks.
CONSOLIDATION_POLICY = "WhenEmpty"
# Voluntary disruption per NodePool (karpenter-provider-aws v1.14 concepts/disruption.md "NodePool Disruption Budgets"): drifted nodes
# (an AMI pin or NodeClass change) at most one at a time, each replacement launched and ready
# before the old node drains (karpenter-provider-aws v1.14 concepts/disruption.md "Disruption Controller" step 4); empty nodes all at
# once. The replacement counts against the NodePool's limits ("Karpenter will not provision nodes
# past these limits ... during scaling operations or drift replacement", karpenter-provider-aws
# v1.14 concepts/nodepools.md "spec.limits"), so the limits leave room for it: a pool at maxNodes can still be refreshed.
DRIFT_BUDGET_NODES = 1
BUDGETS: tuple[Mapping[str, Any], ...] = (
    {"nodes": str(DRIFT_BUDGET_NODES), "reasons": ["Drifted"]},
    {"nodes": "100%", "reasons": ["Empty"]},
)
# No expiry: expiration drains a node however busy and is not rate-limited by budgets
# (karpenter-provider-aws v1.14 concepts/disruption.md "Expiration"; default 720h). Nodes are refreshed by drift when the pinned AMI
# alias is raised, at most one at a time, and idle nodes leave through consolidation.
EXPIRE_AFTER = "Never"

# IMDSv2 only with one hop, as the node groups' launch templates (infra.components.eks_nodes):
# pods cannot reach the node role's credentials (EC2NodeClass spec.metadataOptions).
METADATA_OPTIONS: Mapping[str, Any] = {
    "httpEndpoint": "enabled",
    "httpProtocolIPv6": "disabled",
    "httpPutResponseHopLimit": 1,
    "httpTokens": "required",
}
# A spot launch needs the account's EC2 Spot service-linked role; EC2 creates it on first use only
# for callers allowed iam:CreateServiceLinkedRole, which the controller's policy is not, so
# CreateFleet fails with "AuthFailure.ServiceLinkedRoleCreationNotPermitted" (aws/karpenter-provider-
# aws v1.14.1 website/content/en/v1.14/troubleshooting.md "Missing Service Linked Role").
SPOT_SERVICE_LINKED_ROLE = "AWSServiceRoleForEC2Spot"
SPOT_SERVICE = "spot.amazonaws.com"
# Bottlerocket's OS volume: Karpenter's own default size, 4Gi (aws/karpenter-provider-aws v1.14.1
# pkg/providers/amifamily/bottlerocket.go DefaultBlockDeviceMappings); sent because a mapping list
# replaces the defaults and the CRD needs a size (rule has(self.snapshotID) || has(self.volumeSize)).
BOTTLEROCKET_OS_VOLUME = "4Gi"


def ami_aliases(data_dir: Path) -> dict[str, str]:
    """AMI family -> pinned alias version (pins.csv rows karpenter-ami-alias).

    Never ``latest``: a new release would drift every node. An alias is ``family@version``; AL2023
    pins the amazon-eks-ami GitHub release tag, Bottlerocket its release version
    (aws/karpenter-provider-aws v1.14.1 website/content/en/docs/concepts/nodeclasses.md
    "spec.amiSelectorTerms").
    """
    return {family: p.version for family, p in pins("karpenter-ami-alias", data_dir).items()}


def alias_minors(family: str, version: str, data_dir: Path) -> tuple[int, int] | None:
    """(first, last) Kubernetes minor the alias ``family@version`` ships NVIDIA AMIs for
    (``ami_alias_minors.csv``, each row from the release's notes), ``None`` when none is on file."""
    for r in table("ami_alias_minors.csv", data_dir):
        if (r["family"], r["version"]) == (family, version):
            return _minor(r["first_minor"]), _minor(r["last_minor"])
    return None


def _minor(version: str) -> int:
    return int(version.split(".")[1])


def alias_problem(family: str, kubernetes_version: str, data_dir: Path) -> str | None:
    """Why the alias of ``family`` pinned in the catalog of ``data_dir`` resolves to no NVIDIA AMI
    on ``kubernetes_version``."""
    version = ami_aliases(data_dir)[family]
    minors = alias_minors(family, version, data_dir)
    if minors is not None and minors[0] <= _minor(kubernetes_version) <= minors[1]:
        return None
    shipped = f"1.{minors[0]}-1.{minors[1]}" if minors else "no Kubernetes minor on file"
    return (
        f"the pinned AMI alias {family}@{version} (pins.csv karpenter-ami-alias) ships NVIDIA "
        f"images for {shipped} (ami_alias_minors.csv, from its release notes), not "
        f"{kubernetes_version}: Karpenter would find no AMI for the EC2NodeClass; use amiFamily "
        "al2023 or a Kubernetes version the alias ships"
    )


def ami_family(ami_type: str) -> str | None:
    """The alias family of an EKS AMI type (``AL2023_x86_64_NVIDIA`` -> ``al2023``)."""
    for prefix, family in (("AL2023_", "al2023"), ("BOTTLEROCKET_", "bottlerocket")):
        if ami_type.startswith(prefix):
            return family
    return None


def gpu_name(gpu_model: str) -> str:
    """The instance-gpu-name value Karpenter derives from GpuInfo.Name: lower case, spaces to
    dashes (aws/karpenter-provider-aws v1.14.1 pkg/providers/instancetype/types.go
    lowerKabobCase)."""
    return gpu_model.lower().replace(" ", "-")


# pulumi-kubernetes waits this long for a deleted object of a kind it has no awaiter for (a custom
# resource such as a Karpenter NodePool) to be gone, unless the resource has a delete timeout
# (customTimeouts.delete: the watch's TimeoutSeconds; pulumi/pulumi-kubernetes provider/pkg/await/
# await.go Deletion @ 0012b9d2 ``var timeoutSeconds int64 = 300``).
K8S_DELETE_WAIT_SECONDS = 300


def drain_delete_minutes(grace_seconds: float) -> int:
    """Delete timeout of an object whose deletion drains nodes for up to ``grace_seconds`` (a
    Karpenter NodePool or EC2NodeClass: ``terminationGracePeriod``): the drain budget plus the
    provider's own wait for the object to go once the nodes are gone (``K8S_DELETE_WAIT_SECONDS``).

    A Karpenter node waits for its VolumeAttachments to be cleaned up until the grace period has
    elapsed (kubernetes-sigs/karpenter pkg/controllers/node/termination/controller.go
    ``awaitVolumeDetachment`` @ 22664681), so a shorter timeout ends ``pulumi destroy`` with the
    GPU instances still running.
    """
    return math.ceil((grace_seconds + K8S_DELETE_WAIT_SECONDS) / 60)


@dataclass(frozen=True, slots=True, kw_only=True)
class KarpenterPoolPlan:
    """One GPU pool as Karpenter objects.

    Attributes:
        name: metadata.name of both the EC2NodeClass and the NodePool (cluster-scoped).
        node_class: the EC2NodeClass manifest; ``spec.role`` is ``NODE_ROLE_PLACEHOLDER``.
        node_pool: the NodePool manifest.
        max_nodes: the pool's size at maximum (maxNodes).
        drift_surge: replacement nodes a drift may run beside the nodes it replaces; the
            ``limits`` admit ``max_nodes + drift_surge`` nodes (``limit_nodes``).
        delete_timeout_minutes: both objects' delete timeout, the drain budget
            (``drain_delete_minutes`` of ``terminationGracePeriod``).
    """

    name: str
    node_class: Mapping[str, Any]
    node_pool: Mapping[str, Any]
    max_nodes: int
    drift_surge: int = DRIFT_BUDGET_NODES
    delete_timeout_minutes: int = 0

    @property
    def limit_nodes(self) -> int:
        """Nodes the NodePool ``limits`` admit. Limits cannot tell a drift replacement from a
        scale-up, so a busy pool may hold this many at any time: cost at maximum counts it."""
        return self.max_nodes + self.drift_surge

    def node_class_with_role(self, role: Any) -> dict[str, Any]:
        """The EC2NodeClass with the node role (a name, or a deploy-time output)."""
        return {**self.node_class, "spec": {**self.node_class["spec"], "role": role}}


def karpenter_problems(i: int, pool: EksPoolSpec, issues: Issues) -> None:
    """Refuse pool keys that a NodePool cannot honour, each with its key, value and rule."""
    at = join_path("gpuPools", i)
    if pool.min_nodes > 0:
        # A NodePool launches nodes for pending pods only; its static mode (spec.replicas) keeps
        # a fixed count, cannot scale, and cannot later become dynamic (CRD rule
        # has(self.replicas) == has(oldSelf.replicas)).
        issues.add(
            join_path(at, "minNodes"),
            f"{pool.min_nodes}: a Karpenter NodePool keeps no minimum (it launches nodes for "
            "pending pods only); use gpuPools[].warm to keep GPU nodes ready, or "
            "cluster.autoscaler.kind: cluster-autoscaler for a node group with a minimum",
        )
    if pool.group_per_zone:
        issues.add(
            join_path(at, "groupPerZone"),
            "true: node groups only; Karpenter picks the zone per pending pod (a pod bound to an "
            "EBS volume gets a node in that volume's zone), so one NodePool covers every zone",
        )
    if pool.release_version is not None:
        # The EC2NodeClass picks the AMI by its amiSelectorTerms alias (family@version), not a
        # node group's releaseVersion.
        issues.add(
            join_path(at, "releaseVersion"),
            f"{pool.release_version!r}: node groups only; a Karpenter pool's AMI is the "
            "EC2NodeClass amiSelectorTerms alias (family@version), pinned per family",
        )
    if pool.hpc:
        issues.add(
            join_path(at, "hpc"),
            "true: EFA interfaces, placement group and local NVMe are planned for node groups "
            "only; use cluster.autoscaler.kind: cluster-autoscaler for hpc pools",
        )
    if pool.ami_type is not None and ami_family(pool.ami_type) is None:
        issues.add(
            join_path(at, "amiType"),
            f"{pool.ami_type!r}: Karpenter pools take an AL2023 or Bottlerocket AMI alias "
            "(amiFamily: al2023 | bottlerocket)",
        )


def _requirements(group: EksGroupPlan, architecture: str) -> list[dict[str, Any]]:
    """What every node the NodePool launches must be: the pool's types, capacity, AZs, GPU."""
    h = group.hints
    reqs: list[dict[str, Any]] = [
        {"key": INSTANCE_TYPE_LABEL, "operator": "In", "values": list(group.instance_types)},
        {"key": CAPACITY_TYPE_LABEL, "operator": "In", "values": list(capacity_types(group))},
        {"key": ZONE_ID_LABEL, "operator": "In", "values": list(group.az_ids)},
        {"key": ARCH_LABEL, "operator": "In", "values": [_ARCH[architecture]]},
        {"key": GPU_NAME_LABEL, "operator": "In", "values": [gpu_name(h.gpu_type)]},
    ]
    if h.gpus_per_node > 0:  # a fractional GPU type reports no whole-GPU count
        reqs.append({"key": GPU_COUNT_LABEL, "operator": "In", "values": [str(h.gpus_per_node)]})
    return reqs


def capacity_types(group: EksGroupPlan) -> tuple[str, ...]:
    """karpenter.sh/capacity-type values: ``spot``, ``on-demand``, and ``reserved`` for a
    capacity reservation or Capacity Block (nodeclasses.md "spec.capacityReservationSelectorTerms":
    reservations are used before on-demand and spot); reservation-only pools take ``reserved``
    alone."""
    if group.capacity_type == "SPOT":
        return ("spot",)
    if group.capacity_type == "SPOT_OR_ON_DEMAND":
        return ("spot", "on-demand")
    only = group.capacity_type == "CAPACITY_BLOCK" or (
        group.capacity_reservation_preference == "capacity-reservations-only"
    )
    if only:
        return ("reserved",)
    if group.capacity_reservation_id or group.capacity_reservation_preference == "open":
        return ("reserved", "on-demand")
    return ("on-demand",)


def _reservation_terms(group: EksGroupPlan) -> list[dict[str, str]]:
    """capacityReservationSelectorTerms: the given reservation, or any open one."""
    if group.capacity_reservation_id:
        return [{"id": group.capacity_reservation_id}]
    if group.capacity_reservation_preference in ("open", "capacity-reservations-only"):
        return [{"instanceMatchCriteria": "open"}]
    return []


NODES_LIMIT = "nodes"


def limits(max_nodes: int, gpus: int, vcpus: int, memory_gib: float) -> dict[str, str]:
    """NodePool ``limits`` that stop it at ``max_nodes`` nodes: GPUs, CPUs and memory of that many
    nodes. "If a limit has been exceeded, nodes provisioning is prevented" (nodepools.md
    "spec.limits"); quantities as strings, as that page recommends. ``nodes`` too: "The
    limits.nodes field constrains the maximum number of nodes during scaling operations or drift
    replacement" (same page; kubernetes-sigs/karpenter v1.14.1 pkg/controllers/provisioning/
    scheduling/scheduler.go checks remaining[resources.Node] before any instance type)."""
    out = {
        "cpu": str(max_nodes * vcpus),
        "memory": f"{math.ceil(max_nodes * memory_gib)}Gi",
        NODES_LIMIT: str(max_nodes),
    }
    if gpus > 0:
        out[GPU_RESOURCE] = str(max_nodes * gpus)
    return out


def nodes_within(pool_limits: Mapping[str, str], gpus: int, vcpus: int, memory_gib: float) -> int:
    """The most nodes of one shape the NodePool ``limits`` admit (the inverse of ``limits``):
    maxNodes and the drift replacement, which cost at maximum and quota demand count."""
    counts = [int(pool_limits["cpu"]) // vcpus]
    if NODES_LIMIT in pool_limits:
        counts.append(int(pool_limits[NODES_LIMIT]))
    counts.append(math.floor(int(pool_limits["memory"].removesuffix("Gi")) / memory_gib))
    if GPU_RESOURCE in pool_limits and gpus > 0:
        counts.append(int(pool_limits[GPU_RESOURCE]) // gpus)
    return min(counts)


def _block_devices(family: str, disk_gib: int) -> list[dict[str, Any]]:
    """Encrypted gp3: the sized root (AL2023 /dev/xvda) or data volume (Bottlerocket /dev/xvdb,
    beside its OS volume), as the node groups' launch templates size them."""
    ebs = {"volumeType": "gp3", "encrypted": True, "deleteOnTermination": True}
    if family != "bottlerocket":
        return [{"deviceName": "/dev/xvda", "ebs": {**ebs, "volumeSize": f"{disk_gib}Gi"}}]
    return [
        {"deviceName": "/dev/xvda", "ebs": {**ebs, "volumeSize": BOTTLEROCKET_OS_VOLUME}},
        {"deviceName": "/dev/xvdb", "ebs": {**ebs, "volumeSize": f"{disk_gib}Gi"}},
    ]


def node_class(group: EksGroupPlan, ctx: PoolContext, tags: Mapping[str, str]) -> dict[str, Any]:
    """The pool's EC2NodeClass: pinned AMI alias, its subnets, discovery-tag security groups,
    encrypted gp3, IMDSv2, the GPU-isolation user data of the node groups.

    Annotated with the SSM parameter the alias resolves through for the cluster's minor
    (``AMI_PARAMETER_ANNOTATION``): Karpenter reads neither, but the plan records what it
    resolved, so a Kubernetes minor or a moved alias pin shows as a change of the EC2NodeClass
    that drifts every node (``data/node_disruption.csv``).

    Subnets by ID where they are given (``ctx.subnet_ids``), else by the discovery tag the subnets
    of the VPC the stack creates carry from their creation. Given subnets are not the stack's to
    tag: another cluster's Karpenter may select them by ``karpenter.sh/discovery`` with its own
    value, and EC2 CreateTags overwrites a key's value ("If you specify a tag key that is already
    associated with the resource, the new tag value you specify overwrites the previous value",
    EC2 API reference CreateTags). "Karpenter discovers subnets through the EC2NodeClass using ids
    or tags", one ``id`` per term, terms ORed (aws/karpenter-provider-aws website/content/en/v1.14/
    concepts/nodeclasses.md ``spec.subnetSelectorTerms``).
    """
    family = ami_family(group.ami_type) or "al2023"
    version = ami_aliases(ctx.data_dir)[family]
    parameter = karpenter_ami_parameter(family, version, ctx.kubernetes_version, ctx.architecture)
    key, value = discovery_tag(ctx.cluster_name)
    subnets = [{"id": s} for s in ctx.subnet_ids] or [{"tags": {key: value}}]
    spec: dict[str, Any] = {
        "amiSelectorTerms": [{"alias": f"{family}@{version}"}],
        "role": NODE_ROLE_PLACEHOLDER,
        "subnetSelectorTerms": subnets,
        "securityGroupSelectorTerms": [{"tags": {key: value}}],
        "blockDeviceMappings": _block_devices(family, group.disk_size_gib),
        "metadataOptions": dict(METADATA_OPTIONS),
        "tags": dict(tags),
    }
    # AL2023: Karpenter keeps the user's MIME parts and appends its own NodeConfig after them
    # (aws/karpenter-provider-aws v1.14.1 pkg/providers/amifamily/bootstrap/nodeadm.go Script:
    # append(customEntries, NodeConfig)); Bottlerocket takes TOML and needs no script here.
    user_data = node_user_data(group.ami_type, local_nvme=False)
    if user_data is not None:
        spec["userData"] = user_data
    if terms := _reservation_terms(group):
        spec["capacityReservationSelectorTerms"] = terms
    return {
        "apiVersion": NODECLASS_API,
        "kind": "EC2NodeClass",
        "metadata": {
            "name": group.name,
            "labels": {POOL_LABEL: group.name},
            "annotations": {AMI_PARAMETER_ANNOTATION: parameter},
        },
        "spec": spec,
    }


def node_pool(
    group: EksGroupPlan, ctx: PoolContext, pool_limits: Mapping[str, str]
) -> dict[str, Any]:
    """The pool's NodePool: its requirements, the node groups' labels and taints, limits,
    disruption for GPU work and the spot-first weight."""
    return {
        "apiVersion": NODEPOOL_API,
        "kind": "NodePool",
        "metadata": {"name": group.name, "labels": {POOL_LABEL: group.name}},
        "spec": {
            "template": {
                "metadata": {"labels": dict(group.labels)},
                "spec": {
                    "nodeClassRef": {
                        "group": NODECLASS_API.split("/")[0],
                        "kind": "EC2NodeClass",
                        "name": group.name,
                    },
                    "requirements": _requirements(group, ctx.architecture),
                    # An empty value is left out: the CRD's pattern for taints[].value refuses
                    # "" (it needs one character), and a taint without a value is what it means.
                    "taints": [
                        {
                            "key": t.key,
                            **({"value": t.value} if t.value else {}),
                            "effect": t.effect,
                        }
                        for t in group.taints
                    ],
                    "expireAfter": EXPIRE_AFTER,
                    # Without it a drain waits for PDBs and do-not-disrupt pods indefinitely
                    # (nodepools.md "spec.template.spec.terminationGracePeriod"), and a
                    # destroy waits on the EC2NodeClass finalizer with it.
                    "terminationGracePeriod": ctx.termination_grace_period,
                },
            },
            "limits": dict(pool_limits),
            "disruption": {
                "consolidationPolicy": CONSOLIDATION_POLICY,
                "consolidateAfter": ctx.consolidate_after,
                "budgets": [dict(b) for b in BUDGETS],
            },
            "weight": SPOT_WEIGHT if "spot" in capacity_types(group) else ON_DEMAND_WEIGHT,
        },
    }


@dataclass(frozen=True, slots=True, kw_only=True)
class PoolContext:
    """What a Karpenter pool needs beyond its decided group."""

    cluster_name: str
    stack: str
    architecture: str
    memory_gib: float  # the largest of the pool's instance types
    consolidate_after: str
    data_dir: Path  # the plan's catalog, whose pins.csv the AMI alias comes from (--old-catalog)
    vcpus: int = 0  # the largest of the pool's instance types (0: the hints')
    termination_grace_period: str = "48h"
    kubernetes_version: str = ""  # the cluster's minor: the AMI alias resolves per minor
    subnet_ids: tuple[str, ...] = ()  # given private subnets (none: the stack's own VPC)


def plan_karpenter_pool(
    i: int, group: EksGroupPlan, ctx: PoolContext, issues: Issues
) -> KarpenterPoolPlan:
    """The EC2NodeClass and NodePool of a decided pool, each checked against its pinned CRD."""
    h = group.hints
    vcpus = max(ctx.vcpus, h.vcpus)  # several sizes: the limits admit maxNodes of the largest
    pool_limits = limits(
        group.max_size + DRIFT_BUDGET_NODES, h.gpus_per_node, vcpus, ctx.memory_gib
    )
    # No Name tag: Karpenter tags each instance Name=<node name> (aws/karpenter-provider-aws
    # v1.14.1 pkg/controllers/nodeclaim/tagging/controller.go).
    tags = {POOL_LABEL: group.name, "gpu-infra/stack": ctx.stack}
    plan = KarpenterPoolPlan(
        name=group.name,
        node_class=node_class(group, ctx, tags),
        node_pool=node_pool(group, ctx, pool_limits),
        max_nodes=nodes_within(pool_limits, h.gpus_per_node, vcpus, ctx.memory_gib)
        - DRIFT_BUDGET_NODES,
        delete_timeout_minutes=drain_delete_minutes(
            go_duration_ns(ctx.termination_grace_period) / 1e9
        ),
    )
    for manifest in (plan.node_class, plan.node_pool):
        for error in validate(manifest):
            crd_path, _, why = error.partition(": ")
            issues.add(
                config_key_of(i, manifest["kind"], crd_path),
                f"the {manifest['kind']} {group.name} would be refused at {crd_path}: {why}",
            )
    return plan


# The config key each manifest field comes from (node_class, node_pool above); a field no key
# sets (gpu-infra's own) is named by its pool.
_CONFIG_KEYS: tuple[tuple[str, str, str], ...] = (
    ("NodePool", "spec.template.spec.terminationGracePeriod", "cluster.autoscaler.terminationGracePeriod"),
    ("NodePool", "spec.disruption.consolidateAfter", "cluster.autoscaler.scaleDownUnneededTime"),
    ("NodePool", "spec.template.spec.requirements", "{pool}.machineType"),
    ("NodePool", "spec.limits", "{pool}.maxNodes"),
    ("EC2NodeClass", "spec.amiSelectorTerms", "{pool}.amiFamily"),
    ("EC2NodeClass", "spec.subnetSelectorTerms", "cluster.vpc"),
)  # fmt: skip


def config_key_of(i: int, kind: str, crd_path: str) -> str:
    """The stack-file key behind ``crd_path`` of the pool's ``kind`` manifest."""
    pool = join_path("gpuPools", i)
    parts = crd_path.split(".")
    if kind == "NodePool" and parts[:4] == ["spec", "template", "spec", "taints"]:
        # taints[0] is gpu-infra's GPU taint (eks.template.plan_labels); the pool's follow it
        if len(parts) > 4 and parts[4].isdigit() and int(parts[4]) > 0:
            return join_path(pool, "taints", int(parts[4]) - 1)
        return pool
    if kind == "NodePool" and parts[:4] == ["spec", "template", "metadata", "labels"]:
        return join_path(pool, "labels", ".".join(parts[4:])) if len(parts) > 4 else pool
    for k, prefix, key in _CONFIG_KEYS:
        if k == kind and crd_path.startswith(prefix):
            return key.format(pool=pool)
    return pool


def needs_spot_role(groups: Sequence[EksGroupPlan]) -> bool:
    """Whether a Karpenter pool may launch spot capacity (and so needs the Spot service-linked
    role to exist before its first launch)."""
    return any(g.karpenter is not None and "spot" in capacity_types(g) for g in groups)


def spot_role_notes(groups: Sequence[EksGroupPlan]) -> tuple[str, ...]:
    """The plan note for the Spot service-linked role a Karpenter spot pool needs: the stack
    does not create it (see ``SPOT_SERVICE_LINKED_ROLE``), ``quota.check`` reads whether it exists."""
    if not needs_spot_role(groups):
        return ()
    spot = ", ".join(
        g.name for g in groups if g.karpenter is not None and "spot" in capacity_types(g)
    )
    return (
        f"Karpenter spot pools ({spot}) launch only once the account has the EC2 Spot "
        f"service-linked role {SPOT_SERVICE_LINKED_ROLE}, which this stack does not create: "
        f"`aws iam create-service-linked-role --aws-service-name {SPOT_SERVICE}` once per account "
        "(`python -m quota.check` reads whether it exists)",
    )
