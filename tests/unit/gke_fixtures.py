"""Builders shared by the GKE rule tests: stack configs, their plans and their errors."""

from __future__ import annotations

from typing import Any

import pytest

from infra.core.config.stack import parse
from infra.core.errors import ConfigErrors
from infra.core.gke.planner import GkePlan
from infra.core.plan import build_plan
from tests.conftest import gke_config

CHANNEL_CLUSTER = {"name": "ml", "location": "us-central1", "releaseChannel": "REGULAR"}
NO_CHANNEL = {"name": "ml", "location": "us-central1", "releaseChannel": "UNSPECIFIED"}
G2: dict[str, Any] = {"machineType": "g2-standard-8", "gpu": None}
# An auto-created (ComputeClass) spot G2 pool.
AUTO_G2: dict[str, Any] = {"autoCreate": True, **G2, "spot": True, "maxNodes": 4}


def a100_mig_shared(strategy: str, clients: int) -> dict[str, Any]:
    """An A100 pool whose GPUs are split into 1g.5gb MIG partitions, each shared by ``clients``."""
    sharing = {"strategy": strategy, "maxSharedClientsPerGpu": clients}
    return {"machineType": "a2-highgpu-1g", "gpu": {"partitionSize": "1g.5gb", "sharing": sharing}}


def plan(pool: dict[str, Any] | None = None, **top: Any) -> GkePlan:
    p = build_plan(parse(gke_config(pool, **top), "s"))
    assert p.platform.name == "gke"
    return p.platform.plan


def errors(pool: dict[str, Any] | None = None, **top: Any) -> dict[str, str]:
    with pytest.raises(ConfigErrors) as e:
        build_plan(parse(gke_config(pool, **top), "s"))
    return {i.path: i.reason for i in e.value.issues}


def cluster(**extra: Any) -> dict[str, Any]:
    return {"name": "ml", "location": "us-central1", **extra}


def window_errors(start: str, end: str, recurrence: str | None = None) -> dict[str, str]:
    """The errors of a cluster whose maintenance window is ``start``..``end`` (``recurrence``)."""
    window = {"start": start, "end": end, **({"recurrence": recurrence} if recurrence else {})}
    return errors(cluster=cluster(maintenance={"window": window}))
