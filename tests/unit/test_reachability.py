"""Pools a Pending pod cannot bring up are offered to no workload, and the nodes the proof assumes
carry a pool's selector labels do: gpu-infra patches them onto listed on-prem nodes."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from infra.core.config.stack import load_stack_file, parse
from infra.core.errors import ConfigErrors
from infra.core.plan import build_plan
from infra.core.planned import Plan

ROOT = Path(__file__).resolve().parents[2]


def _queued(**pool: Any) -> dict[str, Any]:
    config = copy.deepcopy(load_stack_file(ROOT / "stacks" / "Pulumi.gke-t4.yaml")[1])
    config["gpu-infra:gpuPools"][0].update({"queuedProvisioning": True, **pool})
    return config


def test_a_queued_pool_with_smoke_test_exits_at_smoke_test_naming_the_provisioning_request():
    try:
        build_plan(parse(_queued(smokeTest=True), "q"))
    except ConfigErrors as e:
        issues = {i.path: i.reason for i in e.issues}
    else:
        raise AssertionError("planned")
    assert list(issues) == ["gpuPools[0].smokeTest"]
    assert "ProvisioningRequest" in issues["gpuPools[0].smokeTest"]


def test_a_queued_pool_is_absent_from_every_integration_and_a_note_says_why():
    plan: Plan = build_plan(parse(_queued(), "q"))
    op = plan.operator
    assert op is not None
    assert op.jupyterhub_profiles == {}
    assert op.integrations["jupyterhub"]["singleuser"]["profileList"] == []
    assert "gpu-t4" not in op.integrations["flyte"]["pools"]
    assert "gpu-t4" not in op.integrations["kubernetes"]
    assert "gpu-t4" not in str(op.integrations["kubeflow"]["spawnerFormDefaults"]["affinityConfig"])
    assert any("queued provisioning" in n and "leave it out" in n for n in plan.notes)


def test_listed_onprem_nodes_are_patched_with_the_pool_selector_and_declared_labels():
    config = load_stack_file(ROOT / "stacks" / "Pulumi.onprem-k3s-timeslicing.yaml")[1]
    plan = build_plan(parse(config, "onprem"))
    assert plan.operator is not None
    for i, spec in enumerate(config["gpu-infra:gpuPools"]):
        (patch,) = [nl for nl in plan.operator.node_labels if nl.pool == spec["name"]]
        for key, value in {**spec.get("labels", {}), **spec["nodeSelector"]}.items():
            assert patch.labels[key] == value, (i, key)
