"""Two stacks on one existing cluster, each with a pool named ``gpu``: every pod one stack runs on
GPU nodes selects its own nodes and none of the other's, judged by the kube-scheduler's node
affinity rule (``infra.core.scheduling.predicates``) against the nodes each platform models from
what they really carry (node group labels, the autoscaler's ASG node-template tags, the
gke-nodepool label GKE sets), not from the selectors under test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from infra.core.config.stack import parse
from infra.core.eks.device_plugin import DevicePluginPlan
from infra.core.eks.platform import eks_plan
from infra.core.nodes import Node
from infra.core.plan import Plan, build_plan
from infra.core.scheduling.predicates import Pod, affinity_problem, pod_from_spec
from infra.core.scheduling.proof import plan_workloads, pool_nodes
from infra.core.scheduling.workloads import warm
from tests.conftest import gke_config
from tests.unit.test_eks_day2 import gpu_pool
from tests.unit.test_neighbours import older_gpu_infra_catalog
from tests.unit.test_shared_cluster import existing

FALLBACK = [{"machineType": "n1-standard-8", "gpu": {"type": "nvidia-tesla-t4", "count": 1}}]


def _eks(operator: bool) -> dict[str, Any]:
    cfg = existing(
        gpu_pool(name="gpu", machineType="g4dn.xlarge", warm=1),
        gpu_pool(name="hpc", machineType="p5.48xlarge", hpc=True),
    )
    if operator:  # the operator is cluster-wide: one stack manages every GPU node
        cfg["gpu-infra:gpuOperator"] = {"enabled": True, "clusterWide": True}
        cfg["gpu-infra:gpuPools"][0]["smokeTest"] = True
    return cfg


def _gke(operator: bool) -> dict[str, Any]:
    pool = {"name": "gpu", "warm": 1, "fallback": FALLBACK}
    cluster = {"name": "shared", "location": "us-central1", "existing": True, "cpuNodes": 3}
    op = {"enabled": True, "clusterWide": True} if operator else {"enabled": False}
    return gke_config(pool, cluster=cluster, gpuOperator=op)


def _chart_pod(name: str, dp: DevicePluginPlan) -> Pod:
    """The DaemonSet pod a device plugin chart renders from its values: NVIDIA's takes
    ``affinity`` as given; AWS's EFA chart makes one nodeSelectorTerm per supportedInstanceLabels
    key (ORed) and adds ``nodeSelector`` (aws/eks-charts stable/aws-efa-k8s-device-plugin/
    templates/daemonset.yaml @ 5239609, v0.5.30)."""
    v = dict(dp.values)
    spec: dict[str, Any] = {"nodeSelector": v.get("nodeSelector") or {}}
    if "affinity" in v:
        spec["affinity"] = v["affinity"]
    if "supportedInstanceLabels" in v:
        keys, values = v["supportedInstanceLabels"]["keys"], v["supportedInstanceLabels"]["values"]
        terms = [
            {"matchExpressions": [{"key": k, "operator": "In", "values": values}]} for k in keys
        ]
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}
            }
        }
    return pod_from_spec(name, spec)


def gpu_node_pods(plan: Plan) -> Iterator[Pod]:
    """Every pod the stack puts on GPU nodes: its workloads and placeholders (the scheduling
    proof's), its device plugin DaemonSets, and a pod of the gpuPools output's selector.

    Flyte's tasks only through the per-stack PodTemplate the integration gives each pool on a
    shared cluster: FlytePropeller's plugin config is one per Flyte deployment, and a task that
    names an accelerator alone gets node affinity on the device label alone (flyteorg/flyte
    flyteplugins/go/tasks/pluginmachinery/flytek8s ``gpu-device-node-label``), so it lands on
    any node of the cluster with that GPU, as Flyte means it to (the integration's note says so),
    as does a task without accelerator."""
    workloads = [
        w
        for w in plan_workloads(plan)
        if w.consumer != "flyte" or w.pod.name != "flyte/no-accelerator"
    ]
    yield from (w.pod for w in workloads or warm(plan.warm))
    if plan.platform.name == "eks":
        p = eks_plan(plan.platform)
        for dp in (p.device_plugin, p.efa_device_plugin):
            if dp is not None:
                yield _chart_pod(dp.chart, dp)
    for h in plan.pools:
        yield pod_from_spec(f"output/{h.name}", {"nodeSelector": dict(h.node_selector)})


def nodes_of(plan: Plan) -> list[Node]:
    out: list[Node] = []
    for pn in pool_nodes(plan).values():
        out += [pn.running, *([pn.template] if pn.template else []), *pn.launchable]
    return out


def _crossing(mine: Plan, theirs: Plan) -> list[str]:
    return [
        f"{pod.name} selects {node.name}"
        for pod in gpu_node_pods(mine)
        for node in nodes_of(theirs)
        if affinity_problem(pod, node) is None
    ]


CASES = {
    "eks": _eks(False),
    "eks-operator": _eks(True),
    "gke": _gke(False),
    "gke-operator": _gke(True),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_no_pod_of_one_stack_selects_a_node_of_the_other(case: str):
    plans = {s: build_plan(parse(CASES[case], s)) for s in ("team-a", "team-b")}
    a, b = plans["team-a"], plans["team-b"]
    pods = list(gpu_node_pods(b))
    assert len(pods) >= 3  # what is judged (a check of nothing proves nothing)
    for pod in pods:  # each lands on some node of its own stack ...
        assert any(affinity_problem(pod, n) is None for n in nodes_of(b)), pod.name
    assert _crossing(b, a) == [] and _crossing(a, b) == []  # ... and on none of the other's


def test_the_check_sees_the_crossing_an_older_gpu_infra_planned(tmp_path: Path):
    # The same two EKS stacks as a gpu-infra from before the stack label planned them: the pool
    # label alone selected both stacks' nodes.
    catalog = older_gpu_infra_catalog(tmp_path)
    a, b = (build_plan(parse(CASES["eks"], s), catalog) for s in ("team-a", "team-b"))
    crossing = _crossing(b, a)
    assert any(c.startswith("nvidia-device-plugin selects") for c in crossing), crossing
    assert any(c.startswith("aws-efa-k8s-device-plugin selects") for c in crossing), crossing
