"""Every command-line entry point answers --help with usage, examples and exit codes, no traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "module", ["infra", "infra.plan", "quota.check", "infra.catalog_refresh", "infra.docsgen"]
)
def test_help_shows_usage_examples_and_exit_codes(module):
    proc = subprocess.run(
        [sys.executable, "-m", module, "--help"], cwd=ROOT, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    out = proc.stdout
    assert "usage:" in out and "examples:" in out and "exit codes" in out
