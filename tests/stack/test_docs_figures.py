"""Every figure the docs quote from the sample stacks is what their plans give now.

Costs, node and GPU counts, resource counts and quota numbers sit in generated blocks
(``infra.docsgen.figures``); each block must equal its generator's output over the samples' real
plans, the recordings every stack test shares. After an intended change:
``.venv/bin/python -m infra.docsgen --write`` and read ``git diff README.md docs``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from infra.core.config.stack import load_stack_file, parse
from infra.core.plan import build_plan
from infra.docsgen import figures, pages
from tests.stack.harness import ROOT, sample


def _planned(stack: str) -> figures.Planned:
    name, raw = load_stack_file(ROOT / "stacks" / f"Pulumi.{stack}.yaml")
    config = parse(raw, name)
    return config, build_plan(config), sample(stack)


@pytest.fixture(scope="module")
def samples() -> dict[str, figures.Sample]:
    return figures.load(_planned)


@pytest.mark.parametrize("block", sorted(figures.FROM_SAMPLES))
def test_figure_block_in_the_docs_is_what_the_sample_plans_give(block: str, samples):
    made = figures.FROM_SAMPLES[block](samples)
    assert pages.committed(block) == made, (
        f"{pages.page_of(block)}: block {block} is stale: run python -m infra.docsgen --write"
    )


def test_diff_example_in_the_docs_is_what_the_diff_of_the_sample_prints():
    assert pages.committed("diff-example") == figures.diff_example()


def test_every_sample_stack_is_in_the_fleet_table(samples):
    fleet = pages.committed("sample-fleet")
    assert all(f"\n{s} " in fleet for s in figures.stacks())


def test_a_changed_quota_demand_makes_its_block_stale(samples):
    stack = figures.QUOTA_STACKS[0]
    quota: dict[str, Any] = dict(samples[stack].quota or {})
    quota["checks"] = [{**c, "needed": c["needed"] + 1} for c in quota["checks"]]
    changed = {**samples, stack: dataclasses.replace(samples[stack], quota=quota)}
    assert figures.quota_rows(changed) != pages.committed("quota-samples")


def test_the_readme_names_every_output_a_sample_stack_exports(samples):
    readme = (ROOT / "README.md").read_text()
    exported = {k for s in samples.values() for k in s.recording.outputs}
    assert exported and not {k for k in exported if f"`{k}`" not in readme}
