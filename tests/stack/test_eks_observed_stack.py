"""EKS decisions over what the observe step reads from a running account, through the real
observe step (``infra.observe``) against the fake account (``infra.mocklive``) a deploy of the
sample leaves (``mocklive.after``), changed as a running account changes."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

import pytest

from infra import mockanswers, mockengine
from infra.core import offline
from infra.core.config.stack import StackConfig, parse
from infra.core.eks.planner import EksPlan
from infra.core.eks.platform import eks_plan
from infra.core.errors import ConfigErrors
from infra.core.observed import ObserveError
from infra.core.plan import build_plan
from infra.mocklive import LiveAccount, after, before
from tests.stack.harness import run_stack, sample, stack_source


def deployed(
    stack: str, kubernetes_version: str | None = None
) -> tuple[dict[str, Any], StackConfig, LiveAccount]:
    """The raw stack file (with cluster.kubernetesVersion set to ``kubernetes_version`` if
    given), its config, and the account its deploy leaves running."""
    name, raw = stack_source(stack)
    if kubernetes_version is not None:
        raw = copy.deepcopy(raw)
        raw["gpu-infra:cluster"]["kubernetesVersion"] = kubernetes_version
    config = parse(raw, name)
    made = sample(stack) if kubernetes_version is None else run_stack(raw, name)
    return raw, config, after(build_plan(config), made)


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
    rec = run_stack(raw, "eks-g4dn", account=account)
    assert _group(rec, first).ignore_changes == ("scalingConfig.desiredSize",)
    (system,) = [n for n in account.node_groups if n.startswith("system-")]
    assert _group(rec, system).ignore_changes == ("scalingConfig.desiredSize",)


def test_a_resized_group_sends_its_live_desired_size_clamped_into_the_new_bounds(scaled):
    # The provider sends desired_size with every scaling_config change (node_group.go
    # resourceNodeGroupUpdate); EKS refuses a desired size above maxSize.
    raw, account, first = scaled
    raw = copy.deepcopy(raw)
    pool = next(p for p in raw["gpu-infra:gpuPools"] if first.startswith(f"{p['name']}-"))
    pool["maxNodes"] = 5
    (ng,) = [
        ng for g in planned_over(raw, account).groups for ng in g.node_groups if ng.name == first
    ]
    assert (ng.min_size, ng.max_size, ng.desired_size, ng.send_desired) == (0, 5, 5, True)


EBS_CSI = "aws-ebs-csi-driver"  # no per-minor table in the user guide: unpinned


def planned_over(raw: dict[str, Any], account: LiveAccount) -> EksPlan:
    """The EKS plan of ``raw`` over what its observe step finds in ``account`` (the components
    map it 1:1: ``test_observe_stack``)."""
    config = parse(raw, "eks-g4dn")
    plan = eks_plan(
        build_plan(config, None, mockengine.observe(raw, config.stack, account)).platform
    )
    assert plan is not None
    return plan


def _addon_version(plan: EksPlan, name: str) -> str:
    return next(a.version for a in plan.addons if a.name == name)


@pytest.fixture(scope="module")
def installed() -> tuple[dict[str, Any], LiveAccount]:
    """eks-g4dn deployed on 1.33; its EBS CSI driver runs a build older than EKS's default now."""
    raw, _, account = deployed("eks-g4dn", "1.33")
    return raw, replace(account, addons={**account.addons, EBS_CSI: "v1.40.0-eksbuild.1"})


def test_a_running_addon_without_a_pin_keeps_its_version_not_eks_default(installed):
    # DescribeAddonVersions defaultVersion moves when AWS publishes a build; following it would
    # update the add-on on an up nobody asked for.
    raw, account = installed
    assert _addon_version(planned_over(raw, account), EBS_CSI) == "v1.40.0-eksbuild.1"


def test_an_unpinned_addon_takes_eks_default_when_kubernetes_version_changes(installed):
    raw, account = installed
    raw = copy.deepcopy(raw)
    raw["gpu-infra:cluster"]["kubernetesVersion"] = "1.34"  # the control plane runs 1.33
    version = _addon_version(planned_over(raw, account), EBS_CSI)
    assert version == offline.eks_addon_default("1.34")  # the fake account's default answer


