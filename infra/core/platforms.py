"""The one registry of platforms: a stack's ``platform`` name -> where each part of its code lives.

The switch of aws/karpenter-provider-aws ``pkg/providers/amifamily/resolver.go`` ``GetAMIFamily``:
the only place that maps a platform's name to its code. Each part is named ``module:attribute``
and imported when asked (``load``), as Python's entry points name a plug-in's objects, so a plan
imports only its own platform (``scripts/bench_plan.py`` measures start-up) and every layer may
ask the registry: it imports nothing of ``infra.core``. ``tests/unit/test_layers.py`` checks that
each entry names its own platform's modules only, and that every name resolves.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

# The platforms a stack may name in ``gpu-infra:platform``.
PlatformName = Literal["gke", "eks", "kubernetes"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Entry:
    """Where one platform's parts live, each as ``module:attribute``.

    Attributes:
        config: its part of the stack config (``infra.core.config.entry.PlatformConfig``): its
            cluster and pool models, where a stack of it lives, the keys that would not apply and
            its section of the config reference.
        planner: ``(config, catalog, issues[, observed]) -> Platform``: its plan of a stack, its
            declared shapes added to the catalog (``infra.core.platform.plan_platform``).
        observation: the type of what its observe step reads (``from_json`` reads it back), or
            ``None`` for a platform that reads nothing.
        observer: its observe step (``infra/observe``): ``(config) -> its observation``, run by
            ``pulumi up`` before planning; ``None`` for a platform that reads nothing.
        components: the function of ``infra/components`` that builds its cluster
            (``(plan) -> ClusterHandle``), imported by the Pulumi program only.
        account: its part of the mock engine's fake account (``infra.mocklive.AccountPart``), or
            ``None``: nothing of it is read.
    """

    config: str
    planner: str
    observation: str | None = None
    observer: str | None = None
    components: str
    account: str | None = None


def _on_a_cloud(name: str, observation: str) -> Entry:
    """A platform on a cloud: it reads the cloud before planning (its ``observation``) and has a
    part of the fake account; each of its parts in the module named after it."""
    return Entry(
        config=f"infra.core.config.{name}:CONFIG",
        planner=f"infra.core.{name}.platform:plan",
        observation=f"infra.core.{name}.observed:{observation}",
        observer=f"infra.observe.{name}:observe_{name}",
        components=f"infra.components.{name}:build_{name}",
        account=f"infra.mocklive.{name}:ACCOUNT",
    )


ENTRIES: Mapping[PlatformName, Entry] = {
    "gke": _on_a_cloud("gke", "GkeObserved"),
    "eks": _on_a_cloud("eks", "EksObserved"),
    # An existing cluster reached through its kubeconfig: nothing is read before planning.
    "kubernetes": Entry(
        config="infra.core.config.kubernetes:CONFIG",
        planner="infra.core.kubernetes.platform:plan",
        components="infra.components.kubernetes_cluster:build_kubernetes",
    ),
}
PLATFORMS: tuple[PlatformName, ...] = tuple(ENTRIES)


def load(ref: str) -> Any:
    """The object ``ref`` (``module:attribute``) names, its module imported now."""
    module, _, attribute = ref.partition(":")
    return getattr(importlib.import_module(module), attribute)
