"""Builders shared by the GPU Operator unit tests: stack configs and PoolHints per platform."""

from __future__ import annotations

import copy
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from infra.core.catalog.vendored import DATA_DIR, Catalog
from infra.core.config.stack import StackConfig, parse
from infra.core.errors import ConfigErrors, Issues
from infra.core.observed import Observed
from infra.core.operator import Manifest, OperatorPlan, operator_node_labels, plan_operator
from infra.core.platform import Platform, plan_platform
from infra.core.pools import PoolHints, Taint
from infra.core.sharing import pool_mig

GPU_TAINT = Taint("nvidia.com/gpu", "present", "NoSchedule")
GOLDEN = Path(__file__).resolve().parents[1] / "golden"

CLUSTERS: dict[str, dict[str, Any]] = {
    "gke": {"name": "ml", "location": "us-central1"},
    "eks": {"name": "ml", "location": "us-west-2"},
    "kubernetes": {
        "name": "lab",
        "location": "dc1",
        "existing": True,
        "kubeconfig": "~/.kube/lab.yaml",
        "context": "lab-admin",
    },
}
_PROVIDERS: dict[str, dict[str, Any]] = {
    "gke": {"gcp:project": "demo-project", "gcp:region": "us-central1"},
    "eks": {"aws:region": "us-west-2"},
    "kubernetes": {},
}
_POOLS: dict[str, dict[str, Any]] = {
    "gke": {"name": "gpu", "machineType": "n1-highmem-8", "maxNodes": 4},
    "eks": {"name": "gpu", "machineType": "g4dn.xlarge", "maxNodes": 4},
    "kubernetes": {
        "name": "gpu",
        "machineType": "server",
        "maxNodes": 4,
        "gpu": {"model": "T4"},
        "nodeSelector": {"gpu-infra/pool": "gpu"},
        "vcpus": 8,
        "memoryGib": 32,
        "nodes": ["node-1"],
    },
}
_HINTS: dict[str, dict[str, Any]] = {
    "gke": {
        "gpu_type": "nvidia-tesla-t4",
        "gpu_model": "T4",
        "vcpus": 8,
        "memory_gib": 52.0,
        "node_image": "COS_CONTAINERD",
        "driver": "gke-default",
        "node_selector": {"cloud.google.com/gke-nodepool": "gpu"},
        "taints": (GPU_TAINT,),
    },
    "eks": {
        "gpu_type": "T4",
        "gpu_model": "T4",
        "vcpus": 4,
        "memory_gib": 16.0,
        "node_image": "AL2023_x86_64_NVIDIA",
        "driver": "preinstalled",
        "node_selector": {"eks.amazonaws.com/nodegroup": "gpu"},
        "taints": (Taint("nvidia.com/gpu", "true"),),
    },
    "kubernetes": {
        "gpu_type": "T4",
        "gpu_model": "T4",
        "vcpus": 8,
        "memory_gib": 32.0,
        "node_image": "containerd",
        "driver": "operator",
        "node_selector": {"gpu-infra/pool": "gpu"},
    },
}


def stack(
    platform: str,
    pools: list[dict[str, Any]] | None = None,
    operator: dict[str, Any] | None = None,
    cluster: dict[str, Any] | None = None,
    namespaces: list[dict[str, Any]] | None = None,
    integrations: dict[str, Any] | None = None,
) -> StackConfig:
    """A parsed stack on ``platform``; ``pools`` entries update the platform's base pool."""
    raw: dict[str, Any] = {
        **_PROVIDERS[platform],
        "gpu-infra:platform": platform,
        "gpu-infra:cluster": {**CLUSTERS[platform], **(cluster or {})},
        "gpu-infra:gpuPools": [{**copy.deepcopy(_POOLS[platform]), **p} for p in (pools or [{}])],
        "gpu-infra:gpuOperator": operator or {},
    }
    if namespaces is not None:
        raw["gpu-infra:gpuNamespaces"] = namespaces
    if integrations is not None:
        raw["gpu-infra:integrations"] = integrations
    return parse(raw, f"test-{platform}")


def hints_for(config: StackConfig, **overrides: Any) -> tuple[PoolHints, ...]:
    """PoolHints as the platform planner would produce them (operator labels merged in)."""
    out = []
    for p in config.pools:
        base = dict(_HINTS[config.platform])
        base["taints"] = (
            *base.get("taints", ()),
            *(Taint(t.key, t.value, t.effect) for t in p.taints),
        )
        labels = {**p.labels, **operator_node_labels(p, gpu_present=config.platform == "gke")}
        h = replace(
            PoolHints(name=p.name, gpus_per_node=1, labels=labels, min_nodes=p.min_nodes, **base),
            **overrides,
        )
        if "mig" not in overrides:  # NVIDIA's MIG facts of the GPU, as the planners record them
            h = replace(h, mig=pool_mig(h.gpu_model, h.gpu_type, DATA_DIR))
        out.append(h)
    return tuple(out)


def platform_of(config: StackConfig) -> Platform:
    """The stack's platform as its planner plans it (its own problems left out: the operator
    tests judge the operator's)."""
    return plan_platform(config, Catalog.load(), Issues(), Observed.none())


def plan(config: StackConfig, pools: tuple[PoolHints, ...] | None = None) -> OperatorPlan:
    """``plan_operator`` that raises ConfigErrors like ``build_plan`` does."""
    issues = Issues()
    given = hints_for(config) if pools is None else pools
    result = plan_operator(config, given, platform_of(config), issues)
    issues.raise_if_any()
    assert result is not None
    return result


def errors(config: StackConfig, pools: tuple[PoolHints, ...] | None = None) -> dict[str, str]:
    """Issue path -> reason of a plan expected to fail."""
    try:
        plan(config, pools)
    except ConfigErrors as e:
        return {i.path: i.reason for i in e.issues}
    raise AssertionError("plan succeeded")


def assert_golden(op: OperatorPlan, name: str) -> None:
    """The release's values and reasons equal ``tests/golden/<name>.yaml``.

    ``UPDATE_GOLDEN=1 pytest tests/unit/test_operator*.py`` rewrites the files.
    """
    assert op.release is not None
    got = {"values": op.release.values, "reasons": dict(op.release.reasons)}
    path = GOLDEN / f"{name}.yaml"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.write_text(yaml.safe_dump(got, sort_keys=True, width=100))
    assert got == yaml.safe_load(path.read_text())


def objects(op: OperatorPlan) -> list[Manifest]:
    """Every Kubernetes object the plan creates (Helm release excluded)."""
    head = [op.namespace_object] if op.namespace_object else []
    return [*head, *op.before_release, *op.after_release]
