"""The proof judges a plan against nodes it builds from the receivers' models at check time, never
from values the plan emitted: breaking one receiver formula after planning makes a plan that
passed fail, and an ASG tag the plan leaves out leaves the autoscaler with EC2's own count."""

from __future__ import annotations

import copy
import functools
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from infra.core.config.stack import load_stack_file, parse
from infra.core.eks import node_model as eks
from infra.core.errors import ConfigErrors
from infra.core.gke import node_model as gke
from infra.core.plan import build_plan
from infra.core.planned import Plan
from infra.core.scheduling.proof import prove

ROOT = Path(__file__).resolve().parents[2]


@functools.cache
def _plan(name: str, machine: str | None = None, sharing: int | None = None) -> Plan:
    config = copy.deepcopy(load_stack_file(ROOT / "stacks" / f"Pulumi.{name}.yaml")[1])
    pool: dict[str, Any] = config["gpu-infra:gpuPools"][-1]
    if machine is not None:
        pool["machineType"] = machine
    if sharing is not None:
        pool["sharing"] = {"replicas": sharing}
    return build_plan(parse(config, name))


def test_a_gce_kernel_reserve_larger_than_the_receivers_fails_a_plan_that_passed(monkeypatch):
    plan = _plan("gke-t4")
    assert prove(plan) == []
    real = gke.kernel_reserved
    # +1 GiB: beyond the guarantee's headroom (1 % of the node, at least 256 MiB)
    monkeypatch.setattr(gke, "kernel_reserved", lambda m, os="cos": real(m, os) + 2**30)
    assert any("Insufficient memory" in f for f in prove(plan))


def test_a_kernel_reserve_error_within_the_guarantee_headroom_still_fits(monkeypatch):
    # 256 MiB more than the GCE model: the notebook still fits the node, it is not Pending.
    plan = _plan("gke-t4")
    real = gke.kernel_reserved
    monkeypatch.setattr(gke, "kernel_reserved", lambda m, os="cos": real(m, os) + 256 * 2**20)
    assert prove(plan) == []


def test_a_karpenter_kube_reserved_per_pod_above_11_mib_fails_a_plan_that_passed(monkeypatch):
    plan = _plan("eks-karpenter", "g5.12xlarge")
    assert prove(plan) == []
    # +2211 MiB on 737 pods: beyond the guarantee's headroom (1 % of the node)
    monkeypatch.setattr(eks, "KUBE_RESERVED_MIB_PER_POD", 14)
    assert any("karpenter/l4/g5.12xlarge: Insufficient memory" in f for f in prove(plan))


def test_a_vm_overhead_above_karpenters_7_5_percent_fails_a_node_group_plan(monkeypatch):
    plan = _plan("eks-g4dn")
    assert prove(plan) == []
    monkeypatch.setattr(eks, "VM_MEMORY_OVERHEAD_PERCENT", 0.1)  # +410 MiB: beyond 256 MiB
    assert any("Insufficient memory" in f for f in prove(plan))


def test_the_g6f_refusal_comes_from_ec2s_gpu_count_as_karpenter_reads_it(monkeypatch):
    from infra.core.eks import platform as eks_platform

    with pytest.raises(ConfigErrors, match="instance-gpu-count=0"):
        _plan.__wrapped__("eks-karpenter", "g6f.xlarge")
    # Counting the logical GPU instead (what EC2 does not report) would let the pool plan.
    monkeypatch.setattr(eks_platform, "ec2_gpu_count", lambda gpus, fraction: gpus)
    assert prove(_plan.__wrapped__("eks-karpenter", "g6f.xlarge")) == []


def test_an_asg_without_its_gpu_resources_tag_leaves_the_autoscaler_at_ec2s_count():
    plan = _plan("eks-g4dn", sharing=4)
    assert prove(plan) == []
    assert plan.platform.name == "eks"
    groups = plan.platform.plan.groups
    tag = "k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/gpu"
    assert groups[-1].asg_tags[tag] == "4"
    stripped = {k: v for k, v in groups[-1].asg_tags.items() if k != tag}
    broken = replace(
        plan.platform.plan, groups=(*groups[:-1], replace(groups[-1], asg_tags=stripped))
    )
    platform = replace(plan.platform, plan=broken)
    findings = prove(replace(plan, platform=platform))
    assert any("counts 1 nvidia.com/gpu per node, a running node 4" in f for f in findings)
