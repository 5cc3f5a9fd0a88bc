"""The receiver check over whole plans, the registry of names owned once, and the limits table."""

from __future__ import annotations

import csv
import dataclasses
from pathlib import Path

import pytest

from infra.core import receivers, rules
from infra.core.config.stack import parse, parse_file
from infra.core.errors import ConfigErrors
from infra.core.plan import build_plan
from infra.core.pools import Taint
from infra.core.rules.limits import LIMITS_CSV, limit, limits
from infra.core.stackfile.reader import read_stack_file

ROOT = Path(__file__).resolve().parents[2]
STACKS = sorted((ROOT / "stacks").glob("Pulumi.*.yaml"))


def _paths(issues) -> list[str]:
    return [i.path for i in issues]


@pytest.fixture(scope="module")
def eks_plan():
    return build_plan(parse_file(ROOT / "stacks" / "Pulumi.eks-g4dn.yaml"))


@pytest.mark.parametrize("stack", STACKS, ids=[s.stem for s in STACKS])
def test_receiver_check_finds_nothing_on_every_sample_stack(stack):
    assert receivers.check_plan(build_plan(parse_file(stack))) == []


def test_injected_bad_label_64_character_name_and_129_character_tag_key_are_each_reported_with_their_config_key(
    eks_plan,
):
    assert eks_plan.platform.name == "eks"
    group = eks_plan.platform.plan.groups[0]
    long_name = "g" * 64
    bad = dataclasses.replace(
        group,
        labels={**group.labels, "team": "ml platform"},
        node_groups=(dataclasses.replace(group.node_groups[0], name=long_name),),
    )
    eks = dataclasses.replace(eks_plan.platform.plan, groups=(bad,), stack_tag="t" * 129)
    found = {
        (i.path, i.reason.split(":")[0])
        for i in receivers.check_plan(
            dataclasses.replace(eks_plan, platform=dataclasses.replace(eks_plan.platform, plan=eks))
        )
    }
    paths = {p for p, _ in found}
    assert "gpuPools[0].labels.team" in paths  # the label value with a space
    assert "gpuPools[0].name" in paths  # EKS node group names are at most 63
    assert "cluster.name" in paths  # the autoscaler's stack tag, built from the cluster name
    assert len(found) == 3


def test_duplicate_taints_with_one_key_and_effect_are_refused_as_the_api_server_does(eks_plan):
    group = eks_plan.platform.plan.groups[0]
    twice = (*group.taints, Taint("team", "a"), Taint("team", "b"))
    eks = dataclasses.replace(
        eks_plan.platform.plan, groups=(dataclasses.replace(group, taints=twice),)
    )
    (issue,) = receivers.check_plan(
        dataclasses.replace(eks_plan, platform=dataclasses.replace(eks_plan.platform, plan=eks))
    )
    assert issue.path == "gpuPools[0].taints"
    assert "unique by key and effect" in issue.reason


def test_helm_release_name_over_53_characters_is_refused(eks_plan):
    op = eks_plan.operator
    release = dataclasses.replace(op.release, name="r" * 54)
    plan = dataclasses.replace(eks_plan, operator=dataclasses.replace(op, release=release))
    assert ("gpuOperator", "Helm release name") in {
        (i.path, i.reason[:17]) for i in receivers.check_plan(plan)
    }


def _onprem(extra: str = "", model: str = "V100") -> str:
    return (
        "config:\n  gpu-infra:platform: kubernetes\n"
        "  gpu-infra:cluster: {name: lab, location: dc1, existing: true, kubeconfig: ~/.kube/lab.yaml, context: lab}\n"
        "  gpu-infra:gpuPools:\n    - name: gpu\n      machineType: server\n"
        f"      gpu: {{model: {model}, count: 1}}\n      nodeSelector: {{gpu-infra/pool: gpu}}\n"
        "      nodes: [node-a]\n      vcpus: 16\n      memoryGib: 64\n      driver: operator\n"
        f"      maxNodes: 1\n      smokeTest: true\n{extra}"
    )


def _plan_errors(tmp_path: Path, text: str) -> list[str]:
    f = tmp_path / "Pulumi.t.yaml"
    f.write_text(text)
    with pytest.raises(ConfigErrors) as e:
        build_plan(parse(read_stack_file(f, "gpu-infra")["config"], "t"))
    return str(e.value).splitlines()


def test_onprem_gpu_model_with_a_space_exits_2_naming_gpu_model(tmp_path):
    (line,) = _plan_errors(tmp_path, _onprem(model="A100 80GB"))
    assert line.startswith("gpuPools[0].gpu.model: label 'gpu-infra/accelerator'")


