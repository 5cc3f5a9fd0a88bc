"""Each field rule of ``infra.core.rules`` accepts what its receiver accepts and refuses the rest.

Test names follow the rule names; bad values include the ones real APIs reject with public errors.
"""

from __future__ import annotations

import pytest

from infra.core import rules
from infra.core.errors import RuleError


def refused(check, value, *args, **kwargs) -> str:
    with pytest.raises(ValueError) as e:
        check(value, *args, **kwargs)
    return str(e.value)


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


@pytest.mark.parametrize(
    "good",
    [
        "busybox",
        "nvcr.io/nvidia/cuda:12.2.2-base-ubuntu22.04",
        "localhost:5000/a/b:1",
        "registry.example.com/ml/img@sha256:" + "a" * 64,
        "ghcr.io/org/img:tag@sha256:" + "0" * 64,
    ],
)
def test_check_image_reference_accepts_registry_repo_tag_digest(good):
    assert rules.check_image_reference(good) == good


@pytest.mark.parametrize(
    "bad",
    [
        "nvcr.io/x && curl x | sh",
        "nvcr.io/Nvidia/cuda:1",
        "img:",
        "img:tag with space",
        "img@sha256:short",
        "img;rm",
        "a/" * 200 + "b",
        "localhost:5000/" + "a" * 250,
        "",
    ],
)
def test_check_image_reference_refuses_shell_text_and_bad_grammar(bad):
    assert "is not an image reference" in refused(rules.check_image_reference, bad)


@pytest.mark.parametrize(
    "good", ["nvcr.io/nvidia", "registry.example.com:5000/nvidia/k8s", "nvidia"]
)
def test_check_image_repository_accepts_registry_and_path(good):
    assert rules.check_image_repository(good) == good


@pytest.mark.parametrize(
    "bad",
    ["nvcr.io/nvidia:v1", "nvcr.io/Nvidia", "nvcr.io/nvidia driver", "nvcr.io/nvidia/", "a" * 256],
)
def test_check_image_repository_refuses_tags_capital_paths_spaces_and_256_chars(bad):
    assert "is not an image repository" in refused(rules.check_image_repository, bad)


@pytest.mark.parametrize("good", ["v25.3.0", "sha256:" + "a" * 64, "a" * 128])
def test_check_image_tag_accepts_tags_up_to_128_and_digests(good):
    assert rules.check_image_tag(good) == good


@pytest.mark.parametrize("bad", ["-v1", "v1 2", "v1;rm", "a" * 129, ""])
def test_check_image_tag_refuses_leading_dash_spaces_shell_text_and_129_chars(bad):
    assert "is not an image tag" in refused(rules.check_image_tag, bad)


@pytest.mark.parametrize("good", ["gpu", "projects/host-proj/regions/us-central1/subnetworks/gpu"])
def test_check_gce_subnetwork_takes_a_name_or_a_subnetwork_path(good):
    assert rules.check_gce_subnetwork(good) == good


@pytest.mark.parametrize(
    "bad",
    [
        "Gpu",
        "projects/host-proj/global/networks/gpu",
        "projects/p/regions/us-central1/subnetworks/x",
    ],
)
def test_check_gce_subnetwork_refuses_capitals_network_paths_and_bad_project_ids(bad):
    assert "is not a subnetwork" in refused(rules.check_gce_subnetwork, bad)


@pytest.mark.parametrize("good", ["/etc/containerd/config.toml", "/run/k3s/containerd/c.sock", "/"])
def test_check_host_path_accepts_clean_absolute_paths(good):
    assert rules.check_host_path(good) == good


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        ("/etc/x; curl x | sh", "contains ';'"),
        ("/etc/x\nINJECT=1", "contains '\\n'"),
        ("/etc/my config.toml", "contains ' '"),
        ("etc/config.toml", "not an absolute path"),
        ("/etc/../var/x", "not a clean path"),
        ("/etc//x", "not a clean path"),
        ("/" + "a" * 100_000, "longer than 1024"),
        ("/etc/$(id)", "contains '$'"),
    ],
)
def test_check_host_path_refuses_shell_characters_relative_and_unbounded_paths(bad, why):
    msg = refused(rules.check_host_path, bad)
    assert why in msg
    assert len(msg) < 300


