"""What the emulator tests share: quota.check run for its `--json`, and AWS clients sent to emulators."""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from typing import Any

import boto3
import pytest

from quota.check import main


def run(*args: str) -> tuple[int, dict[str, Any]]:
    """Exit code and the ``--json`` document of ``python -m quota.check ARGS --json``."""
    out = io.StringIO()
    code = main([*args, "--json"], out=out, err=io.StringIO())
    return code, json.loads(out.getvalue())


def row(doc: dict[str, Any], quota: str) -> dict[str, Any]:
    """The check row of ``quota`` in a ``--json`` document."""
    return next(c for c in doc["checks"] if c["quota"] == quota)


def aws_test_credentials(monkeypatch: pytest.MonkeyPatch, **endpoints: str) -> None:
    """Dummy credentials, no profile or config file of this machine, and each AWS client sent
    to its emulator: ``EC2="http://…"`` sets ``AWS_ENDPOINT_URL_EC2`` (botocore's
    service-specific endpoint variables)."""
    for k, v in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_CONFIG_FILE": "/dev/null",
        "AWS_SHARED_CREDENTIALS_FILE": "/dev/null",
        **{f"AWS_ENDPOINT_URL_{service}": url for service, url in endpoints.items()},
    }.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("AWS_PROFILE", raising=False)


def empty_aws_fakes(fakes: Mapping[str, Any], defaults: Mapping[str, float]) -> None:
    """The ``aws_fakes`` emptied: Service Quotas knows only ``defaults`` (quota code -> AWS
    default) and leaves requests pending; no capacity reservation stands in front of EC2."""
    sq, ec2 = fakes["sq"], fakes["ec2"]
    sq.reset()
    sq.applied.clear()
    sq.history.clear()
    sq.defaults = dict(defaults)
    sq.policy = "pending"
    ec2.reset()
    ec2.reservations.clear()


def moto_ec2(moto: str, region: str) -> Any:
    """A boto3 EC2 client on moto at ``moto`` in ``region``, with dummy credentials."""
    return boto3.client(
        "ec2",
        region_name=region,
        endpoint_url=moto,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


_AMI: dict[tuple[str, str], str] = {}


def launch(
    moto: str,
    region: str,
    itype: str,
    count: int,
    tags: Mapping[str, str] | None = None,
    spot: bool = False,
) -> None:
    """``count`` instances of ``itype`` on moto in ``region`` (spot ones with ``spot``), tagged
    ``tags``."""
    ec2 = moto_ec2(moto, region)
    if (moto, region) not in _AMI:  # moto's AMIs are the same after a reset; listing them is slow
        _AMI[moto, region] = ec2.describe_images(Owners=["amazon"])["Images"][0]["ImageId"]
    kw: dict[str, Any] = {"InstanceMarketOptions": {"MarketType": "spot"}} if spot else {}
    if tags:
        spec = [{"Key": k, "Value": v} for k, v in tags.items()]
        kw["TagSpecifications"] = [{"ResourceType": "instance", "Tags": spec}]
    ec2.run_instances(
        ImageId=_AMI[moto, region], InstanceType=itype, MinCount=count, MaxCount=count, **kw
    )
