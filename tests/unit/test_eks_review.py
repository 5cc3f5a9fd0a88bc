"""Findings of the EKS review of the plan output, each a rule with its source beside the code."""

from __future__ import annotations

import shutil

import pytest
import yaml

from infra.core.catalog.build import aws_type_info, format_cards
from infra.core.catalog.vendored import DATA_DIR, Catalog, parse_cards
from infra.core.config.stack import parse
from infra.core.eks import autoscaler as ca
from infra.core.eks.device_plugin import plan_efa_device_plugin
from infra.core.eks.efa import NetworkInterface, efa_interfaces
from infra.core.eks.groups import EksNodeGroup
from infra.core.eks.lifecycle import live_name as core_live_name
from infra.core.eks.lifecycle import predecessor
from infra.core.eks.names import AUTONAME_SUFFIX, HELM_RELEASE_MAX, TAG_KEY_MAX, fit, fit_autonamed
from infra.core.eks.network import subnet_cidrs
from infra.core.labels import POOL_LABEL
from infra.core.plan import build_plan
from tests.unit.test_eks import errors_of, plan_of
from tests.unit.test_eks_day2 import PREFIX, gpu_pool, pools

# --- 1. EFA pods scale from zero: node-template resources for EFA and huge pages ----------------


def test_hpc_pool_template_advertises_efa_devices_and_efa_hugepages_for_scale_from_zero():
    (g,) = plan_of(pools(gpu_pool(machineType="p5.48xlarge", hpc=True))).groups
    assert g.asg_tags[PREFIX + "resources/vpc.amazonaws.com/efa"] == "32"
    # 5128 pre-allocated 2MiB pages (EKS node-efa): covers the example pod's 5120Mi request.
    assert g.asg_tags[PREFIX + "resources/hugepages-2Mi"] == "10256Mi"
    assert g.node_group_tags[PREFIX + "resources/vpc.amazonaws.com/efa"] == "32"


def test_non_hpc_pool_template_advertises_no_efa_resources():
    (g,) = plan_of(pools(gpu_pool(machineType="p5.48xlarge"))).groups
    assert not [k for k in g.asg_tags if "efa" in k or "hugepages" in k]


# --- 2. EFA layout per network card -------------------------------------------------------------


def test_efa_layout_p5_card0_efa_then_efa_only_at_device_0():
    nics = efa_interfaces(tuple(range(32)), 32)
    assert nics[0] == NetworkInterface(0, 0, "efa")
    assert nics[1:] == tuple(NetworkInterface(c, 0, "efa-only") for c in range(1, 32))


def test_efa_layout_p6_b300_card0_without_efa_is_a_plain_primary_interface():
    nics = efa_interfaces(tuple(range(1, 17)), 16)
    assert nics[0] == NetworkInterface(0, 0, "interface")
    assert [n.card for n in nics[1:]] == list(range(1, 17))
    assert {n.interface_type for n in nics[1:]} == {"efa-only"}


def test_p6_b300_hpc_plans_16_efa_and_no_efa_on_card_0():
    (g,) = plan_of(pools(gpu_pool(machineType="p6-b300.48xlarge", hpc=True))).groups
    assert g.network_interfaces[0].interface_type == "interface"
    assert g.efa_interfaces == 16 and len(g.network_interfaces) == 17
    assert g.asg_tags[PREFIX + "resources/vpc.amazonaws.com/efa"] == "16"


def test_catalog_efa_cards_come_from_network_cards_interface_types():
    card = {"InterfaceTypes": ["interface", "efa", "efa-only"]}
    item = {
        "InstanceType": "p6-b300.48xlarge",
        "GpuInfo": {"Gpus": [{"Manufacturer": "NVIDIA", "Name": "B300", "Count": 8}]},
        "NetworkInfo": {
            "EfaSupported": True,
            "EfaInfo": {"MaximumEfaInterfaces": 16},
            "NetworkCards": [{"NetworkCardIndex": 0, "InterfaceTypes": ["interface"]}]
            + [{**card, "NetworkCardIndex": i} for i in range(1, 17)],
        },
    }
    info = aws_type_info(item)
    assert info is not None and info.efa_cards == tuple(range(1, 17))
    assert format_cards(info.efa_cards) == "1-16" and parse_cards("1-16") == info.efa_cards
    assert parse_cards(format_cards((0, 2, 3))) == (0, 2, 3)


# --- 4. an existing cluster's own autoscaler keeps its names -------------------------------------


