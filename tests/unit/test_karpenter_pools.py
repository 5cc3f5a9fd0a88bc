"""Karpenter GPU pools: each pool is one EC2NodeClass and one NodePool that the pinned v1.14.1 CRDs
admit, carrying the node groups' labels, taints, AMI family, disk, IMDSv2 and GPU isolation;
keys without a Karpenter meaning are refused; the proof, cost and quota demand cover the pools."""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

import pytest

from infra.core.catalog.vendored import DATA_DIR
from infra.core.config.stack import load_stack_file, parse
from infra.core.eks.bootstrap import TOOLKIT_ISOLATION
from infra.core.eks.groups import EksGroupPlan
from infra.core.eks.karpenter import crds, nodes
from infra.core.eks.karpenter import pools as kp
from infra.core.eks.karpenter.names import discovery_tag
from infra.core.errors import ConfigErrors
from infra.core.labels import EKS_ACCELERATOR_LABEL, GPU_PRESENT_LABEL, POOL_LABEL
from infra.core.plan import Plan, build_plan
from infra.core.scheduling.proof import pool_nodes, prove

STACK = Path(__file__).resolve().parents[2] / "stacks" / "Pulumi.eks-karpenter.yaml"
BASE: dict[str, Any] = {
    "aws:region": "us-west-2",
    "gpu-infra:platform": "eks",
    "gpu-infra:cluster": {
        "name": "ml",
        "location": "us-west-2",
        "kubernetesVersion": "1.35",
        "autoscaler": {"kind": "karpenter"},
    },
    "gpu-infra:gpuPools": [{"name": "a10g", "machineType": "g5.2xlarge", "maxNodes": 4}],
    "gpu-infra:gpuOperator": {"enabled": False},
}


@functools.cache
def sample() -> Plan:
    name, raw = load_stack_file(STACK)
    return build_plan(parse(raw, name))


def plan(**pool: Any) -> Plan:
    cfg = copy.deepcopy(BASE)
    cfg["gpu-infra:gpuPools"][0].update(pool)
    return build_plan(parse(cfg, "test"))


def groups(p: Plan) -> tuple[EksGroupPlan, ...]:
    assert p.platform.name == "eks"
    return p.platform.plan.groups


def karp(g: EksGroupPlan) -> kp.KarpenterPoolPlan:
    assert g.karpenter is not None
    return g.karpenter


def refusal(**pool: Any) -> str:
    with pytest.raises(ConfigErrors) as e:
        plan(**pool)
    return str(e.value)


# --- names ----------------------------------------------------------------------------------


def test_discovery_tag_is_karpenter_sh_discovery_with_the_cluster_name():
    assert discovery_tag("ml") == ("karpenter.sh/discovery", "ml")


# --- the sample stack -------------------------------------------------------------------------


def test_sample_plans_one_nodeclass_and_nodepool_per_gpu_pool_and_no_gpu_node_group():
    gs = groups(sample())
    assert [karp(g).name for g in gs] == [p.name for p in sample().config.pools]
    assert all(g.node_groups == () and g.asg_tags == {} for g in gs)


def test_every_sample_nodepool_and_ec2nodeclass_validates_against_the_pinned_crd():
    for g in groups(sample()):
        assert crds.validate(karp(g).node_class) == []
        assert crds.validate(karp(g).node_pool) == []


def test_a_corrupted_manifest_fails_the_pinned_crd():
    np = copy.deepcopy(dict(karp(groups(sample())[0]).node_pool))
    np["spec"]["disruption"]["consolidationPolicy"] = "WhenIdle"  # not in the enum
    np["spec"]["weight"] = 101  # maximum 100
    del np["spec"]["template"]["spec"]["nodeClassRef"]  # required
    errors = crds.validate(np)
    assert any("consolidationPolicy" in e for e in errors)
    assert any("weight" in e for e in errors)
    assert any("nodeClassRef" in e for e in errors)


