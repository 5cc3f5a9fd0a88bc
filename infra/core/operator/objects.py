"""Kubernetes objects around the operator release: namespaces, quotas, node labels, smoke tests,
and the stack-wide checks they rely on."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from infra.core.config import StackConfig
from infra.core.config_kubernetes import KubernetesPoolSpec
from infra.core.errors import Issues, join_path
from infra.core.integrations.jupyterhub import jupyterhub_profile
from infra.core.integrations.scheduling import scheduling_hints
from infra.core.operator.gpu_sharing import sharing_config_map
from infra.core.operator.model import (
    GKE_CRITICAL_CLASSES,
    GKE_CRITICAL_QUOTA,
    MANAGED_BY,
    PRIVILEGED_PSA,
    SMOKE_TEST_DEADLINE_SECONDS,
    SMOKE_TEST_TTL_SECONDS,
    HelmRelease,
    Manifest,
    NodeLabels,
    OperatorPlan,
    PoolSpecs,
    spec_of,
)
from infra.core.pools import GPU_RESOURCE, PoolHints
from infra.core.sharing import operator_node_labels

# --------------------------------------------------------------------------------------------------
# Checks across the stack


def check_namespaces(config: StackConfig, issues: Issues) -> None:
    for i, ns in enumerate(config.namespaces):
        if config.operator.enabled and ns.name == config.operator.namespace:
            issues.add(
                join_path("gpuNamespaces", i, "name"),
                f"{ns.name!r} is the operator's namespace (privileged pod security); "
                "run GPU workloads elsewhere",
            )
        if ns.name.startswith("kube-"):
            issues.add(
                join_path("gpuNamespaces", i, "name"),
                f"{ns.name!r} is reserved for Kubernetes system namespaces",
            )


def check_pool_labels(
    config: StackConfig, pools: Sequence[PoolHints], specs: PoolSpecs, issues: Issues
) -> None:
    """Every pool's nodes must carry the labels that select its sharing/MIG config: cloud planners
    put them on the pool; on-prem, gpu-infra labels the listed ``nodes`` (or the user did)."""
    for h in pools:
        i, pool = spec_of(specs, h)
        want = operator_node_labels(pool)
        missing = ", ".join(f"{k}={v}" for k, v in sorted(want.items()) if h.labels.get(k) != v)
        if not missing:
            continue
        if config.platform == "kubernetes":
            issues.add(
                join_path("gpuPools", i, "nodes"),
                f"list the pool's node names so gpu-infra can label them {missing} (or label the "
                "nodes yourself and declare it under labels)",
            )
        else:
            issues.add(
                join_path("gpuPools", i, "labels"),
                f"the pool's nodes must carry {missing} for the operator's sharing/MIG config",
            )


# --------------------------------------------------------------------------------------------------
# Objects and outputs


def assemble(
    config: StackConfig,
    pools: Sequence[PoolHints],
    specs: PoolSpecs,
    release: HelmRelease | None,
    preset: str | None,
    namespace: str,
) -> OperatorPlan:
    ns_object: Manifest | None = None
    before: list[Manifest] = []
    if release is not None:
        ns_object = {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": namespace, "labels": {**PRIVILEGED_PSA, **MANAGED_BY}},
        }
        if config.platform == "gke":
            before.append(_gke_critical_quota(namespace))
        if (cm := sharing_config_map(config, namespace)) is not None and (
            "devicePlugin" in release.values
        ):
            before.append(cm)
    after: list[Manifest] = []
    for ns in config.namespaces:
        after.extend(_gpu_namespace(ns.name, ns.gpus, ns.labels))
    scheduling: dict[str, dict[str, Any]] = {}
    profiles: dict[str, dict[str, Any]] = {}
    node_labels: list[NodeLabels] = []
    for h in pools:
        pool = spec_of(specs, h)[1]
        hints = scheduling_hints(config.platform, h, pool)
        scheduling[h.name] = hints
        profiles[h.name] = jupyterhub_profile(h, hints)
        # A GKE fallback pool shares its main pool's ComputeClass selector, so the main pool's
        # Job already tests the class; one Job per class, not per alternative.
        if pool.smoke_test and h.name in specs:
            after.append(smoke_test_job(h, hints, namespace, config.operator.smoke_test_image))
        labels = operator_node_labels(pool)
        if release is not None and labels and isinstance(pool, KubernetesPoolSpec) and pool.nodes:
            node_labels.append(NodeLabels(pool=h.name, nodes=tuple(pool.nodes), labels=labels))
    return OperatorPlan(
        namespace=namespace,
        preset=preset,
        release=release,
        namespace_object=ns_object,
        before_release=tuple(before),
        after_release=tuple(after),
        node_labels=tuple(node_labels),
        scheduling=scheduling,
        jupyterhub_profiles=profiles,
    )


def _gke_critical_quota(namespace: str) -> Manifest:
    return {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": GKE_CRITICAL_QUOTA, "namespace": namespace, "labels": MANAGED_BY},
        "spec": {
            # NVIDIA's manifest uses 100; operand DaemonSets run ~8 pods per GPU node.
            "hard": {"pods": "100"},
            "scopeSelector": {
                "matchExpressions": [
                    {
                        "operator": "In",
                        "scopeName": "PriorityClass",
                        "values": list(GKE_CRITICAL_CLASSES),
                    }
                ]
            },
        },
    }


def _gpu_namespace(name: str, gpus: int, labels: Mapping[str, str]) -> list[Manifest]:
    return [
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": name, "labels": {**labels, **MANAGED_BY}},
        },
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": {"name": "gpu-quota", "namespace": name, "labels": MANAGED_BY},
            # Seed 001: both requests and limits, so neither can exceed the namespace's share.
            "spec": {
                "hard": {f"requests.{GPU_RESOURCE}": str(gpus), f"limits.{GPU_RESOURCE}": str(gpus)}
            },
        },
    ]


def smoke_test_job(h: PoolHints, hints: Mapping[str, Any], namespace: str, image: str) -> Manifest:
    """A Job running ``nvidia-smi`` on one GPU of pool ``h`` (seed 002's exercise, operator era)."""
    labels = {"app.kubernetes.io/name": "gpu-smoke-test", "gpu-infra/pool": h.name, **MANAGED_BY}
    resource = hints["resourceName"]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": f"gpu-smoke-test-{h.name}", "namespace": namespace, "labels": labels},
        "spec": {
            "backoffLimit": 2,
            "activeDeadlineSeconds": SMOKE_TEST_DEADLINE_SECONDS,
            "ttlSecondsAfterFinished": SMOKE_TEST_TTL_SECONDS,
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "restartPolicy": "Never",
                    "nodeSelector": dict(hints["nodeSelector"]),
                    "tolerations": [dict(t) for t in hints["tolerations"]],
                    "securityContext": {
                        "runAsNonRoot": True,
                        "runAsUser": 65534,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    "containers": [
                        {
                            "name": "nvidia-smi",
                            "image": image,
                            "command": ["nvidia-smi"],
                            "env": [{"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "utility"}],
                            "resources": {
                                "requests": {resource: "1"},
                                "limits": {resource: "1"},
                            },
                            "securityContext": {
                                "allowPrivilegeEscalation": False,
                                "capabilities": {"drop": ["ALL"]},
                            },
                        }
                    ],
                },
            },
        },
    }
