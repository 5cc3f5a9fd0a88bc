"""The quota preflight's per-cloud registry: one entry per cloud a platform can run on."""

from __future__ import annotations

from typing import get_args

from infra.core.platform import Cloud as PlatformCloud
from quota.clouds import QUOTA_CLOUDS
from quota.keys import Cloud, QuotaKey


def test_every_cloud_a_platform_names_has_one_quota_entry():
    assert set(QUOTA_CLOUDS) == set(get_args(Cloud)) == set(get_args(PlatformCloud))


def test_a_short_eks_limit_is_requested_by_hand_under_service_code_eks():
    # EKS quotas live under Service Quotas service code "eks" (aws service-quotas
    # request-service-quota-increase --service-code eks).
    key = QuotaKey("aws", "region", "us-west-2", "L-1234", "count", "eks")
    advice = QUOTA_CLOUDS["aws"].limit_advice(key, "us-west-2")
    assert "--service-code eks --quota-code L-1234 --region us-west-2" in advice
    gcp = QuotaKey("gcp", "region", "us-central1", "GKE_NODES_PER_POOL_ZONE", "count", "gke")
    assert "split the pool" in QUOTA_CLOUDS["gcp"].limit_advice(gcp, "us-central1")