def test_vendored_crds_name_their_source_and_the_pinned_version():
    for kind in ("NodePool", "EC2NodeClass"):
        v = crds.vendored(kind)
        assert v["version"] == crds.KARPENTER_VERSION
        assert v["source"].startswith(
            f"https://github.com/aws/karpenter-provider-aws/blob/{crds.KARPENTER_VERSION}/"
        )


# --- CEL rules encoded as checks ----------------------------------------------------------------


def test_cel_label_domain_karpenter_sh_is_restricted_except_capacity_type():
    assert crds.label_problem("karpenter.sh/capacity-type") is None
    assert crds.label_problem("karpenter.sh/foo") == 'label domain "karpenter.sh" is restricted'
    assert (
        crds.label_problem("karpenter.sh/nodepool") == 'label "karpenter.sh/nodepool" is restricted'
    )


def test_cel_label_domain_karpenter_k8s_aws_allows_only_its_well_known_labels():
    assert crds.label_problem(kp.GPU_NAME_LABEL) is None
    assert crds.label_problem(kp.GPU_COUNT_LABEL) is None
    assert crds.label_problem("karpenter.k8s.aws/mine") is not None


def test_cel_kubernetes_io_hostname_is_restricted():
    assert crds.label_problem("kubernetes.io/hostname") is not None


def test_cel_requirement_in_must_have_values():
    np = copy.deepcopy(dict(karp(groups(sample())[0]).node_pool))
    np["spec"]["template"]["spec"]["requirements"][0]["values"] = []
    assert any("must have a value defined" in e for e in crds.validate(np))


def test_cel_budget_schedule_must_come_with_duration():
    np = copy.deepcopy(dict(karp(groups(sample())[0]).node_pool))
    np["spec"]["disruption"]["budgets"] = [{"nodes": "1", "schedule": "@daily"}]
    assert any("'schedule' must be set with 'duration'" in e for e in crds.validate(np))


def test_cel_alias_must_be_family_at_version_of_a_known_family():
    nc = copy.deepcopy(dict(karp(groups(sample())[0]).node_class))
    nc["spec"]["amiSelectorTerms"] = [{"alias": "al2023"}]
    assert any("family@version" in e for e in crds.validate(nc))
    nc["spec"]["amiSelectorTerms"] = [{"alias": "ubuntu@v1"}]
    assert any("family is not supported" in e for e in crds.validate(nc))


def test_cel_exactly_one_of_role_and_instance_profile():
    nc = copy.deepcopy(dict(karp(groups(sample())[0]).node_class))
    nc["spec"]["instanceProfile"] = "x"
    assert any("exactly one of ['role', 'instanceProfile']" in e for e in crds.validate(nc))


def test_cel_restricted_nodeclass_tags_are_refused():
    nc = copy.deepcopy(dict(karp(groups(sample())[0]).node_class))
    nc["spec"]["tags"] = {"kubernetes.io/cluster/ml": "owned"}
    assert any("restricted tag" in e for e in crds.validate(nc))


# --- EC2NodeClass -----------------------------------------------------------------------------


def test_ami_alias_is_pinned_to_a_version_never_latest():
    aliases = kp.ami_aliases(DATA_DIR)
    assert set(aliases) == {"al2023", "bottlerocket"}
    assert all(v.startswith("v") and v != "latest" for v in aliases.values())
    spec = karp(groups(plan())[0]).node_class["spec"]
    assert spec["amiSelectorTerms"] == [{"alias": f"al2023@{aliases['al2023']}"}]


def test_bottlerocket_pool_is_refused_while_no_release_notes_show_its_alias_ships_the_minor():
    # The pinned bottlerocket alias has no row in ami_alias_minors.csv: no minor is on file.
    with pytest.raises(ConfigErrors) as e:
        plan(amiFamily="bottlerocket")
    (issue,) = e.value.issues
    assert issue.path == "gpuPools[0].amiFamily"
    assert "ships NVIDIA images for no Kubernetes minor on file" in issue.reason


