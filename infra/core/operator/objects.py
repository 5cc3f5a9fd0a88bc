"""Kubernetes objects around the operator release: namespaces, quotas, node labels, smoke tests,
and the stack-wide checks they rely on."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from infra.core.config.stack import StackConfig
from infra.core.errors import Issues, join_path
from infra.core.integrations import flyte as flyte_mod
from infra.core.integrations import kubeflow as kf
from infra.core.integrations.jupyterhub import jupyterhub_profile
from infra.core.integrations.kubernetes import manifests as k8s_manifests
from infra.core.integrations.scheduling import scheduling_hints, workload_targets
from infra.core.labels import POOL_LABEL
from infra.core.operator.daemonsets import daemonset_budget_mib
from infra.core.operator.gpu_sharing import sharing_config_map
from infra.core.operator.helm_values import default_at, is_cdi_era
from infra.core.operator.isolation import RuntimePath, gap_text
from infra.core.operator.model import (
    GKE_CRITICAL_QUOTA,
    MANAGED_BY,
    OPERAND_DAEMONSETS,
    PRIVILEGED_PSA,
    SMOKE_TEST_DEADLINE_SECONDS,
    SMOKE_TEST_NAMESPACE,
    HelmRelease,
    Manifest,
    NodeLabels,
    OperatorPlan,
)
from infra.core.operator.pod_security import TEAM_POD_SECURITY, guard_gaps, namespace_guards
from infra.core.operator.vgpu import VGPU, vgpu_secrets
from infra.core.platform import Platform, Preset
from infra.core.pools import GPU_RESOURCE, PoolHints, PoolSpecs, spec_of
from infra.core.rules.kubernetes import SYSTEM_PRIORITY_CLASSES
from infra.core.sharing import operator_node_labels, pool_mig_profiles, quota_resource_names

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
        if ns.kubeflow_profile is not None and ns.name == kf.KUBEFLOW_NAMESPACE:
            issues.add(
                join_path("gpuNamespaces", i, "name"),
                f"{ns.name!r} is Kubeflow's own namespace, where its platform runs; a "
                "kubeflowProfile is a user's namespace: name it after the team",
            )
        if ns.kubeflow_profile is not None and ns.labels:
            issues.add(
                join_path("gpuNamespaces", i, "labels"),
                "a kubeflowProfile namespace is created and labelled by Kubeflow's profile "
                "controller; set labels there or drop kubeflowProfile",
            )


def check_pool_labels(
    pools: Sequence[PoolHints], platform: Platform, specs: PoolSpecs, issues: Issues
) -> None:
    """Every pool's nodes must carry the labels that select its sharing/MIG config: cloud planners
    put them on the pool; on-prem, gpu-infra labels the listed ``nodes`` (or the user did)."""
    for h in pools:
        i, pool = spec_of(specs, h)
        want = operator_node_labels(pool, gpu_present=platform.features.gpu_present_label)
        missing = ", ".join(f"{k}={v}" for k, v in sorted(want.items()) if h.labels.get(k) != v)
        if not missing:
            continue
        if platform.features.listed_nodes:
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
    platform: Platform,
    specs: PoolSpecs,
    release: HelmRelease | None,
    preset: Preset | None,
    namespace: str,
    notes: tuple[str, ...] = (),
    paths: tuple[RuntimePath, ...] = (),
) -> OperatorPlan:
    ns_object: Manifest | None = None
    before: list[Manifest] = []
    if release is not None:
        ns_object = {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": namespace, "labels": {**PRIVILEGED_PSA, **MANAGED_BY}},
        }
        before = _before_release(config, pools, platform, release, preset, namespace)
    gap = gap_text(paths)
    after, kubeflow_profiles = _namespaces(config, pools, specs, gap)
    if gap is not None and config.namespaces:
        notes = (*notes, f"gpuNamespaces: the GPU quotas do not bind GPU use here: {gap}")
    guards = namespace_guards(config)
    notes = (
        *notes,
        *(f"gpuNamespaces: the GPU quota may not bind in {g}" for g in guard_gaps(guards)),
    )
    runtime_class = _runtime_class(release)
    scheduling: dict[str, dict[str, Any]] = {}
    node_labels: list[NodeLabels] = []
    for h in pools:
        pool = spec_of(specs, h)[1]
        hints = scheduling_hints(platform, h, pool, runtime_class)
        scheduling[h.name] = hints
        # A GKE fallback pool shares its main pool's ComputeClass selector, so the main pool's
        # Job already tests the class; one Job per class, not per alternative.
        if pool.smoke_test and h.name in specs:
            licensed = h.driver == VGPU
            # A licence is per VM: every node the pool always has is checked, not one.
            nodes = (len(platform.listed_nodes(h.name)) or h.min_nodes) if licensed else 1
            job = smoke_test_job(h, hints, config.operator.smoke_image, licensed, nodes)
            after.append(job)
        labels = operator_node_labels(pool) if release is not None else {}
        if listed := platform.listed_nodes(h.name):
            # Listed nodes get every label the pool's workloads select on and the proof assumes
            # (its declared labels and nodeSelector), and the accelerator label Flyte's device
            # selector reads.
            accelerator = flyte_mod.accelerator_name(h, platform.features, platform.catalog)
            labels = {
                **h.labels,
                **platform.workload_selector(h),
                **labels,
                platform.features.accelerator_label: accelerator,
            }
            node_labels.append(NodeLabels(pool=h.name, nodes=listed, labels=labels))
    after = _profiles_after_licensed_jobs(after)
    patched = {nl.pool: nl.labels for nl in node_labels}
    profiles, integrations = _integrations(
        config, pools, platform, specs, scheduling, kubeflow_profiles, patched, release
    )
    return OperatorPlan(
        namespace=namespace,
        preset=preset.name if preset is not None else None,
        release=release,
        namespace_object=ns_object,
        before_release=tuple(before),
        after_release=tuple(after),
        node_labels=tuple(node_labels),
        scheduling=scheduling,
        jupyterhub_profiles=profiles,
        integrations=integrations,
        notes=notes,
        deleted_with_stack=frozenset(n.name for n in config.namespaces if n.delete_with_stack),
        isolation=paths,
        pod_security=guards,
    )


def _before_release(
    config: StackConfig,
    pools: Sequence[PoolHints],
    platform: Platform,
    release: HelmRelease,
    preset: Preset | None,
    namespace: str,
) -> list[Manifest]:
    """Objects the release needs in place before it installs."""
    before: list[Manifest] = []
    if preset is not None:
        before.extend(preset.before_release(pools))
    if platform.features.critical_pod_quota:
        pods, why = critical_pods(platform, pools, release.values, release.version)
        before.append(_gke_critical_quota(namespace, pods, why))
    if (cm := sharing_config_map(config, namespace)) is not None and (
        "devicePlugin" in release.values
    ):
        before.append(cm)
    # The driver pods pull and license with these from their first start.
    before.extend(vgpu_secrets(config, namespace))
    return before


def _namespaces(
    config: StackConfig, pools: Sequence[PoolHints], specs: PoolSpecs, gap: str | None
) -> tuple[list[Manifest], list[Manifest]]:
    """The GPU namespaces with their quotas (then Kubeflow profiles, then the smoke-test
    namespace), and the Kubeflow profiles alone."""
    after: list[Manifest] = []
    quota_names: dict[str, None] = {}
    for h in pools:
        quota_names.update(dict.fromkeys(quota_resource_names(h, spec_of(specs, h)[1])))
    hard_names = list(quota_names or [GPU_RESOURCE])
    kubeflow_profiles: list[Manifest] = []
    for ns in config.namespaces:
        if ns.kubeflow_profile is not None:
            hard = {f"requests.{r}": str(ns.gpus) for r in hard_names}
            kubeflow_profiles.append(kf.profile(ns.name, ns.kubeflow_profile.owner, hard))
        else:
            after.extend(_gpu_namespace(ns.name, ns.gpus, ns.labels, hard_names, gap))
    after.extend(kubeflow_profiles)
    if any(p.smoke_test for p in config.pools):
        after.append(smoke_test_namespace())
    return after, kubeflow_profiles


def _integrations(
    config: StackConfig,
    pools: Sequence[PoolHints],
    platform: Platform,
    specs: PoolSpecs,
    scheduling: Mapping[str, dict[str, Any]],
    kubeflow_profiles: Sequence[Manifest],
    patched: Mapping[str, Mapping[str, str]],
    release: HelmRelease | None,
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """JupyterHub profiles and the integration documents, one entry per workload target."""
    images = config.integrations.jupyterhub.choices
    # A pool a Pending pod cannot bring up (GKE queued provisioning) is offered to no integration.
    pools = [h for h in pools if platform.request_only(h) is None]
    profiles: dict[str, dict[str, Any]] = {}
    workloads: dict[str, Any] = {}
    # Workloads target a pool, or a ComputeClass as a whole (never one of its pools' GPUs).
    targets = workload_targets(pools, scheduling)
    target_hints = {t.name: hints for t, hints, _ in targets}
    # gpuPools[].warm per target (a ComputeClass is named after its gpuPools entry). Promised to
    # users only where gpu-infra runs an autoscaler that adds a node for a preempted placeholder:
    # on platform kubernetes or with the EKS autoscaler off, nothing may (infra.core.warm notes).
    warm = {name: spec.warm for name, (_, spec) in specs.items() if spec.warm}
    if platform.features.autoscaler is None:
        warm = {}
    by_name = {h.name: h for h in pools}
    budget = daemonset_budget_mib(platform, release)
    for t, hints, members in targets:
        memory = min(platform.node_memory_mib(by_name[m]) for m in members)
        profiles[t.name] = jupyterhub_profile(t, hints, memory, budget, images, warm.get(t.name, 0))
        workloads[t.name] = k8s_manifests(t.name, hints, config.operator.smoke_image)
    integrations = {
        "jupyterhub": {"singleuser": {"profileList": list(profiles.values())}},
        "kubeflow": kf.kubeflow(target_hints, kubeflow_profiles, warm),
        "flyte": flyte_mod.flyte(
            platform,
            targets,
            specs,
            config.operator.smoke_image,
            config.integrations.flyte.namespace,
            patched,
        ),
        "kubernetes": workloads,
    }
    return profiles, integrations


def _runtime_class(release: HelmRelease | None) -> str | None:
    """The RuntimeClass GPU pods must name, or ``None`` when nvidia is containerd's default runtime
    or CDI injects devices: only a pre-CDI chart with CONTAINERD_SET_AS_DEFAULT=false needs it."""
    if release is None or is_cdi_era(release.version):
        return None
    env = {e["name"]: e["value"] for e in release.values.get("toolkit", {}).get("env", [])}
    if env.get("CONTAINERD_SET_AS_DEFAULT") != "false":
        return None
    return str(release.values.get("operator", {}).get("runtimeClass", "nvidia"))


def critical_pods(
    platform: Platform, pools: Sequence[PoolHints], values: Mapping[str, Any], version: str
) -> tuple[int, str]:
    """How many system-node-critical / system-cluster-critical pods the release runs at most, and
    how that number was reached (for the GKE critical-pod quota).

    Per GPU node: one pod per operand DaemonSet the values enable (``daemonsets.priorityClassName``
    is system-node-critical) plus the NFD worker, which runs on every node (NFD's
    ``priorityClassName``). Cluster-wide: the operator, NFD master and NFD gc. Headroom: a rolling
    update's terminating pods count against the quota until they are gone (Kubernetes
    resource-quotas: pods in a non-terminal state), so one node's worth plus 10%.
    """

    def on(key: str) -> bool:
        given = values.get(key, {})
        if isinstance(given, Mapping) and "enabled" in given:
            return bool(given["enabled"])
        return bool(default_at(version, f"{key}.enabled"))

    operands = [k for k in OPERAND_DAEMONSETS if on(k)]
    if on("migManager") and not any(pool_mig_profiles(h) for h in pools):
        operands.remove("migManager")  # only scheduled on MIG-capable GPU nodes
    nfd = on("nfd")
    per_gpu_node = len(operands) + 1 + int(nfd)  # + the operator validator DaemonSet
    gpu_nodes = sum(h.max_nodes for h in pools)
    cpu_nodes = platform.stated_cpu_nodes or 0 if nfd else 0
    cluster_wide = 1 + 2 * int(nfd)
    base = per_gpu_node * gpu_nodes + cpu_nodes + cluster_wide
    total = base + per_gpu_node + -(-base // 10)
    why = (
        f"{per_gpu_node} pods per GPU node ({', '.join([*operands, 'validator'])}"
        f"{', nfd-worker' if nfd else ''}) x {gpu_nodes} max GPU nodes + {cpu_nodes} CPU-node NFD "
        f"workers + {cluster_wide} cluster-wide + headroom"
    )
    return total, why


def check_cpu_nodes(
    platform: Platform, values: Mapping[str, Any], version: str, issues: Issues
) -> None:
    """GKE sizes the critical-pod quota with one NFD worker per CPU node; an existing cluster's
    CPU nodes are not the system pool's, so they must be stated (a guess would fail closed only by
    luck: too small a quota blocks operand pods)."""
    if not platform.features.critical_pod_quota or platform.stated_cpu_nodes is not None:
        return
    nfd = values.get("nfd", {})
    on = (
        nfd["enabled"]
        if isinstance(nfd, Mapping) and "enabled" in nfd
        else default_at(version, "nfd.enabled")
    )
    if on:
        issues.add(
            "cluster.cpuNodes",
            "an existing cluster's CPU nodes each run the operator's NFD worker, which the "
            "critical-pod quota must admit; state how many CPU nodes the cluster has at most "
            "(systemPool describes only a pool gpu-infra creates)",
        )


def _gke_critical_quota(namespace: str, pods: int, why: str) -> Manifest:
    return {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {
            "name": GKE_CRITICAL_QUOTA,
            "namespace": namespace,
            "labels": MANAGED_BY,
            "annotations": {"gpu-infra/sizing": why},
        },
        "spec": {
            # NVIDIA's sample quota says 100, which the operands of ~16 GPU nodes already fill.
            "hard": {"pods": str(pods)},
            "scopeSelector": {
                "matchExpressions": [
                    {
                        "operator": "In",
                        "scopeName": "PriorityClass",
                        "values": list(SYSTEM_PRIORITY_CLASSES),
                    }
                ]
            },
        },
    }


ISOLATION_GAP = "gpu-infra/not-enforced"


def _gpu_namespace(
    name: str,
    gpus: int,
    labels: Mapping[str, str],
    resources: Sequence[str],
    gap: str | None = None,
) -> list[Manifest]:
    annotations = {QUOTA_MEANING: _quota_meaning(gpus, resources)}
    if gap is not None:  # said on the quota itself, where an admin looks
        annotations[ISOLATION_GAP] = gap
    return [
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            # Baseline keeps out the pods no runtime setting stops (privileged, CAP_SYS_ADMIN,
            # hostPath); users cannot override it (rules.kubernetes.check_gpu_namespace_labels).
            "metadata": {"name": name, "labels": {**labels, **TEAM_POD_SECURITY, **MANAGED_BY}},
        },
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": {
                "name": "gpu-quota",
                "namespace": name,
                "labels": MANAGED_BY,
                # Each hard item is counted on its own (kubernetes.io resource-quotas), so the
                # namespace may hold N of every name at once, not N GPUs in total: say so.
                "annotations": annotations,
            },
            # Extended resources cannot be overcommitted, so Kubernetes allows only `requests.`
            # quota items for them (kubernetes.io/docs/concepts/policy/resource-quotas,
            # "Resource quota for extended resources"); every GPU resource name is listed, since
            # a resource the quota omits is unlimited.
            "spec": {"hard": {f"requests.{r}": str(gpus) for r in resources}},
        },
    ]


QUOTA_MEANING = "gpu-infra/gpus-per-resource-name"


def _quota_meaning(gpus: int, resources: Sequence[str]) -> str:
    if len(resources) == 1:
        return f"gpuNamespaces[].gpus={gpus}: at most {gpus} {resources[0]} requested at once"
    return (
        f"gpuNamespaces[].gpus={gpus} applies to each GPU resource name separately: up to {gpus} "
        f"of each of {', '.join(resources)} at once, not {gpus} in total"
    )


# A vGPU guest driver serves unlicensed at reduced capability until nvidia-gridd obtains a licence;
# `nvidia-smi -q` reports it as "License Status : Licensed (Expiry: ...)" (NVIDIA License System
# User Guide, "Verifying the NVIDIA vGPU Software License Status of a Licensed Client"). The Job
# polls for it for up to 10 minutes, well inside its deadline, then fails showing the status.
LICENSED_SMI = (
    "for i in $(seq 1 60); do "
    "if nvidia-smi -q | grep -Eq 'License Status +: Licensed'; then nvidia-smi; exit 0; fi; "
    "sleep 10; done; nvidia-smi -q | grep -E 'License Status'; exit 1"
)
# Marks the smoke Jobs that prove a licensed vGPU driver: the integrations' objects wait for them.
LICENSE_CHECK_LABEL = "gpu-infra/license-check"


def _profiles_after_licensed_jobs(after: list[Manifest]) -> list[Manifest]:
    """Kubeflow Profiles (where notebooks land) after the Jobs that prove a licensed driver, so
    the component can make them wait; unchanged when there is no such Job."""
    licensed = [
        m for m in after if m["kind"] == "Job" and LICENSE_CHECK_LABEL in m["metadata"]["labels"]
    ]
    if not licensed:
        return after
    rest = [m for m in after if m["kind"] != "Profile"]
    return [*rest, *(m for m in after if m["kind"] == "Profile")]


def smoke_test_namespace() -> Manifest:
    """The smoke-test Jobs' own namespace: no GPU quota of a team's namespace is spent on them,
    and the Jobs meet the restricted pod security standard, so it is enforced."""
    psa = {f"pod-security.kubernetes.io/{m}": "restricted" for m in ("enforce", "audit", "warn")}
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": SMOKE_TEST_NAMESPACE, "labels": {**psa, **MANAGED_BY}},
    }


SMOKE_RUN_LABEL = "gpu-infra/smoke-run"


def _one_pod_per_node(spec: dict[str, Any], digest: str) -> None:
    """Required anti-affinity among this Job's own pods (a label carrying the spec's digest, so
    earlier Jobs' pods do not count): https://kubernetes.io/docs/concepts/scheduling-eviction/
    assign-pod-node/#inter-pod-affinity-and-anti-affinity."""
    template = spec["template"]
    template["metadata"]["labels"] = {**template["metadata"]["labels"], SMOKE_RUN_LABEL: digest}
    template["spec"]["affinity"] = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchLabels": {SMOKE_RUN_LABEL: digest}},
                    "topologyKey": "kubernetes.io/hostname",
                }
            ]
        }
    }


