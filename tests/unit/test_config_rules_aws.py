"""Field rules of what AWS and EKS receive (``infra.core.rules.aws``): instance types, AZ IDs, CIDRs,
IAM principals, EKS versions, cluster names and access scopes, as their APIs accept them.
"""

from __future__ import annotations

import pytest

from infra.core import rules
from infra.core.errors import RuleError
from tests.unit.config_rules_fixtures import refused


@pytest.mark.parametrize("good", ["m6i.large", "g4dn.xlarge", "p4d.24xlarge", "c7gn.metal"])
def test_check_ec2_instance_type_accepts_instance_type_names(good):
    assert rules.check_ec2_instance_type(good) == good


@pytest.mark.parametrize("bad", ["m6i", "e2-standard-4", "M6i.large", "m6i.huge"])
def test_check_ec2_instance_type_refuses_other_names(bad):
    assert "is not an EC2 instance type" in refused(rules.check_ec2_instance_type, bad)


def test_check_az_id_explains_an_az_name_given_for_an_az_id():
    assert rules.check_az_id("usw2-az1") == "usw2-az1"
    assert rules.check_az_id("usw2-lax1-az1") == "usw2-lax1-az1"
    assert "is an AZ name; give AZ IDs" in refused(rules.check_az_id, "us-west-2a")
    assert "is not an AZ ID" in refused(rules.check_az_id, "zone1")


@pytest.mark.parametrize(
    "bad", ["10.0.0.0/33", "0.0.0.0/0; curl x | sh", "10.0.0.1/16", "300.0.0.0/8", "10.0.0.0"]
)
def test_check_ipv4_cidr_refuses_bad_prefixes_host_bits_and_text(bad):
    assert refused(rules.check_ipv4_cidr, bad)


def test_check_public_access_cidrs_allows_at_most_40_public_blocks():
    ok = [f"198.51.{i}.0/24" for i in range(40)]
    assert rules.check_public_access_cidrs(ok) == ok
    assert "EKS allows at most 40" in refused(rules.check_public_access_cidrs, [*ok, "1.2.3.4/32"])
    with pytest.raises(RuleError) as e:
        rules.check_public_access_cidrs(["1.2.3.4/32", "10.0.0.0/8"])
    assert e.value.at == (1,)
    assert "not a public range" in str(e.value)
    assert rules.check_public_access_cidrs(["0.0.0.0/0"]) == ["0.0.0.0/0"]


def test_check_vpc_cidr_is_a_slash_16_inside_10_slash_8():
    assert rules.check_vpc_cidr("10.1.0.0/16") == "10.1.0.0/16"
    for bad in ("10.999.0.0/16", "192.168.0.0/16", "10.0.0.0/17"):
        assert refused(rules.check_vpc_cidr, bad)


@pytest.mark.parametrize(
    "good",
    [
        "arn:aws:iam::111122223333:role/admins",
        "arn:aws:iam::111122223333:role/development/apps/my-role",
        "arn:aws-us-gov:iam::111122223333:user/alice@example.com",
    ],
)
def test_check_iam_principal_arn_accepts_role_and_user_arns(good):
    assert rules.check_iam_principal_arn(good) == good


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        ("arn:aws:iam::111122223333:role/*", "wildcards are not allowed"),
        ("arn:aws:iam::*:role/admins", "wildcards are not allowed"),
        ("arn:aws:sts::111122223333:assumed-role/admins/me", "is an STS session"),
        ("arn:aws:iam::1111:role/admins", "is not an IAM role or user ARN"),
        ("arn:aws:iam::111122223333:group/admins", "is not an IAM role or user ARN"),
    ],
)
def test_check_iam_principal_arn_refuses_wildcards_and_sessions(bad, why):
    assert why in refused(rules.check_iam_principal_arn, bad)


@pytest.mark.parametrize("bad", ["1,33", "v1.33", "1.33.5", "1.3", "latest"])
def test_check_eks_version_takes_major_minor_only(bad):
    assert rules.check_eks_version("1.33") == "1.33"
    assert "is not an EKS Kubernetes version" in refused(rules.check_eks_version, bad)


@pytest.mark.parametrize("good", ["ML_Cluster", "0prod", "a" * 100, "team-a_gpu"])
def test_check_eks_cluster_name_accepts_createcluster_names(good):
    assert rules.check_eks_cluster_name(good) == good


@pytest.mark.parametrize("bad", ["_ml", "-ml", "ml.prod", "a" * 101, "ml\n", "m\u00e9"])
def test_check_eks_cluster_name_refuses_dots_leading_symbols_and_101_chars(bad):
    assert "is not an EKS cluster name" in refused(rules.check_eks_cluster_name, bad)


def test_check_public_access_cidrs_accepts_halves_of_the_internet_spanning_private_ranges():
    assert rules.check_public_access_cidrs(["0.0.0.0/1", "128.0.0.0/1"]) == [
        "0.0.0.0/1",
        "128.0.0.0/1",
    ]


@pytest.mark.parametrize("cidr", ["10.1.0.0/16", "192.168.1.0/24", "100.64.0.0/10", "127.0.0.1/32"])
def test_check_public_access_cidrs_refuses_blocks_inside_a_non_public_range(cidr):
    with pytest.raises(RuleError, match="not a public range"):
        rules.check_public_access_cidrs([cidr])


@pytest.mark.parametrize("good", ["team-a", "dev-*", "ml*"])
def test_check_access_scope_namespace_accepts_labels_and_trailing_wildcard(good):
    assert rules.check_access_scope_namespace(good) == good


@pytest.mark.parametrize("bad", ["*", "Team", "a*b", "dev_*", "a" * 64])
def test_check_access_scope_namespace_refuses_inner_wildcards_and_capitals(bad):
    assert "namespace prefix" in refused(rules.check_access_scope_namespace, bad)
