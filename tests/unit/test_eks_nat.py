"""natGateways: perAz puts a NAT gateway only where node groups run (each bills by the hour)."""

from __future__ import annotations

from infra.core.eks.network import keep_live_nat, kept_control_plane_azs
from tests.unit.test_eks import eks_config, errors_of, plan_of

PER_AZ = {"vpc": {"natGateways": "perAz"}}


def test_per_az_nat_skips_an_az_without_nodes_and_routes_it_through_another():
    # us-east-1: use1-az3 offers GPU types (a subnet) but the control plane and so the system
    # group avoid it; a pool pinned to use1-az1 leaves it without nodes.
    net = plan_of(eks_config({"zones": ["use1-az1"]}, cluster=PER_AZ, region="us-east-1")).network
    assert net is not None and "use1-az3" in net.az_ids
    assert "use1-az3" not in net.nat_az_ids
    assert net.nat_for("use1-az3") in net.nat_az_ids
    assert set(net.nat_az_ids) == set(net.control_plane_az_ids)


def test_per_az_nat_follows_a_gpu_pool_into_an_az_the_system_group_avoids():
    pool = {"machineType": "p5.48xlarge", "zones": ["use1-az3"]}
    net = plan_of(eks_config(pool, cluster=PER_AZ, region="us-east-1")).network
    assert net is not None and "use1-az3" in net.nat_az_ids


def test_a_single_nat_stays_single():
    net = plan_of(eks_config({"zones": ["use1-az1"]}, region="us-east-1")).network
    assert net is not None and len(net.nat_az_ids) == 1


def test_per_az_nat_with_karpenter_serves_every_discovery_tagged_subnet_az():
    # Karpenter may launch nodes in any subnet the EC2NodeClass selects by the discovery tag,
    # here use1-az3 too, although no pool names it.
    cluster = {**PER_AZ, "kubernetesVersion": "1.34", "autoscaler": {"kind": "karpenter"}}
    p = plan_of(eks_config({"zones": ["use1-az1"]}, cluster=cluster, region="us-east-1"))
    net = p.network
    assert p.karpenter is not None and net is not None and "use1-az3" in net.az_ids
    assert set(net.nat_az_ids) == set(net.az_ids)


# us-west-2 in the catalog: usw2-az1..az4 offer GPU types; usw2-az1 sorts first.
USW2 = "us-west-2"


def test_a_refresh_adding_an_az_that_sorts_first_leaves_the_nat_where_it_runs():
    # Deployed before usw2-az1 offered a GPU type: the one NAT gateway runs in usw2-az2.
    net = plan_of(eks_config(region=USW2)).network
    assert net is not None and net.nat_az_ids == ("usw2-az1",)
    kept, warning = keep_live_nat(net, ["usw2-az2"])
    assert kept.nat_az_ids == ("usw2-az2",)
    assert kept.nat_for("usw2-az1") == "usw2-az2"  # the new AZ routes through the running one
    assert kept.subnet_cidrs == net.subnet_cidrs and kept.public_cidrs == net.public_cidrs
    assert "keeps the AZ it runs in (usw2-az2)" in warning
    assert "write cluster.vpc.natZone: usw2-az2 to pin it" in warning


def test_a_first_deploy_plans_the_nat_in_the_first_control_plane_az():
    net = plan_of(eks_config(region=USW2)).network
    assert net is not None
    assert keep_live_nat(net, []) == (net, "")
    assert keep_live_nat(net, ["usw2-az1"]) == (net, "")  # already where it runs


def test_a_live_nat_in_an_az_the_vpc_no_longer_has_is_not_kept():
    net = plan_of(eks_config(region=USW2)).network
    assert net is not None
    assert keep_live_nat(net, ["usw2-az9"]) == (net, "")


def test_per_az_nats_are_never_narrowed_to_the_live_ones():
    net = plan_of(eks_config(cluster=PER_AZ, region=USW2)).network
    assert net is not None and len(net.nat_az_ids) > 1
    assert keep_live_nat(net, ["usw2-az2"]) == (net, "")


def test_a_pinned_nat_zone_plans_the_nat_there_and_a_deploy_moves_a_live_one_to_it():
    net = plan_of(eks_config(cluster={"vpc": {"natZone": "usw2-az3"}}, region=USW2)).network
    assert net is not None and net.nat_az_ids == ("usw2-az3",) and net.nat_zone_pinned
    assert keep_live_nat(net, ["usw2-az2"]) == (net, "")


def test_nat_zone_outside_the_new_vpcs_azs_is_an_error_naming_them():
    errs = errors_of(eks_config(cluster={"vpc": {"natZone": "usw2-az9"}}, region=USW2))
    assert "'usw2-az9' is not an AZ ID of the new VPC" in errs["cluster.vpc.natZone"]
    assert "usw2-az1, usw2-az2, usw2-az3, usw2-az4" in errs["cluster.vpc.natZone"]


def test_nat_zone_with_per_az_nats_is_an_error():
    vpc = {"vpc": {"natGateways": "perAz", "natZone": "usw2-az2"}}
    errs = errors_of(eks_config(cluster=vpc, region=USW2))
    assert "natGateways: single" in errs["cluster.vpc.natZone"]


def test_nat_zone_with_a_given_vpc_is_an_error():
    vpc = {
        "id": "vpc-0123456789abcdef0",
        "privateSubnets": {
            "usw2-az1": "subnet-0123456789abcdef0",
            "usw2-az2": "subnet-0123456789abcdef1",
        },
        "natZone": "usw2-az1",
    }
    errs = errors_of(eks_config(cluster={"vpc": vpc}, region=USW2))
    assert "applies to a VPC gpu-infra creates" in errs["cluster.vpc.natZone"]


def test_a_running_control_plane_keeps_the_azs_it_was_created_with():
    # EKS refuses a subnet update spanning other AZs than at creation (aws/containers-roadmap#170).
    planned = ("usw2-az1", "usw2-az2", "usw2-az3", "usw2-az4")
    live = ["usw2-az4", "usw2-az2", "usw2-az3"]
    assert kept_control_plane_azs(planned, live) == (
        ("usw2-az2", "usw2-az3", "usw2-az4"),
        ("usw2-az1",),
        (),
    )


def test_a_running_control_plane_keeps_an_az_the_plan_no_longer_lists():
    # The same rule the other way: a strict subset of the creation AZs is refused too.
    planned = ("usw2-az1", "usw2-az2")
    assert kept_control_plane_azs(planned, ["usw2-az2", "usw2-az1", "usw2-az5"]) == (
        ("usw2-az1", "usw2-az2", "usw2-az5"),
        (),
        ("usw2-az5",),
    )


def test_a_new_cluster_gets_every_planned_control_plane_az():
    planned = ("usw2-az1", "usw2-az2")
    assert kept_control_plane_azs(planned, []) == (planned, (), ())
