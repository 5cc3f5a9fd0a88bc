"""The proof checks counts: every GPU resource a workload requests is counted alike by the
autoscaler's node (GKE's template at zero, each type a Karpenter NodePool may launch, the EKS
ASG's template) and by a running node, or the plan exits with one line at the sharing key."""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

import pytest

from infra.core.config.stack import load_stack_file, parse
from infra.core.errors import ConfigErrors
from infra.core.plan import build_plan

ROOT = Path(__file__).resolve().parents[2]


@functools.cache
def _sample(name: str) -> dict[str, Any]:
    return load_stack_file(ROOT / "stacks" / f"Pulumi.{name}.yaml")[1]


def _issues(name: str, pool: int, **edits: Any) -> dict[str, str]:
    config = copy.deepcopy(_sample(name))
    spec = config["gpu-infra:gpuPools"][pool]
    for key, value in edits.items():
        if value is None:
            spec.pop(key, None)
        else:
            spec[key] = value
    if "mig" in edits:  # the operator's MIG needs the operator
        config["gpu-infra:gpuOperator"] = {"enabled": True}
    try:
        build_plan(parse(config, name))
    except ConfigErrors as e:
        return {i.path: i.reason for i in e.issues}
    return {}


def _only_issue(at: str, name: str, pool: int, **edits: Any) -> str:
    """The reason of the one issue, at ``at``, a plan of ``name`` exits with once its pool
    ``pool`` is edited (``_issues``)."""
    issues = _issues(name, pool, **edits)
    assert list(issues) == [at]
    return issues[at]


def test_gke_operator_time_slicing_at_zero_exits_at_the_sharing_key_naming_the_gce_template():
    reason = _only_issue("gpuPools[0].sharing", "gke-t4", 0, sharing={"replicas": 4})
    assert "counts 1 nvidia.com/gpu per node, a running node 4" in reason
    assert "templates.go BuildCapacity" in reason


def test_gke_operator_time_slicing_with_a_running_node_in_its_one_zone_plans_as_it_is_copied():
    one_zone = {"zones": ["us-central1-a"], "minNodes": 1}
    assert _issues("gke-t4", 0, sharing={"replicas": 4}, **one_zone) == {}


def test_gke_total_minimum_over_several_zones_still_checks_the_template_of_an_empty_zone():
    # totalMinNodeCount bounds the pool, not a zone: a zone's MIG may sit at zero.
    reason = _only_issue("gpuPools[0].sharing", "gke-t4", 0, sharing={"replicas": 4}, minNodes=4)
    assert "counts 1 nvidia.com/gpu per node, a running node 4" in reason


def _templates(name: str, pool: int, **edits: Any) -> dict[str, bool]:
    from infra.core.scheduling.proof import pool_nodes

    config = copy.deepcopy(_sample(name))
    config["gpu-infra:gpuPools"][pool].update(edits)
    plan = build_plan(parse(config, name))
    return {n: p.template is not None for n, p in pool_nodes(plan).items()}


def test_eks_pool_minimum_split_over_per_az_groups_leaves_one_at_zero_so_its_template_is_checked():
    # split_sizes(1, 20, 2 AZs) -> (1, 10), (0, 10): the second group scales from its template.
    edits = {"minNodes": 1, "groupPerZone": True, "zones": ["usw2-az1", "usw2-az2"]}
    assert _templates("eks-g4dn", 0, **edits)["gpu-t4"]
    assert not _templates("eks-g4dn", 0, minNodes=1)["gpu-t4"]


def test_gke_operator_mig_single_at_zero_exits_at_the_mig_key():
    reason = _only_issue(
        "gpuPools[0].mig",
        "gke-a100-mig",
        0,
        gpu=None,
        mig={"strategy": "single", "config": "all-1g.5gb"},
    )
    assert "counts 1 nvidia.com/gpu per node, a running node 7" in reason


def test_gke_native_sharing_plans_as_gke_counts_its_slots():
    assert _issues("gke-a100-mig", 0) == {}


def test_karpenter_time_slicing_exits_at_the_sharing_key_naming_karpenter_and_node_overlay():
    reason = _only_issue("gpuPools[1].sharing", "eks-karpenter", 1, sharing={"replicas": 4})
    assert "NodeOverlay" in reason
    assert "nvidiaGPUs" in reason


def test_eks_cluster_autoscaler_time_slicing_plans_as_the_asg_tag_carries_the_slots():
    assert _issues("eks-g4dn", 0, sharing={"replicas": 4}) == {}


@pytest.mark.parametrize("machine", ["g6f.xlarge", "gr6f.4xlarge"])
def test_karpenter_fractional_gpu_type_exits_as_karpenter_counts_its_ec2_gpus_zero(machine):
    # EC2 DescribeInstanceTypes: g6f/gr6f GpuInfo.Gpus[0].Count 0, LogicalGpuCount 1.
    reason = _only_issue("gpuPools[1].machineType", "eks-karpenter", 1, machineType=machine)
    assert "instance-gpu-count=0" in reason
