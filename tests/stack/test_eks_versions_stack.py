"""A Kubernetes minor bump on EKS, as ``--diff`` shows it: every pinned add-on with its values."""

from __future__ import annotations

import json
from pathlib import Path

from infra import plan as plan_cli
from tests.stack.harness import eks_g4dn_at, eks_version_bump_changes

ROOT = Path(__file__).resolve().parents[2]


def test_kubernetes_version_bump_diff_lists_pinned_addon_versions_old_and_new(tmp_path, capsys):
    by_name = {
        c["urn"].rsplit("::", 1)[-1]: c
        for c in eks_version_bump_changes(tmp_path, capsys)
        if "aws:eks/addon:Addon" in c["urn"]
    }
    proxy, dns = by_name["ml-addons-kube-proxy"], by_name["ml-addons-coredns"]
    assert (proxy["old"], proxy["new"]) == (
        {"addonVersion": "v1.33.10-eksbuild.13"},
        {"addonVersion": "v1.34.6-eksbuild.13"},
    )
    assert (dns["old"], dns["new"]) == (
        {"addonVersion": "v1.12.4-eksbuild.18"},
        {"addonVersion": "v1.13.2-eksbuild.11"},
    )
    # An add-on without a pinned row says that EKS's default is read at deploy time.
    assert "EKS default for 1.34" in by_name["ml-addons-aws-ebs-csi-driver"]["new"]["addonVersion"]


def test_a_pinned_release_version_reaches_the_node_group_and_no_other(tmp_path, capsys):
    # A release of the EKS-optimized AMI for Kubernetes 1.33, pinned on a cluster running 1.33.
    stack = eks_g4dn_at(tmp_path, "1.33")
    text = stack.read_text()
    marker = "      machineType: g4dn.xlarge\n"
    assert text.count(marker) == 1
    stack.write_text(text.replace(marker, marker + "      releaseVersion: 1.33.5-20251120\n"))
    assert plan_cli.main(["--stack", str(stack), "--json"]) == 0
    sent = {
        r["name"]: r["inputs"].get("releaseVersion")
        for r in json.loads(capsys.readouterr().out)["resources"]
        if r["type"] == "aws:eks/nodeGroup:NodeGroup"
    }
    assert sent == {"ml-system": None, "ml-gpu-t4-ng": "1.33.5-20251120", "ml-gpu-t4-spot-ng": None}


def test_eks_g4dn_without_kubernetes_version_plans_a_version_in_standard_support(tmp_path, capsys):
    # The EKS calendar (eks_standard_support.csv): on 2026-11-27 (tests' day) 1.34 and 1.35 are in
    # standard support, 1.33 is not (ended 2026-07-29).
    text = (ROOT / "stacks" / "Pulumi.eks-g4dn.yaml").read_text()
    new = tmp_path / "Pulumi.eks-g4dn.yaml"
    new.write_text("".join(x for x in text.splitlines(True) if "kubernetesVersion" not in x))
    assert plan_cli.main(["--stack", str(new), "--json"]) == 0
    out, err = capsys.readouterr()
    doc = json.loads(out)
    (cluster,) = [r for r in doc["resources"] if r["type"] == "eks:index:Cluster"]
    assert cluster["inputs"]["version"] == "1.35"
    (fee,) = [i for i in doc["cost"]["items"] if i["item"].startswith("control plane")]
    assert "in standard support" in fee["item"] and fee["atMinPerHour"] == 0.1
    assert "kubernetesVersion is not set: 1.35" in err
