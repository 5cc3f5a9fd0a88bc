"""Stacks that share a cluster they do not own share nothing by name (pure plan decisions)."""

from __future__ import annotations

from typing import Any

import pytest

from infra.core.config.stack import parse
from infra.core.eks.karpenter.pools import drain_delete_minutes
from infra.core.eks.lifecycle import (
    FrozenAzs,
    live_name,
    node_group_name,
    owned_name,
    subnet_hash_inputs,
)
from infra.core.eks.observed import EksClusterObserved, EksObserved, owned_by
from infra.core.eks.planner import EksPlan
from infra.core.eks.platform import eks_plan
from infra.core.errors import ConfigErrors
from infra.core.observed import Observed
from infra.core.plan import build_plan
from tests.unit.test_eks_day2 import gpu_pool, pools

# Helm: "release name ... exceeds max length of 53" (helm/helm pkg/chartutil/validate_name.go
# maxReleaseNameLen = 53).
HELM_MAX = 53
SUBNETS = {"usw2-az1": "subnet-0a1b2c3d4e5f60001", "usw2-az2": "subnet-0a1b2c3d4e5f60002"}


def existing(*specs: dict[str, Any]) -> dict[str, Any]:
    cfg = pools(*specs, existing=True, vpc={"privateSubnets": dict(SUBNETS)})
    cfg["gpu-infra:cluster"]["name"] = "shared"
    cfg["gpu-infra:gpuOperator"] = {"enabled": False}
    return cfg


def plan_for(cfg: dict[str, Any], stack: str) -> EksPlan:
    p = eks_plan(build_plan(parse(cfg, stack)).platform)
    assert isinstance(p, EksPlan)
    return p


def test_device_plugin_releases_on_an_existing_cluster_carry_the_stack_within_helms_53():
    cfg = existing(
        gpu_pool(machineType="g4dn.xlarge"),
        gpu_pool(name="hpc", machineType="p5.48xlarge", hpc=True),
    )
    long_stack = "team-" + "x" * 60
    for stack in ("team-a", long_stack):
        p = plan_for(cfg, stack)
        assert p.device_plugin is not None and p.efa_device_plugin is not None
        for dp in (p.device_plugin, p.efa_device_plugin):
            assert len(dp.release) <= HELM_MAX
            # The chart's fullname is the release name when it contains the chart's name
            # (k8s-device-plugin templates/_helpers.tpl), so the DaemonSet is the stack's too.
            assert dp.release.startswith(f"{dp.chart}-")
    a, b = plan_for(cfg, "team-a"), plan_for(cfg, "team-b")
    assert a.device_plugin and b.device_plugin and a.efa_device_plugin and b.efa_device_plugin
    assert a.device_plugin.release == "nvidia-device-plugin-team-a"
    assert a.device_plugin.release != b.device_plugin.release
    assert a.efa_device_plugin.release != b.efa_device_plugin.release


def test_device_plugin_release_on_a_created_cluster_keeps_the_charts_name():
    cfg = pools(gpu_pool(machineType="g4dn.xlarge"))
    cfg["gpu-infra:gpuOperator"] = {"enabled": False}
    dp = plan_for(cfg, "team-a").device_plugin
    assert dp is not None and dp.release == dp.chart == "nvidia-device-plugin"


# --- node groups on a cluster the stack does not own -----------------------------------------

# EKS node group names: 1-63 characters, unique per cluster (CreateNodegroup nodegroupName;
# a second CreateNodegroup of the name fails ResourceInUseException).
NODE_GROUP_MAX = 63


def test_node_groups_of_two_stacks_with_one_pool_on_an_existing_cluster_have_different_names():
    cfg = existing(gpu_pool(name="p" * 40, machineType="g4dn.xlarge"))
    a, b = (
        [ng.name for g in plan_for(cfg, s).groups for ng in g.node_groups]
        for s in ("team-a", "team-b")
    )
    assert a and not set(a) & set(b)
    assert all(len(n) <= NODE_GROUP_MAX and n.startswith("p" * 40 + "-") for n in a + b)


def test_node_group_names_on_a_created_cluster_carry_no_stack_so_running_groups_keep_theirs():
    cfg = pools(gpu_pool(machineType="g4dn.xlarge"))
    a, b = ([ng for g in plan_for(cfg, s).groups for ng in g.node_groups] for s in ("x", "y"))
    assert [ng.name for ng in a] == [ng.name for ng in b]
    assert all(ng.legacy_name is None for ng in a)


