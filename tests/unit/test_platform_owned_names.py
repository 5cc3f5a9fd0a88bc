"""Names a platform owns are refused where a pool, namespace or label would take them.

Sources: GKE about-custom-compute-classes (built-in `autopilot` and `autopilot-spot`, names
starting with `gke` or `autopilot` reserved) and default-compute-classes (a class named
`default` applies to every Pod selecting none); GKE node-pools concept (the
`cloud.google.com/gke-nodepool` label on every node); kubeflow/manifests (Kubeflow's own
namespace `kubeflow`).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from infra.core.config.stack import parse
from infra.core.errors import ConfigErrors
from infra.core.plan import build_plan
from tests.conftest import gke_config
from tests.unit.gke_fixtures import AUTO_G2, errors, plan
from tests.unit.test_gke_compute_class_rules import FALLBACK

AUTO_CLUSTER = {"name": "ml", "location": "us-central1", "minMasterVersion": "1.35"}
CLASS_POOLS = {"fallback": FALLBACK, "autoCreate": AUTO_G2}


def _class_pool_errors(kind: str, name: str) -> dict[str, str]:
    top: dict[str, Any] = {"gpuOperator": {"enabled": False}}
    if kind == "autoCreate":
        top["cluster"] = AUTO_CLUSTER
    return errors({**CLASS_POOLS[kind], "name": name}, **top)


@pytest.mark.parametrize("kind", sorted(CLASS_POOLS))
@pytest.mark.parametrize(
    "name", ["autopilot", "autopilot-spot", "autopilot-l4", "gke-l4", "default"]
)
def test_a_pool_whose_compute_class_name_gke_owns_exits_2_at_its_name(kind, name):
    reason = _class_pool_errors(kind, name)["gpuPools[0].name"]
    assert f"{name!r} would name the pool's ComputeClass" in reason


@pytest.mark.parametrize("kind", sorted(CLASS_POOLS))
def test_a_class_pool_with_its_own_name_plans(kind):
    top: dict[str, Any] = {"gpuOperator": {"enabled": False}}
    if kind == "autoCreate":
        top["cluster"] = AUTO_CLUSTER
    g = plan({**CLASS_POOLS[kind], "name": "l4-inference"}, **top)
    assert [c.name for c in g.compute_classes] == ["l4-inference"]


def test_a_pool_without_a_compute_class_may_start_with_gke():
    assert plan({"name": "gke-t4"}).pools[0].name.startswith("gke-t4")


@pytest.mark.parametrize(
    "key",
    [
        "cloud.google.com/gke-nodepool",
        "cloud.google.com/gke-accelerator",
        "cloud.google.com/compute-class",
        "gpu-infra/pool",
    ],
)
def test_a_pool_label_gke_or_gpu_infra_sets_on_every_node_is_refused(key):
    reason = errors({"labels": {key: "mine"}})[f"gpuPools[0].labels.{key}"]
    assert "sets it on every" in reason or "set by gpu-infra" in reason


def _namespaces(*entries: dict[str, Any]) -> dict[str, Any]:
    raw = copy.deepcopy(gke_config())
    raw["gpu-infra:gpuNamespaces"] = list(entries)
    return raw


def test_kubeflows_own_namespace_as_a_profile_exits_2_at_its_name():
    raw = _namespaces(
        {"name": "kubeflow", "gpus": 1, "kubeflowProfile": {"owner": "a@example.com"}}
    )
    with pytest.raises(ConfigErrors) as e:
        build_plan(parse(raw, "s"))
    assert any(
        i.path == "gpuNamespaces[0].name" and "Kubeflow's own namespace" in i.reason
        for i in e.value.issues
    )
