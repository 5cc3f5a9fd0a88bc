"""Field rules for IDs and account names: each ID kind once, as its issuer writes it."""

from __future__ import annotations

import pytest

from infra.core import rules


def refused(check, value) -> str:
    with pytest.raises(ValueError) as e:
        check(value)
    return str(e.value)


# --- EC2 IDs: prefix, hyphen, 8 (before 2016) or 17 lowercase hex characters
# (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/resource-ids.html) -----------------------
EC2_ID_RULES = [
    (rules.check_vpc_id, "vpc"),
    (rules.check_subnet_id, "subnet"),
    (rules.check_capacity_reservation_id, "cr"),
]


@pytest.mark.parametrize(("check", "prefix"), EC2_ID_RULES)
@pytest.mark.parametrize("hex_", ["1a2b3c4d", "0123456789abcdef0"])
def test_check_ec2_ids_accept_the_two_lengths_ec2_issues(check, prefix, hex_):
    assert check(f"{prefix}-{hex_}") == f"{prefix}-{hex_}"


@pytest.mark.parametrize(("check", "prefix"), EC2_ID_RULES)
@pytest.mark.parametrize(
    "hex_",
    ["1a2b3c4", "1a2b3c4d5", "0123456789abcdef", "0123456789abcdef01", "0123456789ABCDEF0", ""],
)
def test_check_ec2_ids_refuse_lengths_ec2_never_issues_and_capitals(check, prefix, hex_):
    assert "8 or 17 lowercase hex digits" in refused(check, f"{prefix}-{hex_}")


def test_check_ec2_ids_refuse_another_kinds_prefix():
    refused(rules.check_vpc_id, "subnet-0123456789abcdef0")
    refused(rules.check_subnet_id, "sg-0123456789abcdef0")
    refused(rules.check_capacity_reservation_id, "crb-0123456789abcdef0")


@pytest.mark.parametrize(
    "good",
    [
        "gke-nodes@demo-project.iam.gserviceaccount.com",
        "nodes-01@my-project.example.com.iam.gserviceaccount.com",  # domain-scoped project
    ],
)
def test_check_gcp_service_account_email_accepts_user_managed_accounts(good):
    assert rules.check_gcp_service_account_email(good) == good


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        ("123456789-compute@developer.gserviceaccount.com", "Compute Engine default account"),
        ("ab@demo-project.iam.gserviceaccount.com", "ACCOUNT_ID@PROJECT_ID"),  # id under 6
        ("gke-nodes@Demo-Project.iam.gserviceaccount.com", "ACCOUNT_ID@PROJECT_ID"),
        ("gke-nodes", "ACCOUNT_ID@PROJECT_ID"),
    ],
)
def test_check_gcp_service_account_email_refuses_the_default_account_and_other_forms(bad, why):
    assert why in refused(rules.check_gcp_service_account_email, bad)
