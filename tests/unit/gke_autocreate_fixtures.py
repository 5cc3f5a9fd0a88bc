"""What the GKE auto-creation modules share: a one-pool auto-creating stack above the version gate,
planned, and the problems a variant of it is refused with.
"""

from __future__ import annotations

from typing import Any

import pytest

from infra.core.config.stack import parse
from infra.core.errors import ConfigErrors
from infra.core.plan import Plan, build_plan
from tests.conftest import gke_config
from tests.unit.gke_fixtures import AUTO_G2

OFF = {"enabled": False}
ABOVE = {
    "name": "ml",
    "location": "us-central1",
    "releaseChannel": "RAPID",
    "minMasterVersion": "1.33.3-gke.1136000",
}
BELOW_CLUSTER = {**ABOVE, "minMasterVersion": "1.33.2-gke.1240000"}
AUTO: dict[str, Any] = {
    **AUTO_G2,
    "labels": {"team": "ml"},
    "taints": [{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}],
    "fallback": [{"machineType": "n1-standard-8", "gpu": {"type": "nvidia-tesla-t4"}}],
}


def build(pool: dict[str, Any] | None = None, **top: Any) -> Plan:
    top.setdefault("gpuOperator", OFF)
    top.setdefault("cluster", ABOVE)
    return build_plan(parse(gke_config({**AUTO, **(pool or {})}, **top), "s"))


def errors(pool: dict[str, Any] | None = None, **top: Any) -> dict[str, str]:
    with pytest.raises(ConfigErrors) as e:
        build(pool, **top)
    out: dict[str, str] = {}
    for i in e.value.issues:
        out[i.path] = f"{out.get(i.path, '')} {i.reason}".strip()
    return out