def test_existing_cluster_autoscaler_gets_per_stack_release_namespace_fullname_and_lease():
    cfg = pools(
        gpu_pool(machineType="g4dn.xlarge"),
        existing=True,
        vpc={"privateSubnets": {"usw2-az1": "subnet-0a1b2c3d4e5f60001"}},
    )
    cfg["gpu-infra:cluster"]["name"] = "shared"
    a = plan_of(cfg).autoscaler
    assert a is not None
    own = "cluster-autoscaler-test"  # stack "test"
    assert (a.release, a.namespace, a.service_account, a.create_namespace) == (
        own,
        own,
        own,
        True,
    )
    assert a.values["fullnameOverride"] == own
    assert a.values["rbac"]["serviceAccount"]["name"] == own
    # Its lease: the chart's default name in its own namespace (not kube-system's).
    assert ca.lease_of(a.values, a.namespace) == (own, "cluster-autoscaler")


@pytest.mark.parametrize("existing", [False, True])
def test_autoscaler_lease_is_one_the_pinned_charts_rbac_grants_get_update_and_create(existing):
    extra = {"existing": True, "vpc": {"privateSubnets": {"usw2-az1": "subnet-0a1b2c3d"}}}
    a = plan_of(
        pools(gpu_pool(machineType="g4dn.xlarge"), **(extra if existing else {}))
    ).autoscaler
    assert a is not None and a.version == ca.chart(DATA_DIR).version
    assert ca.lease_problem(a.values, ca.chart_rbac(DATA_DIR), ca.chart(DATA_DIR)) is None


def test_chart_rbac_facts_grant_lease_get_update_only_on_the_default_name():
    rules = ca.chart_rbac(DATA_DIR)
    assert rules, f"no vendored RBAC facts for chart {ca.chart(DATA_DIR).version}"
    lease = ("coordination.k8s.io", "leases")
    assert any(r.allows(*lease, "cluster-autoscaler", "update") for r in rules)
    assert not any(r.allows(*lease, "cluster-autoscaler-team-a", "update") for r in rules)


def test_a_renamed_lease_is_refused_by_the_charts_rbac_so_it_is_a_config_error():
    values = {"extraArgs": {"leader-elect-resource-name": "cluster-autoscaler-team-a"}}
    problem = ca.lease_problem(values, ca.chart_rbac(DATA_DIR), ca.chart(DATA_DIR))
    assert problem is not None and "get/update" in problem and "9.52.1" in problem


def test_existing_cluster_plan_says_what_a_pre_existing_autoscaler_does_with_its_groups():
    cfg = pools(
        gpu_pool(machineType="g4dn.xlarge"),
        existing=True,
        vpc={"privateSubnets": {"usw2-az1": "subnet-0a1b2c3d4e5f60001"}},
    )
    a = plan_of(cfg).autoscaler
    assert a is not None and len(a.notes) == 1
    assert "--node-group-auto-discovery" in a.notes[0] and "enabled: false" in a.notes[0]
    new = plan_of(pools(gpu_pool(machineType="g4dn.xlarge"))).autoscaler
    assert new is not None and new.notes == ()


def test_new_cluster_autoscaler_keeps_the_chart_defaults_in_kube_system():
    a = plan_of(pools(gpu_pool(machineType="g4dn.xlarge"))).autoscaler
    assert a is not None and (a.release, a.namespace) == ("cluster-autoscaler", "kube-system")
    assert "fullnameOverride" not in a.values


def test_stack_release_name_is_a_dns_label_of_at_most_63_characters():
    name = ca.stack_release_name("Team_A.prod/" + "x" * 80)
    assert len(name) <= 63 and name.startswith("cluster-autoscaler-team-a-prod")
    assert all(c.isalnum() or c == "-" for c in name) and not name.endswith("-")


# --- 5. node group names follow subnet IDs --------------------------------------------------------


def _given(subnet_az1: str) -> dict[str, object]:
    return pools(
        gpu_pool(machineType="g4dn.xlarge", zones=["usw2-az1"]),
        vpc={
            "id": "vpc-0a1b2c3d4e5f60001",
            "privateSubnets": {
                "usw2-az1": subnet_az1,
                "usw2-az2": "subnet-0a1b2c3d4e5f60002",
            },
        },
    )


def test_node_group_name_changes_with_its_subnet_ids_subnets_force_replacement():
    a = plan_of(_given("subnet-0a1b2c3d4e5f60001")).groups[0].node_groups[0].name
    b = plan_of(_given("subnet-0a1b2c3d4e5f6000f")).groups[0].node_groups[0].name
    assert a != b and a.startswith("gpu-") and b.startswith("gpu-")


