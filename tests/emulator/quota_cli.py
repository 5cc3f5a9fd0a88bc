"""What the emulator tests share: quota.check run for its `--json`, and AWS clients sent to emulators."""

from __future__ import annotations

import io
import json
from typing import Any

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
