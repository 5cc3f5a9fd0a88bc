"""natGateways: perAz puts a NAT gateway only where node groups run (each bills by the hour)."""

from __future__ import annotations

from tests.unit.test_eks import eks_config, plan_of

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
