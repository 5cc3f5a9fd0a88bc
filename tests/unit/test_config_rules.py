"""Each field rule of ``infra.core.rules`` accepts what its receiver accepts and refuses the rest.

The Kubernetes rules (``rules.kubernetes``: names, labels, namespaces, taints, EKS's node labels)
and what every regex rule obeys here; the rules of images and paths, GCP's and AWS's in the
sibling modules. Test names follow the rule names; bad values include the ones real APIs reject
with public errors.
"""

from __future__ import annotations

import pytest

from infra.core import rules
from infra.core.errors import RuleError
from tests.unit.config_rules_fixtures import refused


@pytest.mark.parametrize("good", ["a", "ml-team", "0abc", "a" * 63])
def test_check_dns1123_label_accepts_rfc1123_labels(good):
    assert rules.check_dns1123_label(good) == good


@pytest.mark.parametrize("bad", ["", "ML", "ml_team", "-a", "a-", "a.b", "a" * 64, "ä"])
def test_check_dns1123_label_refuses_capitals_underscores_and_64_chars(bad):
    assert "is not a DNS-1123 label" in refused(rules.check_dns1123_label, bad)


@pytest.mark.parametrize("good", ["node-1", "gpu-1.example.com", "a" * 253])
def test_check_dns1123_subdomain_accepts_node_names(good):
    assert rules.check_dns1123_subdomain(good) == good


@pytest.mark.parametrize("bad", ["GPU-1", "gpu_1", "gpu..1", ".a", "a" * 254])
def test_check_dns1123_subdomain_refuses_node_names_with_capitals_or_underscores(bad):
    assert "DNS-1123 subdomain" in refused(rules.check_dns1123_subdomain, bad)


@pytest.mark.parametrize(
    "good", ["team", "example.com/team", "a.b-c_d", "k8s.io/x", "x" * 63, "a" * 253 + "/b"]
)
def test_check_qualified_name_accepts_label_keys(good):
    assert rules.check_qualified_name(good) == good


@pytest.mark.parametrize(
    "bad", ["bad key", "a@b", "/x", "Example.com/x", "x/", "-x", "x" * 64, "a" * 254 + "/b"]
)
def test_check_qualified_name_refuses_spaces_at_signs_and_long_names(bad):
    assert "is not a valid label key" in refused(rules.check_qualified_name, bad)


@pytest.mark.parametrize("good", ["", "v", "v1.2_3-x", "x" * 63])
def test_check_label_value_accepts_empty_and_63_chars(good):
    assert rules.check_label_value(good) == good


@pytest.mark.parametrize("bad", ["x" * 64, "<x>", "a b", "-a", "a/b"])
def test_check_label_value_refuses_64_chars_and_angle_brackets(bad):
    assert "is not a valid label value" in refused(rules.check_label_value, bad)


def test_check_labels_names_the_offending_key_in_the_error_path():
    with pytest.raises(RuleError) as e:
        rules.check_labels({"ok": "v", "team": "<x>"})
    assert e.value.at == ("team",)


def test_check_node_labels_refuses_kubernetes_io_labels_the_kubelet_refuses():
    assert "kubelet refuses" in refused(
        rules.check_node_labels, {"node-role.kubernetes.io/gpu": ""}
    )
    assert "kubelet refuses" in refused(rules.check_node_labels, {"k8s.io/x": ""})
    assert "kubelet refuses" in refused(
        rules.check_node_labels, {"node-restriction.kubernetes.io/x": ""}
    )
    ok = {
        "node.kubernetes.io/pool": "a",
        "team.kubelet.kubernetes.io/x": "b",
        "topology.kubernetes.io/zone": "z",
        "example.com/x": "y",
        "notkubernetes.io/x": "y",
    }
    assert rules.check_node_labels(ok) == ok


def test_check_gpu_namespace_labels_refuses_pod_security_labels():
    msg = refused(
        rules.check_gpu_namespace_labels, {"pod-security.kubernetes.io/enforce": "privileged"}
    )
    assert "must not make itself privileged" in msg
    assert rules.check_gpu_namespace_labels({"team": "ml"}) == {"team": "ml"}


def test_check_namespace_is_a_dns1123_label():
    assert rules.check_namespace("ml-team") == "ml-team"
    assert "DNS-1123 label" in refused(rules.check_namespace, "ML_Team")


