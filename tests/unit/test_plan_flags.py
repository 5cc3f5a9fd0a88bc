"""python -m infra.plan takes one output mode at a time."""

from __future__ import annotations

import pytest

from infra import plan as plan_cli


@pytest.mark.parametrize(
    "extra",
    [
        ["--diff", "old.yaml", "--export", "out"],
        ["--diff", "old.yaml", "--helm-values"],
        ["--diff", "old.yaml", "--integration", "kubeflow"],
        ["--export", "out", "--helm-values"],
        ["--export", "out", "--integration", "flyte"],
    ],
)
def test_conflicting_output_flags_exit_2_with_a_usage_message(extra, capsys):
    with pytest.raises(SystemExit) as e:
        plan_cli.main(["--stack", "gke-t4", *extra])
    assert e.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err
