"""EKS planning: AMI choice, AZ filtering by AZ ID, spot shapes, and CA tags derived from the group."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from infra.core.catalog.vendored import DATA_DIR, AwsInstance, Catalog
from infra.core.config.stack import parse
from infra.core.eks import autoscaler as ca
from infra.core.eks import planner as eks
from infra.core.eks.access import kubeconfig
from infra.core.eks.ami import choose_ami_type
from infra.core.eks.placement import offered_az_ids, region_az_ids
from infra.core.eks.system import SYSTEM_AMI_TYPES
from infra.core.errors import ConfigErrors, Issues
from infra.core.plan import build_plan

EKS_BASE: dict[str, Any] = {
    "aws:region": "us-west-2",
    "gpu-infra:platform": "eks",
    "gpu-infra:cluster": {"name": "ml", "location": "us-west-2", "kubernetesVersion": "1.33"},
    "gpu-infra:gpuPools": [{"name": "gpu-t4", "machineType": "g4dn.xlarge", "maxNodes": 4}],
    "gpu-infra:gpuOperator": {"enabled": False},
}


def eks_config(
    pool: dict[str, Any] | None = None,
    cluster: dict[str, Any] | None = None,
    region: str | None = None,
    top: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """``EKS_BASE`` with pool 0 / cluster updated (``None`` removes a key), the region moved
    (``aws:region`` and ``cluster.location``) and top keys set."""
    cfg = copy.deepcopy(EKS_BASE)
    if region is not None:
        cfg["aws:region"] = cfg["gpu-infra:cluster"]["location"] = region
    for target, updates in (
        (cfg["gpu-infra:gpuPools"][0], pool),
        (cfg["gpu-infra:cluster"], cluster),
    ):
        for k, v in (updates or {}).items():
            if v is None:
                target.pop(k, None)
            else:
                target[k] = v
    cfg.update(top or {})
    return cfg


def aws(catalog: Catalog, name: str) -> AwsInstance:
    inst = catalog.aws_instance(name)
    assert inst is not None, name
    return inst


def plan_of(cfg: dict[str, Any]) -> eks.EksPlan:
    p = build_plan(parse(cfg, "test")).platform.plan
    assert p is not None
    return p


def errors_of(cfg: dict[str, Any], catalog: Catalog | None = None) -> dict[str, str]:
    with pytest.raises(ConfigErrors) as e:
        build_plan(parse(cfg, "test"), catalog)
    out: dict[str, str] = {}
    for i in e.value.issues:
        out[i.path] = f"{out[i.path]} | {i.reason}" if i.path in out else i.reason
    return out


GIVEN_VPC = "vpc-0123456789abcdef0"


def in_given_vpc(subnets: dict[str, str]) -> dict[str, Any]:
    """A stack in the user's VPC with ``subnets`` (AZ ID -> private subnet)."""
    return eks_config(cluster={"vpc": {"id": GIVEN_VPC, "privateSubnets": subnets}})


# --- AMI choice ------------------------------------------------------------------------------


def test_default_ami_is_al2023_nvidia_for_x86():
    assert choose_ami_type("x86_64", "al2023", None, "1.33") == ("AL2023_x86_64_NVIDIA", None)


def test_bottlerocket_on_request_is_the_nvidia_variant():
    assert choose_ami_type("x86_64", "bottlerocket", None, "1.33")[0] == (
        "BOTTLEROCKET_x86_64_NVIDIA"
    )


@pytest.mark.parametrize(
    ("family", "ami"),
    [("al2023", "AL2023_ARM_64_NVIDIA"), ("bottlerocket", "BOTTLEROCKET_ARM_64_NVIDIA")],
)
def test_arm_families_get_the_arm_nvidia_variant(family, ami, catalog: Catalog):
    g5g = catalog.aws_family("g5g")
    assert g5g is not None and g5g.architecture == "arm64"
    assert choose_ami_type("arm64", family, None, "1.33") == (ami, None)


def test_x86_ami_on_arm_instances_is_rejected_naming_the_arm_variant():
    ami, why = choose_ami_type("arm64", "al2023", "AL2023_x86_64_NVIDIA", "1.33")
    assert ami is None and "AL2023_ARM_64_NVIDIA" in (why or "")


@pytest.mark.parametrize("version", ["1.33", "1.34"])
def test_al2_gpu_ami_is_rejected_from_kubernetes_1_33(version):
    ami, why = choose_ami_type("x86_64", "al2023", "AL2_x86_64_GPU", version)
    assert ami is None and "1.32" in (why or "")


