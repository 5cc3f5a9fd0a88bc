"""The system pool's machine type is one the quota preflight can count, refused by the planner."""

from __future__ import annotations

import pytest

from infra.core.catalog.vendored import DATA_DIR, Catalog
from infra.core.errors import ConfigErrors
from infra.core.system_pool import (
    aws_architecture,
    aws_system_type_problem,
    aws_vcpus_from_name,
    gcp_system_type_problem,
)
from quota.rules import aws_vm_quotas

CATALOG = Catalog.load()


@pytest.mark.parametrize("good", ["m6i.large", "c7i.2xlarge", "t3.xlarge", "r6g.large"])
def test_aws_system_type_accepts_standard_class_large_and_xlarge(good):
    assert aws_system_type_problem(good, CATALOG) is None


@pytest.mark.parametrize(
    ("bad", "words"),
    [
        ("zz9.large", "matches no EC2 vCPU quota class"),
        ("hpc7g.4xlarge", "matches no EC2 vCPU quota class"),
        ("g4dn.xlarge", "is a GPU instance type"),
        ("m6i.medium", "vCPUs of this size are not known"),
    ],
)
def test_aws_system_type_refuses_unknown_class_gpu_and_unsized(bad, words):
    assert words in (aws_system_type_problem(bad, CATALOG) or "")


@pytest.mark.parametrize("good", ["e2-standard-4", "n2-highmem-8", "c4-standard-4"])
def test_gcp_system_type_accepts_predefined_types_of_counted_families(good):
    assert gcp_system_type_problem(good, CATALOG) is None


@pytest.mark.parametrize(
    ("bad", "words"),
    [
        ("n2-custom-4-16384", "not a predefined GCP machine type"),
        ("x9-standard-4", "has no known vCPU quota"),
        ("g2-standard-4", "has no known vCPU quota"),
    ],
)
def test_gcp_system_type_refuses_custom_and_uncounted_families(bad, words):
    assert words in (gcp_system_type_problem(bad, CATALOG) or "")


def test_aws_vcpus_from_name_knows_large_nxlarge_and_the_listed_small_sizes_only():
    names = ("m6i.large", "m6i.4xlarge", "t3.medium", "t2.micro", "m7g.medium", "m6i.medium")
    assert [aws_vcpus_from_name(t, DATA_DIR) for t in names] == [2, 16, 2, 1, 1, None]


@pytest.mark.parametrize("small", ["t3.medium", "t3a.small", "t4g.medium", "m7g.medium"])
def test_aws_system_type_accepts_current_small_general_purpose_sizes(small):
    assert aws_system_type_problem(small, CATALOG) is None


@pytest.mark.parametrize(
    ("itype", "arch"),
    [
        ("m7g.large", "arm64"),
        ("t4g.medium", "arm64"),
        ("c6gn.xlarge", "arm64"),
        ("a1.large", "arm64"),
        ("m6i.large", "x86_64"),
        ("t3.medium", "x86_64"),
        ("m7i-flex.large", "x86_64"),
    ],
)
def test_graviton_families_are_arm64_by_the_g_in_the_type_name(itype, arch):
    assert aws_architecture(itype) == arch


def test_aws_vm_quotas_refuses_an_unknown_class_as_a_config_error_not_key_error():
    with pytest.raises(ConfigErrors, match="matches no EC2 vCPU quota class"):
        aws_vm_quotas("us-west-2", ("zz9.large",), 2, False)
