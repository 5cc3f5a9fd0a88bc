"""Karpenter controller wiring on the mock engine (eks-g4dn with ``autoscaler.kind: karpenter``)."""

from __future__ import annotations

import copy
import functools
import json
from typing import Any

from infra.core import lifecycle, receivers
from infra.core.config.stack import load_stack_file, parse
from infra.core.eks.karpenter import controller as ctl
from infra.core.plan import build_plan
from infra.mockengine import Recording, Registered
from tests.stack.harness import ROOT, run_stack

RELEASE = "kubernetes:helm.sh/v3:Release"
QUEUE = "aws:sqs/queue:Queue"
ROLE = "aws:iam/role:Role"


def raw() -> dict[str, Any]:
    _, cfg = load_stack_file(ROOT / "stacks" / "Pulumi.eks-g4dn.yaml")
    cfg = copy.deepcopy(cfg)
    cfg["gpu-infra:cluster"]["autoscaler"] = {"kind": "karpenter"}
    return cfg


@functools.cache
def rec() -> Recording:
    return run_stack(raw(), "eks-g4dn")


def release() -> Registered:
    return rec().one(RELEASE, "ml-karpenter-release")


def test_no_cluster_autoscaler_is_registered_with_kind_karpenter():
    assert not [r for r in rec().resources if "ClusterAutoscaler" in r.type or r.name == "ml-ca"]
    assert [
        r.name for r in rec().of_type(RELEASE) if r.inputs["name"] == "cluster-autoscaler"
    ] == []


def test_controller_node_selector_matches_the_system_node_groups_labels():
    system = rec().one("aws:eks/nodeGroup:NodeGroup", "ml-system").inputs["labels"]
    selector = release().inputs["values"]["nodeSelector"]
    assert system and all(system.get(k) == v for k, v in selector.items() if k in system)
    assert set(selector) - set(system) == {"kubernetes.io/os"}  # the chart's own, true of all


def test_queue_name_in_the_helm_values_is_the_queues_name():
    queue = rec().one(QUEUE).inputs
    assert release().inputs["values"]["settings"]["interruptionQueue"] == queue["name"]
    assert queue["messageRetentionSeconds"] == 300 and queue["sqsManagedSseEnabled"] is True


def test_pass_role_resource_is_the_node_role_the_node_groups_use():
    node_role = rec().one(ROLE, "ml-nodes")
    arn = f"arn:aws:iam::123456789012:role/{node_role.name}"
    assert rec().one("aws:eks/nodeGroup:NodeGroup", "ml-system").inputs["nodeRoleArn"] == arn
    doc = json.loads(
        rec().one("aws:iam/rolePolicy:RolePolicy", "ml-karpenter-policy").inputs["policy"]
    )
    passes = [s for s in doc["Statement"] if s.get("Action") == "iam:PassRole"]
    assert [s["Resource"] for s in passes] == [arn]


def test_irsa_annotation_names_the_controllers_own_role():
    sa = release().inputs["values"]["serviceAccount"]
    role = rec().one(ROLE, "ml-karpenter-role")
    assert sa["name"] == ctl.SERVICE_ACCOUNT
    assert sa["annotations"]["eks.amazonaws.com/role-arn"].endswith(f"role/{role.name}")
    trust = json.loads(role.inputs["assumeRolePolicy"])["Statement"][0]["Condition"]
    assert "system:serviceaccount:kube-system:karpenter" in trust["StringEquals"].values()


def test_every_event_rule_targets_the_queue():
    queue = rec().one(QUEUE).inputs["name"]
    rules = {r.inputs["name"] for r in rec().of_type("aws:cloudwatch/eventRule:EventRule")}
    targets = rec().of_type("aws:cloudwatch/eventTarget:EventTarget")
    assert len(rules) == len(ctl.EVENT_RULES) == len(targets)
    assert {t.inputs["rule"] for t in targets} == rules
    assert all(t.inputs["arn"].endswith(f":{queue}") for t in targets)


def test_queue_policy_is_attached_to_the_queue():
    qp = rec().one("aws:sqs/queuePolicy:QueuePolicy").inputs
    assert qp["queueUrl"].endswith("/" + rec().one(QUEUE).inputs["name"])


def test_private_subnets_and_the_cluster_security_group_carry_the_discovery_tag():
    private = [
        s for s in rec().of_type("aws:ec2/subnet:Subnet") if "private" in s.inputs["tags"]["Name"]
    ]
    assert private and all(s.inputs["tags"]["karpenter.sh/discovery"] == "ml" for s in private)
    public = [s for s in rec().of_type("aws:ec2/subnet:Subnet") if s not in private]
    assert all("karpenter.sh/discovery" not in s.inputs["tags"] for s in public)
    sg = rec().one("aws:ec2/tag:Tag").inputs
    assert (sg["key"], sg["value"], sg["resourceId"]) == (
        "karpenter.sh/discovery",
        "ml",
        "sg-0123456789abcdef0",
    )


def test_release_waits_for_its_role_policy_and_queue():
    deps = {rec().by_urn(u).name for u in release().depends_on}
    assert {"ml-karpenter-role", "ml-karpenter-policy", "ml-karpenter-queue"} <= deps


def test_every_new_resource_type_has_a_lifecycle_row():
    assert {r.type for r in rec().resources if lifecycle.lookup(r.type) is None} == set()


def test_iam_role_names_the_receiver_check_derives_are_the_roles_registered():
    plan = build_plan(parse(raw(), "eks-g4dn"))
    assert plan.eks is not None
    registered = {r.name for r in rec().of_type(ROLE) if "name" not in r.inputs}
    assert registered == set(receivers.iam_role_names(plan.eks))
