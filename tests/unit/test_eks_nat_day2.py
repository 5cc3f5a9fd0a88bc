"""Day 2 of natGateways perAz: an AZ its nodes leave loses its NAT gateway (docs/eks.md, NAT gateways)."""

from __future__ import annotations

from tests.unit.test_eks import eks_config, plan_of

PER_AZ = {"vpc": {"natGateways": "perAz"}}


def test_per_az_nat_leaves_an_az_its_nodes_leave_and_that_subnet_egresses_through_another_az():
    # A pool pinned to use1-az3 (which the control plane and the system group avoid) moves to
    # use1-az1: the next plan has no NAT gateway in use1-az3, so `pulumi up` deletes it, its EIP
    # and its private route table, and use1-az3's subnet routes through another AZ's gateway.
    before = plan_of(
        eks_config({"machineType": "p5.48xlarge", "zones": ["use1-az3"]}, cluster=PER_AZ,
                   region="us-east-1")
    ).network  # fmt: skip
    after = plan_of(
        eks_config({"machineType": "p5.48xlarge", "zones": ["use1-az1"]}, cluster=PER_AZ,
                   region="us-east-1")
    ).network  # fmt: skip
    assert before is not None and after is not None
    assert before.nat_for("use1-az3") == "use1-az3"
    assert "use1-az3" in after.az_ids and "use1-az3" not in after.nat_az_ids
    assert after.nat_for("use1-az3") != "use1-az3"