def test_al2023_alias_covers_the_minors_its_release_notes_list():
    # awslabs/amazon-eks-ami CHANGELOG.md "AMI Release v20260714": NVIDIA AMIs for 1.30 - 1.36.
    assert kp.alias_minors("al2023", "v20260714", DATA_DIR) == (30, 36)
    assert kp.alias_problem("al2023", "1.36", DATA_DIR) is None
    assert "not 1.29" in (kp.alias_problem("al2023", "1.29", DATA_DIR) or "")


def test_bottlerocket_pool_sizes_its_data_volume_and_keeps_the_os_volume_encrypted(monkeypatch):
    # As if a release's notes listed the pinned alias for the stack's minor.
    monkeypatch.setattr(kp, "alias_problem", lambda family, version, data_dir: None)
    monkeypatch.setattr("infra.core.eks.karpenter.plan.alias_problem", lambda f, v, d: None)
    g = groups(plan(amiFamily="bottlerocket", diskSizeGb=200))[0]
    spec = karp(g).node_class["spec"]
    assert spec["amiSelectorTerms"][0]["alias"].startswith("bottlerocket@v")
    devs = {b["deviceName"]: b["ebs"] for b in spec["blockDeviceMappings"]}
    assert devs["/dev/xvdb"]["volumeSize"] == "200Gi"
    assert devs["/dev/xvda"]["volumeSize"] == kp.BOTTLEROCKET_OS_VOLUME
    assert all(e["encrypted"] and e["volumeType"] == "gp3" for e in devs.values())
    assert "userData" not in spec  # Bottlerocket: no nvidia-ctk script


def test_imdsv2_required_with_one_hop_as_the_node_groups():
    md = karp(groups(plan())[0]).node_class["spec"]["metadataOptions"]
    assert md["httpTokens"] == "required" and md["httpPutResponseHopLimit"] == 1


def test_al2023_user_data_carries_the_gpu_isolation_of_the_node_groups():
    user_data = karp(groups(plan())[0]).node_class["spec"]["userData"]
    for key, value in TOOLKIT_ISOLATION:
        assert f"--set {key}={value}" in user_data


def test_subnets_and_security_groups_are_selected_by_the_discovery_tag():
    spec = karp(groups(plan())[0]).node_class["spec"]
    key, value = discovery_tag("ml")
    assert spec["subnetSelectorTerms"] == [{"tags": {key: value}}]
    assert spec["securityGroupSelectorTerms"] == [{"tags": {key: value}}]


def test_node_role_is_filled_in_by_the_component():
    pool = karp(groups(plan())[0])
    assert pool.node_class["spec"]["role"] == kp.NODE_ROLE_PLACEHOLDER
    assert pool.node_class_with_role("ml-nodes-abc")["spec"]["role"] == "ml-nodes-abc"


def test_capacity_reservation_id_maps_to_a_reservation_term_and_reserved_capacity():
    g = groups(plan(capacityReservation={"id": "cr-0123456789abcdef0"}, zones=["usw2-az1"]))[0]
    pool = karp(g)
    assert pool.node_class["spec"]["capacityReservationSelectorTerms"] == [
        {"id": "cr-0123456789abcdef0"}
    ]
    assert kp.capacity_types(g) == ("reserved", "on-demand")
    assert crds.validate(pool.node_class) == []


# --- NodePool ---------------------------------------------------------------------------------


def _reqs(g: EksGroupPlan) -> dict[str, list[str]]:
    spec = karp(g).node_pool["spec"]["template"]["spec"]
    return {r["key"]: r["values"] for r in spec["requirements"]}


def test_requirements_name_the_types_capacity_zone_ids_arch_and_gpu():
    g = groups(plan(zones=["usw2-az1", "usw2-az2"]))[0]
    r = _reqs(g)
    assert r[kp.INSTANCE_TYPE_LABEL] == ["g5.2xlarge"]
    assert r[kp.CAPACITY_TYPE_LABEL] == ["on-demand"]
    assert r[kp.ZONE_ID_LABEL] == ["usw2-az1", "usw2-az2"]
    assert r[kp.ARCH_LABEL] == ["amd64"]
    assert r[kp.GPU_NAME_LABEL] == ["a10g"] and r[kp.GPU_COUNT_LABEL] == ["1"]


