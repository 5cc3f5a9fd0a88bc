"""Chart coordinates, shared constants and the GPU Operator plan's data types."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from infra.core.catalog.pins import pin
from infra.core.catalog.vendored import DATA_DIR
from infra.core.labels import MANAGED_BY as MANAGED_BY  # re-exported; its home is labels

Manifest = dict[str, Any]

# Chart coordinates (pins.csv row gpu-operator): the chart name is bare; "nvidia/gpu-operator"
# plus a repo URL fails with "chart not found" (NVIDIA/gpu-operator#538). The name and repository
# this code knows the chart by (the vendored row; also how a review recognises the release); the
# version a plan installs is its catalog's (``pinned_defaults``).
NVIDIA_HELM_REPO = pin("gpu-operator", DATA_DIR).repo
CHART = pin("gpu-operator", DATA_DIR).chart
RELEASE_NAME = "gpu-operator"

# NFD worker pods (hostPath mounts) come straight from the chart, before the operator could relabel
# the namespace (psa.enabled), so the namespace is created privileged up front (NVIDIA
# gpu-operator getting-started.html "Pod Security Admission").
PRIVILEGED_PSA = {
    f"pod-security.kubernetes.io/{mode}": "privileged" for mode in ("enforce", "audit", "warn")
}


# GKE admits system-node-critical/system-cluster-critical pods outside kube-system only under a
# quota scoped to those classes (https://cloud.google.com/kubernetes-engine/docs/how-to/gpu-operator;
# NVIDIA cloud-native-docs google-gke-gpu-operator-quota.yaml).
GKE_CRITICAL_QUOTA = "gpu-operator-quota"


# Operand DaemonSets (chart value keys) that run one system-node-critical pod per GPU node when
# enabled; the validator DaemonSet always runs (gpu-operator assets/state-*).
OPERAND_DAEMONSETS = (
    "driver",
    "toolkit",
    "devicePlugin",
    "gfd",
    "dcgm",
    "dcgmExporter",
    "migManager",
    "nodeStatusExporter",
)
SMOKE_TEST_NAMESPACE = "gpu-smoke-test"
# Scale-from-zero, image pull and (operator-managed) driver build take minutes; fail after 30.
SMOKE_TEST_DEADLINE_SECONDS = 1800


@dataclass(frozen=True, slots=True)
class ConfigSecret:
    """A manifest value the component reads from a Pulumi config secret, as a secret output
    (``infra.core.config.secrets``): the plan holds the key, never the text."""

    key: str


@dataclass(frozen=True, slots=True)
class RegistryAuth:
    """A ``.dockerconfigjson`` for one registry whose password is a Pulumi config secret
    (https://kubernetes.io/docs/concepts/configuration/secret/#docker-config-secrets)."""

    server: str
    username: str
    password_key: str


@dataclass(frozen=True, slots=True, kw_only=True)
class HelmRelease:
    """The ``gpu-operator`` Helm release.

    Attributes:
        name: release name.
        chart: chart name in the repository.
        repository: Helm repository URL.
        version: pinned chart version (with ``v``).
        namespace: namespace the release installs into (created separately).
        values: overrides only (nested Helm values).
        reasons: one line per override: dotted path (or ``toolkit.env[NAME]``) -> why.
        timeout: Helm timeout in seconds.
    """

    name: str = RELEASE_NAME
    chart: str = CHART
    repository: str = NVIDIA_HELM_REPO
    version: str
    namespace: str
    values: Mapping[str, Any]
    reasons: Mapping[str, str]
    timeout: int


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeLabels:
    """Labels gpu-infra puts on existing nodes (platform kubernetes only; clouds label pools)."""

    pool: str
    nodes: tuple[str, ...]
    labels: Mapping[str, str]


@dataclass(frozen=True, slots=True, kw_only=True)
class OperatorPlan:
    """The GPU Operator release and the in-cluster GPU setup around it.

    Attributes:
        namespace: the operator's namespace.
        preset: the platform preset (``None`` when the operator is disabled).
        release: the Helm release, or ``None`` when the operator is disabled.
        namespace_object: the operator namespace manifest (privileged pod security).
        before_release: objects the operator's pods need at install (GKE driver installer
            DaemonSets, critical-pod quota, device-plugin config, the vGPU Secrets).
        after_release: objects that need the operator (GPU namespaces and quotas, smoke tests).
        node_labels: labels to patch onto existing nodes (platform kubernetes).
        scheduling: per pool, what a GPU workload needs to land there (stack output).
        jupyterhub_profiles: per pool, a ready JupyterHub ``profileList`` entry (stack output).
        integrations: per consumer (``jupyterhub``, ``kubeflow``, ``flyte``, ``kubernetes``), the
            document ``python -m infra.plan --integration NAME`` prints (stack outputs too).
        notes: one line per config value gpu-infra did not apply, with why (printed, not errors).
        deleted_with_stack: team namespaces (and Kubeflow Profiles) whose ``gpuNamespaces`` entry
            sets ``deleteWithStack``: not retained on delete.
        isolation: the isolation table's rows for this stack's pools
            (``infra.core.operator.isolation.RuntimePath``).
        pod_security: per team namespace, the Pod Security level enforced there
            (``infra.core.operator.isolation.NamespaceGuard``).
    """

    namespace: str
    preset: str | None
    release: HelmRelease | None
    namespace_object: Manifest | None
    before_release: tuple[Manifest, ...] = ()
    after_release: tuple[Manifest, ...] = ()
    node_labels: tuple[NodeLabels, ...] = ()
    scheduling: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    jupyterhub_profiles: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    integrations: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    deleted_with_stack: frozenset[str] = frozenset()
    isolation: tuple[Any, ...] = ()
    pod_security: tuple[Any, ...] = ()
