"""Emulator fixtures shared by the modules: one botocore model loader and one moto server."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import botocore.loaders
import botocore.session
import pytest
from moto.server import ThreadedMotoServer


@pytest.fixture(scope="session", autouse=True)
def shared_botocore_loader() -> Iterator[None]:
    """Parse botocore's JSON service models once per test session, not once per boto3 session.

    quota.check builds a fresh boto3 session per run (as it must: it runs once per process), and
    each session re-reads the EC2 model (megabytes of JSON) into a new Loader. The Loader only
    caches files that ship with botocore, so sharing one changes no request, answer or error:
    clients still speak HTTP to the emulators.
    """
    original = botocore.session.create_loader
    botocore.session.create_loader = functools.cache(original)
    yield
    botocore.session.create_loader = original


@pytest.fixture(scope="session")
def moto_url() -> Iterator[str]:
    """One moto server for the session: moto builds a region's EC2 backend on its first request
    (seconds), so modules that only read share a warm one. A module that changes moto's state
    puts it back before its next test (see test_quota_aws's ``env``)."""
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


# --- AWS fakes for the quota modules -----------------------------------------------------------


@pytest.fixture(scope="module")
def aws_fakes(moto_url: str) -> Iterator[dict[str, Any]]:
    """The fake Service Quotas and EC2 as the check sees it (moto, with DescribeCapacityReservations
    answered in front of it), one pair per module; each module's ``env`` empties them per test."""
    from tests.fakes import aws as a

    sq = a.FakeServiceQuotas()
    sq.start()
    ec2 = a.Ec2WithReservations(moto_url)
    ec2.start()
    yield {"moto": moto_url, "sq": sq, "ec2": ec2}
    ec2.stop()
    sq.stop()


# --- GCP fakes for the quota modules -----------------------------------------------------------

GCP_PROJECT = "demo-project"


@pytest.fixture(scope="module")
def gcp_fakes() -> Iterator[dict[str, object]]:
    """Compute, Cloud Quotas and Service Usage fakes, one set per module."""
    from tests.fakes import gcp as g

    compute, quotas, usage = g.FakeCompute(), g.FakeCloudQuotas(), g.FakeServiceUsage()
    for f in (compute, quotas, usage):
        f.start()
    yield {"compute": compute, "quotas": quotas, "usage": usage}
    for f in (compute, quotas, usage):
        f.stop()


@pytest.fixture
def gcp_env(gcp_fakes: dict[str, object], monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    """The fakes emptied, the QUOTA_ENDPOINT_* variables pointing at them, short retries; a
    granted QuotaPreference raises the fake's limit."""
    from tests.fakes import gcp as g

    compute, quotas, usage = gcp_fakes["compute"], gcp_fakes["quotas"], gcp_fakes["usage"]
    assert isinstance(compute, g.FakeCompute) and isinstance(quotas, g.FakeCloudQuotas)
    assert isinstance(usage, g.FakeServiceUsage)
    for f in (compute, quotas, usage):
        f.reset()
    for table in (
        compute.regions,
        compute.projects,
        compute.quota_warning,
        compute.instances,
        compute.disks,
        compute.reservations,
        compute.zones,
        quotas.prefs,
        quotas.infos,
    ):
        table.clear()
    quotas.patched_etags.clear()
    quotas.absent.clear()
    quotas.policy = "pending"
    quotas.require_quota_project = True
    usage.enabled = set(g.ALL_REQUIRED_APIS)
    usage.omitted = set()

    def grant(pref: dict[str, object], value: int) -> None:
        qid = str(pref["quotaId"])
        dims = pref.get("dimensions") or {}
        region = dims.get("region") if isinstance(dims, dict) else None
        metric = (
            qid.removesuffix("-per-project-region").removesuffix("-per-project").replace("-", "_")
        )
        compute.set_limit(GCP_PROJECT, region, metric, value)

    quotas.on_grant = grant
    monkeypatch.setenv("QUOTA_ENDPOINT_COMPUTE", compute.url)
    monkeypatch.setenv("QUOTA_ENDPOINT_CLOUDQUOTAS", quotas.url)
    monkeypatch.setenv("QUOTA_ENDPOINT_SERVICEUSAGE", usage.url)
    monkeypatch.setenv("QUOTA_RETRY_INITIAL", "0.01")
    monkeypatch.setenv("QUOTA_RETRY_DEADLINE", "0.3")
    monkeypatch.setenv("QUOTA_CALL_TIMEOUT", "5")
    monkeypatch.delenv("GOOGLE_CLOUD_QUOTA_PROJECT", raising=False)
    return {"compute": compute, "quotas": quotas, "usage": usage}
