"""Every sample stack runs on the mock engine with only SDK-declared inputs and complete components."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.stack.harness import sample, sample_stacks

ROOT = Path(__file__).resolve().parents[2]
STACKS = sample_stacks()


@pytest.mark.parametrize("stack", STACKS)
def test_sample_stack_registers_only_inputs_the_provider_sdks_know(stack):
    rec = sample(stack)  # raises on unknown properties, unmocked invokes, missing outputs
    assert rec.resources


@pytest.mark.parametrize("stack", STACKS)
def test_every_custom_resource_is_parented_to_a_component(stack):
    rec = sample(stack)
    orphans = [
        r.name
        for r in rec.resources
        if r.custom
        and not r.type.startswith("pulumi:providers:")
        and (r.parent or "").split("::")[2] == "pulumi:pulumi:Stack"
    ]
    assert orphans == []


def test_gpu_pools_output_merges_the_operators_sharing_aware_hints():
    pools = sample("onprem-k3s-timeslicing").outputs["gpuPools"]
    shared = pools["a10-shared"]
    assert shared["timeSlicingReplicas"] == 4  # from the operator plan
    assert (shared["minNodes"], shared["maxNodes"]) == (0, 2)  # from the pool hints
    assert "jupyterhubProfiles" in sample("onprem-k3s-timeslicing").outputs