def test_check_kubeconfig_path_allows_home_relative_paths():
    assert rules.check_kubeconfig_path("~/.kube/config") == "~/.kube/config"
    assert "not an absolute path" in refused(rules.check_kubeconfig_path, "kube/config")


@pytest.mark.parametrize("bad", ["~/./config", "~//config", "~/", "~/.kube/"])
def test_check_kubeconfig_path_keeps_home_relative_paths_clean(bad):
    assert "is not a clean path" in refused(rules.check_kubeconfig_path, bad)


def test_check_toolkit_env_checks_path_variables_and_names_the_variable():
    with pytest.raises(RuleError) as e:
        rules.check_toolkit_env({"CONTAINERD_SOCKET": "/run/x.sock; reboot"})
    assert e.value.at == ("CONTAINERD_SOCKET",)
    assert "must be one line" in refused(rules.check_toolkit_env, {"CDI_KIND": "a\nb"})
    assert rules.check_toolkit_env({"CONTAINERD_SET_AS_DEFAULT": "true", "NRI_PLUGIN_INDEX": 1})


@pytest.mark.parametrize("name", ["LD_PRELOAD", "PATH", "HTTPS_PROXY", "containerd_config"])
def test_check_toolkit_env_passes_only_the_installers_variables(name):
    """NVIDIA/nvidia-container-toolkit cmd/nvidia-ctk-installer: its flags' EnvVars only."""
    with pytest.raises(RuleError) as e:
        rules.check_toolkit_env({name: "x"})
    assert e.value.at == (name,) and "nvidia-ctk-installer" in str(e.value)


@pytest.mark.parametrize(
    ("name", "value", "ok"),
    [
        ("CONTAINERD_CONFIG", "/etc/containerd/config.toml", True),
        ("CONTAINERD_CONFIG", "/var/lib/rancher/k3s/agent/etc/containerd/config.toml.tmpl", True),
        ("CONTAINERD_CONFIG", "/etc/shadow", False),
        ("RUNTIME_DROP_IN_CONFIG", "/etc/containerd/conf.d/99-nvidia.toml", True),
        ("RUNTIME_CONFIG", "/etc/crio/crio.conf", True),
        ("DOCKER_CONFIG", "/etc/docker/daemon.json", True),
        ("CONTAINERD_SOCKET", "/run/containerd/containerd.sock", True),
        ("CONTAINERD_SOCKET", "/etc/passwd", False),
    ],
)
def test_check_toolkit_env_paths_name_a_file_of_their_kind(name, value, ok):
    try:
        rules.check_toolkit_env({name: value})
    except RuleError:
        assert not ok
    else:
        assert ok


@pytest.mark.parametrize("good", ["demo-project", "my-proj-123456", "example.com:my-project"])
def test_check_gcp_project_id_accepts_project_ids(good):
    assert rules.check_gcp_project_id(good) == good


@pytest.mark.parametrize("bad", ["My Project!", "proj", "1project", "project-", "a" * 31, 123])
def test_check_gcp_project_id_refuses_display_names_and_numbers(bad):
    assert "is not a project ID" in refused(rules.check_gcp_project_id, bad)


def test_check_gce_labels_refuses_capitals_and_over_64_labels():
    assert rules.check_gce_labels({"team": "ml", "env": ""})
    assert "not a GCE label key" in refused(rules.check_gce_labels, {"Team": "ml"})
    assert "not a GCE label key" in refused(rules.check_gce_labels, {"1team": "ml"})
    assert "not a GCE label value" in refused(rules.check_gce_labels, {"team": "ML"})
    assert "at most 64" in refused(rules.check_gce_labels, {f"k{i}": "" for i in range(65)})


def test_check_gce_resource_name_is_an_rfc1035_label():
    assert rules.check_gce_resource_name("res-1") == "res-1"
    assert "GCE resource name" in refused(rules.check_gce_resource_name, "1res")


def test_check_reservation_name_accepts_local_and_shared_reservations():
    assert rules.check_reservation_name("a100-res")
    assert rules.check_reservation_name("projects/owner-proj/reservations/a100-res")
    assert "GCE resource name" in refused(rules.check_reservation_name, "My Reservation")
    assert "project ID" in refused(rules.check_reservation_name, "projects/X/reservations/r")