@pytest.mark.parametrize("shared", ["default", "kube-system", "kube-public", "kube-node-lease"])
def test_check_operator_namespace_refuses_shared_namespaces(shared):
    assert "shared by other workloads" in refused(rules.check_operator_namespace, shared)


def test_check_operator_namespace_accepts_its_own_namespace():
    assert rules.check_operator_namespace("gpu-operator") == "gpu-operator"


def test_check_taint_key_refuses_spaces():
    assert "not a valid taint key" in refused(rules.check_taint_key, "a b")
    assert rules.check_taint_key("nvidia.com/gpu") == "nvidia.com/gpu"


def test_check_taint_value_refuses_64_chars():
    assert "not a valid taint value" in refused(rules.check_taint_value, "x" * 64)
    assert rules.check_taint_value("present") == "present"


# Python's "$" matches before a final "\n"; Go's regexp (apimachinery, the API servers) does not.
@pytest.mark.parametrize(
    ("check", "value"),
    [
        (rules.check_dns1123_label, "ml\n"),
        (rules.check_dns1123_subdomain, "node-1\n"),
        (rules.check_qualified_name, "team\n"),
        (rules.check_label_value, "gpu\n"),
        (rules.check_operator_namespace, "default\n"),
        (rules.check_image_reference, "nvcr.io/nvidia/cuda:12.2.2-base-ubuntu22.04\n"),
        (rules.check_gcp_project_id, "demo-project\n"),
        (rules.check_gce_resource_name, "res\n"),
        (rules.check_reservation_name, "res\n"),
        (rules.check_gke_version, "1.33\n"),
        (rules.check_eks_version, "1.33\n"),
        (rules.check_gce_machine_type, "e2-standard-4\n"),
        (rules.check_ec2_instance_type, "m6i.large\n"),
        (rules.check_az_id, "usw2-az1\n"),
        (rules.check_iam_principal_arn, "arn:aws:iam::111122223333:role/admins\n"),
        (rules.check_vpc_id, "vpc-0123abcd\n"),
        (rules.check_subnet_id, "subnet-0123456789abcdef0\n"),
        (rules.check_capacity_reservation_id, "cr-0123456789abcdef0\n"),
        (rules.check_gcp_service_account_email, "nodes@demo-project.iam.gserviceaccount.com\n"),
    ],
)
def test_every_regex_rule_refuses_a_trailing_newline(check, value):
    refused(check, value)


@pytest.mark.parametrize(
    ("check", "value"),
    [
        (rules.check_image_reference, "nvcr.io/nvidia/cuda:12\u0663"),  # Arabic-Indic digit
        (rules.check_iam_principal_arn, "arn:aws:iam::111122223333:role/adm\u00efns"),
    ],
)
def test_ascii_only_rules_refuse_non_ascii_word_characters(check, value):
    refused(check, value)


@pytest.mark.parametrize(
    "key",
    ["node-role.kubernetes.io/gpu", "k8s.io/x", "eks.amazonaws.com/nodegroup", "kubernetes.io/os"],
)
def test_check_eks_node_labels_refuses_reserved_prefixes(key):
    # "Label cannot contain reserved prefixes [kubernetes.io/, k8s.io/, eks.amazonaws.com/]"
    with pytest.raises(RuleError, match="reserved prefix"):
        rules.check_eks_node_labels({key: "x"})


def test_check_eks_node_labels_refuses_empty_value_and_64_character_key():
    with pytest.raises(RuleError, match="1-63 characters"):
        rules.check_eks_node_labels({"team": ""})
    with pytest.raises(RuleError, match="at most 63, prefix included"):
        rules.check_eks_node_labels({"example.com/" + "a" * 52: "x"})


def test_check_eks_node_labels_accepts_a_63_character_key_and_value():
    key = "example.com/" + "a" * 51
    assert rules.check_eks_node_labels({key: "v" * 63}) == {key: "v" * 63}


def test_check_eks_taint_key_refuses_kubernetes_io_and_over_63_characters():
    assert "reserved kubernetes.io/" in refused(rules.check_eks_taint_key, "node.kubernetes.io/gpu")
    assert "at most 63" in refused(rules.check_eks_taint_key, "example.com/" + "a" * 52)
    assert rules.check_eks_taint_key("nvidia.com/gpu") == "nvidia.com/gpu"
