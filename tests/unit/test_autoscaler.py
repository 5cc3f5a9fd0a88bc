"""Cluster-autoscaler node-template tags, chart/image pins, Helm values and IAM scope."""

from __future__ import annotations

import re
from typing import Any

import pytest

from infra.core.catalog.vendored import DATA_DIR
from infra.core.config.base import MigSpec, SharingSpec
from infra.core.eks import autoscaler as ca
from infra.core.pools import Taint
from infra.core.sharing import advertised_gpu_resources, mig_gpu, mig_instances_per_gpu

# CA's own parser for taint tag values (cloudprovider/aws/aws_manager.go extractTaintsFromAsg).
CA_TAINT_VALUE = re.compile(r"^(.*):(?:NoSchedule|NoExecute|PreferNoSchedule)$")


def test_gpu_count_becomes_the_nvidia_gpu_resource_tag():
    tags = ca.node_template_tags({}, [], 4)
    assert tags == {"k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/gpu": "4"}


def test_no_gpu_count_adds_no_resource_tag_but_zero_is_a_real_answer():
    assert ca.node_template_tags({"a": "b"}, [], None) == {
        "k8s.io/cluster-autoscaler/node-template/label/a": "b"
    }
    assert ca.node_template_tags({}, [], 0) == {
        "k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/gpu": "0"
    }


A100_40 = ("1g.5gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb")
H100_80 = ("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb")
H200 = ("1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb")
A30 = ("1g.6gb", "2g.12gb", "4g.24gb")


@pytest.mark.parametrize(
    ("profiles", "counts"),
    [
        (A100_40, [7, 3, 2, 1, 1]),
        (H100_80, [7, 4, 3, 2, 1, 1]),
        (H200, [7, 4, 3, 2, 1, 1]),
        (A30, [4, 2, 1]),
    ],
)
def test_mig_instances_per_gpu_follow_the_nvidia_profile_table(profiles, counts):
    assert [mig_instances_per_gpu(p, profiles) for p in profiles] == counts


def test_unknown_mig_profile_has_no_count():
    assert mig_instances_per_gpu("1g.6gb", A100_40) is None


def test_unparseable_profiles_are_ignored_when_sizing_the_others():
    assert mig_instances_per_gpu("1g.5gb", ("1g.5gb+me", *A100_40)) == 7
    assert mig_instances_per_gpu("1g.5gb+me", ("1g.5gb+me", *A100_40)) is None


def test_time_slicing_multiplies_the_advertised_gpus():
    assert advertised_gpu_resources(1, SharingSpec(replicas=4), None, None) == (4, {})


def test_mig_single_advertises_slices_as_gpus_and_mixed_as_mig_resources():
    a100 = mig_gpu("A100-40GB", DATA_DIR)
    single = advertised_gpu_resources(
        8, None, MigSpec(strategy="single", config="all-1g.5gb"), a100
    )
    mixed = advertised_gpu_resources(8, None, MigSpec(strategy="mixed", config="all-3g.20gb"), a100)
    assert single == (56, {})
    assert mixed == (0, {"nvidia.com/mig-3g.20gb": 16})


def test_mixed_geometry_mig_configs_fall_back_to_physical_gpus():
    single_balanced = MigSpec(strategy="single", config="all-balanced")
    assert advertised_gpu_resources(8, None, single_balanced, None) == (8, {})


def test_mig_counts_come_from_nvidia_mig_parted_profiles_not_gke_short_list():
    # p4d (8x A100-40GB), all-1g.10gb: 4 instances per GPU (NVIDIA MIG User Guide), which GKE's
    # partition list lacks; single strategy advertises 32 GPUs, mixed 32 mig-1g.10gb and no GPU.
    a100 = mig_gpu("A100-40GB", DATA_DIR)
    single = MigSpec(strategy="single", config="all-1g.10gb")
    mixed = MigSpec(strategy="mixed", config="all-1g.10gb")
    assert advertised_gpu_resources(8, None, single, a100) == (32, {})
    assert advertised_gpu_resources(8, None, mixed, a100) == (0, {"nvidia.com/mig-1g.10gb": 32})