@pytest.mark.parametrize(
    ("namespace", "other"),
    [
        ("gpu-smoke-test", "gpuPools[0].smokeTest"),
        ("default", "namespace every cluster already has"),
        ("kube-node-lease", "reserved for Kubernetes system namespaces"),
        ("gpu-operator", "the operator's namespace"),
    ],
)
def test_gpu_namespace_named_like_the_operator_smoke_test_or_a_cluster_namespace_is_refused(
    tmp_path, namespace, other
):
    text = _onprem(f"  gpu-infra:gpuNamespaces:\n    - {{name: {namespace}, gpus: 1}}\n")
    lines = _plan_errors(tmp_path, text)
    assert any(ln.startswith("gpuNamespaces[0].name: ") and other in ln for ln in lines), lines


def test_gpu_operator_values_nfd_enabled_string_false_names_the_type(tmp_path):
    text = _onprem("  gpu-infra:gpuOperator:\n    values: {nfd: {enabled: 'false'}}\n")
    (line,) = _plan_errors(tmp_path, text)
    assert line.startswith(
        "gpuOperator.values.nfd.enabled: a string ('false') where the chart's default is a boolean"
    )


@pytest.mark.parametrize(
    ("name", "why"), [("system-gpu", "reserved"), ("GPU Critical", "DNS-1123 subdomain")]
)
def test_priority_class_names_in_values_are_checked_as_the_api_server_does(tmp_path, name, why):
    text = _onprem(
        f"  gpu-infra:gpuOperator:\n    values: {{daemonsets: {{priorityClassName: {name}}}}}\n"
    )
    (line,) = _plan_errors(tmp_path, text)
    assert line.startswith("gpuOperator.values.daemonsets.priorityClassName: PriorityClass")
    assert why in line


def test_every_limit_has_a_source_and_a_date():
    with LIMITS_CSV.open(encoding="utf-8") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    assert len(rows) == len(limits()) >= 20
    assert all(r["source"] and r["checked"] and int(r["maximum"]) > 0 for r in rows)


def test_every_limit_row_is_read_by_some_rule_or_check():
    import re

    code = "\n".join(
        f.read_text(encoding="utf-8") for d in ("infra", "quota") for f in (ROOT / d).rglob("*.py")
    )
    # limit("row"), or the row's name handed to a helper that calls limit (sent.length_issues)
    named = {row for row in limits() if f'"{row}"' in code}
    assert set(limits()) - named == set()
    asked = set(re.findall(r'\blimit\(\s*"([^"]+)"\s*\)', code))
    assert asked - set(limits()) == set()  # and no rule asks for a row the table lacks


def test_names_and_name_patterns_take_their_numbers_from_the_limits_table():
    from infra.core.eks import names

    assert (
        limit("aws.tag_key"),
        limit("aws.tag_value"),
    ) == (names.TAG_KEY_MAX, names.TAG_VALUE_MAX)
    assert limit("helm.release_name") == names.HELM_RELEASE_MAX
    assert limit("aws.iam_role_name") == names.IAM_ROLE_NAME_MAX
    assert limit("ec2.launch_template_name") == names.LAUNCH_TEMPLATE_NAME_MAX
    assert limit("pulumi.autoname_suffix") == names.AUTONAME_SUFFIX
    for check, row in (
        (rules.check_gke_cluster_name, "gke.cluster_name"),
        (rules.check_pool_name, "gke.node_pool_name"),
    ):
        check("a" * limit(row))
        with pytest.raises(ValueError):
            check("a" * (limit(row) + 1))
    rules.check_gce_labels({"k" * limit("gce.label_key"): "v" * limit("gce.label_value")})
    for bad in (
        {"k" * (limit("gce.label_key") + 1): "v"},
        {"k": "v" * (limit("gce.label_value") + 1)},
    ):
        with pytest.raises(ValueError):
            rules.check_gce_labels(bad)


def test_config_rules_take_their_numbers_from_the_limits_table():
    assert limit("eks.label") == rules.EKS_MAX_LABEL
    assert limit("eks.public_access_cidrs") == rules.MAX_EKS_PUBLIC_CIDRS
    rules.check_dns1123_label("a" * limit("k8s.dns1123_label"))
    with pytest.raises(ValueError):
        rules.check_dns1123_label("a" * (limit("k8s.dns1123_label") + 1))


@pytest.mark.parametrize(("value", "ok"), [("2562047h", True), ("2562048h", False), ("10m", True)])
def test_check_go_duration_refuses_beyond_int64_nanoseconds(value, ok):
    if ok:
        assert rules.check_go_duration(value) == value
    else:
        with pytest.raises(ValueError, match="beyond Go's longest duration"):
            rules.check_go_duration(value)


