"""Warm GPUs through the program: the cost change `--diff` shows when a pool gains a warm node."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infra import plan as plan_cli
from tests.stack.harness import gke_t4_variant


@pytest.fixture(scope="module")
def warm1(tmp_path_factory) -> Path:
    return gke_t4_variant(
        tmp_path_factory.mktemp("warm1"), "maxNodes: 20", "maxNodes: 20\n      warm: 1"
    )


def test_diff_adding_warm_1_creates_the_placeholders_and_raises_cost_at_minimum_by_one_node(
    warm1, capsys
):
    assert plan_cli.main(["--stack", str(warm1), "--diff", "gke-t4", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    created = {c["urn"].split("::")[2] for c in doc["changes"] if c["op"] == "create"}
    assert any(t.endswith("kubernetes:apps/v1:Deployment") for t in created), created
    assert any(t.endswith("gpu-infra:k8s:WarmGpus") for t in created), created
    # One n1-highmem-8 + T4 node (0.82321/h), its 100 GB pd-balanced disk, its public address.
    node = 0.82321 + 100 * 0.10 / 730 + 0.005
    assert doc["cost"]["atMinPerHour"]["change"] == pytest.approx(node, abs=1e-4)
    assert doc["cost"]["atMaxPerHour"]["change"] == 0


def test_a_compute_class_pools_placeholder_deployment_waits_for_its_compute_class():
    from tests.stack.test_export_stable import planned

    _, recording = planned("gke-l4-spot")  # warm: 1 on a pool with fallback (a ComputeClass)
    by_type: dict[str, list[str]] = {}
    for r in recording.resources:
        by_type.setdefault(r.type, []).append(r.urn)
    (klass,) = by_type["kubernetes:cloud.google.com/v1:ComputeClass"]
    (deployment,) = [
        r
        for r in recording.resources
        if r.type == "kubernetes:apps/v1:Deployment"
        and r.inputs["metadata"]["name"].startswith("warm-")
    ]
    assert klass in deployment.depends_on
