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
from botocore.retries.standard import ExponentialBackoff

from tests.emulator import quota_cli
from tests.emulator.quota_cli import aws_test_credentials, empty_aws_fakes, launch, moto_ec2, row
from tests.fakes import aws as a

pytestmark = pytest.mark.emulator

R = "us-west-2"
G, G_SPOT, STD = "L-DB2E81BA", "L-3819A6DF", "L-1216C47A"
# eks-g4dn: gpu-t4 (g4dn.xlarge, max 20) and gpu-t4-spot (max 20) in 3 AZs: 4 vCPUs x (20 + 6
# update surge) = 104 each; system m6i.large: 2 x (3 + 8 surge over 4 AZs) = 22.


@pytest.fixture(scope="module")
def probe(aws_fakes: dict[str, Any]) -> Any:
    """An EC2 client on moto in R, whose backend is built (``warm_ec2``)."""
    warm_ec2(aws_fakes["moto"])
    return moto_ec2(aws_fakes["moto"], R)


@pytest.fixture
def env(aws_fakes: dict[str, Any], probe: Any, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    empty_aws_fakes(aws_fakes, {G: 0.0, G_SPOT: 0.0, STD: 5.0})
    sq: a.FakeServiceQuotas = aws_fakes["sq"]
    ec2: a.Ec2WithReservations = aws_fakes["ec2"]
    if _launched(probe):
        # The tests change moto's state only by launching instances (on demand or spot) in R;
        # reset it when one did. A reset drops every region's EC2 backend, so warm R again (a
        # test reading another region warms it too).
        urllib.request.urlopen(
            urllib.request.Request(f"{aws_fakes['moto']}/moto-api/reset", method="POST")
        )
        warm_ec2(aws_fakes["moto"])
        assert not _launched(probe)
    aws_test_credentials(monkeypatch, EC2=ec2.url, SERVICE_QUOTAS=sq.url, STS=aws_fakes["moto"])
    monkeypatch.setenv("QUOTA_AWS_MAX_ATTEMPTS", "2")
    # generous per call: a shared box must not turn a slow answer into 'unknown'; the timeout
    # test lowers it
    monkeypatch.setenv("QUOTA_CALL_TIMEOUT", "5")
    # botocore waits up to 1 s before retrying a throttled call; keep the storm test short.
    monkeypatch.setitem(ExponentialBackoff._DEFAULT_BACKOFF_CONFIG, "throttling_base_scale", 0.01)
    ample(sq)
    return {"sq": sq, "moto": aws_fakes["moto"], "ec2": ec2}


def _launched(ec2: Any) -> bool:
    """Whether moto holds any instance or spot request in R (what a test may have left)."""
    return bool(
        ec2.describe_instances()["Reservations"]
        or ec2.describe_spot_instance_requests()["SpotInstanceRequests"]
    )


def warm_ec2(moto: str, region: str = R) -> None:
    """Build moto's EC2 backend for the region before the check runs.

    moto creates a region's EC2 backend (instance-type offerings, AMIs) lazily on the first request,
    and again after every /moto-api/reset; that first call can take longer than the check's
    per-call timeout, which made DescribeInstances fail and the check exit 3 (the old flake). One
    untimed call here moves that cost out of the check.
    """
    moto_ec2(moto, region).describe_instances()


def ample(sq: a.FakeServiceQuotas) -> None:
    sq.applied.update({(R, G): 120.0, (R, G_SPOT): 120.0, (R, STD): 64.0})


def run(*args: str) -> tuple[int, dict[str, Any]]:
    return quota_cli.run("--stack", "eks-g4dn", *args)


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


def test_request_filed_once_when_run_twice(env: dict[str, Any]) -> None:
    env["sq"].applied[(R, G)] = 32.0
    code, doc = run("--request")
    req = row(doc, G)["request"]
    assert code == 1 and req["action"] == "created" and req["desired"] == 104
    assert req["caseId"] == "case-1"
    code, doc = run("--request")
    again = row(doc, G)["request"]
    assert again["action"] == "pending" and again["caseId"] == "case-1"
    assert env["sq"].calls["RequestServiceQuotaIncrease"] == 1


def test_no_request_while_one_is_pending(env: dict[str, Any]) -> None:
    _history(env["sq"], "PENDING", 48.0, case_id="case-77")
    _, doc = run("--request")
    req = row(doc, G)["request"]
    assert req["action"] == "pending" and req["caseId"] == "case-77"
    assert env["sq"].calls["RequestServiceQuotaIncrease"] == 0


def test_no_request_for_rows_within_the_limit(env: dict[str, Any]) -> None:
    code, doc = run("--request")
    assert code == 0 and all(c["request"] is None for c in doc["checks"])
    assert env["sq"].calls["ListRequestedServiceQuotaChangeHistoryByQuota"] == 0


def test_partial_grant_is_reported_and_not_refiled(env: dict[str, Any]) -> None:
    env["sq"].applied[(R, G)] = 32.0
    env["sq"].policy = ("partial", 64)
    run("--request")
    code, doc = run("--request")
    g = row(doc, G)
    assert code == 1 and g["limit"] == 64 and g["status"] == "short"
    assert g["request"]["action"] == "partially-granted" and g["request"]["requested"] == 104
    assert env["sq"].calls["RequestServiceQuotaIncrease"] == 1


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


def test_denied_request_for_the_same_value_is_reported_and_force_files_anew(
    env: dict[str, Any],
) -> None:
    sq: a.FakeServiceQuotas = env["sq"]
    _history(sq, "DENIED", 104.0, case_id="case-9")
    code, doc = run("--request")
    req = row(doc, G)["request"]
    assert code == 1 and (req["action"], req["caseId"]) == ("denied", "case-9")
    assert sq.calls["RequestServiceQuotaIncrease"] == 0
    _, doc = run("--request", "--force")
    assert row(doc, G)["request"]["action"] == "created"
    assert sq.calls["RequestServiceQuotaIncrease"] == 1


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


def _past(
    request_id: str, case_id: str, desired: float, status: str, created: int
) -> dict[str, Any]:
    """One earlier request for the GPU quota as the change history lists it (Service Quotas API
    RequestedServiceQuotaChange: Id, CaseId, QuotaCode, DesiredValue, Status, Created)."""
    return {
        "Id": request_id,
        "CaseId": case_id,
        "QuotaCode": G,
        "DesiredValue": desired,
        "Status": status,
        "Created": created,
    }


def _history(sq: a.FakeServiceQuotas, status: str, desired: float, case_id: str = "case-5") -> None:
    """The GPU quota applied at 32 with one earlier request (``status``) for ``desired``."""
    sq.applied[(R, G)] = 32.0
    sq.history[(R, G)] = [_past("old", case_id, desired, status, 1)]


@pytest.mark.parametrize("status", ["DENIED", "NOT_APPROVED"])
def test_refusal_of_a_smaller_request_blocks_asking_for_more(
    env: dict[str, Any], status: str
) -> None:
    _history(env["sq"], status, 64.0)  # refused 64; this run wants 104
    _, doc = run("--request")
    req = row(doc, G)["request"]
    assert (req["action"], req["caseId"]) == ("denied", "case-5")
    assert env["sq"].calls["RequestServiceQuotaIncrease"] == 0


def test_refusal_of_a_larger_request_does_not_block_a_smaller_one(env: dict[str, Any]) -> None:
    _history(env["sq"], "DENIED", 500.0)
    _, doc = run("--request")
    assert row(doc, G)["request"]["action"] == "created"


@pytest.mark.parametrize("status", ["CASE_CLOSED", "INVALID_REQUEST"])
def test_case_closed_and_invalid_request_are_not_refusals(env: dict[str, Any], status: str) -> None:
    _history(env["sq"], status, 104.0)
    _, doc = run("--request")
    assert row(doc, G)["request"]["action"] == "created"


def test_denied_then_approved_history_files_a_new_request(env: dict[str, Any]) -> None:
    sq: a.FakeServiceQuotas = env["sq"]
    sq.applied[(R, G)] = 64.0  # the later approval applied 64
    sq.history[(R, G)] = [
        _past("r1", "case-1", 104.0, "DENIED", 1),
        _past("r2", "case-2", 64.0, "APPROVED", 2),
    ]
    code, doc = run("--request")
    req = row(doc, G)["request"]
    assert code == 1 and req["action"] == "created" and req["desired"] == 104
    assert any("case-1" in c and "later approved" in c for c in req["context"])
    assert sq.calls["RequestServiceQuotaIncrease"] == 1


def test_refusal_at_or_below_the_applied_value_does_not_block(env: dict[str, Any]) -> None:
    sq: a.FakeServiceQuotas = env["sq"]
    sq.applied[(R, G)] = 96.0  # raised since (say by AWS itself) past the refused 80
    sq.history[(R, G)] = [
        _past("r1", "case-3", 80.0, "DENIED", 5),
    ]
    _, doc = run("--request")
    req = row(doc, G)["request"]
    assert req["action"] == "created" and "applied value" in req["context"][0]


def test_refusal_after_the_latest_approval_still_blocks(env: dict[str, Any]) -> None:
    sq: a.FakeServiceQuotas = env["sq"]
    sq.applied[(R, G)] = 64.0
    sq.history[(R, G)] = [
        _past("r1", "case-1", 64.0, "APPROVED", 1),
        _past("r2", "case-2", 104.0, "DENIED", 2),
    ]
    _, doc = run("--request")
    req = row(doc, G)["request"]
    assert (req["action"], req["caseId"]) == ("denied", "case-2")
    assert env["sq"].calls["RequestServiceQuotaIncrease"] == 0


def test_an_open_request_for_less_reads_pending_for_less_and_says_file_again_after_it_settles(
    env: dict[str, Any],
) -> None:
    from quota.report import _request_text

    _history(env["sq"], "PENDING", 48.0, case_id="case-77")
    _, doc = run("--request")
    req = row(doc, G)["request"]
    assert _request_text(req).startswith("pending for 48 (needs 104)")
    assert _request_text(req).endswith("; file again for 104 after it settles")


EKS_GROUPS, EKS_NODES = "L-6D54EA21", "L-BD136A63"


def _eks_stack(tmp_path: Any, stack: str, pools: list[dict[str, Any]]) -> str:
    """The path of a stack file ``Pulumi.<stack>.yaml``: an EKS cluster ml in R with ``pools``."""
    import yaml

    doc = {
        "config": {
            "aws:region": R,
            "gpu-infra:platform": "eks",
            "gpu-infra:cluster": {"name": "ml", "location": R, "kubernetesVersion": "1.33"},
            "gpu-infra:gpuPools": pools,
        }
    }
    path = tmp_path / f"Pulumi.{stack}.yaml"
    path.write_text(yaml.safe_dump(doc))
    return str(path)


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


def run_config(path: str, *args: str) -> tuple[int, dict[str, Any]]:
    return quota_cli.run("--config", path, *args)


def _odcr(
    rid: str, itype: str, total: int, available: int, state: str = "active", **extra: Any
) -> dict[str, Any]:
    return {
        **extra,
        "capacityReservationId": rid,
        "instanceType": itype,
        "instancePlatform": "Linux/UNIX",
        "availabilityZone": f"{R}a",
        "totalInstanceCount": total,
        "availableInstanceCount": available,
        "state": state,
        "instanceMatchCriteria": "open",
        "reservationType": "default",
    }


def test_an_unused_odcr_of_10_g4dn_makes_eks_g4dn_short_where_it_was_ok(
    env: dict[str, Any],
) -> None:
    # "Capacity Reservations count toward your On-Demand Instance quotas, even if they are
    # unused" (EC2 User Guide, ec2-capacity-reservations.html)
    code, doc = run()
    assert code == 0 and row(doc, G)["status"] == "ok"  # 104 needed, 120 free
    env["ec2"].reservations[R] = [_odcr("cr-1", "g4dn.xlarge", 10, 10)]
    code, doc = run()
    g = row(doc, G)
    assert code == 1 and (g["usage"], g["status"]) == (40, "short")  # 10 x 4 vCPUs held
    assert row(doc, G_SPOT)["usage"] == 0  # ODCRs hold On-Demand quota only
    assert env["ec2"].calls["DescribeCapacityReservations"] >= 1


def test_reservations_hold_quota_while_assessing_scheduled_pending_active_or_delayed(
    env: dict[str, Any],
) -> None:
    held = ["assessing", "scheduled", "pending", "delayed"]  # nothing runs in them yet
    ended = ["expired", "cancelled", "failed"]
    env["ec2"].reservations[R] = [
        _odcr(f"cr-{s}", "g4dn.xlarge", 3, 0 if s in held else 3, s) for s in held + ended
    ]
    _, doc = run()
    assert row(doc, G)["usage"] == len(held) * 3 * 4


def test_instances_running_inside_a_reservation_are_counted_once(env: dict[str, Any]) -> None:
    launch(env["moto"], R, "g4dn.xlarge", 2)  # running in cr-4: available 10 - 2
    env["ec2"].reservations[R] = [_odcr("cr-4", "g4dn.xlarge", 10, 8)]
    _, doc = run()
    assert row(doc, G)["usage"] == 10 * 4  # 2 running + 8 unused, not 2 + 10


def test_reservations_unreadable_make_usage_unknown_not_zero(env: dict[str, Any]) -> None:
    env["ec2"].inject(
        "DescribeCapacityReservations",
        (
            403,
            b"<Response><Errors><Error><Code>UnauthorizedOperation</Code><Message>You are "
            b"not authorized to perform this operation.</Message></Error></Errors></Response>",
            {},
        ),
    )
    code, doc = run()
    g = row(doc, G)
    assert code == 3 and g["status"] == "unknown"
    assert "ec2:DescribeCapacityReservations" in g["reason"]


def test_a_pool_on_a_reservation_adds_demand_only_beyond_its_size(env: dict[str, Any]) -> None:
    # eks-hpc: h200-odcr (p5en.48xlarge, max 2) launches into cr-0123456789abcdef0.
    p_code = "L-417A185B"
    env["sq"].applied[(R, p_code)] = 4000.0
    env["ec2"].reservations[R] = [_odcr("cr-0123456789abcdef0", "p5en.48xlarge", 2, 2)]
    _, doc = quota_cli.run("--stack", "eks-hpc")
    p = row(doc, p_code)
    # 192 vCPUs x (4 h100 + 0 h200 beyond the reservation + 2 b200); no update surge: hpc, ODCR
    # and Capacity Block groups update with updateStrategy MINIMAL (terminate first)
    assert (p["needed"], p["usage"]) == (192 * (4 + 0 + 2), 2 * 192)
    assert any("beyond reservation cr-0123456789abcdef0 (2 reserved" in w for w in p["pools"])


def _odcr_stack(tmp_path: Any, rid: str, zone: str = "usw2-az1") -> str:
    pool = {
        "name": "odcr",
        "machineType": "g4dn.xlarge",
        "minNodes": 0,
        "maxNodes": 10,
        "zones": [zone],
        "capacityReservation": {"id": rid},
    }
    return _eks_stack(tmp_path, "odcr", [pool])


def test_a_reservation_nets_only_its_free_slots_so_a_busy_one_leaves_the_pool_short(
    env: dict[str, Any], tmp_path: Any
) -> None:
    # 10 x g4dn reserved in usw2-az1: 6 slots taken by instances of no node group of this
    # stack, 4 free. Only 4 of the pool's 10 nodes fit in it; 6 x 4 vCPUs draw G quota.
    launch(env["moto"], R, "g4dn.xlarge", 6)
    rid = "cr-0000000000000b05e"
    env["ec2"].reservations[R] = [_odcr(rid, "g4dn.xlarge", 10, 4, availabilityZoneId="usw2-az1")]
    env["sq"].applied[(R, G)] = 60.0  # usage 6 x 4 running + 4 x 4 unused = 40: 20 free
    code, doc = run_config(_odcr_stack(tmp_path, rid))
    g = row(doc, G)
    assert (g["usage"], g["needed"], g["status"]) == (40, 24, "short") and code == 1
    assert any(f"6 nodes beyond reservation {rid} (4 reserved" in w for w in g["pools"])


def test_a_reservation_in_another_az_nets_nothing_and_says_so(
    env: dict[str, Any], tmp_path: Any
) -> None:
    odcr = _odcr("cr-00000000000000a22", "g4dn.xlarge", 10, 10, availabilityZoneId="usw2-az2")
    env["ec2"].reservations[R] = [odcr]
    _, doc = run_config(_odcr_stack(tmp_path, "cr-00000000000000a22"))
    g = row(doc, G)
    assert g["needed"] == 10 * 4
    assert any("usw2-az2" in w and "counted in full" in w for w in g["pools"])


def test_a_reservation_shared_in_from_another_account_is_not_this_accounts_usage(
    env: dict[str, Any],
) -> None:
    # the owner shares it; the unused part holds the owner's quota (capacity-reservation-sharing)
    odcr = _odcr("cr-shared", "g4dn.xlarge", 10, 10, ownerId="111122223333")
    own = _odcr("cr-own", "g4dn.xlarge", 2, 2, ownerId="123456789012")  # moto's account
    env["ec2"].reservations[R] = [odcr, own]
    _, doc = run()
    assert row(doc, G)["usage"] == 2 * 4


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


def test_where_nets_the_home_regions_reservation_as_the_plain_check_does(
    env: dict[str, Any], tmp_path: Any
) -> None:
    odcr = _odcr("cr-0000000000000f4ee", "g4dn.xlarge", 10, 10, availabilityZoneId="usw2-az1")
    env["ec2"].reservations[R] = [odcr]
    env["sq"].applied[(R, G)] = 60.0  # 10 x 4 reserved in usage; the pool's 10 nodes fit in it
    path = _odcr_stack(tmp_path, "cr-0000000000000f4ee")
    code, _ = run_config(path)
    assert code == 0
    code, doc = run_config(path, "--where", "--regions", R)
    assert code == 0 and doc["where"][0]["regions"][0]["fits"] is True


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