def test_a_group_kept_over_fewer_azs_is_found_under_its_name_with_or_without_the_stack():
    frozen = FrozenAzs(
        pool="gpu", hash_base={"amiType": "x"}, candidates=("a1", "a2"), max_azs=2, stack="s"
    )
    old = node_group_name("gpu", None, {"amiType": "x", **subnet_hash_inputs(("a1",), {})})
    planned = owned_name(
        node_group_name("gpu", None, {"amiType": "x", **subnet_hash_inputs(("a1", "a2"), {})}),
        "s",
    )
    assert live_name(planned, ("a1", "a2"), frozen, [old]) == (old, ("a1",))
    assert live_name(planned, ("a1", "a2"), frozen, [owned_name(old, "s")]) == (
        owned_name(old, "s"),
        ("a1",),
    )


def test_foreign_node_groups_survive_the_observed_json_round_trip():
    seen = EksObserved(node_groups={"gpu-0000abcd": 1}, foreign_node_groups=("gpu-1111abcd",))
    assert EksObserved.from_json(seen.to_json()) == seen


def test_an_observed_group_of_this_pools_name_without_this_stacks_tag_is_a_pool_name_error():
    cfg = pools(gpu_pool(machineType="g4dn.xlarge"))
    (ng,) = plan_for(cfg, "test").groups[0].node_groups
    with pytest.raises(ConfigErrors) as e:
        build_plan(
            parse(cfg, "test"), None, Observed("eks", EksObserved(foreign_node_groups=(ng.name,)))
        )
    assert [i.path for i in e.value.issues] == ["gpuPools[0].name"]
    assert owned_by({"gpu-infra/autoscaler/c/test": "owned"}, "gpu-infra/autoscaler/c/test")
    assert not owned_by({"gpu-infra/autoscaler/c/other": "owned"}, "gpu-infra/autoscaler/c/test")


# --- destroy: Karpenter pools wait out their drain ----------------------------------------------


def test_karpenter_pool_delete_timeout_is_the_grace_period_plus_the_providers_own_wait():
    # pulumi-kubernetes waits 300 s for a deleted custom resource without a delete timeout
    # (provider/pkg/await/await.go Deletion); a drain lasts up to terminationGracePeriod.
    assert drain_delete_minutes(48 * 3600) == 48 * 60 + 5
    assert drain_delete_minutes(90 * 60) == 95
    assert drain_delete_minutes(1) == 6  # rounded up: never shorter than the drain


def test_a_karpenter_pools_delete_timeout_follows_terminationGracePeriod():
    cfg = pools(gpu_pool(machineType="g5.xlarge", minNodes=0))
    cfg["gpu-infra:cluster"]["autoscaler"] = {"kind": "karpenter", "terminationGracePeriod": "6h"}
    (g,) = plan_for(cfg, "test").groups
    assert g.karpenter is not None and g.karpenter.delete_timeout_minutes == 6 * 60 + 5


# --- a created cluster's name is this stack's only if its tag says so ---------------------------

RUNNING = {
    "name": "ml",
    "endpoint": "https://198.51.100.20",
    "certificate_authority": "Q0E=",
    "oidc_issuer": "oidc.eks.us-west-2.amazonaws.com/id/ABCDEF",
    "security_group_id": "sg-0aaaaaaaaaaaaaaaa",
    "vpc_id": "vpc-0aaaaaaaaaaaaaaaa",
}


def plan_over_cluster(tags: dict[str, str]) -> EksPlan:
    cfg = pools(gpu_pool(machineType="g4dn.xlarge"))
    found = EksObserved(cluster=EksClusterObserved(**RUNNING, tags=tags))
    return eks_plan(build_plan(parse(cfg, "test"), None, Observed("eks", found)).platform)


def test_a_running_cluster_tagged_for_this_stack_is_planned_over():
    plan_over_cluster({"gpu-infra/stack": "ml/test"})


@pytest.mark.parametrize(
    "tags",
    [{"gpu-infra/stack": "ml/other"}, {}, {"Name": "ml"}],
    ids=["another-stacks", "untagged", "made-elsewhere"],
)
def test_a_running_cluster_of_the_name_not_tagged_for_this_stack_is_a_cluster_name_error(tags):
    # Not adopted: EKS names are unique per region (CreateCluster ResourceInUseException), so the
    # deploy could only fail, after planning over another stack's AZs and NAT gateways.
    with pytest.raises(ConfigErrors) as e:
        plan_over_cluster(tags)
    assert [i.path for i in e.value.issues] == ["cluster.name"]
    assert "ml/test" in e.value.issues[0].reason


def test_an_untagged_cluster_pulumi_eks_named_for_this_program_is_kept_with_a_note():
    # Day 2: clusters made before the owner tag carry pulumi-eks's Name=<component>-eksCluster
    # (nodejs/eks/cluster/cluster.ts); the component is <cluster>-eks (components.eks).
    p = plan_over_cluster({"Name": "ml-eks-eksCluster"})
    assert p.network is not None
    assert any("carries no gpu-infra/stack tag" in n for n in p.network.notes)