def test_al2_gpu_ami_is_still_allowed_on_1_32_when_asked_for():
    assert choose_ami_type("x86_64", "al2023", "AL2_x86_64_GPU", "1.32")[0] == "AL2_x86_64_GPU"


def test_plan_sets_the_ami_type_explicitly_on_every_group():
    (g,) = plan_of(eks_config()).groups
    assert g.ami_type == "AL2023_x86_64_NVIDIA" and g.hints.node_image == g.ami_type


def test_bottlerocket_groups_size_the_data_volume():
    (g,) = plan_of(eks_config({"amiFamily": "bottlerocket"})).groups
    assert g.ami_type == "BOTTLEROCKET_x86_64_NVIDIA" and g.root_device_name == "/dev/xvdb"


def test_al2_gpu_ami_on_1_33_is_a_config_error_at_ami_type():
    errs = errors_of(eks_config({"amiType": "AL2_x86_64_GPU"}))
    assert "gpuPools[0].amiType" in errs and "AL2023_x86_64_NVIDIA" in errs["gpuPools[0].amiType"]


# --- AZ filtering ----------------------------------------------------------------------------


def test_group_subnets_only_in_azs_offering_every_type(catalog: Catalog):
    p = plan_of(eks_config())
    (g,) = p.groups
    offered = aws(catalog, "g4dn.xlarge").az_ids["us-west-2"]
    assert set(g.az_ids) == set(offered) and "usw2-az4" not in g.az_ids
    assert p.network is not None and "usw2-az4" in p.network.az_ids  # VPC spans it; group not


def test_offered_az_ids_is_the_intersection_over_types(catalog: Catalog):
    a, b = aws(catalog, "g4dn.xlarge"), aws(catalog, "p4d.24xlarge")
    both = offered_az_ids([a, b], "us-west-2")
    assert both == set(a.az_ids["us-west-2"]) & set(b.az_ids["us-west-2"])


def test_empty_zones_are_a_config_error_not_a_group_without_subnets():
    assert "gpuPools[0].zones" in errors_of(eks_config({"zones": []}))


def test_a_zone_listed_twice_is_an_error_at_the_second():
    errs = errors_of(eks_config({"zones": ["usw2-az1", "usw2-az1"]}))
    assert "listed twice" in errs["gpuPools[0].zones[1]"]


def test_region_without_any_gpu_az_in_the_catalog_is_an_error_at_location(catalog: Catalog):
    region = "mx-central-1"  # a real region the vendored GPU snapshot does not list
    assert not region_az_ids(catalog, region)
    cfg = eks_config(region=region)
    assert "no GPU instance type in region 'mx-central-1'" in errors_of(cfg)["cluster.location"]


def test_zones_restrict_the_group_to_the_given_az_ids():
    (g,) = plan_of(eks_config({"zones": ["usw2-az2"]})).groups
    assert g.az_ids == ("usw2-az2",)


def test_zone_not_offering_the_type_is_an_error_listing_the_offering_azs():
    errs = errors_of(eks_config({"zones": ["usw2-az1", "usw2-az4"]}))
    assert "usw2-az1, usw2-az2, usw2-az3" in errs["gpuPools[0].zones[1]"]


def test_given_subnets_are_filtered_by_their_az_id():
    cfg = in_given_vpc({"usw2-az1": "subnet-0aaaaaaa", "usw2-az4": "subnet-0bbbbbbb"})
    p = plan_of(cfg)
    assert p.network is not None and not p.network.create
    assert p.groups[0].az_ids == ("usw2-az1",)


def test_subnets_only_in_azs_lacking_the_type_name_the_region_and_type():
    cfg = eks_config(
        cluster={
            "existing": True,
            "vpc": {"privateSubnets": {"usw2-az4": "subnet-0bbbbbbb"}},
        }
    )
    reason = errors_of(cfg)["gpuPools[0].machineType"]
    assert "g4dn.xlarge" in reason and "us-west-2" in reason and "usw2-az4" in reason


def test_type_not_offered_in_the_region_is_an_error_naming_where_it_is(catalog: Catalog):
    cfg = eks_config(
        {"machineType": "g6.xlarge"},
        region="eu-west-1",
    )
    assert "eu-west-1" not in aws(catalog, "g6.xlarge").az_ids
    reason = errors_of(cfg)["gpuPools[0].machineType"]
    assert "g6.xlarge is not offered in eu-west-1" in reason and "us-east-1" in reason


