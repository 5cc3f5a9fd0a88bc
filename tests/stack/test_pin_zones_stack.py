"""Catalog refreshes on the mock engine: a pinned stack file registers exactly what it did
unpinned; ``--old-catalog`` shows what a refresh alone changes."""

from __future__ import annotations

import contextlib
import io
import json
import shutil

import pytest

from infra.plan import main
from tests.stack.harness import ROOT, run_stack, sample
from tests.unit.test_old_catalog import catalog_before_refresh


def _by_urn(recording) -> dict[str, str]:
    return {r.urn: json.dumps(r.to_json(), sort_keys=True) for r in recording.resources}


def test_a_pinned_stack_file_plans_the_same_resources(tmp_path):
    f = tmp_path / "Pulumi.eks-g4dn.yaml"  # same file name: same stack, same URNs
    shutil.copy(ROOT / "stacks" / "Pulumi.eks-g4dn.yaml", f)
    assert main(["--config", str(f), "--pin-zones"]) == 0
    assert "zones: [usw2-az1, usw2-az2, usw2-az3]" in f.read_text()
    pinned, unpinned = run_stack(f), sample("eks-g4dn")
    assert _by_urn(pinned) == _by_urn(unpinned)
    assert pinned.outputs == unpinned.outputs


def test_old_catalog_diff_shows_the_widened_zones_of_a_pool_without_zones(tmp_path, capsys):
    data = catalog_before_refresh(tmp_path, "gcp_accelerators.csv", "nvidia-l4,", "us-central1-c")
    code = main(["--stack", "gke-l4-spot", "--old-catalog", str(data), "--json"])
    out, err = capsys.readouterr()
    assert code == 0
    changes = json.loads(out)["changes"]
    assert {c["op"] for c in changes} == {"update"} and changes  # widened in place, no replace
    for c in changes:
        assert c["properties"] == ["nodeLocations"]
        assert c["new"]["nodeLocations"] == [*c["old"]["nodeLocations"], "us-central1-c"]
    assert "lists no zones and the catalog now also offers us-central1-c" in err
    assert "`zones: [us-central1-a, us-central1-b]` keeps it where it runs" in err


@pytest.fixture(scope="module")
def eks_refresh(tmp_path_factory) -> tuple[list[dict], str]:
    """``--old-catalog`` on eks-g4dn (``--json`` changes, stderr): before the refresh the catalog
    knew neither usw2-az1 (for any type) nor g4dn in usw2-az3. The old side is the stack as
    deployed then; the new side is planned over what its observe step finds once the old side is
    deployed (its node groups and NAT gateway: mocklive.after), as `pulumi up` after the refresh
    is."""
    tmp = tmp_path_factory.mktemp("refresh")
    data = catalog_before_refresh(tmp, "aws_gpu_instances.csv", "g4dn.xlarge,", "usw2-az3")
    f = data / "aws_gpu_instances.csv"
    rows = f.read_text(encoding="utf-8").splitlines(keepends=True)
    f.write_text("".join(r for r in rows if ",us-west-2,usw2-az1," not in r), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert main(["--stack", "eks-g4dn", "--old-catalog", str(data), "--json"]) == 0
    return json.loads(out.getvalue())["changes"], err.getvalue()


def test_a_refresh_adding_an_az_replaces_no_running_eks_node_group_and_says_so(eks_refresh):
    changes, err = eks_refresh
    groups = [c for c in changes if "aws:eks/nodeGroup:" in c["urn"]]
    assert groups == []  # neither the GPU groups nor the system group: no wider subnetIds
    for pool in ("gpu-t4", "gpu-t4-spot"):
        assert f"gpuPools {pool}: node group {pool}-" in err
    assert err.count("keeps the AZs it runs in (usw2-az2); the catalog now also offers") == 2
    assert "usw2-az1, usw2-az3: add them to gpuPools[].zones" in err
    assert "write zones: [usw2-az2] to keep it where it is" in err


def test_a_refresh_adding_an_az_that_sorts_first_leaves_the_nat_where_it_runs(eks_refresh):
    # usw2-az1 is now the first control-plane AZ, where a first deploy puts the NAT gateway; the
    # running one in usw2-az2 keeps its Elastic IP, route table and every subnet's route.
    changes, err = eks_refresh
    moved = [
        (c["op"], c["urn"])
        for c in changes
        if any(
            t in c["urn"] for t in (":Eip::", ":NatGateway::", ":RouteTable::", ":VpcEndpoint::")
        )
        or (":RouteTableAssociation::" in c["urn"] and c["op"] != "create")
    ]
    assert moved == []
    assert {c["op"] for c in changes if ":ec2/" in c["urn"]} == {"create"}  # the new AZ's subnets
    assert "the NAT gateway keeps the AZ it runs in (usw2-az2)" in err
    assert "write cluster.vpc.natZone: usw2-az2 to pin it there" in err


def test_a_refresh_adding_an_az_keeps_the_running_control_planes_azs(eks_refresh):
    # EKS refuses control-plane subnets in AZs the cluster was not created with
    # (aws/containers-roadmap#170): the new AZ gets subnets, the cluster no update.
    changes, err = eks_refresh
    assert [c for c in changes if c["urn"].endswith("eks:index:Cluster::ml-eks")] == []
    assert "keeps the AZs it was created with (usw2-az2, usw2-az3, usw2-az4)" in err
    assert "EKS cannot add usw2-az1" in err