# --- 6. subnet CIDRs keyed on the AZ ID's number -------------------------------------------------


def test_subnet_cidrs_are_keyed_on_the_az_number_so_a_new_az_shifts_none():
    before, pub_before = subnet_cidrs("10.0.0.0/16", ["use1-az1", "use1-az4"])
    after, pub_after = subnet_cidrs("10.0.0.0/16", ["use1-az1", "use1-az2", "use1-az4"])
    assert before["use1-az4"] == after["use1-az4"] == "10.0.48.0/20"
    assert pub_before["use1-az4"] == pub_after["use1-az4"] == "10.0.243.0/24"
    assert after["use1-az2"] == "10.0.16.0/20"


def test_subnet_cidrs_of_az1_to_az15_never_overlap():
    import ipaddress

    azs = [f"use1-az{n}" for n in range(1, 16)]
    private, public = subnet_cidrs("10.0.0.0/16", azs)
    nets = [ipaddress.ip_network(c) for c in [*private.values(), *public.values()]]
    assert all(not a.overlaps(b) for i, a in enumerate(nets) for b in nets[i + 1 :])


# --- 8. Capacity Block upgrades need desired size 0 ----------------------------------------------


def test_capacity_block_group_notes_that_upgrades_need_desired_size_0():
    block = gpu_pool(
        machineType="p5.48xlarge",
        capacityType="CAPACITY_BLOCK",
        capacityReservation={"id": "cr-0123456789abcdef0"},
        zones=["usw2-az2"],
    )
    (g,) = plan_of(pools(block)).groups
    assert any("desired size 0" in n for n in g.notes)
    (plain,) = plan_of(pools(gpu_pool(machineType="p5.48xlarge"))).groups
    assert plain.notes == ()


# --- 9. no new placement group for a reservation ----------------------------------------------------


def test_hpc_with_a_reservation_id_creates_no_placement_group_it_could_not_match():
    odcr = gpu_pool(
        machineType="p5en.48xlarge",
        hpc=True,
        zones=["usw2-az3"],
        capacityReservation={"id": "cr-0123456789abcdef0"},
    )
    (g,) = plan_of(pools(odcr)).groups
    assert not g.placement_group and g.efa_interfaces == 16
    (plain,) = plan_of(pools(gpu_pool(machineType="p5en.48xlarge", hpc=True))).groups
    assert plain.placement_group


# --- 10. the EFA chart selects nodes by supportedInstanceLabels ------------------------------------


def test_efa_device_plugin_selects_hpc_pools_by_supported_instance_labels_not_affinity():
    plan = plan_efa_device_plugin("gpu-infra/pool", ["b", "a"], [], data_dir=DATA_DIR)
    assert plan is not None and "affinity" not in plan.values
    assert plan.values["supportedInstanceLabels"] == {
        "keys": ["gpu-infra/pool"],
        "values": ["a", "b"],
    }


# --- 11. a replacement group starts from its predecessor's size ---------------------------------


def test_replacement_node_group_finds_its_single_predecessor_by_name_stem():
    names = ["gpu-t4-0a1b2c3d", "gpu-t4-usw2-az1-11112222", "other-33334444", "gpu-t4-x-55556666"]
    assert predecessor("gpu-t4-9f8e7d6c", names) == "gpu-t4-0a1b2c3d"
    assert predecessor("gpu-t4-usw2-az1-aaaabbbb", names) == "gpu-t4-usw2-az1-11112222"
    assert predecessor("gpu-t4-9f8e7d6c", [*names, "gpu-t4-deadbeef"]) is None  # ambiguous
    assert predecessor("gpu-a10g-12345678", names) is None


# --- 12. priority expander catch-all --------------------------------------------------------------


def test_priority_expander_has_a_lowest_catch_all_so_no_group_is_dropped_as_unmatched():
    prios = yaml.safe_load(ca.priority_config(["a-1a2b3c4d"], ["b-0a0b0c0d"]))
    assert prios[min(prios)] == [".*"] and min(prios) < ca.ON_DEMAND_PRIORITY


@pytest.mark.parametrize(
    ("cards", "text"), [((), ""), ((0,), "0"), ((3, 1, 2, 7), "1-3 7"), (tuple(range(32)), "0-31")]
)
def test_efa_cards_are_written_as_sorted_ranges_and_read_back(cards, text):
    assert format_cards(cards) == text
    assert parse_cards(text) == tuple(sorted(cards))


