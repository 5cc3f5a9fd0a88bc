"""Emulator fixtures shared by the modules: one botocore model loader and one moto server."""

from __future__ import annotations

import functools
from collections.abc import Iterator

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