def test_mig_mixed_all_balanced_advertises_every_profile_of_mig_parted_layout():
    mixed = MigSpec(strategy="mixed", config="all-balanced")
    assert advertised_gpu_resources(8, None, mixed, mig_gpu("A100-40GB", DATA_DIR)) == (
        0,
        {"nvidia.com/mig-1g.5gb": 16, "nvidia.com/mig-2g.10gb": 8, "nvidia.com/mig-3g.20gb": 8},
    )


def test_mig_me_profile_exists_once_per_gpu_under_its_dotted_resource_name():
    mixed = MigSpec(strategy="mixed", config="all-1g.5gb.me")
    assert advertised_gpu_resources(8, None, mixed, mig_gpu("A100-40GB", DATA_DIR)) == (
        0,
        {"nvidia.com/mig-1g.5gb.me": 8},
    )


def test_renamed_time_slicing_advertises_shared_name_and_no_plain_gpu():
    renamed = SharingSpec(replicas=4, rename_by_default=True)
    assert advertised_gpu_resources(2, renamed, None, None) == (0, {"nvidia.com/gpu.shared": 8})


def test_every_label_becomes_a_label_template_tag_with_its_value():
    tags = ca.node_template_tags({"nvidia.com/gpu.present": "true", "gpu-infra/pool": "p"}, [], 1)
    assert tags["k8s.io/cluster-autoscaler/node-template/label/nvidia.com/gpu.present"] == "true"
    assert tags["k8s.io/cluster-autoscaler/node-template/label/gpu-infra/pool"] == "p"


@pytest.mark.parametrize("effect", ["NoSchedule", "NoExecute", "PreferNoSchedule"])
def test_taint_tag_value_is_value_colon_kubernetes_effect(effect):
    tags = ca.node_template_tags({}, [Taint("nvidia.com/gpu", "true", effect)], 1)
    value = tags["k8s.io/cluster-autoscaler/node-template/taint/nvidia.com/gpu"]
    assert value == f"true:{effect}"
    assert CA_TAINT_VALUE.match(value)
    assert "_" not in value  # never the EKS spelling NO_SCHEDULE, which CA silently ignores


def test_empty_taint_value_still_parses_for_the_autoscaler():
    value = ca.taint_tag_value(Taint("dedicated", "", "NoSchedule"))
    assert value == ":NoSchedule" and CA_TAINT_VALUE.match(value)


def test_tags_are_sorted_so_plans_are_stable():
    tags = ca.node_template_tags({"z": "1", "a": "2"}, [Taint("m", "v")], 1)
    assert list(tags) == sorted(tags)


def test_check_tag_rejects_keys_over_128_characters():
    assert ca.check_tag("k" * 128, "v") is None
    assert "128" in (ca.check_tag("k" * 129, "v") or "")
    assert "256" in (ca.check_tag("k", "v" * 257) or "")


def test_image_tag_matches_the_kubernetes_minor_version():
    for minor, tag in ca.image_tags(DATA_DIR).items():
        assert tag.startswith(f"v{minor}.")
    assert ca.image_tag("1.20", DATA_DIR) is None


def test_chart_version_is_pinned_once_as_an_exact_semver():
    assert re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+", ca.chart(DATA_DIR).version)


def values_of(**kw: Any) -> dict[str, Any]:
    args: dict[str, Any] = {
        "cluster_name": "ml",
        "region": "us-west-2",
        "image": ("registry.k8s.io/autoscaling/cluster-autoscaler", "v1.33.6"),
        "expander": "least-waste",
        "gpu_threshold": 0.5,
        "unneeded_time": "10m",
        "node_selector": {"gpu-infra/pool": "system"},
        "discovery_tag": ca.stack_tag("ml", "prod"),
        "balance_similar": False,
    }
    return ca.helm_values(**(args | kw))


