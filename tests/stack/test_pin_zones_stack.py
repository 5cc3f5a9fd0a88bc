"""Catalog refreshes on the mock engine: a pinned stack file registers exactly what it did
unpinned; ``--old-catalog`` shows what a refresh alone changes."""

from __future__ import annotations

import json
import shutil

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


def test_a_refresh_adding_an_az_replaces_no_running_eks_node_group_and_says_so(tmp_path, capsys):
    # Before the refresh the catalog knew neither usw2-az1 (for any type) nor g4dn in usw2-az3.
    # The old side is the stack as deployed then; the new side's deploy finds its groups
    # (mockengine.groups_of), as `pulumi up` after the refresh does.
    data = catalog_before_refresh(tmp_path, "aws_gpu_instances.csv", "g4dn.xlarge,", "usw2-az3")
    f = data / "aws_gpu_instances.csv"
    rows = f.read_text(encoding="utf-8").splitlines(keepends=True)
    f.write_text("".join(r for r in rows if ",us-west-2,usw2-az1," not in r), encoding="utf-8")
    assert main(["--stack", "eks-g4dn", "--old-catalog", str(data), "--json"]) == 0
    out, err = capsys.readouterr()
    groups = [c for c in json.loads(out)["changes"] if "aws:eks/nodeGroup:" in c["urn"]]
    assert groups == []  # neither the GPU groups nor the system group: no wider subnetIds
    for pool in ("gpu-t4", "gpu-t4-spot"):
        assert f"gpuPools {pool}: node group {pool}-" in err
    assert err.count("keeps the AZs it runs in (usw2-az2); the catalog now also offers") == 2
    assert "usw2-az1, usw2-az3: add them to gpuPools[].zones" in err
    assert "write zones: [usw2-az2] to keep it where it is" in err
