"""Karpenter on the mock engine, one run of the eks-karpenter sample shared by every test: one
EC2NodeClass and one NodePool per GPU pool, children of the pool's component, with the cluster's
node role; no GPU node group; the system group stays; the controller's release, IAM role,
interruption queue and rules wired to each other and kept on the system group."""

from __future__ import annotations

import functools
import json

import pytest

from infra import mockengine
from infra.components.karpenter_pools import NODE_CLASS, NODE_POOL
from infra.core import lifecycle
from infra.core.config.stack import load_stack_file, parse
from infra.core.eks import sent as eks_sent
from infra.core.eks.karpenter import controller as ctl
from infra.core.eks.karpenter import crds
from infra.core.plan import build_plan
from infra.mockengine import Recording, Registered
from tests.stack.harness import ROOT, run_stack

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
POOLS = ("a10g-spot", "l4")
RELEASE = "kubernetes:helm.sh/v3:Release"
QUEUE = "aws:sqs/queue:Queue"
ROLE = "aws:iam/role:Role"
STACK = ROOT / "stacks" / "Pulumi.eks-karpenter.yaml"


@functools.cache
def rec_() -> Recording:
    return run_stack("eks-karpenter")


@pytest.fixture(scope="module")
def rec() -> mockengine.Recording:
    return rec_()


def test_one_nodeclass_and_one_nodepool_per_gpu_pool(rec):
    assert sorted(r.inputs["metadata"]["name"] for r in rec.of_type(NODE_CLASS)) == list(POOLS)
    assert sorted(r.inputs["metadata"]["name"] for r in rec.of_type(NODE_POOL)) == list(POOLS)


def test_only_the_system_node_group_is_a_managed_node_group(rec):
    assert [r.name for r in rec.of_type(NODE_GROUP)] == ["karp-system"]


def test_nodeclass_role_is_the_cluster_node_role_and_sent_manifests_validate(rec):
    (role,) = [r for r in rec.of_type("aws:iam/role:Role") if r.name == "karp-nodes"]
    for r in [*rec.of_type(NODE_CLASS), *rec.of_type(NODE_POOL)]:
        assert crds.validate(r.inputs) == [], r.name
    for r in rec.of_type(NODE_CLASS):
        assert r.inputs["spec"]["role"] == role.name


def test_nodepool_waits_for_its_nodeclass_and_both_are_children_of_the_pool(rec):
    classes = {r.inputs["metadata"]["name"]: r for r in rec.of_type(NODE_CLASS)}
    for np in rec.of_type(NODE_POOL):
        nc = classes[np.inputs["metadata"]["name"]]
        assert nc.urn in np.depends_on
        assert np.parent == nc.parent and np.parent is not None
        assert "KarpenterGpuPool" in np.parent


def release() -> Registered:
    return rec_().one(RELEASE, "karp-karpenter-release")


def test_no_cluster_autoscaler_is_registered_with_kind_karpenter():
    assert not [r for r in rec_().resources if "ClusterAutoscaler" in r.type or r.name == "karp-ca"]
    assert [
        r.name for r in rec_().of_type(RELEASE) if r.inputs["name"] == "cluster-autoscaler"
    ] == []


def test_controller_node_selector_matches_the_system_node_groups_labels():
    system = rec_().one("aws:eks/nodeGroup:NodeGroup", "karp-system").inputs["labels"]
    selector = release().inputs["values"]["nodeSelector"]
    assert system and all(system.get(k) == v for k, v in selector.items() if k in system)
    assert set(selector) - set(system) == {"kubernetes.io/os"}  # the chart's own, true of all


def test_queue_name_in_the_helm_values_is_the_queues_name():
    queue = rec_().one(QUEUE).inputs
    assert release().inputs["values"]["settings"]["interruptionQueue"] == queue["name"]
    assert queue["messageRetentionSeconds"] == 300 and queue["sqsManagedSseEnabled"] is True


def test_pass_role_resource_is_the_node_role_the_node_groups_use():
    node_role = rec_().one(ROLE, "karp-nodes")
    arn = f"arn:aws:iam::123456789012:role/{node_role.name}"
    assert rec_().one("aws:eks/nodeGroup:NodeGroup", "karp-system").inputs["nodeRoleArn"] == arn
    doc = json.loads(
        rec_().one("aws:iam/rolePolicy:RolePolicy", "karp-karpenter-policy").inputs["policy"]
    )
    passes = [s for s in doc["Statement"] if s.get("Action") == "iam:PassRole"]
    assert [s["Resource"] for s in passes] == [arn]