def test_gpu_name_is_lower_kebab_case_as_karpenter_labels_it():
    assert kp.gpu_name("A10G") == "a10g"
    assert kp.gpu_name("L40S") == "l40s"
    assert kp.gpu_name("RTX PRO 6000") == "rtx-pro-6000"


def test_nodepool_carries_the_node_group_labels_and_gpu_taint():
    g = groups(plan(labels={"team": "ml"}))[0]
    template = karp(g).node_pool["spec"]["template"]
    assert template["metadata"]["labels"] == dict(g.labels)
    assert template["metadata"]["labels"][POOL_LABEL] == "a10g"
    assert GPU_PRESENT_LABEL in g.labels and EKS_ACCELERATOR_LABEL in g.labels
    assert {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"} in template["spec"][
        "taints"
    ]


def test_operator_sharing_is_refused_as_karpenter_counts_physical_gpus_not_slots():
    # types.go nvidiaGPUs: a time-sliced node's 4 slots per GPU are 1 to Karpenter's simulation.
    cfg = copy.deepcopy(BASE)
    cfg["gpu-infra:gpuOperator"] = {"enabled": True}
    cfg["gpu-infra:gpuPools"][0]["sharing"] = {"replicas": 4}
    with pytest.raises(ConfigErrors) as e:
        build_plan(parse(cfg, "test"))
    assert [i.path for i in e.value.issues] == ["gpuPools[0].sharing"]


def test_limits_are_max_nodes_plus_the_drift_budget_times_gpus_cpus_and_memory_per_node():
    # nodepools.md "spec.limits": limits hold during drift replacement, which launches first.
    spec = karp(groups(plan(machineType="g5.12xlarge", maxNodes=3))[0]).node_pool["spec"]
    assert kp.DRIFT_BUDGET_NODES == 1
    assert spec["limits"] == {"cpu": "192", "memory": "768Gi", "nvidia.com/gpu": "16", "nodes": "4"}


def test_limits_nodes_caps_the_node_count_of_scaling_and_drift_replacement():
    # nodepools.md "spec.limits": "The limits.nodes field constrains the maximum number of nodes
    # during scaling operations or drift replacement"; the pinned CRD accepts it.
    g = groups(plan(maxNodes=3))[0]
    assert karp(g).node_pool["spec"]["limits"]["nodes"] == str(3 + kp.DRIFT_BUDGET_NODES)
    assert crds.validate(karp(g).node_pool) == []
    assert kp.nodes_within({**kp.limits(9, 1, 8, 15.3), "nodes": "2"}, 1, 8, 15.3) == 2


def test_disruption_consolidates_only_empty_nodes_drift_one_at_a_time_and_never_expires():
    spec = karp(groups(plan())[0]).node_pool["spec"]
    d = spec["disruption"]
    assert d["consolidationPolicy"] == "WhenEmpty"
    assert d["consolidateAfter"] == "10m"  # cluster.autoscaler.scaleDownUnneededTime
    assert {"nodes": "1", "reasons": ["Drifted"]} in d["budgets"]
    assert spec["template"]["spec"]["expireAfter"] == "Never"


def test_spot_nodepools_weigh_more_than_on_demand_ones():
    spot = karp(groups(plan(spot=True, machineType=["g5.2xlarge"]))[0]).node_pool
    on_demand = karp(groups(plan())[0]).node_pool
    assert spot["spec"]["weight"] > on_demand["spec"]["weight"]
    assert _reqs(groups(plan(spot=True, machineType=["g5.2xlarge"]))[0])[
        kp.CAPACITY_TYPE_LABEL
    ] == ["spot"]


# --- refusals ---------------------------------------------------------------------------------


def test_min_nodes_above_zero_is_refused_naming_warm_and_node_groups():
    text = refusal(minNodes=1)
    assert "gpuPools[0].minNodes" in text and "gpuPools[].warm" in text
    assert "cluster-autoscaler" in text


