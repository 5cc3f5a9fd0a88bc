"""EKS version facts as data: add-on versions pinned per Kubernetes minor, the support calendar."""

from __future__ import annotations

import itertools
import re

import pytest

from infra.core import offline
from infra.core.catalog.eks_versions import (
    eks_addon_versions,
    eks_standard_support_ends,
    extended_support_ends,
)
from infra.core.catalog.pricing import Prices
from infra.core.catalog.vendored import DATA_DIR, read_rows
from infra.core.eks import versions
from tests.unit.test_eks import eks_config, errors_of, plan_of

# --- add-on versions pinned per minor (eks_addon_versions.csv) --------------------------------


def _addons(version: str, **cluster: object) -> dict[str, str]:
    p = plan_of(eks_config(cluster={"kubernetesVersion": version, **cluster}))
    return {a.name: a.version for a in p.addons}


def test_addon_versions_are_pinned_per_kubernetes_minor_from_the_data_table():
    assert _addons("1.33")["kube-proxy"] == "v1.33.10-eksbuild.13"
    assert _addons("1.33")["coredns"] == "v1.12.4-eksbuild.18"
    assert _addons("1.33")["vpc-cni"] == "v1.20.4-eksbuild.1"
    assert _addons("1.34")["kube-proxy"] == "v1.34.6-eksbuild.13"


def _cni_minor(version: str) -> tuple[int, int]:
    major, minor = version.removeprefix("v").split(".")[:2]
    return int(major), int(minor)


def test_vpc_cni_pins_of_adjacent_kubernetes_minors_are_at_most_one_vpc_cni_minor_apart():
    # EKS: "Updating VPC-CNI can only go up or down 1 minor version at a time".
    pins = {k: v for (a, k), v in eks_addon_versions(DATA_DIR).items() if a == "vpc-cni"}
    minors = sorted(pins, key=lambda k: int(k.split(".")[1]))
    assert len(minors) >= 3
    for lo, hi in itertools.pairwise(minors):
        (a, b), (c, d) = _cni_minor(pins[lo]), _cni_minor(pins[hi])
        assert a == c and abs(b - d) <= 1, (lo, hi, pins[lo], pins[hi])


def test_vpc_cni_is_pinned_on_every_minor_the_english_page_lists_up_to_1_34():
    for minor in ("1.32", "1.33", "1.34"):
        assert _addons(minor)["vpc-cni"] == "v1.20.4-eksbuild.1"
    rows = [r for r in read_rows("eks_addon_versions.csv", DATA_DIR) if r["addon"] == "vpc-cni"]
    assert {r["source"] for r in rows} == {
        "https://docs.aws.amazon.com/eks/latest/userguide/managing-vpc-cni.md"
    }


def test_a_kubernetes_minor_bump_changes_every_pinned_addon_that_tracks_the_minor():
    old, new = _addons("1.33"), _addons("1.34")
    assert old["kube-proxy"] != new["kube-proxy"] and old["coredns"] != new["coredns"]


def test_an_addon_without_a_pinned_row_follows_eks_default_read_at_deploy_time():
    # Offline the plan says so; on `pulumi up` it is the observed default (test_eks_live).
    got = _addons("1.35", autoscaler={"identity": "pod-identity"})
    at_deploy = offline.eks_addon_default("1.35")
    assert got["aws-ebs-csi-driver"] == got["eks-pod-identity-agent"] == at_deploy
    assert got["vpc-cni"] == at_deploy  # the user guide's vpc-cni table stops at 1.34


def test_kube_proxy_pins_carry_their_own_kubernetes_minor():
    # kube-proxy is built per Kubernetes minor: v<minor>.<patch>-eksbuild.<n> (managing-kube-proxy).
    for (addon, minor), version in eks_addon_versions(DATA_DIR).items():
        if addon == "kube-proxy":
            assert version.startswith(f"v{minor}."), (minor, version)


def test_every_pinned_addon_row_is_an_eksbuild_version_with_a_source_and_date():
    for r in read_rows("eks_addon_versions.csv", DATA_DIR):
        assert re.fullmatch(r"v\d+\.\d+\.\d+-eksbuild\.\d+", r["version"]), r
        assert r["source"].startswith("https://docs.aws.amazon.com/"), r
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", r["as_of"]), r


def test_addon_rows_name_only_addons_the_plan_creates():
    made = set(_addons("1.33", autoscaler={"identity": "pod-identity"}))
    assert {addon for addon, _ in eks_addon_versions(DATA_DIR)} <= made


