"""Run every workload of a plan against every node it must land on, and the namespace quotas.

A finding is one (workload, node or quota, failed filter). An empty list is the proof that
every GPU request the project emits or describes lands: on the running node, and from zero on
the node the cluster-autoscaler imagines (a pool whose minimum is 0 on GKE or EKS).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from infra.core.config.base import PoolBase
from infra.core.errors import ConfigIssue
from infra.core.integrations.scheduling import workload_targets
from infra.core.nodes import PoolNodes, less_daemonsets
from infra.core.operator.daemonsets import daemonset_budget_mib
from infra.core.planned import Plan
from infra.core.pools import GPU_RESOURCE, spec_of
from infra.core.scheduling import workloads
from infra.core.scheduling.predicates import fit_problems, quota_problem
from infra.core.scheduling.priority import priority_problems
from infra.core.scheduling.workloads import Workload


def pool_nodes(plan: Plan) -> dict[str, PoolNodes]:
    """Per pool the nodes a pod must fit, as the plan's platform builds them, less the memory the
    DaemonSets on them request."""
    release = plan.operator.release if plan.operator is not None else None
    patched: dict[str, dict[str, str]] = {}
    if plan.operator is not None:
        for nl in plan.operator.node_labels:
            patched.setdefault(nl.pool, {}).update(nl.labels)
    budget = daemonset_budget_mib(plan.platform, release)
    built = plan.platform.pool_nodes(release is not None, patched)
    return {name: less_daemonsets(pn, budget) for name, pn in built.items()}


def plan_workloads(plan: Plan) -> list[Workload]:
    op = plan.operator
    if op is None:
        return []
    # The integrations leave out pools a Pending pod cannot bring up (GKE queued provisioning).
    names = [h.name for h in plan.pools if plan.platform.request_only(h) is None]
    classes: dict[str, list[str]] = {}
    for h in plan.pools:
        if h.group is not None:
            classes.setdefault(h.group.name, []).append(h.name)

    def resolve(target: str) -> tuple[str, ...]:
        return workloads.target_pools(target, classes)

    targets = workload_targets(plan.pools, op.scheduling)
    resources = {t.name: list(hints["resourceNames"]) for t, hints, _ in targets}
    integ: Mapping[str, Any] = op.integrations
    return [
        *workloads.jupyterhub(integ["jupyterhub"]["singleuser"]["profileList"], resolve),
        *workloads.kubeflow(integ["kubeflow"], resources, resolve),
        *workloads.flyte(integ["flyte"], [n for n in names if not _in_class(n, classes)]),
        *workloads.kubernetes(integ["kubernetes"], resolve),
        *workloads.smoke_tests(op.after_release),
        *workloads.warm(plan.warm),
    ]


def _in_class(name: str, classes: Mapping[str, Sequence[str]]) -> bool:
    return any(name in members for members in classes.values())


def namespace_quotas(plan: Plan) -> dict[str, Mapping[str, str]]:
    """Per GPU namespace, the ResourceQuota ``hard`` items gpu-infra creates."""
    if plan.operator is None:
        return {}
    out: dict[str, Mapping[str, str]] = {}
    for m in plan.operator.after_release:
        if m["kind"] == "ResourceQuota":
            out[m["metadata"]["namespace"]] = m["spec"]["hard"]
        elif m["kind"] == "Profile":
            out[m["metadata"]["name"]] = m["spec"]["resourceQuotaSpec"]["hard"]
    return out


def check_fit(w: Workload, pools: Mapping[str, PoolNodes]) -> list[str]:
    """Where ``w`` fails: every pool it targets (or, for ``any_pool``, all of them)."""
    per_pool: dict[str, list[str]] = {}
    for name in w.pools:
        pn = pools[name]
        problems = [f"{pn.running.name}: {p}" for p in fit_problems(w.pod, pn.running)]
        if pn.template is not None:
            problems += [f"{pn.template.name}: {p}" for p in fit_problems(w.pod, pn.template)]
        for node in pn.launchable:
            problems += [f"{node.name}: {p}" for p in fit_problems(w.pod, node)]
        per_pool[name] = problems
    failed = [p for probs in per_pool.values() for p in probs]
    if w.any_pool:
        return [] if any(not v for v in per_pool.values()) else failed
    return failed


def autoscaler_gpu_label_problems(plan: Plan, pools: Mapping[str, PoolNodes]) -> list[str]:
    """cluster-autoscaler treats a node carrying its cloud's GPU label (GKE: the GCE provider's
    cloud.google.com/gke-accelerator, EKS: the AWS provider's k8s.amazonaws.com/accelerator) with
    0 allocatable ``nvidia.com/gpu`` as unready and keeps scaling up for it (cluster-autoscaler
    processors/customresources/gpu_processor.go FilterOutNodesWithUnreadyResources)."""
    label = plan.platform.features.autoscaler_gpu_label
    if label is None:
        return []
    out: list[str] = []
    for name, pn in pools.items():
        if label in pn.running.labels and pn.running.allocatable.get(GPU_RESOURCE, 0) == 0:
            out.append(f"{name}: carries {label} but advertises 0 {GPU_RESOURCE}")
    return out


def _requested(ws: Sequence[Workload]) -> dict[str, set[str]]:
    """Per pool, the extended resources (``vendor/name``) any workload targeting it requests."""
    out: dict[str, set[str]] = {}
    for w in ws:
        for pool in w.pools:
            out.setdefault(pool, set()).update(r for r in w.pod.requests if "/" in r)
    return out


def count_problems(
    plan: Plan, pools: Mapping[str, PoolNodes], ws: Sequence[Workload]
) -> tuple[list[tuple[str, str, str]], dict[str, PoolNodes]]:
    """Where an autoscaler's node (the template at zero, a type Karpenter may launch) counts a
    requested resource other than the running node advertises: ``(pool, sharing key, finding)``
    per pool, and the pools without the disagreeing nodes (their fit adds nothing). An
    autoscaler that counts 1 where a node hands out 4 slots adds a node per pending slot."""
    specs = _owners(plan)
    out: list[tuple[str, str, str]] = []
    kept: dict[str, PoolNodes] = dict(pools)
    for pool, resources in _requested(ws).items():
        pn = pools[pool]
        bad: list[str] = []
        for node in (pn.template, *pn.launchable):
            if node is None:
                continue
            for r in sorted(resources):
                seen, runs = node.allocatable.get(r, 0), pn.running.allocatable.get(r, 0)
                if seen != runs:
                    bad.append(f"{node.name} counts {seen} {r} per node, a running node {runs}")
        if not bad:
            continue
        spec = specs.get(pool)
        key = "machineType"
        if spec is not None and (spec[1].sharing or spec[1].mig):
            key = "sharing" if spec[1].sharing else "mig"
        remedy = plan.platform.count_remedy
        out.append((pool, key, f"{pool}: {bad[0]}: {remedy}"))
        kept[pool] = PoolNodes(pn.running, None, (), pn.problems)
    return out, kept


def _owners(plan: Plan) -> dict[str, tuple[int, PoolBase]]:
    """Per planned pool its gpuPools entry (index, spec): its own, or a GKE fallback pool's main."""
    specs = {p.name: (i, p) for i, p in enumerate(plan.config.pools)}
    return {h.name: spec_of(specs, h) for h in plan.pools}


