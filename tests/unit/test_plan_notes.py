"""Every planner's notes reach stderr once each, in every output mode, and ``--hide-note``."""

from __future__ import annotations

from pathlib import Path

import pytest

from infra import plan as plan_cli
from infra.plan import load_path
from infra.planview.notes import note_id

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("mode", [[], ["--json"]])
def test_gke_planner_notes_reach_stderr_once_each_and_hide_note_silences_them(capsys, mode):
    _, _, plan = load_path(ROOT / "stacks" / "Pulumi.gke-autocreate.yaml")
    assert plan.platform.name == "gke" and plan.platform.plan.notes
    assert plan_cli.main(["--stack", "gke-autocreate", *mode]) == 0
    out, err = capsys.readouterr()
    for n in plan.platform.plan.notes:
        assert err.count(f"note: {n} [{note_id(n)}]") == 1
        assert mode or n not in out  # the text plan leaves them to stderr (--json: gkeNotes)
    first = note_id(plan.platform.plan.notes[0])
    assert plan_cli.main(["--stack", "gke-autocreate", "--hide-note", first, *mode]) == 0
    err = capsys.readouterr().err
    assert plan.platform.plan.notes[0] not in err and plan.platform.plan.notes[1] in err


def test_eks_planner_notes_reach_stderr_with_json_too(capsys):
    _, _, plan = load_path(ROOT / "stacks" / "Pulumi.eks-karpenter.yaml")
    assert plan.platform.name == "eks" and plan.notes
    assert plan_cli.main(["--stack", "eks-karpenter", "--json"]) == 0
    err = capsys.readouterr().err
    assert all(err.count(f"note: {n} [") == 1 for n in plan.notes)
