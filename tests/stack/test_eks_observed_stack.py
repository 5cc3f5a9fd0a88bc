"""EKS decisions over what the observe step reads from a running account, through the real
observe step (``infra.observe``) against the fake account (``infra.mocklive``) a deploy of the
sample leaves (``mocklive.after``), changed as a running account changes."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

import pytest

from infra import mockengine
from infra.core.config.stack import StackConfig, parse
from infra.core.eks.platform import eks_plan
from infra.core.plan import build_plan
from infra.mocklive import LiveAccount, after
from tests.stack.harness import run_stack, sample, stack_source


def deployed(stack: str) -> tuple[dict[str, Any], StackConfig, LiveAccount]:
    """The raw stack file, its config, and the account its deploy leaves running."""
    name, raw = stack_source(stack)
    config = parse(raw, name)
    return raw, config, after(build_plan(config), sample(stack))


@pytest.fixture(scope="module")
def dropped_az() -> tuple[mockengine.Recording, list[str]]:
    """eks-g4dn deployed when the catalog also listed usw2-az5 (its cluster and VPC span it), run
    again over a catalog that no longer does."""
    raw, config, account = deployed("eks-g4dn")
    gone = "ml-net-usw2-az5_id"
    account = replace(
        account,
        eks_clusters={"ml": (*account.eks_clusters["ml"], gone)},
        subnets={**account.subnets, gone: "usw2-az5"},
    )
    observed = mockengine.observe(raw, config.stack, account)
    plan = build_plan(config, None, observed)
    net = eks_plan(plan.platform).network
    assert net is not None
    return run_stack("eks-g4dn", account=account), list(net.notes)


def test_a_running_control_plane_keeps_exactly_its_azs_when_the_catalog_drops_one(dropped_az):
    # EKS: "The subnets passed as an update must contain the same set of AZs as originally passed
    # when creating the cluster" (aws/containers-roadmap#170): a strict subset is refused too.
    rec, notes = dropped_az
    subnets = {r.name: r.inputs for r in rec.of_type("aws:ec2/subnet:Subnet")}
    sent = rec.one("eks:index:Cluster").inputs["privateSubnetIds"]
    assert sorted(sent) == [f"ml-net-usw2-az{n}_id" for n in range(1, 6)]
    # Its subnet is kept where it was created: /20 number 5 of the VPC's 10.x.0.0/16.
    assert subnets["ml-net-usw2-az5"]["availabilityZoneId"] == "usw2-az5"
    assert subnets["ml-net-usw2-az5"]["cidrBlock"].endswith(f".{16 * 4}.0/20")
    assert any("EKS cannot drop usw2-az5" in n for n in notes), notes


NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"


def _group(rec: mockengine.Recording, name: str) -> mockengine.Registered:
    return next(r for r in rec.of_type(NODE_GROUP) if r.inputs["nodeGroupName"] == name)


@pytest.fixture(scope="module")
def scaled() -> tuple[dict[str, Any], LiveAccount, str]:
    """eks-g4dn deployed, then the autoscaler scaled its first GPU group to 9 nodes."""
    raw, _, account = deployed("eks-g4dn")
    first = next(iter(sorted(n for n in account.node_groups if n.startswith("gpu-t4-"))))
    return raw, replace(account, node_groups={**account.node_groups, first: 9}), first


def test_a_running_group_whose_min_and_max_stay_leaves_its_desired_size_to_the_autoscaler(scaled):
    # terraform-provider-aws documents ignore_changes on scaling_config[0].desired_size for an
    # autoscaled aws_eks_node_group; a value read before the run would undo the autoscaler.
    raw, account, first = scaled
    ng = _group(run_stack(raw, "eks-g4dn", account=account), first)
    assert ng.ignore_changes == ("scalingConfig.desiredSize",)


def test_a_resized_group_sends_its_live_desired_size_clamped_into_the_new_bounds(scaled):
    # The provider sends desired_size with every scaling_config change (node_group.go
    # resourceNodeGroupUpdate); EKS refuses a desired size above maxSize.
    raw, account, first = scaled
    raw = copy.deepcopy(raw)
    pool = next(p for p in raw["gpu-infra:gpuPools"] if first.startswith(f"{p['name']}-"))
    pool["maxNodes"] = 5
    ng = _group(run_stack(raw, "eks-g4dn", account=account), first)
    assert ng.inputs["scalingConfig"] == {"minSize": 0, "maxSize": 5, "desiredSize": 5}
    assert ng.ignore_changes == ()