# --- supported Kubernetes versions (eks_standard_support.csv) ---------------------------------


def test_extended_support_ends_twelve_months_after_standard_support():
    assert extended_support_ends("2025-11-26") == "2026-11-26"
    assert extended_support_ends("2026-12-02") == "2027-12-02"


def test_a_version_past_eks_extended_support_is_a_config_error_naming_the_supported_ones():
    problem = errors_of(eks_config(cluster={"kubernetesVersion": "1.31"}))[
        "cluster.kubernetesVersion"
    ]
    assert "extended support ended 2026-11-26" in problem
    assert "1.32, 1.33, 1.34, 1.35" in problem


@pytest.mark.parametrize("version", ["1.32", "1.33", "1.34", "1.35", "1.36"])
def test_versions_in_standard_or_extended_support_or_newer_than_the_calendar_pass(version):
    assert versions.support_problem(version, DATA_DIR) is None


def test_a_version_older_than_the_calendar_is_refused():
    assert versions.support_problem("1.20", DATA_DIR) is not None


def test_every_calendar_version_is_a_major_minor_with_an_iso_date():
    for version, end in eks_standard_support_ends(DATA_DIR).items():
        assert re.fullmatch(r"1\.\d{2}", version) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", end)


# --- releaseVersion: a pinned EKS-optimized AMI release ----------------------------------------


def _pool_release(release: str, version: str = "1.33", **pool: object) -> dict[str, object]:
    return eks_config({"releaseVersion": release, **pool}, cluster={"kubernetesVersion": version})


def test_release_version_is_sent_on_the_node_group_when_pinned():
    (g,) = plan_of(_pool_release("1.33.5-20251120")).groups
    assert g.release_version == "1.33.5-20251120"
    (g,) = plan_of(eks_config()).groups
    assert g.release_version is None


def test_an_al2023_release_of_another_kubernetes_minor_is_refused_naming_both():
    problem = errors_of(_pool_release("1.33.5-20251120", "1.34"))["gpuPools[0].releaseVersion"]
    assert "Kubernetes 1.33" in problem and "1.34" in problem


def test_a_bottlerocket_release_is_not_tied_to_the_kubernetes_minor():
    cfg = _pool_release("1.50.0-5d9ac849", "1.34", amiFamily="bottlerocket")
    (g,) = plan_of(cfg).groups
    assert g.release_version == "1.50.0-5d9ac849"


def test_a_release_version_that_is_not_version_dash_build_is_refused():
    assert "gpuPools[0].releaseVersion" in errors_of(_pool_release("latest"))


def test_al2023_release_version_must_be_kubernetes_version_dash_build_date():
    problem = errors_of(_pool_release("1.33.5-5d9ac849"))["gpuPools[0].releaseVersion"]
    assert "'1.33.5-5d9ac849'" in problem and "<YYYYMMDD>" in problem


def test_bottlerocket_release_version_must_be_version_dash_8_hex_commit():
    cfg = _pool_release("1.50.0-build1", "1.33", amiFamily="bottlerocket")
    problem = errors_of(cfg)["gpuPools[0].releaseVersion"]
    assert "'1.50.0-build1'" in problem and "8 hex commit" in problem
    assert "BOTTLEROCKET" in problem


def test_release_version_is_refused_on_karpenter_pools_naming_the_alias():
    from tests.unit.test_karpenter_pools import refusal

    text = refusal(releaseVersion="1.34.2-20260714")
    assert "gpuPools[0].releaseVersion" in text and "'1.34.2-20260714'" in text
    assert "amiSelectorTerms alias" in text


# --- the support rule's day: max(table as_of, today) -------------------------------------------


def test_support_rule_judges_on_today_when_the_table_is_older(monkeypatch):
    assert versions.support_problem("1.34", DATA_DIR) is None
    # 1.34's extended support ends 2027-12-02: a day later it is gone, whatever the table's date.
    monkeypatch.setenv("GPU_INFRA_TODAY", "2027-12-03")
    problem = versions.support_problem("1.34", DATA_DIR)
    assert problem is not None and "extended support ended 2027-12-02" in problem
    assert "supported as of 2027-12-03" in problem


def test_support_rule_never_judges_before_the_table_was_read(monkeypatch):
    monkeypatch.setenv("GPU_INFRA_TODAY", "2020-01-01")
    problem = versions.support_problem("1.30", DATA_DIR)  # extended support ended 2026-07-23
    assert problem is not None and "supported as of 2026-11-27" in problem


