"""The ``--json`` plan of every sample stack equals its reviewed copy in ``tests/golden/plans/``.

A change that moves a resource, an input, an output or a cost figure of a sample shows up here as
a diff to review. After an intended change:
``.venv/bin/python -m pytest tests/stack/test_golden_plans.py --update-golden``, then read
``git diff tests/golden/plans``. Ordering is normalised (resources by URN, dependency lists
sorted): the mock engine registers children concurrently, so their order is not part of a plan.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from infra.core.config.stack import load_stack_file, parse
from infra.core.cost import estimate
from infra.core.plan import build_plan
from infra.plan import plan_document
from tests.stack.harness import ROOT, run_stack, sample, sample_stacks

GOLDEN = ROOT / "tests" / "golden" / "plans"
STACKS = sample_stacks()


def normalized(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` with the orders that are not part of a plan made canonical."""
    resources = sorted(document["resources"], key=lambda r: r["urn"])
    for r in resources:
        r["dependsOn"] = sorted(r["dependsOn"])
    return {**document, "resources": resources}


def golden_text(stack: str, path: Path | None = None) -> str:
    """The normalised plan of sample ``stack``, or of the stack file at ``path`` named like it."""
    name, raw = load_stack_file(path or ROOT / "stacks" / f"Pulumi.{stack}.yaml")
    config = parse(raw, name)
    plan = build_plan(config)
    recording = sample(stack) if path is None else run_stack(path)
    document = plan_document(config, estimate(plan), recording, plan)
    # A round trip through JSON: the shared recording is never touched, only its copy.
    copy = json.loads(json.dumps(document, allow_nan=False))
    return json.dumps(normalized(copy), indent=1, sort_keys=True) + "\n"


def test_every_sample_stack_has_a_golden_plan():
    assert sorted(p.stem for p in GOLDEN.glob("*.json")) == STACKS


@pytest.mark.parametrize("stack", STACKS)
def test_golden_plan_of_the_sample_stack_is_unchanged(stack: str, request: pytest.FixtureRequest):
    path: Path = GOLDEN / f"{stack}.json"
    text = golden_text(stack)
    if request.config.getoption("--update-golden"):
        GOLDEN.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"no golden plan for {stack}: run with --update-golden"
    assert text == path.read_text(), (
        f"{stack}'s plan changed: review it, then run with --update-golden"
    )


def test_a_bare_key_stack_file_plans_as_its_namespaced_twin(tmp_path: Path):
    """pulumi/pulumi sdk/go/common/workspace/loaders.go stackConfigNamespacedWithProject: a bare
    ``platform:`` is ``gpu-infra:platform``, so the bare-key file's plan is the sample's."""
    twin = tmp_path / "Pulumi.gke-t4.yaml"
    text = (ROOT / "stacks" / twin.name).read_text().replace("  gpu-infra:", "  ")
    twin.write_text(text)
    assert "gpu-infra:" not in text
    assert golden_text("gke-t4", twin) == (GOLDEN / "gke-t4.json").read_text()
