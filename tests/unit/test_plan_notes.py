"""Every planner's notes reach the plan's notes, so they print once and ``--hide-note`` reaches them."""

from __future__ import annotations

from pathlib import Path

from infra.plan import load_path
from infra.planview.notes import note_id
from infra.planview.table import print_notes

ROOT = Path(__file__).resolve().parents[2]


def test_gke_planner_notes_reach_the_plan_notes_once_each_and_hide_note_silences_them():
    _, _, plan = load_path(ROOT / "stacks" / "Pulumi.gke-autocreate.yaml")
    assert plan.gke is not None and plan.gke.notes
    assert all(plan.notes.count(n) == 1 for n in plan.gke.notes)
    lines: list[str] = []
    print_notes(plan, lines.append)
    for n in plan.gke.notes:
        assert sum(line.startswith(f"note: {n} [") for line in lines) == 1
    first = plan.gke.notes[0]
    lines.clear()
    print_notes(plan, lines.append, frozenset({note_id(first)}))
    assert not any(line.startswith(f"note: {first} [") for line in lines)
