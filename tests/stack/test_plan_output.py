"""`python -m infra.plan` on the mock engine: sample stacks plan; JSON has the contract shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infra import plan as plan_cli
from tests.stack.harness import sample_stacks

ROOT = Path(__file__).resolve().parents[2]
STACKS = sample_stacks()


@pytest.mark.parametrize("stack", STACKS)
def test_every_sample_stack_plans(stack, capsys):
    assert plan_cli.main(["--stack", stack]) == 0, capsys.readouterr().err


def test_an_offline_eks_plan_lists_what_it_assumed_where_pulumi_up_would_read(capsys):
    assert plan_cli.main(["--stack", "eks-existing", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assumed, observed = doc["assumed"], doc["observed"]
    assert observed == {}  # offline: nothing read
    assert assumed[0].startswith("EKS cluster shared exists, ACTIVE at Kubernetes 1.33")
    assert "its IAM OIDC provider exists and is not this stack's (used by ARN)" in assumed


def test_json_output_has_the_contract_shape(capsys):
    assert plan_cli.main(["--stack", "gke-t4", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) == {"project", "stack", "observed", "assumed", "cost", "resources", "outputs"}
    assert (doc["project"], doc["stack"]) == ("gpu-infra", "gke-t4")
    assert doc["observed"] == {}  # a created GKE cluster: an offline plan assumes nothing
    for r in doc["resources"]:
        assert set(r) == {
            "urn",
            "id",
            "type",
            "name",
            "parent",
            "custom",
            "inputs",
            "dependsOn",
            "propertyDependencies",
            "options",
        }
    assert doc["outputs"]["kubeconfig"] == "[secret]"


def test_gke_t4_plan_matches_the_seed_pool(capsys):
    assert plan_cli.main(["--stack", "gke-t4", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    gpu_pools = [
        r
        for r in doc["resources"]
        if r["type"] == "gcp:container/nodePool:NodePool"
        and r["inputs"]["nodeConfig"].get("guestAccelerators")
    ]
    (pool,) = gpu_pools
    inputs = pool["inputs"]
    node = inputs["nodeConfig"]
    assert node["machineType"] == "n1-highmem-8"
    (acc,) = node["guestAccelerators"]
    assert (acc["type"], acc["count"]) == ("nvidia-tesla-t4", 1)
    assert acc["gpuDriverInstallationConfig"]["gpuDriverVersion"] in (
        "DEFAULT",
        "LATEST",
        "INSTALLATION_DISABLED",
    )
    assert inputs["nodeLocations"] == [
        "us-central1-a",
        "us-central1-b",
        "us-central1-c",
        "us-central1-f",
    ]
    assert inputs["autoscaling"] == {
        "locationPolicy": "ANY",
        "totalMinNodeCount": 0,
        "totalMaxNodeCount": 20,
    }
    assert inputs["initialNodeCount"] == 0
    assert {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"} in node["taints"]
    # The pool's dependencies are traceable to resources in the same plan.
    urns = {r["urn"] for r in doc["resources"]}
    assert pool["dependsOn"] and set(pool["dependsOn"]) <= urns


def test_mock_engine_answers_look_ups_for_a_declared_eks_shape(tmp_path, capsys):
    # The mock engine's DescribeInstanceTypeOfferings must know gpuPools[].shape's type too, or the
    # node group gets no AZs; the plan carries the catalog build_plan overlaid the shapes on.
    stack = tmp_path / "Pulumi.shape-t.yaml"
    stack.write_text(
        "config:\n"
        "  aws:region: us-west-2\n"
        "  gpu-infra:platform: eks\n"
        '  gpu-infra:cluster: {name: ml, location: us-west-2, kubernetesVersion: "1.33"}\n'
        "  gpu-infra:gpuPools:\n"
        "    - name: gpu-new\n"
        "      machineType: g9.2xlarge\n"
        "      shape: {gpuModel: RTX-PRO-6000, gpus: 1, vcpus: 8, memoryGb: 64}\n"
        "      zones: [usw2-az1, usw2-az2]\n"
        "      maxNodes: 4\n"
    )
    assert plan_cli.main(["--config", str(stack), "--json"]) == 0, capsys.readouterr().err
    doc = json.loads(capsys.readouterr().out)
    assert any(r["name"] == "ml-gpu-new-ng" for r in doc["resources"])