def test_subnet_az_of_another_region_is_rejected():
    cfg = in_given_vpc({"use1-az1": "subnet-0aaaaaaa", "usw2-az1": "subnet-0bbbbbbb"})
    assert "cluster.vpc.privateSubnets.use1-az1" in errors_of(cfg)


def test_created_vpc_has_a_private_subnet_per_az_and_the_control_plane_avoids_use1_az3():
    p = plan_of(eks_config(region="us-east-1"))
    assert p.network is not None and p.network.create
    assert "use1-az3" in p.network.az_ids
    assert "use1-az3" not in p.network.control_plane_az_ids
    cidrs = list(p.network.subnet_cidrs.values())
    assert len(set(cidrs)) == len(cidrs) == len(p.network.az_ids)


# --- instance types and spot shapes ----------------------------------------------------------


def test_unknown_instance_type_is_an_error_at_machine_type():
    assert (
        "not an NVIDIA GPU instance type"
        in errors_of(eks_config({"machineType": "p9.big"}))["gpuPools[0].machineType"]
    )


def test_instance_type_without_a_gpu_is_rejected():
    reason = errors_of(eks_config({"machineType": "m5.xlarge"}))["gpuPools[0].machineType"]
    assert "'m5.xlarge' is not an NVIDIA GPU instance type" in reason and "g4dn" in reason


def test_spot_types_must_share_gpu_model_count_and_vcpus():
    cfg = eks_config({"machineType": ["g4dn.xlarge", "g5.xlarge", "g4dn.2xlarge"], "spot": True})
    errs = errors_of(cfg)
    assert "GPU model A10G vs T4" in errs["gpuPools[0].machineType[1]"]
    assert "vCPUs 8 vs 4" in errs["gpuPools[0].machineType[2]"]


def test_spot_types_with_different_gpu_models_are_rejected_at_the_second_type():
    cfg = eks_config(
        {"machineType": ["g5.xlarge", "g6.xlarge"], "spot": True, "maxNodes": 2},
        region="us-east-1",
    )
    errs = errors_of(cfg)
    assert "GPU model L4 vs A10G" in errs["gpuPools[0].machineType[1]"]


@pytest.fixture(scope="module")
def fake_catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    """The vendored catalog plus a made-up T4 family ``g4x`` (same shape as g4dn.xlarge, offered
    in usw2-az1/az2/az4) and ``p2.xlarge`` (a GPU type the EKS NVIDIA AMIs do not support)."""
    data = tmp_path_factory.mktemp("catalog")
    shutil.copytree(DATA_DIR, data, dirs_exist_ok=True)
    with (data / "aws_gpu_instances.csv").open("a", encoding="utf-8") as f:
        for az in ("usw2-az1", "usw2-az2", "usw2-az4"):
            f.write(f"g4x.xlarge,T4,1,4,16,us-west-2,{az},0.5,0.2\n")
        f.write("p2.xlarge,K80,1,4,61,us-west-2,usw2-az1,0.9,0.3\n")
    with (data / "aws_gpu_families.csv").open("a", encoding="utf-8") as f:
        f.write("g4x,x86_64,nvidia-tesla-t4,yes\n")
    return Catalog(Path(data))


def test_same_shape_spot_types_plan_in_the_azs_offering_all_of_them(
    fake_catalog: Catalog, catalog: Catalog, monkeypatch: pytest.MonkeyPatch
):
    from infra.core.eks import node_model

    # g4x has g4dn.xlarge's ENIs too (a type not on file would reserve for the most pods on file).
    real = node_model.eni_limits
    monkeypatch.setattr(
        node_model, "eni_limits", lambda t, d: real("g4dn.xlarge" if t == "g4x.xlarge" else t, d)
    )
    cfg = eks_config({"machineType": ["g4dn.xlarge", "g4x.xlarge"], "spot": True})
    p = build_plan(parse(cfg, "test"), fake_catalog).platform.plan
    assert p is not None
    (g,) = p.groups
    assert g.instance_types == ("g4dn.xlarge", "g4x.xlarge") and g.capacity_type == "SPOT"
    g4dn = aws(catalog, "g4dn.xlarge").az_ids["us-west-2"]
    assert set(g.az_ids) == set(g4dn) & {"usw2-az1", "usw2-az2", "usw2-az4"}
    assert g.az_ids == ("usw2-az1", "usw2-az2")