@pytest.mark.parametrize("good", ["latest", "-", "1.33", "1.33.5", "1.33.5-gke.1200"])
def test_check_gke_version_accepts_gke_version_aliases(good):
    assert rules.check_gke_version(good) == good


@pytest.mark.parametrize("bad", ["1,33", "v1.33", "1.33.5-eks.1", "1", "1.33-gke.1", "stable"])
def test_check_gke_version_refuses_commas_and_other_formats(bad):
    assert "is not a GKE version" in refused(rules.check_gke_version, bad)


@pytest.mark.parametrize(
    "good", ["e2-standard-4", "n2-highmem-8", "e2-medium", "n2-custom-4-16384"]
)
def test_check_gce_machine_type_accepts_machine_type_names(good):
    assert rules.check_gce_machine_type(good) == good


@pytest.mark.parametrize("bad", ["e2-bogus-4", "m6i.large", "E2-standard-4", "standard-4"])
def test_check_gce_machine_type_refuses_unknown_shapes(bad):
    assert "is not a GCE machine type" in refused(rules.check_gce_machine_type, bad)


@pytest.mark.parametrize("good", ["m6i.large", "g4dn.xlarge", "p4d.24xlarge", "c7gn.metal"])
def test_check_ec2_instance_type_accepts_instance_type_names(good):
    assert rules.check_ec2_instance_type(good) == good


@pytest.mark.parametrize("bad", ["m6i", "e2-standard-4", "M6i.large", "m6i.huge"])
def test_check_ec2_instance_type_refuses_other_names(bad):
    assert "is not an EC2 instance type" in refused(rules.check_ec2_instance_type, bad)


def test_check_az_id_explains_an_az_name_given_for_an_az_id():
    assert rules.check_az_id("usw2-az1") == "usw2-az1"
    assert rules.check_az_id("usw2-lax1-az1") == "usw2-lax1-az1"
    assert "is an AZ name; give AZ IDs" in refused(rules.check_az_id, "us-west-2a")
    assert "is not an AZ ID" in refused(rules.check_az_id, "zone1")


@pytest.mark.parametrize(
    "bad", ["10.0.0.0/33", "0.0.0.0/0; curl x | sh", "10.0.0.1/16", "300.0.0.0/8", "10.0.0.0"]
)
def test_check_ipv4_cidr_refuses_bad_prefixes_host_bits_and_text(bad):
    assert refused(rules.check_ipv4_cidr, bad)


def test_check_public_access_cidrs_allows_at_most_40_public_blocks():
    ok = [f"198.51.{i}.0/24" for i in range(40)]
    assert rules.check_public_access_cidrs(ok) == ok
    assert "EKS allows at most 40" in refused(rules.check_public_access_cidrs, [*ok, "1.2.3.4/32"])
    with pytest.raises(RuleError) as e:
        rules.check_public_access_cidrs(["1.2.3.4/32", "10.0.0.0/8"])
    assert e.value.at == (1,)
    assert "not a public range" in str(e.value)
    assert rules.check_public_access_cidrs(["0.0.0.0/0"]) == ["0.0.0.0/0"]


def test_check_vpc_cidr_is_a_slash_16_inside_10_slash_8():
    assert rules.check_vpc_cidr("10.1.0.0/16") == "10.1.0.0/16"
    for bad in ("10.999.0.0/16", "192.168.0.0/16", "10.0.0.0/17"):
        assert refused(rules.check_vpc_cidr, bad)


@pytest.mark.parametrize(
    "good",
    [
        "arn:aws:iam::111122223333:role/admins",
        "arn:aws:iam::111122223333:role/development/apps/my-role",
        "arn:aws-us-gov:iam::111122223333:user/alice@example.com",
    ],
)
def test_check_iam_principal_arn_accepts_role_and_user_arns(good):
    assert rules.check_iam_principal_arn(good) == good


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        ("arn:aws:iam::111122223333:role/*", "wildcards are not allowed"),
        ("arn:aws:iam::*:role/admins", "wildcards are not allowed"),
        ("arn:aws:sts::111122223333:assumed-role/admins/me", "is an STS session"),
        ("arn:aws:iam::1111:role/admins", "is not an IAM role or user ARN"),
        ("arn:aws:iam::111122223333:group/admins", "is not an IAM role or user ARN"),
    ],
)
def test_check_iam_principal_arn_refuses_wildcards_and_sessions(bad, why):
    assert why in refused(rules.check_iam_principal_arn, bad)


