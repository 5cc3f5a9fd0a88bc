"""scripts/setup on a copy of the repo with a fake interpreter: version check first, rebuilds."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Answers like a Python of $FAKE_VERSION: `-c` prints the version, `-m venv DIR` makes a venv whose
# python is this script, every other `-m` (pip, compileall) succeeds without doing anything. Each
# call's arguments are appended to $FAKE_LOG; `-m pip` takes $FAKE_PIP_SECONDS when set.
FAKE = """#!/usr/bin/env bash
echo "$*" >> "$FAKE_LOG"
case "$1" in
  -c) echo "$FAKE_VERSION" ;;
  -m) if [ "$2" = venv ]; then mkdir -p "$3/bin"; cp "$0" "$3/bin/python"; fi
      if [ "$2" = pip ] && [ -n "${FAKE_PIP_SECONDS:-}" ]; then sleep "$FAKE_PIP_SECONDS"; fi ;;
esac
"""


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "setup", repo / "scripts" / "setup")
    fake = tmp_path / "fakepython"
    fake.write_text(FAKE)
    fake.chmod(0o755)
    return repo


def _setup(repo: Path, version: str, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "PYTHON": str(repo.parent / "fakepython"), **extra}
    env["FAKE_VERSION"] = version
    env["FAKE_LOG"] = str(repo.parent / "calls.log")
    return subprocess.run(
        ["bash", "scripts/setup"], cwd=repo, env=env, capture_output=True, text=True, timeout=30
    )


def test_python_3_10_fails_before_any_install_step_naming_the_need(tmp_path):
    repo = _repo(tmp_path)
    proc = _setup(repo, "3.10")
    calls = (tmp_path / "calls.log").read_text().splitlines()
    assert calls and all(c.startswith("-c ") for c in calls), calls  # its version, nothing more
    assert proc.returncode == 2
    assert "is Python 3.10; gpu-infra needs Python >= 3.11" in proc.stderr
    assert not (repo / ".venv").exists()


def test_a_venv_of_another_python_version_is_rebuilt(tmp_path):
    repo = _repo(tmp_path)
    old = repo / ".venv" / "bin" / "python"
    old.parent.mkdir(parents=True)
    old.write_text("#!/usr/bin/env bash\necho 3.10\n")
    old.chmod(0o755)
    proc = _setup(repo, "3.12")
    assert proc.returncode == 0, proc.stderr
    assert "rebuilding .venv: it was made with Python 3.10, not 3.12" in proc.stdout
    assert "#!/usr/bin/env bash\necho 3.10" not in old.read_text()  # replaced by the new venv


def test_setup_prints_each_step(tmp_path):
    proc = _setup(_repo(tmp_path), "3.13")
    assert proc.returncode == 0, proc.stderr
    steps = [line for line in proc.stdout.splitlines() if line.startswith("setup: [")]
    assert [s.split("]")[0] for s in steps] == [
        "setup: [1/4",
        "setup: [2/4",
        "setup: [3/4",
        "setup: [4/4",
    ]


def _setup_args(repo: Path, version: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "PYTHON": str(repo.parent / "fakepython")}
    env["FAKE_VERSION"] = version
    env["FAKE_LOG"] = str(repo.parent / "calls.log")
    return subprocess.run(
        ["bash", "scripts/setup", *args],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_runtime_installs_only_the_runtime_requirements(tmp_path):
    repo = _repo(tmp_path)
    proc = _setup_args(repo, "3.12", "--runtime")
    assert proc.returncode == 0, proc.stderr
    calls = (tmp_path / "calls.log").read_text()
    assert "-r requirements.txt" in calls and "requirements-dev.txt" not in calls
    assert "runtime only" in proc.stdout


def test_an_unknown_option_exits_2_before_any_install(tmp_path):
    repo = _repo(tmp_path)
    proc = _setup_args(repo, "3.12", "--fast")
    assert proc.returncode == 2 and "unknown option --fast" in proc.stderr
    assert not (tmp_path / "calls.log").exists()


def test_a_long_pip_step_prints_a_heartbeat_and_leaves_no_process_behind(tmp_path):
    # 1.2 s of pip with a beat every 0.3 s: at least two beats, and the run ends with pip (the
    # beat would otherwise hold the output pipe open and this call would run into its timeout).
    proc = _setup(_repo(tmp_path), "3.12", FAKE_PIP_SECONDS="0.6", SETUP_HEARTBEAT="0.3")
    assert proc.returncode == 0, proc.stderr
    beats = [line for line in proc.stdout.splitlines() if "still installing" in line]
    assert len(beats) >= 2, proc.stdout