def _findings(plan: Plan, pools: Mapping[str, PoolNodes]) -> list[tuple[str, str]]:
    """``(config key path, finding)`` of every problem the proof finds."""
    index = {name: i for name, (i, _) in _owners(plan).items()}

    def pool_key(pool: str, key: str | None = None) -> str:
        at = f"gpuPools[{index[pool]}]" if pool in index else "gpuPools"
        return f"{at}.{key}" if key else at

    warm = plan.warm.targets[0].pool if plan.warm is not None else ""
    out = [(pool_key(p.split(":")[0]), p) for p in autoscaler_gpu_label_problems(plan, pools)]
    out += [(pool_key(warm, "warm"), p) for p in priority_problems(plan)]
    out += [
        (pool_key(name, k), f"{name}: {p}") for name, pn in pools.items() for k, p in pn.problems
    ]
    ws = plan_workloads(plan)
    counted, pools = count_problems(plan, pools, ws)
    out += [(pool_key(pool, key), p) for pool, key, p in counted]
    quotas = namespace_quotas(plan)
    for w in ws:
        key = _workload_key(w, pool_key)
        out += [(key, f"{w.consumer} {w.pod.name}: {p}") for p in check_fit(w, pools)]
        if not w.quota_checked:
            continue
        gpu = [r for r in w.pod.requests if r.startswith("nvidia.com/")]
        for ns, hard in quotas.items():
            # gpus: 0 keeps a namespace off GPUs (a valid ResourceQuota): no GPU pod is meant
            # to run there, so none has to fit its quota.
            if all(hard.get(f"requests.{r}") == "0" for r in gpu):
                continue
            if (p := quota_problem(w.pod, hard, gpu)) is not None:
                out.append((key, f"{w.consumer} {w.pod.name} in namespace {ns}: {p}"))
    return out


def _workload_key(w: Workload, pool_key: Any) -> str:
    """The config key a workload comes from: a pool's ``warm`` / ``smokeTest``, or for an
    integration's pod the pool it targets (the finding names the integration)."""
    if w.consumer == "warm":
        return pool_key(w.pod.name.removeprefix("warm/"), "warm")
    if w.consumer == "smoke-test":
        return pool_key(w.pools[0], "smokeTest")
    return pool_key(w.pools[0]) if w.pools else "gpuPools"


def prove(plan: Plan, pools: Mapping[str, PoolNodes] | None = None) -> list[str]:
    """Every finding for the plan (empty: every workload lands and every quota admits it).

    ``pools``: the nodes to judge against instead of the plan's own (tests break one on purpose).
    """
    return [f for _, f in _findings(plan, pool_nodes(plan) if pools is None else pools)]


def proof_issues(plan: Plan, pools: Mapping[str, PoolNodes] | None = None) -> list[ConfigIssue]:
    """The proof's findings as config errors, each at the key whose workload or pool fails: a
    pod the plan creates or describes that no node admits is a broken stack, not a warning."""
    return [
        ConfigIssue(key, f"the scheduling proof fails: {f}")
        for key, f in _findings(plan, pool_nodes(plan) if pools is None else pools)
    ]


def count_pairs(plan: Plan) -> int:
    """How many (workload, pool) pairs ``prove`` checks."""
    return sum(len(w.pools) for w in plan_workloads(plan))


__all__: Sequence[str] = ("count_pairs", "plan_workloads", "pool_nodes", "proof_issues", "prove")