@pytest.mark.parametrize(
    ("console", "api"),
    [
        ("NVIDIA T4", "nvidia-tesla-t4"),
        ("NVIDIA Tesla V100", "nvidia-tesla-v100"),
        ("NVIDIA A100 40GB", "nvidia-tesla-a100"),
        ("NVIDIA A100 80GB", "nvidia-a100-80gb"),
        ("NVIDIA L4", "nvidia-l4"),
    ],
)
def test_gpu_type_hint_maps_console_wording_to_the_api_name(console, api):
    known = [
        "nvidia-tesla-t4",
        "nvidia-tesla-v100",
        "nvidia-tesla-a100",
        "nvidia-a100-80gb",
        "nvidia-l4",
    ]
    assert rules.gpu_type_hint(console, known) == f"; did you mean '{api}'?"


def test_gpu_type_hint_stays_silent_for_unrelated_names():
    assert rules.gpu_type_hint("foo", ["nvidia-l4"]) == ""


def test_check_runtime_class_is_a_dns_label_usable_as_handler():
    assert rules.check_runtime_class("nvidia") == "nvidia"
    assert "RuntimeClass handler" in refused(rules.check_runtime_class, "Nvidia_Runtime")
    with pytest.raises(RuleError) as e:
        rules.check_toolkit_env({"CONTAINERD_RUNTIME_CLASS": "nvidia.runtime"})
    assert e.value.at == ("CONTAINERD_RUNTIME_CLASS",)


@pytest.mark.parametrize("bad", ["1,33", "v1.33", "1.33.5", "1.3", "latest"])
def test_check_eks_version_takes_major_minor_only(bad):
    assert rules.check_eks_version("1.33") == "1.33"
    assert "is not an EKS Kubernetes version" in refused(rules.check_eks_version, bad)


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


def test_check_gce_labels_refuses_a_trailing_newline():
    with pytest.raises(ValueError):
        rules.check_gce_labels({"team": "ml\n"})


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


@pytest.mark.parametrize("good", ["ML_Cluster", "0prod", "a" * 100, "team-a_gpu"])
def test_check_eks_cluster_name_accepts_createcluster_names(good):
    assert rules.check_eks_cluster_name(good) == good


@pytest.mark.parametrize("bad", ["_ml", "-ml", "ml.prod", "a" * 101, "ml\n", "m\u00e9"])
def test_check_eks_cluster_name_refuses_dots_leading_symbols_and_101_chars(bad):
    assert "is not an EKS cluster name" in refused(rules.check_eks_cluster_name, bad)


@pytest.mark.parametrize("good", ["ml", "a", "a" * 40, "gpu-1"])
def test_check_gke_cluster_name_accepts_lowercase_up_to_40(good):
    assert rules.check_gke_cluster_name(good) == good


@pytest.mark.parametrize("bad", ["ML", "1ml", "ml-", "a" * 41, "ml_x"])
def test_check_gke_cluster_name_refuses_capitals_digit_start_trailing_hyphen_and_41(bad):
    assert "is not a GKE cluster name" in refused(rules.check_gke_cluster_name, bad)


@pytest.mark.parametrize("good", ["a", "gpu-a100", "a" * 40])
def test_check_pool_name_accepts_lowercase_up_to_40(good):
    assert rules.check_pool_name(good) == good


# The GKE API's refusal (pulumi/pulumi-gcp#1510): "primaryPreemptibleNodes-b8a97f9" is not a node pool name.
@pytest.mark.parametrize(
    "bad", ["primaryPreemptibleNodes-b8a97f9", "1gpu", "gpu-", "gpu_a", "a" * 41, "gpu\n"]
)
def test_check_pool_name_refuses_what_gke_node_pools_refuse(bad):
    assert "at most 40 characters" in refused(rules.check_pool_name, bad)