def test_gpu_type_whose_family_the_eks_nvidia_amis_lack_is_rejected(fake_catalog: Catalog):
    errs = errors_of(eks_config({"machineType": "p2.xlarge"}), fake_catalog)
    assert "do not support the p2 family" in errs["gpuPools[0].machineType"]


def test_unknown_size_of_a_gpu_family_lists_the_known_sizes():
    reason = errors_of(eks_config({"machineType": "g4dn.huge"}))["gpuPools[0].machineType"]
    assert "not a known g4dn size" in reason and "g4dn.xlarge" in reason


def test_an_empty_instance_type_list_is_rejected():
    errs = errors_of(eks_config({"machineType": [], "spot": True}))
    assert "an empty list" in errs["gpuPools[0].machineType"]


def test_an_instance_type_listed_twice_is_rejected():
    errs = errors_of(eks_config({"machineType": ["g4dn.xlarge", "g4dn.xlarge"], "spot": True}))
    assert "twice" in errs["gpuPools[0].machineType"]


def test_several_instance_types_on_an_on_demand_group_are_rejected():
    errs = errors_of(eks_config({"machineType": ["g5.xlarge", "g6.xlarge"]}))
    assert "on-demand group" in errs["gpuPools[0].machineType"]


def test_spot_group_uses_the_spot_capacity_type():
    (g,) = plan_of(eks_config({"machineType": ["g4dn.xlarge"], "spot": True})).groups
    assert g.capacity_type == "SPOT" and g.hints.spot


def test_gpu_block_is_checked_against_the_catalog():
    errs = errors_of(eks_config({"gpu": {"type": "nvidia-l4", "count": 2}}))
    assert {"gpuPools[0].gpu.type", "gpuPools[0].gpu.count"} <= set(errs)
    (g,) = plan_of(eks_config({"gpu": {"type": "nvidia-tesla-t4", "count": 1}})).groups
    assert g.hints.gpus_per_node == 1


# --- labels, taints and the CA tags derived from them ----------------------------------------


def test_gpu_group_labels_and_taint_defaults():
    (g,) = plan_of(eks_config()).groups
    assert g.labels == {
        "nvidia.com/gpu.present": "true",
        "k8s.amazonaws.com/accelerator": "nvidia-tesla-t4",
        "gpu-infra/pool": "gpu-t4",
    }
    assert g.eks_taints == [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}]
    assert g.hints.node_selector == {"gpu-infra/pool": "gpu-t4"}


def test_asg_tags_are_derived_from_the_group_labels_taints_and_gpu_count():
    (g,) = plan_of(
        eks_config(
            {
                "machineType": "g4dn.12xlarge",
                "labels": {"team": "ml"},
                "taints": [{"key": "dedicated", "value": "train", "effect": "NoExecute"}],
            }
        )
    ).groups
    prefix = "k8s.io/cluster-autoscaler/node-template/"
    expected = {f"{prefix}label/{k}": v for k, v in g.labels.items()}
    expected |= {f"{prefix}taint/{t.key}": f"{t.value}:{t.effect}" for t in g.taints}
    expected[f"{prefix}resources/nvidia.com/gpu"] = "4"
    # (100 GiB - 2 GiB XFS log bound) x 0.9 - 1 GiB kubeReserved, rounded down
    expected[f"{prefix}resources/ephemeral-storage"] = "87Gi"
    assert dict(g.asg_tags) == expected
    assert g.asg_tags[f"{prefix}taint/dedicated"] == "train:NoExecute"
    assert g.node_group_tags == {
        f"{prefix}resources/nvidia.com/gpu": "4",
        f"{prefix}resources/ephemeral-storage": "87Gi",
    }


def test_template_tags_up_to_the_budget_plan_and_one_more_is_rejected():
    (g,) = plan_of(eks_config()).groups
    room = ca.TEMPLATE_TAG_BUDGET - len(g.asg_tags)  # GPU resource + planner labels + taint
    assert room > 0
    full = {f"l{i}": "x" for i in range(room)}
    (g,) = plan_of(eks_config({"labels": full})).groups
    assert len(g.asg_tags) == ca.TEMPLATE_TAG_BUDGET
    over = errors_of(eks_config({"labels": full | {"one-more": "x"}}))["gpuPools[0].labels"]
    assert f"exceed {ca.TEMPLATE_TAG_BUDGET}" in over and str(ca.ASG_TAG_LIMIT) in over


