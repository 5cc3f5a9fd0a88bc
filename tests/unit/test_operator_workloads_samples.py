"""GPU Operator plan of the sample stacks: the release, namespace and preset values each gets
(golden), and every Kubernetes object it plans valid against the Kubernetes schema.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest

from infra.core.catalog.pins import pin
from infra.core.catalog.vendored import DATA_DIR
from infra.core.config.stack import parse_file
from infra.core.operator.helm_values import chart_defaults
from infra.core.plan import build_plan
from tests.unit.operator_fixtures import (
    assert_golden,
    objects,
    plan,
    stack,
)

# The chart version a stack naming none gets (pins.csv row gpu-operator).
DEFAULT_OPERATOR_VERSION = pin("gpu-operator", DATA_DIR).version

ROOT = Path(__file__).resolve().parents[2]
# Kubernetes schema version objects are validated against (oldest minor the clouds still serve).
K8S_SCHEMA = "1.33.0"
SAMPLES = ["gke-t4", "eks-g4dn", "onprem-containerd", "onprem-k3s-timeslicing"]


@pytest.fixture(scope="module")
def sample_plans() -> dict[str, Any]:
    return {s: build_plan(parse_file(ROOT / "stacks" / f"Pulumi.{s}.yaml")) for s in SAMPLES}


# --- sample stacks and schema validity -------------------------------------------------------------


def test_done_when_stacks_have_namespace_and_release_with_preset_values(sample_plans):
    expected = {
        "gke-t4": "gke-google-driver",
        "eks-g4dn": "eks-al2023",
        "onprem-containerd": "containerd",
    }
    for name, preset in expected.items():
        op = sample_plans[name].operator
        assert op is not None and op.release is not None, name
        assert op.preset == preset
        assert op.namespace_object is not None
        assert op.release.version == DEFAULT_OPERATOR_VERSION
    assert sample_plans["gke-t4"].operator.release.values["driver"] == {"enabled": False}
    assert sample_plans["eks-g4dn"].operator.release.values["toolkit"] == {"enabled": False}


def test_onprem_containerd_carries_seed_paths_and_cdi_era_runtime_mapping(sample_plans):
    op = sample_plans["onprem-containerd"].operator
    env = {e["name"]: e["value"] for e in op.release.values["toolkit"]["env"]}
    assert env["CONTAINERD_CONFIG"] == "/etc/containerd/config.toml"
    assert env["CONTAINERD_SOCKET"] == "/run/containerd/containerd.sock"
    assert env.get("NVIDIA_RUNTIME_SET_AS_DEFAULT") != "true"  # no unpaired isolation bypass
    assert "CONTAINERD_RUNTIME_CLASS" not in env and "CONTAINERD_SET_AS_DEFAULT" not in env
    # the seed's runtime class 'nvidia' is operator.runtimeClass's default, so no override is needed
    assert chart_defaults(op.release.version)["operator"]["runtimeClass"] == "nvidia"


@pytest.mark.parametrize("name", SAMPLES)
def test_sample_stack_values_golden(sample_plans, name):
    assert_golden(sample_plans[name].operator, f"gpu-operator-stack-{name}")


def _all_objects(sample_plans: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    extra = [
        plan(
            stack(
                "gke",
                [{"smokeTest": True, "sharing": {"replicas": 3}}],
                namespaces=[{"name": "ml", "gpus": 4}],
            )
        ),
    ]
    objs = [(n, m) for n, p in sample_plans.items() for m in objects(p.operator)]
    return objs + [("extra", m) for op in extra for m in objects(op)]


def test_every_kubernetes_object_validates_against_the_schema(sample_plans):
    objs = _all_objects(sample_plans)
    kinds = {m["kind"] for _, m in objs}
    assert kinds == {"Namespace", "ResourceQuota", "ConfigMap", "Job", "DaemonSet"}
    for name, m in objs:
        try:
            kubernetes_validate.validate(m, K8S_SCHEMA, strict=True)
        except kubernetes_validate.ValidationError as e:  # pragma: no cover - failure detail
            raise AssertionError(f"{name}: {m['kind']}/{m['metadata']['name']}: {e}") from e


def test_schema_validation_catches_a_broken_object():
    bad = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "x"},
        "spec": {"ttlSecondsAfterFinished": "soon"},
    }
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad, K8S_SCHEMA, strict=True)