def test_check_public_access_cidrs_accepts_halves_of_the_internet_spanning_private_ranges():
    assert rules.check_public_access_cidrs(["0.0.0.0/1", "128.0.0.0/1"]) == [
        "0.0.0.0/1",
        "128.0.0.0/1",
    ]


@pytest.mark.parametrize("cidr", ["10.1.0.0/16", "192.168.1.0/24", "100.64.0.0/10", "127.0.0.1/32"])
def test_check_public_access_cidrs_refuses_blocks_inside_a_non_public_range(cidr):
    with pytest.raises(RuleError, match="not a public range"):
        rules.check_public_access_cidrs([cidr])


def test_check_toolkit_env_lists_path_variables_by_name_not_by_config_suffix():
    env = {
        "CONTAINERD_USE_LEGACY_CONFIG": "true",
        "CONTAINERD_CONFIG": "/etc/containerd/config.toml",
    }
    assert rules.check_toolkit_env(env) == env
    with pytest.raises(RuleError, match="not an absolute path"):
        rules.check_toolkit_env({"RUNTIME_DROP_IN_CONFIG_HOST_PATH": "conf.d/99-nvidia.toml"})


@pytest.mark.parametrize(
    ("values", "at"),
    [
        ({"driver": {"repository": "nvcr.io/nvidia; curl x|sh"}}, ("driver", "repository")),
        ({"driver": {"repository": "nvcr.io/nvidia:latest"}}, ("driver", "repository")),
        ({"toolkit": {"version": "v1.17.0 --privileged"}}, ("toolkit", "version")),
        ({"dcgm": {"image": "dcgm exporter"}}, ("dcgm", "image")),
        ({"operator": {"runtimeClass": "Nvidia_RT"}}, ("operator", "runtimeClass")),
        (
            {"validator": {"plugin": {"env": [{"repository": "a b"}]}}},
            ("validator", "plugin", "env", 0, "repository"),
        ),
    ],
)
def test_check_operator_values_checks_image_fields_and_runtime_class_naming_the_path(values, at):
    with pytest.raises(RuleError) as e:
        rules.check_operator_values(values)
    assert e.value.at == at


def test_check_operator_values_accepts_chart_style_image_blocks_and_digests():
    values = {
        "driver": {"repository": "nvcr.io/nvidia", "image": "driver", "version": "595.91.07"},
        "toolkit": {"version": "sha256:" + "a" * 64},
        "vgpuManager": {"version": ""},
        "operator": {"runtimeClass": "nvidia"},
    }
    assert rules.check_operator_values(values) == values


def test_check_gce_network_and_subnetwork_take_names_or_resource_paths():
    assert rules.check_gce_network("projects/host-proj/global/networks/shared-vpc")
    assert rules.check_gce_subnetwork("projects/host-proj/regions/us-central1/subnetworks/gpu")
    assert "is not a network" in refused(rules.check_gce_network, "Default")
    assert "is not a subnetwork" in refused(
        rules.check_gce_subnetwork, "projects/p/regions/us-central1/subnetworks/x"
    )


def test_check_rrule_refuses_non_rrule_text():
    assert rules.check_rrule("FREQ=WEEKLY;BYDAY=SA,SU") == "FREQ=WEEKLY;BYDAY=SA,SU"
    assert "RRULE" in refused(rules.check_rrule, "every saturday")
    assert "RRULE" in refused(rules.check_rrule, "FREQ=WEEKLY\n")


def test_check_max_run_duration_is_at_most_seven_days():
    assert rules.check_max_run_duration("604800s") == "604800s"
    assert "longer than 7 days" in refused(rules.check_max_run_duration, "604801s")
    assert "not a duration" in refused(rules.check_max_run_duration, "9" * 5000 + "s")


@pytest.mark.parametrize("good", ["team-a", "dev-*", "ml*"])
def test_check_access_scope_namespace_accepts_labels_and_trailing_wildcard(good):
    assert rules.check_access_scope_namespace(good) == good


@pytest.mark.parametrize("bad", ["*", "Team", "a*b", "dev_*", "a" * 64])
def test_check_access_scope_namespace_refuses_inner_wildcards_and_capitals(bad):
    assert "namespace prefix" in refused(rules.check_access_scope_namespace, bad)


