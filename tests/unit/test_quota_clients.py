"""Client-side helpers that need no server: settings defaults, ids, error sentences."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from google.api_core import exceptions as gexc

from infra.core.catalog.vendored import Catalog
from quota.clients.aws import AwsQuotaService, AwsSettings
from quota.clients.gcp import GcpSettings, dimensions_of, preference_id_of, quota_id_of
from quota.clients.gcp_errors import describe_error
from quota.demand import QuotaKey

T4 = QuotaKey("gcp", "region", "us-central1", "NVIDIA_T4_GPUS", "GPUs", "compute-region")
GLOBAL = QuotaKey("gcp", "global", None, "GPUS_ALL_REGIONS", "GPUs", "compute-project")
H100 = QuotaKey(
    "gcp", "region", "us-east4", "NVIDIA_H100_GPUS", "GPUs", "cloudquotas", "NVIDIA_H100"
)


def test_settings_defaults_without_any_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for k in (
        "QUOTA_RETRY_INITIAL",
        "QUOTA_RETRY_DEADLINE",
        "QUOTA_CALL_TIMEOUT",
        "QUOTA_AWS_MAX_ATTEMPTS",
        "QUOTA_ENDPOINT_COMPUTE",
    ):
        monkeypatch.delenv(k, raising=False)
    g = GcpSettings.from_env("p")
    assert (g.retry_initial, g.retry_deadline, g.call_timeout, g.compute_endpoint) == (
        0.5,
        30.0,
        20.0,
        None,
    )
    assert AwsSettings.from_env("us-west-2").max_attempts == 8


def test_cloud_quotas_ids_follow_the_compute_metric() -> None:
    assert quota_id_of(T4) == "NVIDIA-T4-GPUS-per-project-region"
    assert quota_id_of(GLOBAL) == "GPUS-ALL-REGIONS-per-project"
    assert quota_id_of(H100) == "GPUS-PER-GPU-FAMILY-per-project-region"


def test_preference_ids_are_deterministic_per_quota_and_dimensions() -> None:
    assert preference_id_of(T4) == "gpu-infra-nvidia-t4-gpus-per-project-region-us-central1"
    assert preference_id_of(GLOBAL) == "gpu-infra-gpus-all-regions-per-project"
    assert preference_id_of(H100).endswith("-nvidia-h100-us-east4")
    assert dimensions_of(GLOBAL) == {} and dimensions_of(H100) == {
        "region": "us-east4",
        "gpu_family": "NVIDIA_H100",
    }


class _Ec2Stub:
    """DescribeInstances with fixed instances; records DescribeInstanceTypes lookups."""

    def __init__(
        self, instances: list[dict[str, str]], spot_requests: list[dict[str, object]] | None = None
    ) -> None:
        self.instances = instances
        self.spot_requests = spot_requests or []
        self.described: list[str] = []

    def get_paginator(self, name: str) -> Any:
        pages = {
            "describe_instances": [{"Reservations": [{"Instances": self.instances}]}],
            "describe_spot_instance_requests": [{"SpotInstanceRequests": self.spot_requests}],
            "describe_capacity_reservations": [{"CapacityReservations": []}],
        }[name]
        # one paginator per call: the service pages its three listings concurrently
        return SimpleNamespace(paginate=lambda **_: pages)

    def describe_instance_types(self, InstanceTypes: list[str]) -> dict[str, object]:
        self.described += InstanceTypes
        return {
            "InstanceTypes": [
                {"InstanceType": t, "VCpuInfo": {"DefaultVCpus": 2}} for t in InstanceTypes
            ]
        }


def test_aws_usage_looks_up_vcpus_only_for_types_under_the_checked_codes() -> None:
    service = AwsQuotaService(AwsSettings("us-west-2"), Catalog.load())
    stub = _Ec2Stub(
        [
            {"InstanceType": "m5.large"},  # Standard: checked, not in the GPU catalog
            {"InstanceType": "inf1.xlarge"},  # Inf: not checked, must not be looked up
            {"InstanceType": "g4dn.xlarge", "InstanceLifecycle": "spot"},  # G spot: not checked
            {"InstanceType": "g4dn.xlarge"},
        ]
    )
    service.ec2 = stub
    assert service._usage({"L-1216C47A", "L-DB2E81BA"}) == {"L-1216C47A": 2, "L-DB2E81BA": 4}
    assert stub.described == ["m5.large"]


def test_aws_open_spot_requests_count_as_spot_usage() -> None:
    # moto fulfils Spot requests at once, so an open one can only be shown with a stub.
    service = AwsQuotaService(AwsSettings("us-west-2"), Catalog.load())
    service.ec2 = _Ec2Stub(
        [{"InstanceType": "g4dn.xlarge", "InstanceLifecycle": "spot"}],
        [{"State": "open", "LaunchSpecification": {"InstanceType": "g4dn.2xlarge"}}],
    )
    assert service._usage({"L-3819A6DF"}) == {"L-3819A6DF": 4 + 8}


@pytest.mark.parametrize(
    ("call", "permission"),
    [
        ("quotaInfos.get", "cloudquotas.quotas.get"),
        ("quotaPreferences.create", "cloudquotas.quotas.update"),
        ("instances.aggregatedList", "compute.instances.list"),
        ("services.batchGet", "serviceusage.services.get"),
    ],
)
def test_permission_denied_without_a_named_permission_names_the_iam_permission_the_call_needs(
    call: str, permission: str
) -> None:
    reason = describe_error(gexc.Forbidden("The caller does not have permission"), call, "p")
    assert reason == f"{call}: permission denied: {permission} on project p"