def test_group_per_zone_and_hpc_are_refused_for_karpenter_pools():
    assert "gpuPools[0].groupPerZone" in refusal(groupPerZone=True)
    assert "gpuPools[0].hpc" in refusal(hpc=True, machineType="p4d.24xlarge", zones=["usw2-az2"])


def test_mixed_gpu_shapes_are_refused_with_the_karpenter_reason_sizes_are_not():
    # g5.2xlarge: 1 A10G; g5.12xlarge: 4 A10G (aws_gpu_instances.csv)
    text = refusal(spot=True, machineType=["g5.2xlarge", "g5.12xlarge"])
    assert "gpuPools[0].machineType[1]" in text and "GPUs 4 vs 1" in text
    assert "sizes may differ in vCPUs and memory" in text
    assert "cluster-autoscaler sizes" not in text
    (g,) = groups(plan(spot=True, machineType=["g5.4xlarge", "g5.2xlarge"]))
    assert g.instance_types == ("g5.2xlarge", "g5.4xlarge")


def test_cluster_autoscaler_kind_still_plans_node_groups():
    cfg = copy.deepcopy(BASE)
    cfg["gpu-infra:cluster"]["autoscaler"] = {"kind": "cluster-autoscaler"}
    g = groups(build_plan(parse(cfg, "test")))[0]
    assert g.karpenter is None and g.node_groups


# --- scheduling proof, cost, quota --------------------------------------------------------------


def test_a_nodepool_of_several_sizes_runs_and_guarantees_the_smallest_types_own_node():
    # Karpenter's node for g5.2xlarge (aws/karpenter-provider-aws types.go NewInstanceType):
    # 32 GiB less ceil(7.5 %) VM overhead = 30310 MiB, less kube-reserved 255 + 11 x 58 ENI-limited
    # pods (4 ENIs x 14 IPs + 2) = 893 MiB, less the 100Mi eviction threshold: 29317 MiB. The
    # bigger type's reserve never meets the smaller type's memory.
    p = plan(spot=True, machineType=["g5.4xlarge", "g5.2xlarge"])
    pn = p.platform.pool_nodes(False, {})["a10g"]
    (small,) = [n for n in pn.launchable if n.labels[kp.INSTANCE_TYPE_LABEL] == "g5.2xlarge"]
    assert pn.running.allocatable["memory"] == small.allocatable["memory"] == 29317 * 2**20
    assert p.platform.node_memory_mib(p.pools[0]) == 29317


def test_proof_checks_a_node_per_instance_type_the_nodepool_may_launch():
    pn = pool_nodes(sample())
    for g in groups(sample()):
        assert [n.labels[kp.INSTANCE_TYPE_LABEL] for n in pn[g.name].launchable] == list(
            g.instance_types
        )
    assert prove(sample()) == []


def test_proof_fails_when_the_nodepool_loses_the_pool_label():
    pn = dict(pool_nodes(sample()))
    name = groups(sample())[0].name
    broken = [
        nodes.Node(
            n.name, {k: v for k, v in n.labels.items() if k != POOL_LABEL}, n.taints, n.allocatable
        )
        for n in pn[name].launchable
    ]
    pn[name] = type(pn[name])(pn[name].running, None, tuple(broken))
    assert any(POOL_LABEL in f for f in prove(sample(), pn))


def test_karpenter_memory_is_less_vm_overhead_eni_kube_reserved_and_eviction():
    # g6.2xlarge, 32 GiB: 32768 - ceil(7.5%) 2458 - (11 x (4 x 14 + 2) + 255) 893 - 100 = 29317
    assert nodes.karpenter_memory_mib("g6.2xlarge", 32, DATA_DIR) == 29317


def test_quota_demand_adds_the_drift_surge_of_each_nodepool():
    from infra.core.eks.capacity import KARPENTER_SURGE_RULE
    from infra.core.errors import Issues

    p = sample()
    assert p.catalog is not None
    sizing = {s.name: s for s in p.platform.quota_sizings(p.catalog, Issues())}
    for g in groups(p):
        assert sizing[g.name].max_nodes == g.max_size
        assert sizing[g.name].surge == kp.DRIFT_BUDGET_NODES
        assert sizing[g.name].surge_rule == KARPENTER_SURGE_RULE


