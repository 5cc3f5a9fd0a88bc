"""Entry points: a reader closing the pipe early (``| head``) is success, not a crash; a short-lived
process runs without the work that only pays off in a long-running one."""

from __future__ import annotations

import gc
import os
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


def test_short_lived_runs_without_the_collector_or_pydantic_plugin_discovery(monkeypatch):
    from pydantic.plugin._loader import get_plugins

    from infra.cli import short_lived

    monkeypatch.setenv("PYDANTIC_DISABLE_PLUGINS", "")
    monkeypatch.delenv("PYDANTIC_DISABLE_PLUGINS")
    was_enabled = gc.isenabled()
    try:
        with short_lived():
            assert not gc.isenabled()
            assert os.environ["PYDANTIC_DISABLE_PLUGINS"] == "__all__"
            assert tuple(get_plugins()) == ()  # pydantic skips the entry-point scan
        assert gc.isenabled() == was_enabled
    finally:
        gc.unfreeze()  # short_lived froze this test process's objects on the way out


def test_short_lived_keeps_a_pydantic_plugin_setting_the_environment_already_has(monkeypatch):
    from infra.cli import short_lived

    monkeypatch.setenv("PYDANTIC_DISABLE_PLUGINS", "logfire")
    try:
        with short_lived():
            assert os.environ["PYDANTIC_DISABLE_PLUGINS"] == "logfire"
    finally:
        gc.unfreeze()