def test_helm_values_discover_only_this_stacks_groups_and_scale_down_by_gpu_use():
    values = values_of()
    # Every listed key must exist on an ASG: EKS's two cluster tags AND this stack's tag.
    assert values["autoDiscovery"] == {
        "clusterName": "ml",
        "tags": [
            "k8s.io/cluster-autoscaler/enabled",
            "k8s.io/cluster-autoscaler/ml",
            "gpu-infra/autoscaler/ml/prod",
        ],
    }
    assert values["image"]["tag"] == "v1.33.6"
    args = values["extraArgs"]
    assert args["expander"] == "least-waste"
    assert args["scale-down-gpu-utilization-threshold"] == "0.5"
    assert args["ignore-daemonsets-utilization"] == "true"
    assert values["nodeSelector"] == {"gpu-infra/pool": "system"}


def test_skip_nodes_with_system_pods_is_left_at_its_default():
    # README "Common Notes and Gotchas": by default CA does not remove nodes running
    # (non-DaemonSet) kube-system pods; gpu-infra has no reason to override it.
    assert "skip-nodes-with-system-pods" not in values_of()["extraArgs"]


def test_balance_similar_node_groups_follows_group_per_zone():
    assert values_of()["extraArgs"]["balance-similar-node-groups"] == "false"
    assert values_of(balance_similar=True)["extraArgs"]["balance-similar-node-groups"] == "true"


def test_priority_expander_puts_spot_groups_before_on_demand():
    text = ca.priority_config(["gpu-spot-1a2b3c4d"], ["gpu-0a0b0c0d"])
    import yaml

    prios = yaml.safe_load(text)
    assert sorted(prios, reverse=True) == [20, 10, 1] and prios[1] == [".*"]
    (spot,), (od,) = prios[20], prios[10]
    uuid = "6cc0c5ad-5a23-2b53-7d3c-8b3e0c2a9f3b"
    assert re.fullmatch(spot, f"eks-gpu-spot-1a2b3c4d-{uuid}")
    assert re.fullmatch(spot, f"eks-gpu-spot-99aa00bb-{uuid}")  # its replacement, or kept name
    assert not re.fullmatch(spot, f"eks-gpu-0a0b0c0d-{uuid}")
    assert re.fullmatch(od, f"eks-gpu-0a0b0c0d-{uuid}")
    assert not re.fullmatch(od, f"eks-gpu-spot-1a2b3c4d-{uuid}")
    values = values_of(expander="priority", priorities=text)
    assert values["expanderPriorities"] == text and values["extraArgs"]["expander"] == "priority"


@pytest.mark.parametrize("minor", ["1.33", "1.34", "1.35", "1.36"])
def test_autoscaler_image_is_pinned_for_current_kubernetes_minors(minor):
    tag = ca.image_tag(minor, DATA_DIR)
    assert tag is not None and tag.startswith(f"v{minor}.")


def test_iam_policy_scales_only_asgs_tagged_for_this_stack():
    policy: dict[str, Any] = ca.iam_policy("ml", "us-west-2", "aws", ca.stack_tag("ml", "prod"))
    statements = {s["Sid"]: s for s in policy["Statement"]}
    write = statements["ScaleOwnAsgs"]
    assert set(write["Action"]) == {
        "autoscaling:SetDesiredCapacity",
        "autoscaling:TerminateInstanceInAutoScalingGroup",
    }
    assert write["Condition"] == {
        "StringEquals": {"aws:ResourceTag/gpu-infra/autoscaler/ml/prod": "owned"}
    }
    assert statements["DescribeOwnNodegroups"]["Resource"] == (
        "arn:aws:eks:us-west-2:*:nodegroup/ml/*/*"
    )
    # Only describe calls (which AWS cannot scope) are allowed on every resource.
    for s in policy["Statement"]:
        if s["Resource"] == "*" and "Condition" not in s:
            assert all(":Describe" in a or ":Get" in a for a in s["Action"])


@pytest.mark.parametrize(
    ("region", "partition"),
    [("us-west-2", "aws"), ("us-gov-west-1", "aws-us-gov"), ("cn-north-1", "aws-cn")],
)
def test_partition_follows_the_region(region, partition):
    assert ca.aws_partition(region) == partition
