"""What the quota_aws emulator modules share: moto and the fake Service Quotas reset and stocked
for eks-g4dn (``env``), the region and quota codes they read, and the runs.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from typing import Any

import pytest
from botocore.retries.standard import ExponentialBackoff

from tests.emulator import quota_cli
from tests.emulator.quota_cli import aws_test_credentials, empty_aws_fakes, moto_ec2
from tests.fakes import aws as a

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


def run_config(path: str, *args: str) -> tuple[int, dict[str, Any]]:
    return quota_cli.run("--config", path, *args)