# --- updates that survive full reservations ---------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "strategy"),
    [
        ({"hpc": True, "zones": ["usw2-az2"]}, "MINIMAL"),
        ({"zones": ["usw2-az2"], "capacityReservation": {"id": "cr-0123456789abcdef0"}}, "MINIMAL"),
        ({"capacityReservation": {"preference": "capacity-reservations-only"}}, "MINIMAL"),
        ({"capacityReservation": {"preference": "open"}}, "DEFAULT"),
        ({}, "DEFAULT"),
    ],
)
def test_update_strategy_is_minimal_exactly_for_groups_on_fixed_capacity(extra, strategy):
    (g,) = plan_of(pools(gpu_pool(machineType="p5.48xlarge", **extra))).groups
    assert g.update_strategy == strategy
    assert g.seeds_from_predecessor is (strategy == "DEFAULT")


# --- names and types the receivers accept ---------------------------------------------------------


def test_arm64_system_group_gets_the_arm_standard_ami_type():
    cfg = pools(gpu_pool(machineType="g4dn.xlarge"), systemPool={"machineType": "m7g.large"})
    system = plan_of(cfg).system
    assert system is not None and system.ami_type == "AL2023_ARM_64_STANDARD"
    x86 = plan_of(pools(gpu_pool(machineType="g4dn.xlarge"))).system
    assert x86 is not None and x86.ami_type == "AL2023_x86_64_STANDARD"


def test_t3_medium_plans_as_a_system_type():
    cfg = pools(gpu_pool(machineType="g4dn.xlarge"), systemPool={"machineType": "t3.medium"})
    system = plan_of(cfg).system
    assert system is not None and system.instance_types == ("t3.medium",)


def test_fit_keeps_names_that_fit_and_cuts_longer_ones_to_the_limit_with_a_stable_hash():
    assert fit("short", 10) == "short"
    long = "x" * 70
    assert len(fit(long, 64)) == 64 and fit(long, 64) == fit(long, 64)
    assert fit(long, 64) != fit(long + "y", 64)
    assert len(fit_autonamed(long, 64)) + AUTONAME_SUFFIX == 64


def test_stack_tag_key_is_at_most_128_and_release_name_at_most_53_helms_limit():
    assert len(ca.stack_tag("c" * 100, "s" * 60)) == TAG_KEY_MAX
    assert ca.stack_tag("ml", "prod") == "gpu-infra/autoscaler/ml/prod"  # unchanged when it fits
    assert len(ca.stack_release_name("s" * 60)) == HELM_RELEASE_MAX


# --- balancing that fires ---------------------------------------------------------------------


def _ca_template_labels(asg_tags: dict[str, str], ng_name: str) -> dict[str, str]:
    """CA's template labels of a managed group's ASG (aws_manager.go extractLabelsFromAsg):
    node-template label tags plus every ``eks:`` tag EKS puts on the ASG, prefix dropped."""
    labels = {k.removeprefix(PREFIX + "label/"): v for k, v in asg_tags.items() if "/label/" in k}
    return {**labels, "cluster-name": "ml", "nodegroup-name": ng_name}


def test_group_per_zone_groups_are_compared_by_the_pool_label_alone_balancing_label():
    # --balancing-label (config/flags/flags.go) compares only the listed labels: the per-group
    # nodegroup-name and the per-AZ topology.k8s.aws/zone-id no longer split the pool's groups.
    p = plan_of(pools(gpu_pool(machineType="g4dn.xlarge", groupPerZone=True, maxNodes=8)))
    (g,) = p.groups
    assert p.autoscaler is not None and len(g.node_groups) > 1
    args = p.autoscaler.values["extraArgs"]
    assert args["balancing-label"] == POOL_LABEL and "balancing-ignore-label" not in args
    per_group = [
        {**_ca_template_labels(dict(g.asg_tags), ng.name), "topology.k8s.aws/zone-id": ng.name}
        for ng in g.node_groups
    ]
    assert len({tuple(sorted(t.items())) for t in per_group}) == len(g.node_groups)  # differ...
    compared = [{k: t.get(k) for k in (args["balancing-label"],)} for t in per_group]
    assert compared[0][POOL_LABEL] and all(t == compared[0] for t in compared)  # ...not here