def test_nodes_within_limits_is_max_nodes_plus_drift_surge_and_cost_and_quota_count_it():
    for g in groups(sample()):
        h = g.hints
        spec = karp(g).node_pool["spec"]
        within = kp.nodes_within(spec["limits"], h.gpus_per_node, h.vcpus, h.memory_gib)
        assert within == g.max_size + kp.DRIFT_BUDGET_NODES == karp(g).limit_nodes
        assert karp(g).max_nodes == g.max_size
    assert kp.nodes_within(kp.limits(4, 1, 8, 15.3), 1, 8, 15.3) == 4
    assert kp.nodes_within(kp.limits(4, 1, 8, 15.3), 2, 8, 15.3) == 2  # GPUs bind first


def test_cost_at_maximum_counts_the_nodes_the_limits_admit():
    from infra.core.cost import estimate

    cost = estimate(sample())
    by_name = {p.name: p for p in cost.pools}
    for g in groups(sample()):
        assert by_name[g.name].max_nodes == karp(g).limit_nodes and by_name[g.name].min_nodes == 0


def test_a_spot_karpenter_pool_needs_the_spot_service_linked_role_and_node_groups_do_not():
    assert kp.needs_spot_role(groups(plan(spot=True, machineType=["g5.2xlarge"])))
    assert not kp.needs_spot_role(groups(plan()))
    cfg = copy.deepcopy(BASE)
    cfg["gpu-infra:cluster"]["autoscaler"] = {"kind": "cluster-autoscaler"}
    cfg["gpu-infra:gpuPools"][0]["spot"] = True
    assert not kp.needs_spot_role(groups(build_plan(parse(cfg, "test"))))


def test_nodepool_termination_grace_period_defaults_to_48h_and_follows_the_config():
    # nodepools.md "spec.template.spec.terminationGracePeriod": without it a drain blocked by a
    # PDB or karpenter.sh/do-not-disrupt waits forever; 48h is that page's NodePool example.
    spec = karp(groups(plan())[0]).node_pool["spec"]["template"]["spec"]
    assert spec["terminationGracePeriod"] == "48h"
    cfg = copy.deepcopy(BASE)
    cfg["gpu-infra:cluster"]["autoscaler"]["terminationGracePeriod"] = "6h30m"
    np = karp(groups(build_plan(parse(cfg, "test")))[0]).node_pool
    assert np["spec"]["template"]["spec"]["terminationGracePeriod"] == "6h30m"
    assert crds.validate(np) == []


def test_termination_grace_period_takes_the_nodepool_crd_pattern_and_only_with_karpenter():
    cfg = copy.deepcopy(BASE)
    cfg["gpu-infra:cluster"]["autoscaler"]["terminationGracePeriod"] = "2d"
    with pytest.raises(ConfigErrors) as e:
        build_plan(parse(cfg, "test"))
    assert "cluster.autoscaler.terminationGracePeriod" in str(e.value)
    cfg["gpu-infra:cluster"]["autoscaler"] = {
        "kind": "cluster-autoscaler",
        "terminationGracePeriod": "1h",
    }
    with pytest.raises(ConfigErrors) as e:
        build_plan(parse(cfg, "test"))
    assert "cluster.autoscaler.terminationGracePeriod" in str(e.value)
    assert "Karpenter NodePool setting" in str(e.value)


def test_plan_notes_the_spot_service_linked_role_only_for_karpenter_spot_pools():
    # troubleshooting.md "Missing Service Linked Role": the controller cannot create it.
    (note,) = kp.spot_role_notes(groups(plan(spot=True, machineType=["g5.2xlarge"])))
    assert kp.SPOT_SERVICE_LINKED_ROLE in note and "create-service-linked-role" in note
    assert kp.spot_role_notes(groups(plan())) == ()


