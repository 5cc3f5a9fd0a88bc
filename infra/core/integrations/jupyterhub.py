"""JupyterHub (zero-to-jupyterhub) ``singleuser.profileList`` entries, one per GPU pool.

The shape is KubeSpawner's ``profile_list`` (z2jh passes ``singleuser.profileList`` to it as is):
a profile has ``display_name``, ``slug``, ``description``, ``kubespawner_override`` (KubeSpawner
traits) and ``profile_options`` (``{option: {display_name, choices: {slug: {display_name,
default, kubespawner_override}}}}``); https://jupyterhub-kubespawner.readthedocs.io/en/latest/spawner.html
``KubeSpawner.profile_list``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from infra.core.config.operator import JupyterImageSpec
from infra.core.integrations.scheduling import gpu_request, native_shared, shares_gpu
from infra.core.pools import PoolHints

# Left free on a node by the notebooks' guarantees together: the node models and the DaemonSet
# budget are bounds taken from published figures, not the node itself, so an error in either
# (a DaemonSet a later cluster version adds, a kernel that keeps more) leaves the notebook
# Pending only if it exceeds this, not at the first MiB. 1 % of the node, at least 256 MiB.
HEADROOM_MIN_MIB = 256
HEADROOM_SHARE = 0.01


def guarantee_headroom_mib(node_memory_mib: int) -> int:
    """Memory (MiB) the guarantees leave unclaimed on a node of ``node_memory_mib`` allocatable."""
    return max(HEADROOM_MIN_MIB, math.ceil(node_memory_mib * HEADROOM_SHARE))


def jupyterhub_profile(
    h: PoolHints,
    hints: Mapping[str, Any],
    node_memory_mib: int,
    daemonset_mib: int,
    images: Sequence[JupyterImageSpec] = (),
    warm: int = 0,
) -> dict[str, Any]:
    """A ``singleuser.profileList`` entry for pool ``h``.

    One notebook gets a whole node (plain GPUs) or one slot (a time-sliced replica or a MIG
    instance). ``mem_guarantee`` is that share of ``node_memory_mib`` (the least allocatable
    memory of the nodes the target may bring up, by the platform's receiver model) less
    ``daemonset_mib`` (what the node's DaemonSets request) and ``guarantee_headroom_mib``, so the scheduler never packs more notebooks than the node can hold;
    ``mem_limit`` is null (a notebook may use what the node has free).
    """
    share = notebook_share(h, hints)
    count = gpu_request(hints)
    free = node_memory_mib - daemonset_mib - guarantee_headroom_mib(node_memory_mib)
    mem = max(int(free * share.fraction), 256)
    override: dict[str, Any] = {
        # compute,utility is the toolkit's default only while the image sets nothing; an image's
        # own value (utility alone) would leave out the CUDA libraries
        # (https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html).
        "environment": {"NVIDIA_DRIVER_CAPABILITIES": "compute,utility"},
        "node_selector": dict(hints["nodeSelector"]),
        "tolerations": [dict(t) for t in hints["tolerations"]],
        "extra_resource_limits": {hints["resourceName"]: str(count)},
        "mem_guarantee": f"{mem}M",
        "mem_limit": None,
    }
    if hints.get("runtimeClassName"):
        override["extra_pod_config"] = {"runtimeClassName": hints["runtimeClassName"]}
    profile: dict[str, Any] = {
        "display_name": display_name(h, share, mem, bool(hints.get("computeClass"))),
        "description": f"Start a notebook on {share.what} ({_where(h, hints)})" + warm_text(warm),
        "slug": h.name,
        "kubespawner_override": override,
    }
    if images:
        profile["profile_options"] = {
            "image": {
                "display_name": "Image",
                "choices": {
                    img.name: {
                        "display_name": img.display_name or img.name,
                        "default": i == 0,
                        "kubespawner_override": {"image": img.image},
                    }
                    for i, img in enumerate(images)
                },
            }
        }
    return profile


@dataclass(frozen=True)
class NotebookShare:
    """What one notebook of a pool gets: ``gpu`` (display text), ``what`` (description text),
    ``fraction`` of the node's memory and ``sharers`` (notebooks per node; 1: the whole node)."""

    gpu: str
    what: str
    fraction: float
    sharers: int


def notebook_share(h: PoolHints, hints: Mapping[str, Any]) -> NotebookShare:
    """One notebook's share of a node of pool ``h``: the whole node (plain GPUs) or one slot."""
    slots, model = int(hints["slotsPerNode"]), f"NVIDIA {h.gpu_model}"
    if not shares_gpu(hints):
        n = gpu_request(hints)
        what = f"a dedicated node with {n} GPU" + ("s" if n > 1 else "")
        return NotebookShare(f"{n}x {model}", what, 1.0, 1)
    if native_shared(hints):
        # GKE partitioning / time-sharing: each slot is one nvidia.com/gpu of the node.
        what = f"one GKE-shared GPU slot ({slots} per node)"
        part, strategy = hints.get("gkePartitionSize"), hints.get("gkeSharingStrategy")
        gpu = f"{part} MIG slice of an {model}" if part else f"an {model}"
        if strategy:
            how = "MPS-shared" if strategy == "mps" else "time-shared"
            gpu += f" {how} {hints['gkeSharedClientsPerGpu']} ways"
    elif hints["migStrategy"]:
        what = f"one MIG instance ({hints['resourceName']}, {slots} per node)"
        gpu = f"{_mig_profile(hints)} MIG slice of an {model}"
        if hints["timeSlicingReplicas"]:
            gpu += f" time-sliced {hints['timeSlicingReplicas']} ways"
    else:
        what = f"one time-sliced GPU ({hints['timeSlicingReplicas']} notebooks per GPU)"
        gpu = f"an {model} time-sliced {hints['timeSlicingReplicas']} ways"
    return NotebookShare(gpu, what, 1 / slots, slots)


def display_name(h: PoolHints, share: NotebookShare, mem_mib: int, computed: bool = False) -> str:
    """The spawner form's title of the profile: the GPU (part), the memory guarantee and the CPUs
    one notebook gets, then the pool, so two pools of one shape (on-demand and spot) differ.
    KubeSpawner's ``M`` is MiB (JupyterHub ``ByteSpecification``, jupyterhub/traitlets.py)."""
    cpus = f"{h.vcpus} vCPUs" + (f" shared by {share.sharers}" if share.sharers > 1 else "")
    # A ComputeClass is Spot when any member is: GKE may fall back to an on-demand one.
    spot = (" (Spot or on-demand)" if computed else " (Spot)") if h.spot else ""
    gpu = share.gpu[0].upper() + share.gpu[1:]
    return f"{gpu}, {mem_mib / 1024:.1f} GiB RAM, {cpus} - {h.name}{spot}"


def _mig_profile(hints: Mapping[str, Any]) -> str:
    """The MIG profile of a slot: from the resource (mixed: nvidia.com/mig-1g.5gb) or the config
    (single: all-1g.5gb advertises nvidia.com/gpu)."""
    resource, config = str(hints["resourceName"]), str(hints["migConfig"])
    if "/mig-" in resource:
        return resource.split("/mig-", 1)[1]
    return config.removeprefix("all-")


def warm_text(warm: int) -> str:
    """What a user gains from the pool's warm nodes (gpuPools[].warm, infra.core.warm): a node
    held by a placeholder that the notebook preempts, so it starts without a node's boot."""
    if not warm:
        return ""
    nodes = f"{warm} warm node" + ("s" if warm > 1 else "")
    return f"; {nodes} kept ready, so a notebook starts without waiting for a new node"


def _where(h: PoolHints, hints: Mapping[str, Any]) -> str:
    if hints.get("computeClass"):
        return f"ComputeClass {h.name}: GKE picks one of pools {', '.join(hints['pools'])}"
    return f"pool {h.name}"