def test_irsa_annotation_names_the_controllers_own_role():
    sa = release().inputs["values"]["serviceAccount"]
    role = rec_().one(ROLE, "karp-karpenter-role")
    assert sa["name"] == ctl.SERVICE_ACCOUNT
    assert sa["annotations"]["eks.amazonaws.com/role-arn"].endswith(f"role/{role.name}")
    trust = json.loads(role.inputs["assumeRolePolicy"])["Statement"][0]["Condition"]
    assert "system:serviceaccount:kube-system:karpenter" in trust["StringEquals"].values()


def test_every_event_rule_targets_the_queue():
    queue = rec_().one(QUEUE).inputs["name"]
    rules = {r.inputs["name"] for r in rec_().of_type("aws:cloudwatch/eventRule:EventRule")}
    targets = rec_().of_type("aws:cloudwatch/eventTarget:EventTarget")
    assert len(rules) == len(ctl.EVENT_RULES) == len(targets)
    assert {t.inputs["rule"] for t in targets} == rules
    assert all(t.inputs["arn"].endswith(f":{queue}") for t in targets)


def test_queue_policy_is_attached_to_the_queue():
    qp = rec_().one("aws:sqs/queuePolicy:QueuePolicy").inputs
    assert qp["queueUrl"].endswith("/" + rec_().one(QUEUE).inputs["name"])


def test_private_subnets_and_the_cluster_security_group_carry_the_discovery_tag():
    private = [
        s for s in rec_().of_type("aws:ec2/subnet:Subnet") if "private" in s.inputs["tags"]["Name"]
    ]
    assert private and all(s.inputs["tags"]["karpenter.sh/discovery"] == "karp" for s in private)
    public = [s for s in rec_().of_type("aws:ec2/subnet:Subnet") if s not in private]
    assert all("karpenter.sh/discovery" not in s.inputs["tags"] for s in public)
    sg = rec_().one("aws:ec2/tag:Tag").inputs
    assert (sg["key"], sg["value"], sg["resourceId"]) == (
        "karpenter.sh/discovery",
        "karp",
        "sg-0123456789abcdef0",
    )


def test_release_waits_for_its_role_policy_and_queue():
    deps = {rec_().by_urn(u).name for u in release().depends_on}
    assert {"karp-karpenter-role", "karp-karpenter-policy", "karp-karpenter-queue"} <= deps


def test_every_new_resource_type_has_a_lifecycle_row():
    assert {r.type for r in rec_().resources if lifecycle.lookup(r.type) is None} == set()


def test_iam_role_names_the_receiver_check_derives_are_the_roles_registered():
    plan = build_plan(parse(load_stack_file(STACK)[1], "eks-karpenter"))
    assert plan.platform.name == "eks"
    registered = {r.name for r in rec_().of_type(ROLE) if "name" not in r.inputs}
    assert registered == set(eks_sent.iam_role_names(plan.platform.plan))


def test_every_nodepool_and_nodeclass_waits_for_the_controller_release(rec):
    release_urn = release().urn
    for r in [*rec.of_type(NODE_CLASS), *rec.of_type(NODE_POOL)]:
        assert release_urn in r.depends_on, r.name


def crd_release() -> Registered:
    return rec_().one(RELEASE, "karp-karpenter-crds")


def test_crds_come_from_the_karpenter_crd_chart_at_the_controller_version_and_the_main_skips_them():
    # upgrade-guide.md "CRD Upgrades": crds/ is installed on the first install only; the
    # karpenter-crd chart keeps them in templates/, upgraded with each release.
    crds_in = crd_release().inputs
    assert (crds_in["name"], crds_in["chart"]) == (ctl.CRD_RELEASE, ctl.CRD_CHART)
    assert crds_in["version"] == release().inputs["version"] == ctl.PIN.version
    assert crds_in["namespace"] == release().inputs["namespace"]
    assert release().inputs["skipCrds"] is True and not crds_in.get("skipCrds")
    assert crd_release().urn in release().depends_on


def test_every_nodepool_and_nodeclass_waits_for_the_crd_release_and_the_discovery_tag(rec):
    tag = rec.one("aws:ec2/tag:Tag")
    for r in [*rec.of_type(NODE_CLASS), *rec.of_type(NODE_POOL)]:
        assert {crd_release().urn, tag.urn} <= set(r.depends_on), r.name
