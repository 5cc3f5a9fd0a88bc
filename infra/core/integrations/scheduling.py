"""Per pool, what a GPU workload needs to land there: the facts every integration is built from."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from infra.core.config.base import PoolBase
from infra.core.platform import Platform
from infra.core.pools import GPU_RESOURCE, PoolHints
from infra.core.sharing import resource_names, slots_per_node


def scheduling_hints(
    platform: Platform, h: PoolHints, pool: PoolBase, runtime_class: str | None = None
) -> dict[str, Any]:
    """What a workload needs to land on pool ``h``: node selector, tolerations, resource name(s),
    slots per node and, when the nvidia runtime is not containerd's default, the runtime class."""
    selector = platform.workload_selector(h)
    tolerations: list[dict[str, str]] = h.tolerations()
    if not any(t.key == GPU_RESOURCE for t in h.taints):
        # GKE taints GPU nodes nvidia.com/gpu=present when the cluster has CPU pools
        # (https://cloud.google.com/kubernetes-engine/docs/how-to/gpus#create).
        tolerations.append({"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"})
    sharing = pool.sharing
    mig = pool.mig
    names = resource_names(h, pool)
    native = platform.native_sharing(h, pool)
    return {
        "nodeSelector": selector,
        "tolerations": tolerations,
        "resourceName": names[0],
        "resourceNames": list(names),
        "gpuModel": h.gpu_model,
        "gpusPerNode": h.gpus_per_node,
        "timeSlicingReplicas": sharing.replicas if sharing is not None else None,
        "migStrategy": mig.strategy if mig is not None else None,
        "migConfig": mig.config if mig is not None else None,
        "slotsPerNode": native.slots if native is not None else slots_per_node(h, pool),
        "runtimeClassName": runtime_class,
        "spot": h.spot,
        # The platform's own partitioning / sharing (what one nvidia.com/gpu of the node is).
        "gkePartitionSize": native.partition_size if native is not None else None,
        "gkeSharingStrategy": native.strategy if native is not None else None,
        "gkeSharedClientsPerGpu": native.clients_per_gpu if native is not None else None,
    }


def shares_gpu(hints: Mapping[str, Any]) -> bool:
    """A slot of the pool is a share of a GPU: GKE sharing/partitioning, operator time-slicing
    (MPS included) or a MIG layout other than ``all-disabled``."""
    mig = hints["migConfig"] not in (None, "all-disabled")
    return native_shared(hints) or hints["timeSlicingReplicas"] is not None or mig


def native_shared(hints: Mapping[str, Any]) -> bool:
    """The platform's own sharing or partitioning is on for the pool of ``hints``."""
    return hints["gkePartitionSize"] is not None or hints["gkeSharingStrategy"] is not None


def gpu_request(hints: Mapping[str, Any]) -> int:
    """GPU units one workload (a notebook, a warm placeholder) requests: a whole-GPU pool's every
    GPU, else one slot.

    A shared resource admits at most 1 per container: GKE time-sharing / MPS ("at most 1
    nvidia.com/gpu can be requested on GPU nodes", UnexpectedAdmissionError,
    https://cloud.google.com/kubernetes-engine/docs/concepts/timesharing-gpus) and operator
    time-slicing with failRequestsGreaterThanOne ("maximum request size for shared resources is 1",
    NVIDIA/k8s-device-plugin internal/rm/rm.go). A MIG pool (GKE partitions, operator single or
    mixed) gets one instance of its profile: "Each slice can be allocated to one container"
    (https://cloud.google.com/kubernetes-engine/docs/how-to/gpus-multi).
    """
    return 1 if shares_gpu(hints) else int(hints["slotsPerNode"])


def workload_targets(
    pools: Sequence[PoolHints], scheduling: Mapping[str, Mapping[str, Any]]
) -> list[tuple[PoolHints, dict[str, Any], tuple[str, ...]]]:
    """What workloads can target: ``(hints-like pool, scheduling hints, member pools)`` per pool,
    and one per group for the pools reached through it (``PoolHints.group``: a ComputeClass).

    A class entry selects the class only, tolerates every member's taints and promises what every
    member can give (the fewest GPUs, slots, vCPUs and the least memory), so a workload fits
    whichever priority GKE provisions.
    """
    groups: dict[str, list[PoolHints]] = {}
    for h in pools:
        groups.setdefault(h.group.name if h.group is not None else h.name, []).append(h)
    out: list[tuple[PoolHints, dict[str, Any], tuple[str, ...]]] = []
    for key, members in groups.items():
        names = tuple(m.name for m in members)
        # A pool in a group is reached through the group even when it is the group's only member
        # (an auto-creating pool without fallbacks): its nodes carry the group's taint.
        group = members[0].group
        if len(members) == 1 and members[0].name == key and group is None:
            out.append((members[0], dict(scheduling[key]), names))
            continue
        hs = [scheduling[m.name] for m in members]
        tolerations: list[dict[str, str]] = []
        for hint in hs:
            tolerations += [dict(t) for t in hint["tolerations"] if t not in tolerations]
        taints: list[Any] = []
        for m in members:
            taints += [t for t in m.taints if t not in taints]
        selector = dict(group.selector) if group is not None else {}
        model = " or ".join(dict.fromkeys(m.gpu_model for m in members))
        first = members[0]
        h = replace(
            first,
            name=key,
            gpu_model=model,
            gpus_per_node=min(m.gpus_per_node for m in members),
            vcpus=min(m.vcpus for m in members),
            memory_gib=min(m.memory_gib for m in members),
            node_selector=selector,
            taints=tuple(taints),
            spot=any(m.spot for m in members),
            min_nodes=sum(m.min_nodes for m in members),
            max_nodes=sum(m.max_nodes for m in members),
        )
        resources: dict[str, None] = {}
        for hint in hs:
            resources.update(dict.fromkeys(hint["resourceNames"]))
        hints = {
            **hs[0],
            "nodeSelector": selector,
            "tolerations": tolerations,
            "resourceNames": list(resources),
            "gpuModel": model,
            "gpusPerNode": h.gpus_per_node,
            "slotsPerNode": min(int(hint["slotsPerNode"]) for hint in hs),
            "spot": h.spot,
            "computeClass": key,
            "pools": list(names),
        }
        out.append((h, hints, names))
    return out