def test_reserved_labels_and_a_second_gpu_taint_are_rejected():
    errs = errors_of(
        eks_config(
            {
                "labels": {"gpu-infra/pool": "other"},
                "taints": [{"key": "nvidia.com/gpu", "value": "x"}],
            }
        )
    )
    assert "gpuPools[0].labels.gpu-infra/pool" in errs
    assert "gpuPools[0].taints[0].key" in errs


def test_label_keys_over_63_characters_prefix_included_are_rejected_by_the_eks_api_rule():
    # A valid Kubernetes label key (long prefix, short name): EKS counts the key whole (63), which
    # also keeps its ASG tag key under 128 characters.
    key = "k" * 80 + ".example.com/gpu"
    errs = errors_of(eks_config({"labels": {key: "v"}}))
    assert "EKS takes label keys of at most 63" in errs[f"gpuPools[0].labels.{key}"]


# --- cluster --------------------------------------------------------------------------------


def test_min_zero_and_hints_for_scale_from_zero():
    (g,) = plan_of(eks_config()).groups
    assert (g.min_size, g.max_size) == (0, 4)
    assert g.hints.driver == "preinstalled"


def test_a100_groups_expose_mig_profiles_and_model():
    (g,) = plan_of(eks_config({"machineType": "p4d.24xlarge"})).groups
    assert g.hints.gpu_model == "A100-40GB" and "1g.5gb" in g.hints.mig_profiles


def test_autoscaler_runs_on_the_system_group_and_is_pinned():
    p = plan_of(eks_config())
    assert p.system is not None and p.autoscaler is not None
    assert p.autoscaler.values["nodeSelector"] == dict(p.system.labels)
    assert p.system.ami_type == "AL2023_x86_64_STANDARD"


def test_unpinned_kubernetes_version_for_the_autoscaler_is_an_error():
    assert "cluster.kubernetesVersion" in errors_of(
        eks_config(cluster={"kubernetesVersion": "1.20"})
    )


def test_access_entries_map_to_eks_access_policies():
    p = plan_of(
        eks_config(
            cluster={
                "accessEntries": [
                    {"principalArn": "arn:aws:iam::123456789012:role/admins"},
                    {
                        "principalArn": "arn:aws:iam::123456789012:role/dev",
                        "policy": "edit",
                        "namespaces": ["team-a"],
                    },
                ]
            }
        )
    )
    admin, dev = p.access_entries
    assert admin.policy_arn.endswith("cluster-access-policy/AmazonEKSClusterAdminPolicy")
    assert dev.policy_arn.endswith("/AmazonEKSEditPolicy") and dev.namespaces == ("team-a",)


def test_existing_cluster_needs_its_subnets():
    reason = errors_of(eks_config(cluster={"existing": True}))["cluster.vpc.privateSubnets"]
    assert "existing: true" in reason


def test_existing_cluster_plans_no_system_group_and_an_unpinned_autoscaler():
    p = plan_of(
        eks_config(
            cluster={"existing": True, "vpc": {"privateSubnets": {"usw2-az1": "subnet-0aaaaaaa"}}}
        )
    )
    assert p.system is None and p.autoscaler is not None
    assert p.autoscaler.values["nodeSelector"] == {}


def test_vpc_id_without_subnets_and_subnets_without_vpc_id_are_rejected():
    assert "cluster.vpc.privateSubnets" in errors_of(eks_config(cluster={"vpc": {"id": GIVEN_VPC}}))
    subnets = {"usw2-az1": "subnet-0aaaaaaa", "usw2-az2": "subnet-0bbbbbbb"}
    assert "cluster.vpc.id" in errors_of(eks_config(cluster={"vpc": {"privateSubnets": subnets}}))


def test_malformed_subnet_id_is_rejected_at_its_az():
    subnets = {"usw2-az1": "sn-1", "usw2-az2": "subnet-0bbbbbbb"}
    cfg = in_given_vpc(subnets)
    assert "is not a subnet ID" in errors_of(cfg)["cluster.vpc.privateSubnets.usw2-az1"]


def test_new_cluster_needs_subnets_in_two_control_plane_azs():
    subnets = {"usw2-az1": "subnet-0aaaaaaa"}
    cfg = in_given_vpc(subnets)
    assert "at least two AZs" in errors_of(cfg)["cluster.vpc.privateSubnets"]


def test_system_pool_min_above_max_is_rejected():
    cfg = eks_config(cluster={"systemPool": {"minNodes": 3, "maxNodes": 2}})
    assert "above maxNodes 2" in errors_of(cfg)["cluster.systemPool.minNodes"]


