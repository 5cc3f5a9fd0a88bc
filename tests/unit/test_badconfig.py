"""Bad stack files exit 2 from ``python -m infra.plan`` naming the key path, with no traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from infra import plan as plan_cli

ROOT = Path(__file__).resolve().parents[2]
BAD = sorted((ROOT / "tests" / "badconfig").glob("*.yaml"))


def expected_paths(path: Path) -> list[str]:
    return [
        line.split(":", 1)[1].strip()
        for line in path.read_text().splitlines()
        if line.startswith("# expect:")
    ]


def test_corpus_has_at_least_twenty_bad_stack_files():
    assert len(BAD) >= 20
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
    err = capsys.readouterr().err
    assert err.startswith("--stack: no stack 'no-such-stack'") and "stacks: " in err
