"""A fake cloud account for the mock engine: what the observe step finds, per run.

``LiveAccount`` is what the account holds before a run; ``mockengine.run(..., account=...)`` and
``mockengine.observe`` answer the observe step's invokes from it (``INVOKES``), nothing else does.
``before(config)`` is an account holding only what the stack file names (an existing cluster, its
IAM OIDC provider and Pod Identity agent); ``after(plan, recording, new)`` adds what a deploy of
that recording leaves running and what the new side's stack file attaches to, which is what
``--diff`` plans its new side over. Each platform models its part (``infra.mocklive.gke``,
``infra.mocklive.eks``: an ``AccountPart`` the registry names); a platform without one
(``kubernetes``: an existing cluster's kubeconfig) has nothing read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from infra.core.platforms import ENTRIES, PlatformName, load
from infra.mocklive.account import (
    AccountPart,
    Invoke,
    InvokeFailure,
    KubeAnswer,
    LiveAccount,
    invoke_error_text,
)
from infra.observe.kubeapi import KubeReadError, NotServed, Read

if TYPE_CHECKING:
    from infra.core.catalog.vendored import Catalog
    from infra.core.config.stack import StackConfig
    from infra.core.observed import ClusterAccess
    from infra.core.plan import Plan
    from infra.mockengine import Recording

__all__ = [
    "INVOKES",
    "InvokeFailure",
    "LiveAccount",
    "after",
    "before",
    "beside",
    "invoke_error_text",
    "kube_read",
]


def _part(platform: PlatformName) -> AccountPart | None:
    ref = ENTRIES[platform].account
    return load(ref) if ref is not None else None


def before(config: StackConfig, catalog: Catalog | None = None) -> LiveAccount:
    """An account holding only what ``config`` attaches to: its existing cluster (with its IAM
    OIDC provider and Pod Identity agent), as an offline plan (``Observed.none()``) over
    ``catalog`` (default: the vendored one) assumes."""
    part = _part(config.platform)
    if not config.cluster.existing or part is None:
        return LiveAccount()
    from infra.core.catalog.vendored import Catalog

    return part.existing(config, catalog or Catalog.load())


# Fields keyed by cluster, then by object: two stacks' objects on one cluster are both there.
PER_CLUSTER = ("gke_node_pools", "gke_compute_classes")


def beside(a: LiveAccount, b: LiveAccount) -> LiveAccount:
    """One account holding what both ``a`` and ``b`` hold (``a``'s value where both name a key):
    another stack's deploy ``b`` beside this stack's account ``a`` (``--beside``)."""
    merged: dict[str, Any] = {}
    for name in LiveAccount.__dataclass_fields__:
        mine, theirs = getattr(a, name), getattr(b, name)
        if name in PER_CLUSTER:
            clusters = {*theirs, *mine}
            merged[name] = {c: {**theirs.get(c, {}), **mine.get(c, {})} for c in clusters}
        elif isinstance(mine, Mapping):
            merged[name] = {**theirs, **mine}
        elif isinstance(mine, frozenset):
            merged[name] = mine | theirs
        elif isinstance(mine, tuple):  # vpcs and vpc_tags, kept in step
            merged[name] = (*mine, *theirs)
    return replace(a, **merged)


def after(plan: Plan, recording: Recording, new: StackConfig | None = None) -> LiveAccount:
    """``before(plan.config)`` plus what a deploy of ``recording`` leaves running (its platform's
    ``AccountPart.deployed``: the cluster, node pools or groups, network it made), and what the
    new side's ``new`` attaches to: re-pointing an existing-cluster stack at another running
    cluster is a change over a live account that holds both."""
    found = before(plan.config, plan.catalog)
    if new is not None:
        found = beside(found, before(new))
    part = _part(plan.config.platform)
    return part.deployed(found, recording, plan.config) if part is not None else found


_PARTS = [part for name in ENTRIES if (part := _part(name)) is not None]
# Provider function token -> answer from the account (the observe step's reads), every platform's.
INVOKES: dict[str, Invoke] = {t: invoke for p in _PARTS for t, invoke in p.invokes.items()}
_KUBE_PATHS: dict[str, KubeAnswer] = {
    k: answer for p in _PARTS for k, answer in p.kube_paths.items()
}


def kube_read(live: LiveAccount) -> Read:
    """The observe step's Kubernetes reads answered from ``live``: each path by the platform part
    that serves it (``AccountPart.kube_paths``, e.g. GKE's ComputeClassList), any other not served
    (404); ``failures`` keyed ``GET <path>`` fail so."""

    def read(cluster: ClusterAccess, _token: str, path: str) -> Any:
        if (reason := live.failures.get(f"GET {path}")) is not None:
            raise KubeReadError(reason)
        answer = _KUBE_PATHS.get(path)
        if answer is None:
            raise NotServed(path)
        return answer(live, cluster)

    return read