def smoke_test_job(
    h: PoolHints, hints: Mapping[str, Any], image: str, licensed: bool = False, nodes: int = 1
) -> Manifest:
    """A Job running ``nvidia-smi`` on one GPU of pool ``h``; on a vGPU pool (``licensed``) it
    first waits for the guest driver's licence, on each of ``nodes`` nodes: one pod per node
    (``parallelism``/``completions``, required pod anti-affinity on ``kubernetes.io/hostname``
    among this Job's pods), so a node whose driver never licenses fails the Job. Fewer schedulable
    nodes than ``nodes`` leave a pod Pending until the deadline: the Job fails, never passes.

    It runs once per change of its inputs: the name carries a hash of the spec, so a changed image,
    resource or selector makes a new Job, and an unchanged one keeps its name. It has no
    ``ttlSecondsAfterFinished``: a Job the TTL controller deleted would be gone at the next
    ``pulumi refresh`` and ``pulumi up`` would recreate it, scaling a GPU node up again.
    """
    labels = {"app.kubernetes.io/name": "gpu-smoke-test", POOL_LABEL: h.name, **MANAGED_BY}
    if licensed:
        labels[LICENSE_CHECK_LABEL] = "true"
    resource = hints["resourceName"]
    container: dict[str, Any] = {
        "name": "nvidia-smi",
        "image": image,
        "command": ["sh", "-c", LICENSED_SMI] if licensed else ["nvidia-smi"],
        "env": [{"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "utility"}],
        "resources": {"requests": {resource: "1"}, "limits": {resource: "1"}},
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
        },
    }
    spec: dict[str, Any] = {
        "backoffLimit": 2,
        "activeDeadlineSeconds": SMOKE_TEST_DEADLINE_SECONDS,
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
                "containers": [container],
            },
        },
    }
    if nodes > 1:
        spec["parallelism"] = spec["completions"] = nodes
    digest = hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:8]
    if nodes > 1:
        _one_pod_per_node(spec, digest)
    # <= 63 characters: the Job controller copies the name into the pods' job-name label.
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": f"smoke-{h.name}-{digest}",
            "namespace": SMOKE_TEST_NAMESPACE,
            "labels": labels,
        },
        "spec": spec,
    }
