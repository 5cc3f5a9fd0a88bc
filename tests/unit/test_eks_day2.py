"""EKS over a stack's life: updates EKS accepts, scale from zero that scales, every NVIDIA type,
large-GPU groups, reservations, spot fallback, the network and add-ons a cluster needs."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml

from infra.core.catalog.vendored import DATA_DIR
from infra.core.config.base import SharingSpec
from infra.core.eks.access import managed_policy_arn, workload_trust_policy
from infra.core.eks.addons import plan_addons
from infra.core.eks.device_plugin import plan_device_plugin
from infra.core.eks.lifecycle import desired_size
from infra.core.labels import EKS_ACCELERATOR_LABEL
from infra.core.pools import Taint
from tests.unit.test_eks import eks_config, errors_of, plan_of

PREFIX = "k8s.io/cluster-autoscaler/node-template/"


def gpu_pool(**kw: Any) -> dict[str, Any]:
    return {"name": "gpu", "maxNodes": 4, **kw}


def pools(*specs: dict[str, Any], region: str = "us-west-2", **cluster: Any) -> dict[str, Any]:
    cfg = eks_config(region=region, cluster=cluster or None)
    cfg["gpu-infra:gpuPools"] = list(specs)
    return cfg


# --- 1. updates that succeed ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("current", "lo", "hi", "sent"),
    [
        (4, 8, 16, 8),  # terraform-aws-eks#3306: min raised above the live desired size
        (1, 3, 20, 3),
        (7, 0, 20, 7),  # the autoscaler's value is kept when valid
        (12, 0, 5, 5),  # max lowered below it: "desiredSize can't be greater than maxSize"
        (None, 2, 5, 2),  # a new group starts at its minimum
    ],
)
def test_desired_size_sent_is_the_live_value_clamped_into_min_max(current, lo, hi, sent):
    assert desired_size(current, lo, hi) == sent


def test_gpu_groups_have_no_fixed_node_group_name():
    (g,) = plan_of(eks_config()).groups
    (ng,) = g.node_groups
    assert ng.name != g.name and ng.name.startswith("gpu-t4-") and len(ng.name) <= 63


@pytest.mark.parametrize(
    "change",
    [
        {"machineType": "g4dn.2xlarge"},  # instanceTypes
        {"amiFamily": "bottlerocket"},  # amiType
        {"zones": ["usw2-az1"]},  # subnets
    ],
)
def test_a_change_eks_cannot_apply_in_place_renames_the_node_group(change):
    (before,) = plan_of(eks_config()).groups
    (after,) = plan_of(eks_config(change)).groups
    assert before.node_groups[0].name != after.node_groups[0].name


def test_spot_is_a_new_node_group_name_too():
    base = plan_of(eks_config({"machineType": ["g4dn.xlarge"]})).groups[0]
    spot = plan_of(eks_config({"machineType": ["g4dn.xlarge"], "spot": True})).groups[0]
    assert base.node_groups[0].name != spot.node_groups[0].name


@pytest.mark.parametrize("change", [{"minNodes": 2}, {"maxNodes": 9}, {"labels": {"a": "b"}}])
def test_changes_eks_updates_in_place_keep_the_node_group_name(change):
    (before,) = plan_of(eks_config()).groups
    (after,) = plan_of(eks_config(change)).groups
    assert before.node_groups[0].name == after.node_groups[0].name


def test_group_az_list_and_update_config_are_plain_plan_fields():
    (g,) = plan_of(eks_config()).groups
    assert g.az_ids == ("usw2-az1", "usw2-az2", "usw2-az3")
    assert g.node_groups[0].az_ids == g.az_ids and g.update_max_unavailable == 1


# --- 2. existing clusters: this stack's groups only ---------------------------------------------


def test_autoscaler_discovers_and_may_scale_only_groups_with_this_stacks_tag():
    p = plan_of(
        eks_config(
            cluster={"existing": True, "vpc": {"privateSubnets": {"usw2-az1": "subnet-0aaaaaaa"}}}
        )
    )
    assert p.autoscaler is not None and p.stack_tag == "gpu-infra/autoscaler/ml/test"
    assert p.stack_tag in p.autoscaler.values["autoDiscovery"]["tags"]
    (write,) = [s for s in p.autoscaler.iam_policy["Statement"] if s["Sid"] == "ScaleOwnAsgs"]
    assert write["Condition"] == {"StringEquals": {f"aws:ResourceTag/{p.stack_tag}": "owned"}}


def test_identity_defaults_to_irsa_and_pod_identity_adds_its_agent_add_on():
    assert plan_of(eks_config()).identity == "irsa"
    p = plan_of(eks_config(cluster={"autoscaler": {"identity": "pod-identity"}}))
    assert p.identity == "pod-identity" and "eks-pod-identity-agent" in [a.name for a in p.addons]


def test_pod_identity_with_a_cluster_autoscaler_too_old_for_it_is_rejected():
    cfg = eks_config(
        cluster={"kubernetesVersion": "1.29", "autoscaler": {"identity": "pod-identity"}}
    )
    assert "kubernetes/autoscaler#6461" in errors_of(cfg)["cluster.autoscaler.identity"]


# --- 3. GPU advertised on every GPU node -------------------------------------------------------


def test_without_the_operator_al2023_groups_get_the_nvidia_device_plugin():
    p = plan_of(eks_config())  # EKS_BASE has gpuOperator.enabled: false
    assert p.device_plugin is not None
    assert (p.device_plugin.chart, p.device_plugin.version) == ("nvidia-device-plugin", "0.18.2")
    terms = p.device_plugin.values["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]["nodeSelectorTerms"]
    assert terms == [
        {"matchExpressions": [{"key": "gpu-infra/pool", "operator": "In", "values": ["gpu-t4"]}]}
    ]


def test_bottlerocket_groups_need_no_device_plugin_chart_they_run_their_own():
    assert plan_of(eks_config({"amiFamily": "bottlerocket"})).device_plugin is None


def test_with_the_operator_no_separate_device_plugin_is_planned():
    assert (
        plan_of(eks_config(top={"gpu-infra:gpuOperator": {"enabled": True}})).device_plugin is None
    )


def test_device_plugin_tolerates_the_gpu_taint_and_every_pool_taint():
    p = plan_device_plugin(
        "gpu-infra/pool",
        ["a"],
        [Taint("nvidia.com/gpu", "true", "NoSchedule"), Taint("team", "ml", "NoExecute")],
        [],
        data_dir=DATA_DIR,
    )
    assert p is not None
    tols = p.values["tolerations"]
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in tols
    assert {"key": "team", "operator": "Equal", "value": "ml", "effect": "NoExecute"} in tols


def test_device_plugin_time_slicing_configs_use_the_operators_per_pool_keys():
    p = plan_device_plugin(
        "gpu-infra/pool", ["a"], [], [SharingSpec(replicas=4)], data_dir=DATA_DIR
    )
    assert p is not None
    cfg = p.values["config"]
    assert cfg["default"] == "default"
    (key,) = [k for k in cfg["map"] if k != "default"]
    sharing = yaml.safe_load(cfg["map"][key])["sharing"]["timeSlicing"]
    assert sharing["resources"] == [{"name": "nvidia.com/gpu", "replicas": 4}]


# --- 4. scale from zero that really scales -----------------------------------------------------


@pytest.mark.parametrize(
    ("disk", "family", "tag"),
    [
        (100, "al2023", "87Gi"),  # (100 - 2) x 0.9 - 1 = 87.2
        (20, "al2023", "15Gi"),  # (20 - 2) x 0.9 - 1 = 15.2
        (500, "al2023", "447Gi"),  # (500 - 2) x 0.9 - 1 = 447.2
        (100, "bottlerocket", "86Gi"),  # (100 - max(100/64 + 1, 2)) x 0.9 - 1 = 86.6
    ],
)
def test_ephemeral_storage_tag_is_the_filesystem_minus_the_kubelet_reserve(disk, family, tag):
    (g,) = plan_of(eks_config({"diskSizeGb": disk, "amiFamily": family})).groups
    assert g.asg_tags[PREFIX + "resources/ephemeral-storage"] == tag


def test_group_per_zone_makes_one_node_group_per_az_splitting_the_pool_totals():
    (g,) = plan_of(eks_config({"groupPerZone": True, "minNodes": 4, "maxNodes": 8})).groups
    assert [ng.az_ids for ng in g.node_groups] == [("usw2-az1",), ("usw2-az2",), ("usw2-az3",)]
    assert [(ng.min_size, ng.max_size) for ng in g.node_groups] == [(2, 3), (1, 3), (1, 2)]
    assert len({ng.name for ng in g.node_groups}) == 3


def test_group_per_zone_turns_balance_similar_node_groups_on():
    p = plan_of(eks_config({"groupPerZone": True}))
    assert p.autoscaler is not None
    assert p.autoscaler.values["extraArgs"]["balance-similar-node-groups"] == "true"
    off = plan_of(eks_config()).autoscaler
    assert off is not None and off.values["extraArgs"]["balance-similar-node-groups"] == "false"


def test_group_per_zone_with_fewer_max_nodes_than_azs_is_rejected():
    assert "gpuPools[0].maxNodes" in errors_of(eks_config({"groupPerZone": True, "maxNodes": 2}))


def test_mig_mixed_group_has_no_accelerator_label_so_ca_does_not_wait_for_gpus():
    # CA treats a node with the GPU label but no allocatable nvidia.com/gpu as unready.
    cfg = eks_config(
        {"machineType": "p4d.24xlarge", "mig": {"strategy": "mixed", "config": "all-1g.5gb"}},
        top={"gpu-infra:gpuOperator": {"enabled": True}},
    )
    (g,) = plan_of(cfg).groups
    assert g.asg_tags[PREFIX + "resources/nvidia.com/gpu"] == "0"
    assert EKS_ACCELERATOR_LABEL not in g.labels
    assert PREFIX + "label/" + EKS_ACCELERATOR_LABEL not in g.asg_tags


def test_renamed_time_slicing_tags_the_shared_resource_and_drops_the_accelerator_label():
    cfg = eks_config(
        # minNodes 1: the operator planner refuses renameByDefault at minNodes 0
        {"sharing": {"replicas": 4, "renameByDefault": True}, "minNodes": 1},
        top={"gpu-infra:gpuOperator": {"enabled": True}},
    )
    (g,) = plan_of(cfg).groups
    assert g.asg_tags[PREFIX + "resources/nvidia.com/gpu.shared"] == "4"
    assert g.asg_tags[PREFIX + "resources/nvidia.com/gpu"] == "0"
    assert EKS_ACCELERATOR_LABEL not in g.labels


def test_whole_gpu_groups_keep_the_accelerator_label():
    (g,) = plan_of(eks_config()).groups
    assert g.labels[EKS_ACCELERATOR_LABEL] == "nvidia-tesla-t4"


# --- 6. every NVIDIA instance type ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("itype", "model", "gpus"),
    [("p5en.48xlarge", "H200", 8), ("p6-b200.48xlarge", "B200", 8), ("p5e.48xlarge", "H200", 8)],
)
def test_current_large_gpu_types_plan_in_a_region_offering_them(itype, model, gpus):
    (g,) = plan_of(pools(gpu_pool(machineType=itype))).groups
    assert (g.hints.gpu_type, g.hints.gpus_per_node) == (model, gpus)
    assert g.ami_type == "AL2023_x86_64_NVIDIA"


def test_type_not_offered_in_the_region_says_so():
    reason = errors_of(pools(gpu_pool(machineType="p6-b200.48xlarge"), region="sa-east-1"))[
        "gpuPools[0].machineType"
    ]
    assert "is not offered in sa-east-1" in reason


def test_g3s_is_an_nvidia_gpu_without_an_eks_nvidia_ami():
    reason = errors_of(eks_config({"machineType": "g3s.xlarge"}))["gpuPools[0].machineType"]
    assert "has an NVIDIA GPU, but the EKS NVIDIA AMIs do not support the g3s family" in reason


def test_a_cpu_type_is_not_an_nvidia_gpu_type():
    reason = errors_of(eks_config({"machineType": "m5.xlarge"}))["gpuPools[0].machineType"]
    assert "is not an NVIDIA GPU instance type" in reason


def test_fractional_g6f_is_one_logical_gpu_and_says_its_share():
    (g,) = plan_of(eks_config({"machineType": "g6f.xlarge"})).groups
    assert g.hints.gpus_per_node == 1 and g.hints.gpu_model == "L4 (0.125 GPU share)"
    assert g.asg_tags[PREFIX + "resources/nvidia.com/gpu"] == "1"


def test_spot_types_must_also_match_memory():
    # g6e.xlarge and g6.xlarge: different GPU model; g5.2xlarge vs g6.2xlarge: same 8 vCPUs, 32 GiB
    errs = errors_of(eks_config({"machineType": ["g6.4xlarge", "gr6.4xlarge"], "spot": True}))
    assert "memory GiB 128.0 vs 64.0" in errs["gpuPools[0].machineType[1]"]


# --- 7. large-GPU groups -------------------------------------------------------------------------


def test_hpc_p5_plans_efa_interfaces_a_placement_group_one_az_and_local_nvme():
    (g,) = plan_of(pools(gpu_pool(machineType="p5.48xlarge", hpc=True))).groups
    assert g.efa_interfaces == 32 and g.placement_group and g.local_nvme
    assert len(g.az_ids) == 1 and len(g.node_groups) == 1
    # Ephemeral storage from the RAID0 of the 8 x 3.8 TB instance store (less the XFS log and
    # the md superblocks), not the 100 GiB EBS volume.
    assert g.asg_tags[PREFIX + "resources/ephemeral-storage"] == "25477Gi"


def test_hpc_on_a_type_without_efa_is_rejected():
    assert "gpuPools[0].hpc" in errors_of(eks_config({"machineType": "g4dn.xlarge", "hpc": True}))


def test_hpc_with_two_zones_is_rejected_a_placement_group_is_in_one_az():
    cfg = pools(gpu_pool(machineType="p5.48xlarge", hpc=True, zones=["usw2-az1", "usw2-az2"]))
    assert "one AZ" in errors_of(cfg)["gpuPools[0].zones"]


def test_capacity_block_targets_its_reservation():
    (g,) = plan_of(
        pools(
            gpu_pool(
                machineType="p5.48xlarge",
                capacityType="CAPACITY_BLOCK",
                capacityReservation={"id": "cr-0123456789abcdef0"},
                zones=["usw2-az2"],
            )
        )
    ).groups
    assert (
        g.capacity_type == "CAPACITY_BLOCK" and g.capacity_reservation_id == "cr-0123456789abcdef0"
    )
    assert g.az_ids == ("usw2-az2",)


def test_capacity_block_without_a_reservation_id_is_rejected():
    cfg = pools(gpu_pool(machineType="p5.48xlarge", capacityType="CAPACITY_BLOCK"))
    assert "gpuPools[0].capacityReservation" in errors_of(cfg)


def test_capacity_block_for_a_type_capacity_blocks_do_not_sell_is_rejected():
    cfg = pools(
        gpu_pool(
            machineType="g5.xlarge",
            capacityType="CAPACITY_BLOCK",
            capacityReservation={"id": "cr-0123456789abcdef0"},
            zones=["usw2-az1"],
        )
    )
    assert "Capacity Blocks are sold for" in errors_of(cfg)["gpuPools[0].capacityType"]


def test_a_reservation_id_needs_the_one_az_id_the_reservation_is_in():
    cfg = pools(
        gpu_pool(machineType="p5.48xlarge", capacityReservation={"id": "cr-0123456789abcdef0"})
    )
    assert "AZ ID of the reservation" in errors_of(cfg)["gpuPools[0].zones"]


def test_capacity_reservation_takes_an_id_or_a_preference_not_both():
    both = {"id": "cr-0123456789abcdef0", "preference": "open"}
    errs = errors_of(pools(gpu_pool(machineType="p5.48xlarge", capacityReservation=both)))
    assert "not both" in errs["gpuPools[0].capacityReservation"]


def test_open_reservation_preference_keeps_every_az():
    (g,) = plan_of(
        pools(gpu_pool(machineType="g5.xlarge", capacityReservation={"preference": "open"}))
    ).groups
    assert len(g.az_ids) == 3 and g.capacity_reservation_preference == "open"


def test_capacity_type_contradicting_spot_is_rejected():
    assert "gpuPools[0].capacityType" in errors_of(eks_config({"capacityType": "SPOT"}))


# --- 8. spot that falls back ---------------------------------------------------------------------


def test_priority_expander_ranks_spot_node_groups_above_on_demand():
    cfg = pools(
        gpu_pool(name="t4-spot", machineType=["g4dn.xlarge"], spot=True),
        gpu_pool(name="t4", machineType="g4dn.xlarge"),
        autoscaler={"expander": "priority"},
    )
    p = plan_of(cfg)
    assert p.autoscaler is not None
    prios = yaml.safe_load(p.autoscaler.values["expanderPriorities"])
    spot, od = p.groups[0].node_groups[0].name, p.groups[1].node_groups[0].name
    assert sorted(prios) == [1, 10, 20] and prios[1] == [".*"]
    uuid = "6cc0c5ad-5a23-2b53-7d3c-8b3e0c2a9f3b"
    assert [bool(re.fullmatch(r, f"eks-{spot}-{uuid}")) for r in (*prios[20], *prios[10])] == [
        True,
        False,
    ]
    assert [bool(re.fullmatch(r, f"eks-{od}-{uuid}")) for r in (*prios[20], *prios[10])] == [
        False,
        True,
    ]


def test_priority_expander_without_both_spot_and_on_demand_groups_is_rejected():
    cfg = eks_config(cluster={"autoscaler": {"expander": "priority"}})
    assert "cluster.autoscaler.expander" in errors_of(cfg)


# --- 5. network and add-ons --------------------------------------------------------------------


def test_new_vpc_has_a_public_subnet_in_every_az_at_least_two():
    net = plan_of(eks_config()).network
    assert net is not None and len(net.public_cidrs) >= 2
    assert set(net.public_cidrs) == set(net.subnet_cidrs)


def test_nat_gateways_single_by_default_or_one_per_az():
    single = plan_of(eks_config()).network
    per_az = plan_of(eks_config(cluster={"vpc": {"natGateways": "perAz"}})).network
    assert single is not None and per_az is not None
    assert len(single.nat_az_ids) == 1 and set(per_az.nat_az_ids) == set(per_az.az_ids)
    assert all(per_az.nat_for(az) == az for az in per_az.az_ids)


def test_nat_gateways_on_a_given_vpc_are_rejected():
    cfg = eks_config(
        cluster={
            "vpc": {
                "id": "vpc-0123456789abcdef0",
                "natGateways": "perAz",
                "privateSubnets": {"usw2-az1": "subnet-0aaaaaaa", "usw2-az2": "subnet-0bbbbbbb"},
            }
        }
    )
    assert "cluster.vpc.natGateways" in errors_of(cfg)


def test_new_vpc_gets_an_s3_gateway_endpoint():
    net = plan_of(eks_config()).network
    assert net is not None and net.s3_gateway_endpoint


def test_new_clusters_get_the_managed_add_ons_with_an_ebs_csi_role():
    addons = {a.name: a for a in plan_of(eks_config()).addons}
    assert set(addons) == {
        "vpc-cni",
        "kube-proxy",
        "coredns",
        "aws-ebs-csi-driver",
        "eks-node-monitoring-agent",  # the GPU health node auto repair acts on
    }
    ebs = addons["aws-ebs-csi-driver"]
    assert ebs.service_account == "ebs-csi-controller-sa"
    assert ebs.policy_arn == "arn:aws:iam::aws:policy/service-role/AmazonEBSCSIDriverPolicy"


def test_gpu_groups_have_node_auto_repair():
    (g,) = plan_of(eks_config()).groups
    assert g.node_repair


@pytest.mark.parametrize(("lo", "hi", "zones"), [(0, 20, 3), (5, 7, 2), (3, 3, 3), (1, 10, 4)])
def test_split_sizes_keeps_pool_totals_and_differs_by_at_most_one_first_azs_first(lo, hi, zones):
    from infra.core.eks.lifecycle import split_sizes

    sizes = split_sizes(lo, hi, zones)
    mins, maxs = [s[0] for s in sizes], [s[1] for s in sizes]
    assert (sum(mins), sum(maxs), len(sizes)) == (lo, hi, zones)
    assert max(mins) - min(mins) <= 1 and max(maxs) - min(maxs) <= 1
    assert mins == sorted(mins, reverse=True) and maxs == sorted(maxs, reverse=True)


def test_irsa_trust_is_scoped_to_exactly_one_service_account_and_the_sts_audience():
    policy = workload_trust_policy(
        "irsa", "kube-system", "cluster-autoscaler", "arn:aws:iam::1:oidc-provider/x", "oidc/x"
    )
    (st,) = policy["Statement"]
    assert st["Principal"] == {"Federated": "arn:aws:iam::1:oidc-provider/x"}
    assert st["Condition"]["StringEquals"] == {
        "oidc/x:sub": "system:serviceaccount:kube-system:cluster-autoscaler",
        "oidc/x:aud": "sts.amazonaws.com",
    }


def test_pod_identity_trust_allows_assume_role_and_tag_session_for_the_eks_pods_service():
    (st,) = workload_trust_policy("pod-identity", "kube-system", "ca")["Statement"]
    assert st["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    assert st["Action"] == ["sts:AssumeRole", "sts:TagSession"] and "Condition" not in st


def test_managed_policy_arns_carry_the_regions_partition():
    assert managed_policy_arn("aws-cn", "AmazonEKS_CNI_Policy") == (
        "arn:aws-cn:iam::aws:policy/AmazonEKS_CNI_Policy"
    )
    ebs = {a.name: a for a in plan_addons("aws-us-gov", False, "irsa", "1.35", DATA_DIR)}[
        "aws-ebs-csi-driver"
    ]
    assert ebs.policy_arn == "arn:aws-us-gov:iam::aws:policy/service-role/AmazonEBSCSIDriverPolicy"