def test_access_entry_of_another_partition_is_rejected():
    cfg = eks_config(
        cluster={"accessEntries": [{"principalArn": "arn:aws-cn:iam::123456789012:role/x"}]}
    )
    assert "partition 'aws'" in errors_of(cfg)["cluster.accessEntries[0].principalArn"]


def test_public_access_cidrs_need_a_public_endpoint():
    cfg = eks_config(
        cluster={"endpointPublicAccess": False, "publicAccessCidrs": ["203.0.113.0/24"]}
    )
    assert "cluster.publicAccessCidrs" in errors_of(cfg)


def test_a_gpu_pool_named_system_is_rejected():
    assert "gpuPools[0].name" in errors_of(eks_config({"name": "system"}))


def test_gpu_system_pool_is_rejected():
    assert "cluster.systemPool.machineType" in errors_of(
        eks_config(cluster={"systemPool": {"machineType": "g4dn.xlarge"}})
    )


def test_kubeconfig_uses_aws_eks_get_token():
    cfg = json.loads(kubeconfig("ml", "https://x", "Q0E=", "us-west-2"))
    assert cfg["users"][0]["user"]["exec"]["args"] == [
        "eks",
        "get-token",
        "--cluster-name",
        "ml",
        "--region",
        "us-west-2",
    ]


def test_plan_eks_reports_into_the_collector_without_raising(catalog: Catalog):
    issues = Issues()
    config = parse(eks_config({"machineType": "p9.big"}), "test")
    plan = eks.plan_eks(config, catalog, issues)
    assert plan.groups == () and issues.count() == 1


# --- ARM (g5g) end to end --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("family", "ami"),
    [("al2023", "AL2023_ARM_64_NVIDIA"), ("bottlerocket", "BOTTLEROCKET_ARM_64_NVIDIA")],
)
def test_g5g_group_plans_the_arm_nvidia_ami(family, ami):
    (g,) = plan_of(eks_config({"machineType": "g5g.xlarge", "amiFamily": family})).groups
    assert g.ami_type == ami
    assert g.labels["k8s.amazonaws.com/accelerator"] == "nvidia-t4g"


def test_x86_ami_type_on_g5g_is_an_error_at_ami_type():
    errs = errors_of(eks_config({"machineType": "g5g.xlarge", "amiType": "AL2023_x86_64_NVIDIA"}))
    assert "AL2023_ARM_64_NVIDIA" in errs["gpuPools[0].amiType"]


def test_spot_mix_of_arm_and_x86_is_rejected():
    errs = errors_of(eks_config({"machineType": ["g4dn.xlarge", "g5g.xlarge"], "spot": True}))
    assert "architecture arm64 vs x86_64" in errs["gpuPools[0].machineType[1]"]


def test_every_ami_type_the_planner_emits_is_in_the_eks_api_enum():
    import botocore.session

    model = botocore.session.get_session().get_service_model("eks")
    api = set(model.shape_for("AMITypes").enum)
    emitted = {
        choose_ami_type(a, f, None, "1.33")[0]
        for a in ("x86_64", "arm64")
        for f in ("al2023", "bottlerocket")
    }
    assert emitted | set(SYSTEM_AMI_TYPES.values()) <= api


def test_time_sliced_group_labels_its_config_and_tags_the_shared_gpu_count():
    cfg = eks_config({"sharing": {"replicas": 4}}, top={"gpu-infra:gpuOperator": {"enabled": True}})
    (g,) = plan_of(cfg).groups
    assert g.labels["nvidia.com/device-plugin.config"] == "time-slicing-4"
    prefix = "k8s.io/cluster-autoscaler/node-template/"
    assert g.asg_tags[prefix + "resources/nvidia.com/gpu"] == "4"
    assert g.asg_tags[prefix + "label/nvidia.com/device-plugin.config"] == "time-slicing-4"


def test_mig_mixed_group_tags_the_mig_resource_for_scale_from_zero():
    cfg = eks_config(
        {"machineType": "p4d.24xlarge", "mig": {"strategy": "mixed", "config": "all-1g.5gb"}},
        top={"gpu-infra:gpuOperator": {"enabled": True}},
    )
    (g,) = plan_of(cfg).groups
    prefix = "k8s.io/cluster-autoscaler/node-template/"
    assert g.labels["nvidia.com/mig.config"] == "all-1g.5gb"
    assert g.asg_tags[prefix + "resources/nvidia.com/mig-1g.5gb"] == "56"
    assert g.asg_tags[prefix + "resources/nvidia.com/gpu"] == "0"
