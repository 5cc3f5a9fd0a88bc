"""Entry points treat a reader closing the pipe early (``| head``) as success, not a crash."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "cmd",
    [
        ["-m", "quota.check", "--stack", "gke-t4", "--offline", "--json"],
        ["-m", "infra.plan", "--stack", "gke-a100-mig", "--json"],
    ],
    ids=["quota.check", "infra.plan"],
)
def test_closed_pipe_exits_0_without_traceback(cmd):
    proc = subprocess.Popen(
        [sys.executable, *cmd], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None and proc.stderr is not None
    # Close before the command prints anything (it is still importing): its first write then
    # meets a pipe with no reader, as with `| head` when head has already exited.
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0, err
    assert "Traceback" not in err and "Broken pipe" not in err