def test_eks_node_group_with_51_taints_is_refused(eks_plan):
    group = eks_plan.platform.plan.groups[0]
    many = tuple(Taint(f"t{i}", "x") for i in range(limit("eks.taints_per_nodegroup") + 1))
    eks = dataclasses.replace(
        eks_plan.platform.plan, groups=(dataclasses.replace(group, taints=many),)
    )
    (issue,) = receivers.check_plan(
        dataclasses.replace(eks_plan, platform=dataclasses.replace(eks_plan.platform, plan=eks))
    )
    assert (issue.path, issue.reason) == ("gpuPools[0].taints", "51 taints; EKS takes at most 50")


def test_two_objects_with_one_kind_namespace_and_name_are_one_urn_and_refused(eks_plan):
    op = eks_plan.operator
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "y"}}
    twice = dataclasses.replace(op, before_release=(*op.before_release, cm, cm))
    issues = receivers.owned_once(receivers.claims(dataclasses.replace(eks_plan, operator=twice)))
    assert [i.path for i in issues] == ["gpuOperator"]
    assert "ConfigMap in y 'x' is also created by gpuOperator" in issues[0].reason


def test_unknown_chart_value_key_gets_did_you_mean_from_its_chart_siblings(tmp_path):
    text = _onprem("  gpu-infra:gpuOperator:\n    values: {daemonsets: {priority_class_name: x}}\n")
    (line,) = _plan_errors(tmp_path, text)
    assert line.startswith("gpuOperator.values.daemonsets.priority_class_name: ")
    assert line.endswith("did you mean 'priorityClassName'?")


def _plans(tmp_path: Path, text: str):
    f = tmp_path / "Pulumi.t.yaml"
    f.write_text(text)
    return build_plan(parse(read_stack_file(f, "gpu-infra")["config"], "t"))


@pytest.mark.parametrize(
    "values",
    [
        "{daemonsets: {rollingUpdate: {maxUnavailable: 2}}}",
        "{driver: {upgradePolicy: {maxUnavailable: 2}}}",
        "{driver: {upgradePolicy: {maxUnavailable: '50%'}}}",
    ],
)
def test_int_or_string_chart_values_take_a_number_or_a_percentage(tmp_path, values):
    # values.yaml: "can be specified either as number or percentage of nodes"
    plan = _plans(tmp_path, _onprem(f"  gpu-infra:gpuOperator:\n    values: {values}\n"))
    assert receivers.check_plan(plan) == []


def test_a_scalar_where_the_chart_has_a_mapping_is_still_refused(tmp_path):
    text = _onprem("  gpu-infra:gpuOperator:\n    values: {daemonsets: {rollingUpdate: 2}}\n")
    (line,) = _plan_errors(tmp_path, text)
    assert line.startswith("gpuOperator.values.daemonsets.rollingUpdate: an integer (2)")


def _existing_eks(stack: str):
    from infra.core.config.stack import load_stack_file

    _, raw = load_stack_file(ROOT / "stacks" / "Pulumi.eks-existing.yaml")
    return build_plan(parse(raw, stack))


def test_existing_eks_stack_with_a_40_character_name_plans_with_a_hashed_autoscaler_release_within_helms_53():
    a, b = "team-a-" + "x" * 33, "team-a-" + "x" * 32 + "y"  # 40 characters, one prefix
    plan_a, plan_b = _existing_eks(a), _existing_eks(b)
    assert receivers.check_plan(plan_a) == [] and receivers.check_plan(plan_b) == []
    ca_a, ca_b = plan_a.platform.plan.autoscaler, plan_b.platform.plan.autoscaler
    assert len(ca_a.release) <= 53 and ca_a.release.startswith("cluster-autoscaler-team-a-")
    assert ca_a.release == _existing_eks(a).platform.plan.autoscaler.release  # deterministic
    assert ca_a.release != ca_b.release  # the hash keeps two long stacks apart
    assert ca_a.namespace == ca_a.release == ca_a.service_account


def test_the_autoscalers_own_namespace_on_an_existing_eks_cluster_is_claimed_by_cluster_existing():
    plan = _existing_eks("ml")
    ns = plan.platform.plan.autoscaler.namespace
    assert ns == "cluster-autoscaler-ml"
    claims = [c for c in receivers.claims(plan) if c.scope == "Namespace" and c.name == ns]
    assert [c.key for c in claims] == ["cluster.existing"]