def test_a_today_override_that_is_not_a_date_is_named_in_the_error(monkeypatch):
    monkeypatch.setenv("GPU_INFRA_TODAY", "tomorrow")
    assert (
        versions.support_problem("1.34", DATA_DIR)
        == "GPU_INFRA_TODAY='tomorrow': not a YYYY-MM-DD date"
    )


@pytest.mark.parametrize("built", ["20250231", "20251301", "20250000", "19990229"])
def test_an_amazon_linux_release_whose_build_date_cannot_exist_is_refused(built):
    """awslabs/amazon-eks-ami CHANGELOG.md: releases are ``<kubernetes version>-<YYYYMMDD>``,
    named after the day they were built; a day that does not exist names no release."""
    problem = errors_of(_pool_release(f"1.33.5-{built}"))["gpuPools[0].releaseVersion"]
    assert f"{built} is not a date" in problem


def test_a_leap_day_build_is_a_release_version():
    (g,) = plan_of(_pool_release("1.33.5-20240229")).groups
    assert g.release_version == "1.33.5-20240229"


def test_release_version_shape_follows_ami_type_not_ami_family():
    """amiType wins over amiFamily for the AMI (botocore AMITypes), so the release's shape is
    the Bottlerocket one even though amiFamily is left at al2023."""
    cfg = _pool_release("1.50.0-5d9ac849", "1.34", amiType="BOTTLEROCKET_x86_64_NVIDIA")
    (g,) = plan_of(cfg).groups
    assert g.release_version == "1.50.0-5d9ac849"
    cfg = _pool_release("1.50.0-build1", "1.34", amiType="BOTTLEROCKET_x86_64_NVIDIA")
    assert "8 hex commit" in errors_of(cfg)["gpuPools[0].releaseVersion"]


# --- the default version and the extended-support fee, judged on max(today, table date) --------
# Dates from the EKS release calendar (eks_standard_support.csv's source): standard support of
# 1.33 ends 2026-07-29, of 1.34 2026-12-02, of 1.35 2027-03-27; the table was read 2026-11-27.


def test_a_stack_without_kubernetes_version_gets_the_newest_in_standard_support_and_a_note():
    p = plan_of(eks_config(cluster={"kubernetesVersion": None}))
    assert p.kubernetes_version == "1.35"  # 1.34 and 1.35 are standard on 2026-11-27
    (note,) = [n for n in p.notes if "kubernetesVersion is not set" in n]
    assert "1.35, the newest version in EKS standard support on 2026-11-27" in note


def test_when_the_calendar_lists_no_standard_version_the_default_is_the_newest_listed(monkeypatch):
    from infra.core.catalog.eks_versions import default_eks_version

    monkeypatch.setenv("GPU_INFRA_TODAY", "2027-03-27")  # 1.35's standard support ends that day
    assert default_eks_version(DATA_DIR) == "1.35"
    monkeypatch.setenv("GPU_INFRA_TODAY", "2026-12-02")  # 1.34 gone from standard: still 1.35
    assert default_eks_version(DATA_DIR) == "1.35"


def test_a_new_cluster_on_a_version_past_standard_support_is_warned_an_existing_one_is_not():
    created = plan_of(eks_config(cluster={"kubernetesVersion": "1.33"}))
    (warning,) = [n for n in created.notes if "starts in extended support" in n]
    assert "standard support ended 2026-07-29" in warning and "1.35 is in standard" in warning
    assert not [n for n in plan_of(eks_config(cluster={"kubernetesVersion": "1.34"})).notes
                if "extended support" in n]  # fmt: skip


def test_the_control_plane_fee_is_judged_on_today_when_later_than_the_price_date(monkeypatch):
    # https://aws.amazon.com/eks/pricing/: $0.10/h standard, $0.60/h extended support; 1.34 leaves
    # standard support on 2026-12-02 ("Billing for extended support starts at the beginning of the
    # day that the version reaches end of standard support").
    from infra.core.eks.cost import eks_control_plane

    assert eks_control_plane("1.34", "us-west-2", Prices.load()).at_min == pytest.approx(0.10)
    monkeypatch.setenv("GPU_INFRA_TODAY", "2026-12-04")
    line = eks_control_plane("1.34", "us-west-2", Prices.load())
    assert line.at_min == pytest.approx(0.60) and "extended support since 2026-12-02" in line.item