# --- Spot with on-demand fallback, several sizes of one GPU shape, in one NodePool -------------
# Karpenter scheduling docs (aws/karpenter-provider-aws website/content/en/docs/concepts/
# scheduling.md "Capacity Type"): a NodePool allowing spot and on-demand prioritises Spot and falls
# back to on-demand. aws_gpu_instances.csv (us-west-2): g6.xlarge 4 vCPUs 16 GiB $0.8048,
# g6.2xlarge 8 vCPUs 32 GiB $0.9776; lowest Spot price of the two over the AZs: g6.2xlarge
# usw2-az1 $0.3932.
MIXED = {"machineType": ["g6.2xlarge", "g6.xlarge"], "capacityType": ["spot", "on-demand"]}


def _requirement(g: EksGroupPlan, key: str) -> list[str]:
    reqs = karp(g).node_pool["spec"]["template"]["spec"]["requirements"]
    (req,) = [r for r in reqs if r["key"] == key]
    return req["values"]


def test_capacity_type_spot_and_on_demand_plans_one_node_pool_allowing_both():
    (g,) = groups(plan(**MIXED))
    assert _requirement(g, kp.CAPACITY_TYPE_LABEL) == ["spot", "on-demand"]
    assert karp(g).node_pool["spec"]["weight"] == kp.SPOT_WEIGHT  # tried before on-demand pools


def test_several_sizes_of_one_gpu_shape_smallest_first_and_limits_admit_max_nodes_of_the_largest():
    (g,) = groups(plan(**MIXED))
    assert _requirement(g, kp.INSTANCE_TYPE_LABEL) == ["g6.xlarge", "g6.2xlarge"]
    assert g.hints.vcpus == 4  # the proof and the workloads are sized from the smallest
    pool_limits = karp(g).node_pool["spec"]["limits"]
    # maxNodes 4 plus the drift replacement, each up to g6.2xlarge's 8 vCPUs and 32 GiB
    assert (pool_limits["cpu"], pool_limits["memory"], pool_limits["nodes"]) == ("40", "160Gi", "5")
    assert karp(g).max_nodes == 4


def test_a_mixed_pool_is_priced_at_the_on_demand_ceiling_with_the_spot_floor_named():
    from infra.core.cost import estimate

    (pool,) = estimate(plan(**MIXED)).pools
    assert pool.per_node == pytest.approx(0.9776) and not pool.spot
    assert "on-demand ceiling" in pool.note and "Spot floor $0.3932" in pool.note


def test_a_mixed_pool_counts_against_both_quota_kinds_at_the_largest_size():
    from infra.core.catalog.vendored import Catalog
    from quota.demand import stack_contributions

    p = plan(**MIXED)
    rows = {r.key.quota: r.needed for r in stack_contributions(p.config, Catalog.load(), p).rows()}
    # 4 nodes + 1 drift replacement x 8 vCPUs, on the on-demand G/VT and the Spot G/VT quota
    assert rows["L-DB2E81BA"] == rows["L-3819A6DF"] == 40


def test_a_mixed_pool_is_proven_schedulable_like_the_others():
    cfg = copy.deepcopy(BASE)
    cfg["gpu-infra:gpuPools"][0].update(MIXED)
    cfg["gpu-infra:gpuOperator"] = {"enabled": True}
    p = build_plan(parse(cfg, "test"))
    assert prove(p) == []
    # a node per instance type the NodePool may launch, both sizes
    launchable = pool_nodes(p)["a10g"].launchable
    assert [n.labels[kp.INSTANCE_TYPE_LABEL] for n in launchable] == ["g6.xlarge", "g6.2xlarge"]


def test_both_capacity_types_on_a_node_group_or_a_different_gpu_shape_are_refused():
    from tests.unit.test_eks import eks_config, errors_of

    errs = errors_of(eks_config({"capacityType": ["spot", "on-demand"]}))
    assert "a node group has one capacity type" in errs["gpuPools[0].capacityType"]
    with pytest.raises(ConfigErrors) as e:
        plan(machineType=["g6.xlarge", "g5.xlarge"], capacityType=["spot", "on-demand"])
    assert "GPU model" in str(e.value) and "gpuPools[0].machineType[1]" in str(e.value)
