"""Every sample stack runs on the mock engine with only SDK-declared inputs and complete components."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from tests.stack.harness import run_stack as _run_stack

GKE_CLUSTER = "gcp:container/cluster:Cluster"
ROOT = Path(__file__).resolve().parents[2]
STACKS = sorted(
    p.name.removeprefix("Pulumi.").removesuffix(".yaml")
    for p in (ROOT / "stacks").glob("Pulumi.*.yaml")
)
# One mock-engine run per sample stack, shared by the tests below.
run_stack = functools.cache(_run_stack)


@pytest.mark.parametrize("stack", STACKS)
def test_sample_stack_registers_only_inputs_the_provider_sdks_know(stack):
    rec = run_stack(stack)  # raises on unknown properties, unmocked invokes, missing outputs
    assert rec.resources


@pytest.mark.parametrize("stack", STACKS)
def test_every_custom_resource_is_parented_to_a_component(stack):
    rec = run_stack(stack)
    orphans = [
        r.name
        for r in rec.resources
        if r.custom
        and not r.type.startswith("pulumi:providers:")
        and (r.parent or "").split("::")[2] == "pulumi:pulumi:Stack"
    ]
    assert orphans == []


@pytest.mark.parametrize("stack", STACKS)
def test_no_sample_stack_sends_a_cluster_autoscaling_block(stack):
    # Node auto-provisioning stays off and its defaults are not read back with it off
    # (terraform-provider-google flattenClusterAutoscaling, hashicorp/terraform-provider-google
    # #25307): a block sent would be a permanent diff and nothing else.
    rec = run_stack(stack)
    assert all("clusterAutoscaling" not in r.inputs for r in rec.of_type(GKE_CLUSTER))


def test_gpu_pools_output_merges_the_operators_sharing_aware_hints():
    pools = run_stack("onprem-k3s-timeslicing").outputs["gpuPools"]
    shared = pools["a10-shared"]
    assert shared["timeSlicingReplicas"] == 4  # from the operator plan
    assert (shared["minNodes"], shared["maxNodes"]) == (0, 2)  # from the pool hints
    assert "jupyterhubProfiles" in run_stack("onprem-k3s-timeslicing").outputs