def test_no_balancing_label_without_balancing():
    a = plan_of(pools(gpu_pool(machineType="g4dn.xlarge"))).autoscaler
    assert a is not None
    assert not {"balancing-label", "balancing-ignore-label"} & set(a.values["extraArgs"])


# --- names that never change under a user: a catalog refresh adds an AZ -----------------------


def _catalog_without(tmp_path, itype: str, az: str) -> Catalog:
    data = tmp_path / "catalog"
    shutil.copytree(DATA_DIR, data)
    f = data / "aws_gpu_instances.csv"
    lines = f.read_text(encoding="utf-8").splitlines(keepends=True)
    f.write_text("".join(ln for ln in lines if not ln.startswith(f"{itype},") or az not in ln))
    return Catalog(data)


def _groups(cfg, catalog: Catalog) -> list[EksNodeGroup]:
    p = build_plan(parse(cfg, "test"), catalog).platform.plan
    assert p is not None
    return [ng for g in p.groups for ng in g.node_groups]


def test_a_catalog_row_for_a_new_az_leaves_every_live_groups_name_and_azs_unchanged(tmp_path):
    cfg = pools(
        gpu_pool(name="t4", machineType="g4dn.xlarge"),
        gpu_pool(name="t4-zonal", machineType="g4dn.xlarge", groupPerZone=True),
        gpu_pool(name="h100", machineType="p5.48xlarge", hpc=True),
    )
    before = _groups(cfg, _catalog_without(tmp_path, "g4dn.xlarge", "usw2-az3"))
    after = _groups(cfg, Catalog.load())  # the refreshed catalog lists usw2-az3 for g4dn too
    live = [ng.name for ng in before]
    assert {ng.name for ng in after} - set(live)  # planned alone, the new AZ would rename
    kept = {core_live_name(ng.name, ng.az_ids, ng.frozen, live) for ng in after}
    assert {(ng.name, ng.az_ids) for ng in before} <= kept  # every live group as it was
    new_zonal = [k for k in kept if k[1] == ("usw2-az3",)]
    assert [n for n, _ in new_zonal] == [ng.name for ng in after if ng.az_ids == ("usw2-az3",)]


def test_a_pool_with_zones_is_not_frozen_and_moves_with_them():
    (g,) = plan_of(pools(gpu_pool(machineType="g4dn.xlarge", zones=["usw2-az1"]))).groups
    (ng,) = g.node_groups
    assert ng.frozen is None
    assert core_live_name(ng.name, ng.az_ids, None, ["gpu-00000000"]) == (ng.name, ng.az_ids)


# --- EKS limits ----------------------------------------------------------------------------------


def test_more_than_50_taints_per_node_group_is_rejected_at_the_taints_key():
    taints = [{"key": f"example.com/t{k}", "value": "x", "effect": "NoSchedule"} for k in range(50)]
    errs = errors_of(pools(gpu_pool(machineType="g4dn.xlarge", taints=taints)))
    assert "exceed EKS's 50 per node group" in errs["gpuPools[0].taints"]


def test_one_access_entry_per_principal():
    arn = "arn:aws:iam::123456789012:role/admin"
    cfg = pools(
        gpu_pool(machineType="g4dn.xlarge"),
        accessEntries=[{"principalArn": arn}, {"principalArn": arn, "policy": "view"}],
    )
    errs = errors_of(cfg)
    assert "one access entry per principal" in errs["cluster.accessEntries[1].principalArn"]


def test_one_subnet_given_for_two_azs_is_rejected():
    cfg = pools(
        gpu_pool(machineType="g4dn.xlarge"),
        vpc={
            "id": "vpc-0a1b2c3d4e5f60001",
            "privateSubnets": {"usw2-az1": "subnet-0a1b2c3d", "usw2-az2": "subnet-0a1b2c3d"},
        },
    )
    errs = errors_of(cfg)
    assert "a subnet is in one AZ" in errs["cluster.vpc.privateSubnets.usw2-az2"]


@pytest.mark.parametrize(("value", "ok"), [("10m", True), ("2562047h", True), ("2562048h", False)])
def test_scale_down_unneeded_time_must_fit_gos_int64_nanosecond_duration(value, ok):
    cfg = pools(gpu_pool(machineType="g4dn.xlarge"), autoscaler={"scaleDownUnneededTime": value})
    if ok:
        a = plan_of(cfg).autoscaler
        assert a is not None and a.values["extraArgs"]["scale-down-unneeded-time"] == value
    else:
        assert "invalid duration" in errors_of(cfg)["cluster.autoscaler.scaleDownUnneededTime"]
