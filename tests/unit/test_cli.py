"""Entry points: a reader closing the pipe early (``| head``) is success, not a crash; a short-lived
process runs without the work that only pays off in a long-running one."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import python_c

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
    from pydantic.plugin import _loader

    from infra.cli import short_lived

    def scan(**_: object) -> list[object]:
        raise AssertionError("pydantic scanned the installed distributions for plugins")

    monkeypatch.setattr(_loader, "entry_points", scan)
    monkeypatch.setattr(_loader, "_plugins", None)  # as in a fresh process
    monkeypatch.setenv("PYDANTIC_DISABLE_PLUGINS", "")
    monkeypatch.delenv("PYDANTIC_DISABLE_PLUGINS")
    was_enabled = gc.isenabled()
    try:
        with short_lived():
            assert not gc.isenabled()
            assert tuple(_loader.get_plugins()) == ()  # without calling entry_points
        assert gc.isenabled() == was_enabled
    finally:
        gc.unfreeze()  # short_lived froze this test process's objects on the way out


def test_short_lived_keeps_a_pydantic_plugin_setting_the_environment_already_has(monkeypatch):
    from infra.cli import short_lived

    monkeypatch.setenv("PYDANTIC_DISABLE_PLUGINS", "")  # empty: the user's plugins load
    try:
        with short_lived():
            assert os.environ["PYDANTIC_DISABLE_PLUGINS"] == ""
    finally:
        gc.unfreeze()


def test_the_pulumi_program_keeps_the_collector_off_after_its_body_returns():
    # The SDK registers the resources after the program body returns (run_pulumi_func, then
    # wait_for_rpcs): the collector must still be off then, not only inside the body.
    code = """
import gc, os, runpy, sys
import pulumi.runtime.settings as settings
settings.get_monitor = lambda: object()  # as if the language host had set a monitor
import infra.program
infra.program.run = lambda: {}
os.environ.pop("PYDANTIC_DISABLE_PLUGINS", None)
runpy.run_module("infra", run_name="__main__")
print(gc.isenabled(), os.environ.get("PYDANTIC_DISABLE_PLUGINS"))
"""
    out = python_c(code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "__all__"]
