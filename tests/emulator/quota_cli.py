"""``quota.check`` as the emulator tests call it: one run's exit code and ``--json`` document."""

from __future__ import annotations

import io
import json
from typing import Any

from quota.check import main


def run(*args: str) -> tuple[int, dict[str, Any]]:
    """Exit code and the ``--json`` document of ``python -m quota.check ARGS --json``."""
    out = io.StringIO()
    code = main([*args, "--json"], out=out, err=io.StringIO())
    return code, json.loads(out.getvalue())


def row(doc: dict[str, Any], quota: str) -> dict[str, Any]:
    """The check row of ``quota`` in a ``--json`` document."""
    return next(c for c in doc["checks"] if c["quota"] == quota)
