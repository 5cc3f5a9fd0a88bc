"""Bad stack files exit 2 from ``python -m infra.plan`` naming the key path, with no traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from infra import plan as plan_cli
from infra.core.errors import MAX_LINE
from quota import check as quota_cli

ROOT = Path(__file__).resolve().parents[2]
BAD = sorted((ROOT / "tests" / "badconfig").glob("*.yaml"))


def expected_paths(path: Path) -> list[str]:
    """The ``# expect:`` lines; ``<file>`` stands for the file's path (YAML-level problems).

    Read as bytes: some files are deliberately not UTF-8 below their ASCII header.
    """
    return [
        line.split(":", 1)[1].strip().replace("<file>", str(path))
        for line in path.read_bytes().decode("ascii", "replace").splitlines()
        if line.startswith("# expect:")
    ]


def test_corpus_has_at_least_120_bad_stack_files_each_naming_its_key_path():
    assert len(BAD) >= 120
    assert all(expected_paths(p) for p in BAD)


@pytest.mark.parametrize("path", BAD, ids=[p.stem for p in BAD])
def test_bad_stack_exits_2_naming_the_key_path(path, capsys):
    code = plan_cli.main(["--config", str(path)])
    err = capsys.readouterr().err
    assert code == 2, err
    lines = err.splitlines()
    for expected in expected_paths(path):
        assert any(line.startswith(f"{expected}: ") for line in lines), (expected, err)
    assert "Traceback" not in err
    assert all(len(line) <= MAX_LINE for line in lines)


@pytest.mark.parametrize("path", BAD, ids=[p.stem for p in BAD])
def test_quota_check_reports_the_same_problems_as_plan(path, capsys):
    assert plan_cli.main(["--config", str(path)]) == 2
    from_plan = capsys.readouterr().err
    assert quota_cli.main(["--config", str(path), "--offline"]) == 2
    assert capsys.readouterr().err == from_plan


def test_bad_config_in_a_subprocess_prints_no_traceback():
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "infra.plan",
            "--config",
            str(ROOT / "tests/badconfig/gke-t4-on-n2.yaml"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert out.returncode == 2
    assert out.stderr.startswith("gpuPools[0].machineType: ")
    assert "Traceback" not in out.stderr


def test_missing_stack_file_exits_2(capsys):
    assert plan_cli.main(["--stack", "no-such-stack"]) == 2
    assert "cannot read the stack file" in capsys.readouterr().err
