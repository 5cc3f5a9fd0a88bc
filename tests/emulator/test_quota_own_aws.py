"""quota.check on a deployed EKS stack: its own instances (EKS and Karpenter tags) are in the usage
once and offset the demand, against real boto3 clients, moto's EC2 and the fake Service Quotas.

eks-g4dn: gpu-t4 is g4dn.xlarge (4 vCPUs), max 20 in 3 AZs, update surge 6: 104 G vCPUs needed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.emulator.quota_cli import (
    aws_test_credentials,
    empty_aws_fakes,
    launch,
    moto_ec2,
    row,
    run,
)
from tests.fakes import aws as a

pytestmark = pytest.mark.emulator

ROOT = Path(__file__).resolve().parents[2]
R = "us-west-2"
G, G_SPOT, STD = "L-DB2E81BA", "L-3819A6DF", "L-1216C47A"
# The tags EKS puts on a managed node group's instances (eks:cluster-name, eks:nodegroup-name;
# eksctl-io/eksctl#2607) and Karpenter on the instances of a NodePool (kubernetes.io/cluster/<name>
# owned, karpenter.sh/nodepool; aws/karpenter-provider-aws pkg/utils/utils.go GetTags).
GPU_T4 = {"eks:cluster-name": "ml", "eks:nodegroup-name": "gpu-t4-20790d4b"}


@pytest.fixture
def env(aws_fakes: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    empty_aws_fakes(aws_fakes, {G: 0.0, G_SPOT: 0.0, STD: 5.0})
    sq: a.FakeServiceQuotas = aws_fakes["sq"]
    sq.applied.update({(R, G): 120.0, (R, G_SPOT): 120.0, (R, STD): 64.0})
    moto = aws_fakes["moto"]
    aws_test_credentials(
        monkeypatch, EC2=aws_fakes["ec2"].url, SERVICE_QUOTAS=sq.url, STS=moto, IAM=moto
    )
    monkeypatch.setenv("QUOTA_AWS_MAX_ATTEMPTS", "2")
    monkeypatch.setenv("QUOTA_CALL_TIMEOUT", "5")
    ec2 = moto_ec2(aws_fakes["moto"], R)
    ec2.describe_instances()  # moto builds the region's backend (untimed)
    yield {"sq": sq, "moto": aws_fakes["moto"], "ec2": aws_fakes["ec2"]}
    # Terminated instances hold no quota (only pending and running ones are read): cheaper than
    # a moto reset, which rebuilds the region's backend.
    ids = [
        i["InstanceId"] for r in ec2.describe_instances()["Reservations"] for i in r["Instances"]
    ]
    if ids:
        ec2.terminate_instances(InstanceIds=ids)


def test_eks_g4dn_running_20_nodes_is_ok_under_its_need_less_them_and_requests_what_it_adds(
    env: dict[str, Any],
) -> None:
    # 104 needed, 80 of them running (20 x 4 vCPUs): 24 more fit in 104 - 80
    launch(env["moto"], R, "g4dn.xlarge", 20, GPU_T4)
    env["sq"].applied[(R, G)] = 104.0
    code, doc = run("--stack", "eks-g4dn", "--request")
    g = row(doc, G)
    assert (g["usage"], g["ownUsage"], g["surge"], g["status"]) == (80, 80, 24, "ok")
    assert code == 0 and all(c["request"] is None for c in doc["checks"])
    assert env["sq"].calls["RequestServiceQuotaIncrease"] == 0
    # under 60: usage - own + needed = 80 - 80 + 104 = 104, not usage + peak (184)
    env["sq"].applied[(R, G)] = 60.0
    code, doc = run("--stack", "eks-g4dn", "--request")
    g = row(doc, G)
    assert code == 1 and g["status"] == "short" and g["request"]["desired"] == 104


def test_no_surge_requests_a_group_at_its_maximum_without_the_update_surge(
    env: dict[str, Any],
) -> None:
    env["sq"].applied[(R, G)] = 32.0
    _, doc = run("--stack", "eks-g4dn", "--request", "--no-surge")
    req = row(doc, G)["request"]
    assert (req["action"], req["desired"], req["withoutSurge"]) == ("created", 80, 24)


def test_instances_of_another_cluster_group_or_type_and_untagged_ones_are_others(
    env: dict[str, Any],
) -> None:
    launch(env["moto"], R, "g4dn.xlarge", 1, {**GPU_T4, "eks:cluster-name": "other"})
    launch(env["moto"], R, "g4dn.xlarge", 1, {**GPU_T4, "eks:nodegroup-name": "gpu-t4-00000000"})
    launch(env["moto"], R, "g4dn.2xlarge", 1, GPU_T4)  # not the group's type: being replaced
    launch(env["moto"], R, "g4dn.xlarge", 1, {})
    launch(env["moto"], R, "g4dn.xlarge", 1, GPU_T4)
    _, doc = run("--stack", "eks-g4dn")
    g = row(doc, G)
    assert (g["usage"], g["ownUsage"]) == (4 + 4 + 8 + 4 + 4, 4)


def test_karpenter_nodepool_instances_are_the_stacks_own(
    env: dict[str, Any],
) -> None:
    karp = {"kubernetes.io/cluster/karp": "owned", "karpenter.sh/nodepool": "l4"}
    launch(env["moto"], R, "g6.2xlarge", 2, karp)
    launch(env["moto"], R, "g6.2xlarge", 1, {**karp, "kubernetes.io/cluster/karp": "shared"})
    _, doc = run("--stack", "eks-karpenter")
    g = row(doc, G)
    assert (g["usage"], g["ownUsage"]) == (24, 16)


def test_diff_counts_a_replaced_group_at_what_it_adds_beyond_its_running_nodes(
    env: dict[str, Any], tmp_path: Path
) -> None:
    # gpu-t4 moves to g4dn.2xlarge (a new group): the old group's 20 running nodes are in the
    # usage; the new group adds up to 20 x 8, the old one nothing beyond what runs.
    launch(env["moto"], R, "g4dn.xlarge", 20, GPU_T4)
    text = (ROOT / "stacks" / "Pulumi.eks-g4dn.yaml").read_text()
    new = tmp_path / "Pulumi.new.yaml"
    new.write_text(text.replace("machineType: g4dn.xlarge\n", "machineType: g4dn.2xlarge\n", 1))
    env["sq"].applied[(R, G)] = 80.0 + 160.0
    code, doc = run("--config", str(new), "--diff", "eks-g4dn")
    g = row(doc, G)
    assert (g["needed"], g["usage"], g["ownUsage"], g["status"]) == (240, 80, 80, "ok"), g
    assert code == 0