@pytest.mark.parametrize("bad", ["lab\n", " lab", "lab\t", "la\x00b", ""])
def test_check_kubeconfig_context_refuses_what_names_no_context(bad):
    with pytest.raises(ValueError):
        rules.check_kubeconfig_context(bad)


@pytest.mark.parametrize(
    "good", ["lab", "arn:aws:eks:us-west-2:123456789012:cluster/ml", "gke_p_z_c"]
)
def test_check_kubeconfig_context_accepts_kubectl_context_names(good):
    assert rules.check_kubeconfig_context(good) == good


# NVIDIA/nvidia-container-toolkit cmd/nvidia-ctk-installer @ d34b3046: each of these is a flag
# whose Usage names a path (install dir, source root, pid file, NRI socket, driver and /dev roots,
# CDI output dir, CRI-O hooks dir, runtime executable); its default is the valid value.
INSTALLER_PATHS = [
    ("RUNTIME_EXECUTABLE_PATH", "/usr/bin/containerd"),
    ("TOOLKIT_INSTALL_DIR", "/usr/local/nvidia"),  # defaultToolkitInstallDir
    ("ROOT", "/usr/local/nvidia"),
    ("TOOLKIT_SOURCE_ROOT", "/artifacts/deb"),
    ("TOOLKIT_PID_FILE", "/run/nvidia/toolkit/toolkit.pid"),  # defaultPidFile
    ("PID_FILE", "/run/nvidia/toolkit/toolkit.pid"),
    ("NRI_SOCKET", "/var/run/nri/nri.sock"),  # nriapi.DefaultSocketPath
    ("NVIDIA_DRIVER_ROOT", "/run/nvidia/driver"),  # DefaultNvidiaDriverRoot
    ("DRIVER_ROOT", "/run/nvidia/driver"),
    ("DRIVER_ROOT_CTR_PATH", "/run/nvidia/driver"),
    ("NVIDIA_DEV_ROOT", "/"),
    ("DEV_ROOT", "/"),
    ("DEV_ROOT_CTR_PATH", "/host"),
    ("CDI_OUTPUT_DIR", "/var/run/cdi"),  # the flag's Value
    ("CRIO_HOOKS_DIR", "/usr/share/containers/oci/hooks.d"),  # defaultHooksDir
]


@pytest.mark.parametrize(("name", "default"), INSTALLER_PATHS)
def test_check_toolkit_env_installer_path_variables_take_clean_absolute_paths(name, default):
    assert rules.check_toolkit_env({name: default}) == {name: default}
    for bad in ("relative/dir", "/run/x; reboot", "/run/../etc"):
        with pytest.raises(RuleError) as e:
            rules.check_toolkit_env({name: bad})
        assert e.value.at == (name,)


def test_check_toolkit_env_nri_socket_is_a_unix_socket():
    assert "ends in .sock" in refused(rules.check_toolkit_env, {"NRI_SOCKET": "/etc/passwd"})


def test_check_toolkit_env_empty_cdi_output_dir_turns_cdi_specs_off():
    # cdi-output-dir: "If this is set to '', no CDI specification is generated".
    assert rules.check_toolkit_env({"CDI_OUTPUT_DIR": ""}) == {"CDI_OUTPUT_DIR": ""}
    with pytest.raises(RuleError):
        rules.check_toolkit_env({"DRIVER_ROOT": ""})


# container/runtime/runtime.go: --runtime-name reads NVIDIA_RUNTIME_NAME, CONTAINERD_RUNTIME_CLASS
# and DOCKER_RUNTIME_NAME, one flag: each is the runtime handler, a DNS-1123 label.
@pytest.mark.parametrize(
    "name", ["NVIDIA_RUNTIME_NAME", "CONTAINERD_RUNTIME_CLASS", "DOCKER_RUNTIME_NAME"]
)
def test_check_toolkit_env_runtime_name_aliases_take_the_runtime_class_rule(name):
    assert rules.check_toolkit_env({name: "nvidia-cdi"})
    with pytest.raises(RuleError, match="RuntimeClass handler") as e:
        rules.check_toolkit_env({name: "Nvidia_RT"})
    assert e.value.at == (name,)
