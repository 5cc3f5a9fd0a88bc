"""quota.check on EKS stacks: real boto3 clients, moto's server for EC2 and a fake Service Quotas.

Endpoints come from the standard AWS_ENDPOINT_URL_<SERVICE> variables; botocore attempts are
lowered through QUOTA_AWS_MAX_ATTEMPTS so fault cases stay fast.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from typing import Any

import boto3
import pytest

from tests.emulator import quota_aws_fixtures, quota_cli
from tests.emulator.quota_aws_fixtures import (
    G_SPOT,
    STD,
    G,
    R,
    _eks_stack,
    run,
    run_config,
    warm_ec2,
)
from tests.emulator.quota_cli import launch, row
from tests.fakes import aws as a

pytestmark = pytest.mark.emulator

# Fixtures this module shares with its siblings (quota_aws_fixtures).
env = quota_aws_fixtures.env
probe = quota_aws_fixtures.probe


def test_ample_quota_is_ok_and_exits_0(env: dict[str, Any]) -> None:
    code, doc = run()
    assert code == 0 and {c["status"] for c in doc["checks"]} == {"ok"}
    g = row(doc, G)
    assert (g["region"], g["needed"], g["limit"], g["usage"], g["unit"]) == (
        R,
        104,
        120,
        0,
        "vCPUs",
    )
    assert g["name"] == "Running On-Demand G and VT instances"


def test_usage_is_vcpus_of_running_instances_split_by_lifecycle(env: dict[str, Any]) -> None:
    launch(env["moto"], R, "g4dn.xlarge", 2)
    launch(env["moto"], R, "g5.2xlarge", 1)
    launch(env["moto"], R, "g4dn.xlarge", 1, spot=True)
    launch(env["moto"], R, "p3.2xlarge", 1)  # P quota: never counted under G
    _, doc = run()
    assert row(doc, G)["usage"] == 16  # 2 x 4 + 8
    assert row(doc, G_SPOT)["usage"] == 4
    assert row(doc, G)["status"] == "ok"  # 104 needed, 104 free


def test_usage_pushes_a_fitting_limit_to_short(env: dict[str, Any]) -> None:
    env["sq"].applied[(R, G)] = 108.0
    launch(env["moto"], R, "g4dn.xlarge", 2)  # 8 used: 100 free < 104
    code, doc = run()
    assert code == 1 and row(doc, G)["status"] == "short"


def test_default_value_applies_when_no_applied_value(env: dict[str, Any]) -> None:
    del env["sq"].applied[(R, G)]
    code, doc = run()
    g = row(doc, G)
    assert code == 1 and g["limit"] == 0 and g["status"] == "short"
    assert env["sq"].calls["GetAWSDefaultServiceQuota"] >= 1


def test_quota_missing_everywhere_is_unknown(env: dict[str, Any]) -> None:
    del env["sq"].applied[(R, G)]
    del env["sq"].defaults[G]
    code, doc = run()
    assert code == 3 and "quota missing" in row(doc, G)["reason"]


def test_access_denied_is_unknown_naming_the_permission(env: dict[str, Any]) -> None:
    env["sq"].inject("GetServiceQuota", a.access_denied("servicequotas:GetServiceQuota"))
    code, doc = run()
    assert code == 3
    assert "servicequotas:GetServiceQuota" in row(doc, G)["reason"]


def test_throttling_storm_is_unknown_after_retries(env: dict[str, Any]) -> None:
    env["sq"].inject("GetServiceQuota", a.THROTTLED)
    code, doc = run()
    assert code == 3 and "throttled" in row(doc, G)["reason"]
    assert env["sq"].calls["GetServiceQuota"] >= 2 * 3  # every code retried


def test_service_error_is_unknown(env: dict[str, Any]) -> None:
    env["sq"].inject("GetServiceQuota", a.SERVICE_ERROR)
    code, doc = run()
    assert code == 3 and "500" in row(doc, G_SPOT)["reason"]


def test_timeout_is_unknown_not_ok(env: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    # Every GetServiceQuota attempt outlasts its timeout (2 attempts per code, EC2 and EKS codes
    # read in two rounds): short numbers keep the run near a second.
    monkeypatch.setenv("QUOTA_CALL_TIMEOUT", "0.2")
    env["sq"].inject("GetServiceQuota", delay=0.6)
    code, doc = run()
    assert code == 3 and "timed out" in row(doc, G)["reason"]


def test_spot_group_counts_under_the_spot_code_only(env: dict[str, Any]) -> None:
    env["sq"].applied[(R, G_SPOT)] = 40.0
    code, doc = run()
    assert code == 1
    assert row(doc, G_SPOT)["status"] == "short" and row(doc, G)["status"] == "ok"


def test_quota_is_read_in_the_cluster_region_only(env: dict[str, Any]) -> None:
    sq = env["sq"]
    del sq.applied[(R, G)]
    sq.applied[("us-east-1", G)] = 1000.0  # a raise in the wrong region does not help
    code, doc = run()
    g = row(doc, G)
    assert code == 1 and (g["region"], g["limit"], g["status"]) == (R, 0, "short")


def test_fake_keeps_the_json_1_1_content_type_of_a_shared_fault_response(
    env: dict[str, Any],
) -> None:
    sq: a.FakeServiceQuotas = env["sq"]
    sq.inject("*", a.THROTTLED)  # one module-level response, answered twice
    types = []
    for _ in range(2):
        req = urllib.request.Request(sq.url + "/", data=b"{}", method="POST")
        try:
            urllib.request.urlopen(req)
        except urllib.error.HTTPError as e:
            types.append(e.headers["Content-Type"])
    assert types == ["application/x-amz-json-1.1"] * 2


def test_fulfilled_spot_requests_are_not_counted_twice(env: dict[str, Any]) -> None:
    ec2 = boto3.client("ec2", region_name=R, endpoint_url=env["moto"])
    ami = ec2.describe_images(Owners=["amazon"])["Images"][0]["ImageId"]
    ec2.request_spot_instances(  # moto fulfils at once: 2 active requests, 2 spot instances
        InstanceCount=2,
        LaunchSpecification={"ImageId": ami, "InstanceType": "g4dn.xlarge"},
    )
    _, doc = run()
    assert row(doc, G_SPOT)["usage"] == 2 * 4


def test_unreachable_service_quotas_and_ec2_are_reported_once(
    env: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL_SERVICE_QUOTAS", "http://127.0.0.1:9")
    monkeypatch.setenv("AWS_ENDPOINT_URL_EC2", "http://127.0.0.1:9")
    monkeypatch.setenv("QUOTA_AWS_MAX_ATTEMPTS", "1")
    code, doc = run()
    assert code == 3 and all(c["status"] == "unknown" for c in doc["checks"])
    assert doc["notes"] == ["cannot connect to 127.0.0.1:9: connection failed"] or (
        len(doc["notes"]) == 1 and doc["notes"][0].startswith("cannot connect to 127.0.0.1:9")
    )


def test_where_reads_each_region_and_finds_the_one_that_fits(env: dict[str, Any]) -> None:
    sq: a.FakeServiceQuotas = env["sq"]
    sq.applied.update({("us-east-1", G): 500.0, ("us-east-1", G_SPOT): 500.0})
    sq.applied[("us-east-1", STD)] = 64.0
    warm_ec2(env["moto"], "us-east-1")  # read cold, its first answer can outlast a call timeout
    code, doc = run("--where", "--regions", f"{R},us-east-1")
    by_pool = {p["pool"]: p["regions"] for p in doc["where"]}
    t4 = by_pool["gpu-t4"]
    assert code == 0 and t4[0]["region"] == "us-east-1" and t4[0]["fits"] is True
    assert t4[0]["quota"] == G and t4[0]["headroom"] == 500
    home = next(r for r in t4 if r["region"] == R)
    assert home["fits"] is True  # ample() covers us-west-2 too
    sq.applied[(R, G)] = 8.0
    _, doc = run("--where", "--regions", f"{R},us-east-1")
    home = next(r for r in doc["where"][0]["regions"] if r["region"] == R)
    assert home["fits"] is False and G in home["reason"]


EKS_GROUPS, EKS_NODES = "L-6D54EA21", "L-BD136A63"


def _many_groups(tmp_path: Any, n: int) -> str:
    pools = [
        {"name": f"g{i}", "machineType": "g4dn.xlarge", "minNodes": 0, "maxNodes": 1}
        for i in range(n)
    ]
    return _eks_stack(tmp_path, "many", pools)


def test_forty_gpu_groups_are_short_of_managed_node_groups_per_cluster(
    env: dict[str, Any], tmp_path: Any
) -> None:
    # Service Quotas eks L-6D54EA21 "Managed node groups per cluster", default 30
    # (https://docs.aws.amazon.com/eks/latest/userguide/service-quotas.html)
    env["sq"].defaults[EKS_GROUPS] = 30.0
    code, doc = run_config(_many_groups(tmp_path, 40))
    groups = row(doc, EKS_GROUPS)
    assert code == 1 and (groups["needed"], groups["limit"], groups["usage"]) == (41, 30, 0)
    assert groups["status"] == "short" and groups["unit"] == "node groups"
    assert (
        groups["name"] == "Managed node groups per cluster" and "service-quotas" in groups["source"]
    )
    assert row(doc, EKS_NODES)["status"] == "ok"  # documented 450 where Service Quotas lists none
    assert "documented default applies" in row(doc, EKS_NODES)["reason"]
    code, doc = run_config(_many_groups(tmp_path, 40), "--request")
    req = row(doc, EKS_GROUPS)["request"]  # not an EC2 quota: by hand, with the command
    assert req["action"] == "skipped" and f"--quota-code {EKS_GROUPS}" in req["status"]
    env["sq"].applied[(R, EKS_GROUPS)] = 60.0  # raised: read live, not the documented default
    code, doc = run_config(_many_groups(tmp_path, 40))
    assert row(doc, EKS_GROUPS)["status"] == "ok"


def test_eks_limit_unreadable_is_unknown_never_ok(env: dict[str, Any]) -> None:
    env["sq"].inject("GetServiceQuota", a.access_denied("servicequotas:GetServiceQuota"))
    _, doc = run()
    groups = row(doc, EKS_GROUPS)
    assert groups["status"] == "unknown" and "servicequotas:GetServiceQuota" in groups["reason"]


def test_where_is_short_in_a_region_whose_service_limit_the_plain_check_finds_short(
    env: dict[str, Any], tmp_path: Any
) -> None:
    env["sq"].defaults[EKS_GROUPS] = 30.0  # 41 node groups planned
    path = _many_groups(tmp_path, 40)
    code, _ = run_config(path)
    assert code == 1
    code, doc = run_config(path, "--where", "--regions", R)
    home = doc["where"][0]["regions"][0]
    assert code == 1 and home["fits"] is False and EKS_GROUPS in home["reason"]


SPOT_ROLE = "AWSServiceRoleForEC2Spot"


def karpenter_run(env: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> tuple[int, dict]:
    monkeypatch.setenv("AWS_ENDPOINT_URL_IAM", env["moto"])
    return quota_cli.run("--stack", "eks-karpenter")


def test_karpenter_spot_pool_is_short_without_the_spot_service_linked_role_and_ok_with_it(
    env: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # troubleshooting.md "Missing Service Linked Role": spot launches fail with
    # AuthFailure.ServiceLinkedRoleCreationNotPermitted until the role exists.
    code, doc = karpenter_run(env, monkeypatch)
    r = row(doc, SPOT_ROLE)
    assert r["status"] == "short" and code == 1
    assert "create-service-linked-role --aws-service-name spot.amazonaws.com" in r["reason"]
    # moto names a created service-linked role after the service prefix, so the role is made
    # under AWS's real name and path.
    iam = boto3.client("iam", region_name=R, endpoint_url=env["moto"])
    iam.create_role(
        RoleName=SPOT_ROLE,
        Path="/aws-service-role/spot.amazonaws.com/",
        AssumeRolePolicyDocument="{}",
    )
    _, doc = karpenter_run(env, monkeypatch)
    assert row(doc, SPOT_ROLE)["status"] == "ok"


def test_p6_spot_on_the_unverified_p_spot_quota_is_unknown_even_with_ample_limit(
    env: dict[str, Any], tmp_path: Any
) -> None:
    # Service Quotas L-7212CCBC is named "All P4, P3 and P2 Spot Instance Requests": that it
    # counts P6 Spot is not documented, so its 2000 vCPUs prove nothing for a p6-b200 pool.
    import yaml

    pool = {"name": "b200", "machineType": "p6-b200.48xlarge", "maxNodes": 1, "spot": True}
    cfg = {
        "aws:region": R,
        "gpu-infra:platform": "eks",
        "gpu-infra:cluster": {"name": "ml", "location": R, "kubernetesVersion": "1.33"},
        "gpu-infra:gpuPools": [{"minNodes": 0, **pool}],
    }
    path = tmp_path / "Pulumi.p6.yaml"
    path.write_text(yaml.safe_dump({"config": cfg}))
    env["sq"].applied[(R, "L-7212CCBC")] = 2000.0
    code, doc = run_config(str(path))
    (p6,) = [c for c in doc["checks"] if "L-7212CCBC" in c["quota"]]
    assert (p6["status"], p6["limit"], code) == ("unknown", None, 3), p6
    assert "not documented" in p6["reason"] and p6["request"] is None