def errors_over(raw: dict[str, Any], stack: str, account: LiveAccount) -> dict[str, str]:
    config = parse(raw, stack)
    observed = mockengine.observe(raw, config.stack, account)
    with pytest.raises(ConfigErrors) as e:
        build_plan(config, None, observed)
    return {i.path: i.reason for i in e.value.issues}


def test_a_node_group_version_ahead_of_an_existing_control_plane_is_refused():
    # EKS CreateNodegroup: "You can only create a node group for your cluster that is equal to
    # the current Kubernetes version for the cluster."
    name, raw = stack_source("eks-existing")
    config = parse(raw, name)
    account = replace(before(config), eks_versions={config.cluster.name: "1.32"})
    reason = errors_over(raw, name, account)["cluster.kubernetesVersion"]
    assert reason.startswith("'1.33' is ahead of cluster shared's control plane (1.32)")


def test_a_node_group_version_behind_an_existing_control_plane_is_refused_for_a_new_group():
    name, raw = stack_source("eks-existing")
    config = parse(raw, name)
    account = replace(before(config), eks_versions={config.cluster.name: "1.34"})
    reason = errors_over(raw, name, account)["cluster.kubernetesVersion"]
    assert "is behind cluster shared's control plane (1.34)" in reason


def test_an_existing_cluster_that_is_not_active_is_refused_not_read_half():
    # DescribeCluster: a CREATING cluster has no certificateAuthority or OIDC issuer yet.
    name, raw = stack_source("eks-existing")
    config = parse(raw, name)
    account = replace(before(config), eks_statuses={config.cluster.name: "CREATING"})
    assert "is CREATING" in errors_over(raw, name, account)["cluster.name"]


OIDC = "aws:iam/openIdConnectProvider:OpenIdConnectProvider"


def test_a_second_run_keeps_declaring_the_oidc_provider_this_stack_created():
    # First run: the account has none, the stack declares one (owner tag <cluster>/<stack>).
    # Second run over what it left: its own provider stays declared (imported by ARN, a no-op
    # while in the state), so the preview shows no delete.
    name, raw = stack_source("eks-existing")
    config = parse(raw, name)
    empty = replace(before(config), oidc_provider=False)
    first = run_stack(raw, name, account=empty)
    (created,) = first.of_type(OIDC)
    assert created.inputs["tags"] == {"gpu-infra/stack": f"shared/{name}"}
    second = run_stack(raw, name, account=after(build_plan(config), first))
    (kept,) = second.of_type(OIDC)
    assert kept.urn == created.urn and kept.import_id.startswith("arn:aws:iam::")


def test_an_oidc_provider_someone_else_made_is_referenced_by_arn_not_declared():
    name, raw = stack_source("eks-existing")
    config = parse(raw, name)
    other = replace(before(config), oidc_provider_tags={"gpu-infra/stack": "shared/team-b"})
    assert run_stack(raw, name, account=other).of_type(OIDC) == []


def test_a_node_group_answer_without_a_scaling_config_is_an_unread_read_not_size_zero(
    monkeypatch,
):
    # Every managed node group has a scalingConfig (CreateNodegroup defaults it): an answer
    # without one is unknown, and an unknown desired size is never 0.
    raw, config, account = deployed("eks-g4dn")
    monkeypatch.setitem(
        mockanswers.INVOKES,
        "aws:eks/getNodeGroup:getNodeGroup",
        lambda args, *_: {"id": args["nodeGroupName"], "scalingConfigs": []},
    )
    with pytest.raises(ObserveError) as e:
        mockengine.observe(raw, config.stack, account)
    assert str(e.value).startswith("gpuPools: could not read node group ")
    assert str(e.value).endswith("DescribeNodegroup returned no scalingConfig")


@pytest.mark.parametrize(
    ("version", "reason"),
    [
        ("1.32", "EKS cannot downgrade a cluster"),  # update-cluster.html
        ("1.35", "EKS upgrades one minor version at a time; deploy 1.34 first"),
    ],
)
def test_a_created_control_plane_moves_one_minor_up_at_a_time_never_down(version, reason):
    raw, config, account = deployed("eks-g4dn", "1.33")  # the control plane runs 1.33
    raw = copy.deepcopy(raw)
    raw["gpu-infra:cluster"]["kubernetesVersion"] = version
    assert errors_over(raw, config.stack, account)["cluster.kubernetesVersion"].endswith(reason)
