"""A node as the scheduler sees it, and the parts of a GPU node every platform builds alike.

Each platform builds its pools' nodes for the scheduling proof (``Platform.pool_nodes``): the node as
it runs and, where an autoscaler must create the first one, the node it imagines at zero. What they
share lives here: the ``Node`` shape, Kubernetes quantities, the allocatable CPU and memory of a
node, and what the NVIDIA device plugin advertises on it (``infra.core.sharing``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

from infra.core.catalog.vendored import table
from infra.core.config.base import PoolBase
from infra.core.pools import GPU_RESOURCE, PoolHints
from infra.core.sharing import advertised_resources, pool_mig_gpu

Obj = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Node:
    """A node as the scheduler sees it: labels, taints (``{key, value, effect}``), allocatable."""

    name: str
    labels: Mapping[str, str]
    taints: tuple[Obj, ...] = ()
    allocatable: Mapping[str, Fraction] = field(default_factory=dict)
    # Resources the node hands out as shared slots (time-sharing / MPS / time-slicing replicas):
    # a container may request at most 1 of each.
    shared: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class PoolNodes:
    """The running node of a pool and, when the autoscaler must create the first one, its
    template node."""

    running: Node
    template: Node | None
    # A Karpenter pool: the node of each instance type its NodePool may launch (the pod must fit
    # every one: Karpenter may pick any of them).
    launchable: tuple[Node, ...] = ()
    # What the receiver refuses of the pool whatever the workload: (key under the pool's
    # gpuPools entry, reason), e.g. an instance type its NodePool's requirements exclude.
    problems: tuple[tuple[str, str], ...] = ()


_SUFFIX = {
    "m": Fraction(1, 1000),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "Ki": Fraction(2**10),
    "Mi": Fraction(2**20),
    "Gi": Fraction(2**30),
    "Ti": Fraction(2**40),
}
_QUANTITY = re.compile(r"([0-9]+(?:\.[0-9]+)?)(m|k|M|G|T|Ki|Mi|Gi|Ti)?")


def quantity(value: object) -> Fraction:
    """A Kubernetes quantity (``"2"``, ``"500m"``, ``"16Gi"``) as an exact number
    (https://kubernetes.io/docs/reference/kubernetes-api/common-definitions/quantity/)."""
    m = _QUANTITY.fullmatch(str(value).strip())
    if m is None:
        raise ValueError(f"not a Kubernetes quantity: {value!r}")
    return Fraction(m.group(1)) * _SUFFIX[m.group(2) or ""]


def less_daemonsets(pn: PoolNodes, mib: int) -> PoolNodes:
    """``pn`` with ``mib`` of every node's allocatable memory taken by its DaemonSets."""

    def less(node: Node) -> Node:
        alloc = dict(node.allocatable)
        if "memory" in alloc:
            alloc["memory"] -= Fraction(mib) * 2**20
        return replace(node, allocatable=alloc)

    template = less(pn.template) if pn.template is not None else None
    launchable = tuple(less(n) for n in pn.launchable)
    return PoolNodes(less(pn.running), template, launchable, pn.problems)


def daemonset_memory_mib(receiver: str, data_dir: Path) -> int:
    """Memory (MiB) the DaemonSets of ``receiver`` request on every GPU node
    (``daemonset_memory.csv`` of the catalog in ``data_dir``: a platform's system DaemonSets, or
    ``nfd-worker``)."""
    rows = [
        int(r["memory_mib"])
        for r in table("daemonset_memory.csv", data_dir)
        if r["receiver"] == receiver
    ]
    if not rows:
        raise KeyError(f"daemonset_memory.csv: no row for {receiver}")
    return sum(rows)


def base_allocatable(h: PoolHints, memory_mib: int) -> dict[str, Fraction]:
    """CPU: the machine's vCPUs, an upper bound of allocatable (no workload here requests CPU);
    memory: ``memory_mib``, the allocatable memory the platform's receiver model gives the node
    (``Platform.node_memory_mib``), what JupyterHub's guarantee is cut from."""
    return {"cpu": Fraction(h.vcpus), "memory": Fraction(memory_mib) * 2**20}


def running_allocatable(
    h: PoolHints, pool: PoolBase, memory_mib: int, native_gpus: int | None = None
) -> dict[str, Fraction]:
    """What a running node of the pool advertises: its CPU and memory (``memory_mib``), and the
    GPU resources of the device plugin's sharing / MIG config (``native_gpus``: what the
    platform's own sharing or partitioning makes its device plugin advertise, when the pool uses
    it)."""
    out = base_allocatable(h, memory_mib)
    if native_gpus is not None:
        out[GPU_RESOURCE] = Fraction(native_gpus)
        return out
    for name, n in advertised_resources(
        h.gpus_per_node, pool.sharing, pool.mig, pool_mig_gpu(h)
    ).items():
        out[name] = Fraction(n)
    return out


def shared_resources(h: PoolHints, pool: PoolBase) -> frozenset[str]:
    """The resources a running node hands out as shared slots, at most 1 per container: every
    resource operator time-slicing replicates (renamed or not, MIG ones included; the operator's
    config sets failRequestsGreaterThanOne, infra.core.sharing.time_slicing_config). A platform's
    own sharing is the platform's to say (GKE time-sharing / MPS)."""
    if pool.sharing is None:
        return frozenset()
    advertised = advertised_resources(h.gpus_per_node, pool.sharing, pool.mig, pool_mig_gpu(h))
    return frozenset(r for r, n in advertised.items() if n)


def node_taints(h: PoolHints) -> tuple[dict[str, Any], ...]:
    """The pool's declared taints in the API's spelling."""
    return tuple({"key": t.key, "value": t.value, "effect": t.effect} for t in h.taints)
