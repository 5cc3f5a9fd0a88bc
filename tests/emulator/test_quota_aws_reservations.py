"""quota.check on EKS stacks with On-Demand Capacity Reservations: a reservation holds quota
while it is not used, and a pool on one needs quota only beyond its free slots.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.emulator import quota_aws_fixtures, quota_cli
from tests.emulator.quota_aws_fixtures import G_SPOT, G, R, _eks_stack, run, run_config
from tests.emulator.quota_cli import launch, row

pytestmark = pytest.mark.emulator

# Fixtures this module shares with its siblings (quota_aws_fixtures).
env = quota_aws_fixtures.env
probe = quota_aws_fixtures.probe


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
