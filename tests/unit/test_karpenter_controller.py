"""The Karpenter controller's pure decisions: chart, values, names, IAM and queue policies."""

from __future__ import annotations

import copy
import functools
from typing import Any

import pytest

from infra.core.catalog.vendored import DATA_DIR
from infra.core.config.stack import load_stack_file, parse
from infra.core.diff import value_at
from infra.core.eks import autoscaler
from infra.core.eks import planner as core
from infra.core.eks.karpenter import controller as ctl
from infra.core.eks.karpenter.names import discovery_tag
from infra.core.eks.names import IAM_ROLE_NAME_MAX
from infra.core.errors import ConfigErrors
from infra.core.labels import POOL_LABEL
from infra.core.plan import build_plan
from infra.core.rules.limits import limit
from tests.stack.harness import ROOT

NODE_ROLE = "arn:aws:iam::111122223333:role/ml-nodes-abc1234"
QUEUE_ARN = "arn:aws:sqs:us-west-2:111122223333:ml-dev-karpenter"
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}


def controller(
    cluster: str = "ml", stack: str = "dev", region: str = "us-west-2", min_nodes: int | None = 2
) -> ctl.KarpenterControllerPlan:
    return ctl.plan_controller(
        cluster_name=cluster,
        stack=stack,
        region=region,
        partition=autoscaler.aws_partition(region),
        system_labels={POOL_LABEL: "system"},
        system_min_nodes=min_nodes,
        data_dir=DATA_DIR,
    )


def policy(plan: ctl.KarpenterControllerPlan | None = None, **arns: str) -> dict[str, Any]:
    arns = {"node_role_arn": NODE_ROLE, "queue_arn": QUEUE_ARN, **arns}
    return ctl.iam_policy(plan or controller(), **arns)


def statement(p: dict[str, Any], sid: str) -> dict[str, Any]:
    return next(s for s in p["Statement"] if s.get("Sid") == sid)


def raw_g4dn(**autoscaler: Any) -> dict[str, Any]:
    _, raw = load_stack_file(ROOT / "stacks" / "Pulumi.eks-g4dn.yaml")
    raw = copy.deepcopy(raw)
    raw["gpu-infra:cluster"]["autoscaler"] = {"kind": "karpenter", **autoscaler}
    return raw


@functools.cache
def karpenter_plan() -> core.EksPlan:
    eks = build_plan(parse(raw_g4dn(), "eks-g4dn")).platform.plan
    assert eks is not None
    return eks


def test_chart_is_the_oci_chart_the_v1_14_guide_installs_at_1_14_1():
    p = controller()
    assert (p.chart, p.version) == ("oci://public.ecr.aws/karpenter/karpenter", "1.14.1")


def test_controller_goes_to_kube_system_the_namespace_the_docs_recommend():
    assert (controller().namespace, controller().release) == ("kube-system", "karpenter")


def test_values_name_the_cluster_and_the_interruption_queue_it_reads():
    p = controller()
    assert p.values["settings"] == {"clusterName": "ml", "interruptionQueue": p.queue_name}


def test_controller_runs_on_the_system_pool_by_its_label():
    assert controller().values["nodeSelector"][POOL_LABEL] == "system"


def test_controller_never_lands_on_a_node_karpenter_launched():
    terms = controller().values["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]["nodeSelectorTerms"]
    # Every term (they are ORed) must exclude karpenter.sh/nodepool.
    assert terms and all(
        {"key": "karpenter.sh/nodepool", "operator": "DoesNotExist"} in t["matchExpressions"]
        for t in terms
    )


def tolerates(t: dict[str, str], taint: dict[str, str]) -> bool:
    """Kubernetes' ToleratesTaint (k8s.io/api core/v1 toleration.go): empty key with Exists matches
    every key; Exists ignores the value; an empty effect matches every effect."""
    if t.get("effect") and t["effect"] != taint["effect"]:
        return False
    if t.get("key") and t["key"] != taint["key"]:
        return False
    if t.get("operator") == "Exists":
        return True
    return bool(t.get("key")) and t.get("value", "") == taint["value"]


def test_no_controller_toleration_matches_the_gpu_taint():
    assert tolerates({"operator": "Exists"}, GPU_TAINT)  # the helper can say yes
    assert not any(tolerates(t, GPU_TAINT) for t in controller().values["tolerations"])


def test_controller_gets_the_guides_guaranteed_requests_and_limits():
    r = controller().values["controller"]["resources"]
    assert r["requests"] == r["limits"] == {"cpu": "1", "memory": "1Gi"}


@pytest.mark.parametrize(("min_nodes", "replicas"), [(1, 1), (2, 2), (3, 2), (None, 2)])
def test_replicas_never_exceed_the_system_nodes_karpenter_cannot_launch_for_itself(
    min_nodes, replicas
):
    assert controller(min_nodes=min_nodes).values["replicas"] == replicas


def test_every_value_key_is_a_key_of_the_vendored_chart_values():
    assert ctl.unknown_value_keys(controller().values, ctl.chart_value_kinds(DATA_DIR)) == []


def test_a_value_key_the_chart_does_not_read_is_reported_with_its_path():
    values = copy.deepcopy(dict(controller().values))
    values["settings"]["interruptionQueueName"] = "x"
    values["nodeselector"] = {}
    found = ctl.unknown_value_keys(values, ctl.chart_value_kinds(DATA_DIR))
    assert found == ["settings.interruptionQueueName", "nodeselector"]


def test_free_form_chart_maps_take_any_key():
    values = {"nodeSelector": {"any/label": "x"}, "serviceAccount": {"annotations": {"a/b": "c"}}}
    assert ctl.unknown_value_keys(values, ctl.chart_value_kinds(DATA_DIR)) == []


def test_queue_name_fits_sqs_80_characters_and_its_character_set():
    name = ctl.queue_name("c" * 100, "stack.with.dots-" + "s" * 60)
    assert len(name) <= limit("sqs.queue_name") == 80
    assert all(ch.isalnum() or ch in "-_" for ch in name)


def test_rule_names_fit_eventbridge_64_characters():
    p = controller(cluster="c" * 100, stack="s" * 60)
    assert all(len(r.name) <= limit("eventbridge.rule_name") == 64 for r in p.rules)
    assert len({r.name for r in p.rules}) == len(p.rules)


def test_two_stacks_of_one_cluster_in_one_region_get_their_own_queue_and_rules():
    a, b = controller(stack="dev"), controller(stack="prod")
    assert a.queue_name != b.queue_name
    assert not {r.name for r in a.rules} & {r.name for r in b.rules}
    long_a, long_b = controller("c" * 90, "a" * 50), controller("c" * 90, "b" * 50)
    assert long_a.queue_name != long_b.queue_name


def test_rules_route_the_five_event_types_of_the_published_template():
    assert {(r.source, r.detail_type) for r in controller().rules} == {
        ("aws.health", "AWS Health Event"),
        ("aws.ec2", "EC2 Spot Instance Interruption Warning"),
        ("aws.ec2", "EC2 Instance Rebalance Recommendation"),
        ("aws.ec2", "EC2 Instance State-change Notification"),
        ("aws.ec2", "EC2 Capacity Reservation Instance Interruption Warning"),
    }
    r = controller().rules[0]
    assert r.pattern == {"source": [r.source], "detail-type": [r.detail_type]}


def test_policy_has_the_statements_of_the_published_v1_14_policy_without_zonal_shift():
    assert [s["Sid"] for s in policy()["Statement"]] == [
        "AllowScopedEC2InstanceAccessActions",
        "AllowScopedEC2LaunchTemplateAccessActions",
        "AllowScopedEC2InstanceActionsWithTags",
        "AllowScopedResourceCreationTagging",
        "AllowScopedResourceTagging",
        "AllowScopedDeletion",
        "AllowPassingInstanceRole",
        "AllowScopedInstanceProfileCreationActions",
        "AllowScopedInstanceProfileTagActions",
        "AllowScopedInstanceProfileActions",
        "AllowAPIServerEndpointDiscovery",
        "AllowInterruptionQueueActions",
        "AllowRegionalReadActions",
        "AllowSSMReadActions",
        "AllowPricingReadActions",
        "AllowUnscopedInstanceProfileListAction",
        "AllowInstanceProfileReadActions",
    ]
    assert all(s["Effect"] == "Allow" for s in policy()["Statement"])


def test_pass_role_is_the_node_role_passed_to_ec2_only():
    s = statement(policy(), "AllowPassingInstanceRole")
    assert s["Resource"] == NODE_ROLE and s["Action"] == "iam:PassRole"
    assert s["Condition"]["StringEquals"]["iam:PassedToService"] == [
        "ec2.amazonaws.com",
        "ec2.amazonaws.com.cn",
    ]


def test_terminate_and_launch_template_use_need_the_clusters_owned_tag():
    for sid in ("AllowScopedDeletion", "AllowScopedEC2LaunchTemplateAccessActions"):
        cond = statement(policy(), sid)["Condition"]
        assert cond["StringEquals"] == {"aws:ResourceTag/kubernetes.io/cluster/ml": "owned"}
        assert cond["StringLike"] == {"aws:ResourceTag/karpenter.sh/nodepool": "*"}


def test_queue_actions_are_limited_to_the_interruption_queue():
    s = statement(policy(), "AllowInterruptionQueueActions")
    assert s["Resource"] == QUEUE_ARN


def test_account_scoped_arns_take_the_node_roles_account():
    s = statement(policy(), "AllowAPIServerEndpointDiscovery")
    assert s["Resource"] == "arn:aws:eks:us-west-2:111122223333:cluster/ml"


@pytest.mark.parametrize(
    ("region", "partition"), [("cn-north-1", "aws-cn"), ("us-gov-west-1", "aws-us-gov")]
)
def test_policy_arns_are_in_the_regions_partition(region, partition):
    p = controller(region=region)
    role = f"arn:{partition}:iam::111122223333:role/ml-nodes"
    doc = policy(p, node_role_arn=role, queue_arn=f"arn:{partition}:sqs:{region}:1:q")
    resources = [
        r
        for s in doc["Statement"]
        for r in ([s["Resource"]] if isinstance(s["Resource"], str) else s["Resource"])
    ]
    arns = [r for r in resources if r != "*"]
    assert arns and all(r.startswith(f"arn:{partition}:") for r in arns)


def test_policy_fits_the_iam_inline_role_policy_size_for_the_longest_cluster_name():
    longest = controller(cluster="c" * limit("eks.cluster_name"))
    size = ctl.policy_size(ctl.longest_policy(longest))
    assert ctl.policy_size(policy(longest)) <= size <= limit("aws.iam_role_inline_policy_size")
    assert (
        list(ctl.problems(existing=False, kubernetes_minor=33, plan=longest, data_dir=DATA_DIR))
        == []
    )


def test_a_policy_over_iams_inline_size_is_a_config_error_naming_the_cluster_name(monkeypatch):
    monkeypatch.setattr(ctl, "policy_size", lambda _: 10241)
    found = list(
        ctl.problems(existing=False, kubernetes_minor=33, plan=controller(), data_dir=DATA_DIR)
    )
    assert [k for k, _ in found] == ["cluster.name"] and "10240" in found[0][1]


def test_queue_policy_lets_eventbridge_send_and_denies_plain_http():
    allow, deny = ctl.queue_policy(QUEUE_ARN)["Statement"]
    assert allow["Principal"]["Service"] == ["events.amazonaws.com", "sqs.amazonaws.com"]
    assert (allow["Action"], allow["Resource"]) == ("sqs:SendMessage", QUEUE_ARN)
    assert deny["Effect"] == "Deny" and deny["Condition"] == {
        "Bool": {"aws:SecureTransport": "false"}
    }


def test_discovery_tag_is_karpenter_sh_discovery_with_the_cluster_name():
    assert discovery_tag("ml") == ("karpenter.sh/discovery", "ml")
    assert controller().discovery_tag == discovery_tag("ml")


def test_kind_karpenter_plans_no_cluster_autoscaler_but_the_controller():
    eks = karpenter_plan()
    assert eks.autoscaler is None and eks.karpenter is not None


def test_karpenter_role_name_is_fitted_to_iam_with_pulumis_suffix():
    assert "ml-karpenter-role" in karpenter_plan().iam_role_names
    assert "ml-ca-role" not in karpenter_plan().iam_role_names
    names = core.EksPlan(cluster_name="c" * 100, karpenter=controller()).iam_role_names
    assert all(len(n) + limit("pulumi.autoname_suffix") <= IAM_ROLE_NAME_MAX for n in names)


def errors_of(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigErrors) as e:
        build_plan(parse(raw, "eks-g4dn"))
    return [str(i) for i in e.value.issues]


def test_karpenter_on_an_existing_cluster_is_refused_naming_the_kind_key():
    found = ctl.problems(existing=True, kubernetes_minor=33, plan=controller(), data_dir=DATA_DIR)
    assert [k for k, _ in found] == ["cluster.autoscaler.kind"]


def test_karpenter_is_refused_on_kubernetes_outside_its_compatibility_matrix():
    raw = raw_g4dn()
    raw["gpu-infra:cluster"]["kubernetesVersion"] = "1.29"
    found = errors_of(raw)
    assert any(
        i.startswith("cluster.kubernetesVersion: '1.29' with karpenter") and "1.30-1.36" in i
        for i in found
    ), found


def test_pod_identity_with_karpenter_has_no_cluster_autoscaler_sdk_gate():
    eks = build_plan(parse(raw_g4dn(identity="pod-identity"), "eks-g4dn")).platform.plan
    assert eks is not None and eks.identity == "pod-identity" and eks.karpenter is not None


def test_diff_reads_tag_keys_that_hold_dots():
    tags = {"tags": {"karpenter.sh/discovery": "ml", "Name": "x"}}
    assert value_at(tags, "tags.karpenter.sh/discovery") == "ml"
    assert value_at(tags, "tags.other.key", "absent") == "absent"


def test_plan_table_says_karpenter_replaces_the_cluster_autoscaler():
    plan = build_plan(parse(raw_g4dn(), "eks-g4dn"))
    assert plan.platform.table_notes() == [
        "autoscaler: Karpenter 1.14.1 in kube-system on the system pool, interruption queue "
        "ml-eks-g4dn-karpenter (no cluster-autoscaler)"
    ]
    raw = raw_g4dn()
    del raw["gpu-infra:cluster"]["autoscaler"]
    assert build_plan(parse(raw, "eks-g4dn")).platform.table_notes() == []


def test_given_private_subnets_are_selected_by_id_and_never_tagged_new_vpc_subnets_by_tag():
    # EC2 CreateTags overwrites a key's value: tagging a given subnet karpenter.sh/discovery would
    # take it from another cluster's Karpenter selecting on it (pools.node_class).
    pool = karpenter_plan().groups[0]
    assert pool.karpenter is not None
    assert pool.karpenter.node_class["spec"]["subnetSelectorTerms"] == [
        {"tags": {"karpenter.sh/discovery": "ml"}}
    ]
    raw = raw_g4dn()
    subnets = {"usw2-az2": "subnet-0a1b2c3d4e5f60002", "usw2-az1": "subnet-0a1b2c3d4e5f60001"}
    raw["gpu-infra:cluster"]["vpc"] = {"id": "vpc-0a1b2c3d4e5f60001", "privateSubnets": subnets}
    eks = build_plan(parse(raw, "eks-g4dn")).platform.plan
    assert eks is not None and eks.karpenter is not None
    given = eks.groups[0]
    assert given.karpenter is not None
    assert given.karpenter.node_class["spec"]["subnetSelectorTerms"] == [
        {"id": "subnet-0a1b2c3d4e5f60001"},
        {"id": "subnet-0a1b2c3d4e5f60002"},
    ]


OCI_REL = {
    "name": "karpenter",
    "namespace": "kube-system",
    "chart": ctl.CHART,
    "version": ctl.PIN.version,
    "values": {},
}


def test_oci_chart_exports_as_argo_cds_oci_source_and_a_flux_oci_helm_repository():
    from infra.planview.gitops import argocd_application, chart_source, flux_documents

    assert chart_source(OCI_REL) == ("oci://public.ecr.aws/karpenter", "karpenter", True)
    source = argocd_application(OCI_REL)["spec"]["source"]
    assert (source["repoURL"], source["path"]) == (ctl.CHART, ".") and "chart" not in source
    repo, release = flux_documents(OCI_REL)
    assert repo["spec"]["type"] == "oci" and repo["spec"]["url"] == "oci://public.ecr.aws/karpenter"
    assert release["spec"]["chart"]["spec"]["chart"] == "karpenter"


def test_karpenter_with_the_autoscaler_disabled_is_refused_naming_both_keys():
    # NodePools without the controller: no CRDs ("no matches for kind EC2NodeClass"), no launches.
    found = errors_of(raw_g4dn(enabled=False))
    assert any(
        "cluster.autoscaler.enabled" in e and "kind: karpenter" in e and "CRDs" in e for e in found
    ), found


def test_with_karpenter_the_system_group_is_fixed_at_min_nodes_nothing_scales_it():
    # No cluster-autoscaler, and Karpenter's NodePools are GPU pools: maxSize = minNodes, so the
    # plan, cost and quota show the size the group keeps.
    eks = karpenter_plan()
    assert eks.system is not None and eks.system.max_size == eks.system.min_size == 2
    ca = build_plan(parse(raw_g4dn(kind="cluster-autoscaler"), "eks-g4dn")).platform.plan
    assert ca is not None and ca.system is not None and ca.system.max_size == 3


def test_system_max_nodes_above_min_nodes_with_karpenter_is_refused_naming_min_nodes():
    raw = raw_g4dn()
    raw["gpu-infra:cluster"]["systemPool"] = {"minNodes": 2, "maxNodes": 4}
    found = errors_of(raw)
    assert any(
        e.startswith("cluster.systemPool.maxNodes: 4 with") and "minNodes" in e for e in found
    )
    raw["gpu-infra:cluster"]["systemPool"] = {"minNodes": 3, "maxNodes": 3}
    eks = build_plan(parse(raw, "eks-g4dn")).platform.plan
    assert eks is not None and eks.system is not None and eks.system.max_size == 3


def test_cost_summary_explains_the_drift_replacement_node_each_karpenter_pool_adds_at_maximum():
    from infra.core.cost import estimate
    from infra.planview.table import print_cost

    plan = build_plan(parse(raw_g4dn(), "eks-g4dn"))
    lines: list[str] = []
    print_cost(estimate(plan), lines.append)
    (line,) = [x for x in lines if "drift-replacement" in x]
    assert all(f"{g.name} {g.max_size}+1" in line for g in plan.platform.plan.groups)  # type: ignore[union-attr]
    raw = raw_g4dn()
    del raw["gpu-infra:cluster"]["autoscaler"]
    lines.clear()
    print_cost(estimate(build_plan(parse(raw, "eks-g4dn"))), lines.append)
    assert not any("drift-replacement" in x for x in lines)
