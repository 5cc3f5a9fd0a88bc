"""``python -m infra.plan`` on the mock engine: cost, change preview and GitOps export end to end."""

from __future__ import annotations

import json
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from infra import plan as plan_cli
from tests.stack.harness import eks_version_bump_changes, gke_t4_variant

ROOT = Path(__file__).resolve().parents[2]
T4 = ROOT / "stacks" / "Pulumi.gke-t4.yaml"
STACKS = sorted(
    p.name.removeprefix("Pulumi.").removesuffix(".yaml")
    for p in (ROOT / "stacks").glob("Pulumi.*.yaml")
)
# Kinds of API groups kubernetes-validate has schemas for (CRDs such as GKE ComputeClass are not).
CORE_GROUPS = ("v1", "apps/v1", "batch/v1", "rbac.authorization.k8s.io/v1", "scheduling.k8s.io/v1")


def _changes(capsys, new: Path) -> list[dict]:
    assert plan_cli.main(["--stack", str(new), "--diff", str(T4), "--json"]) == 0
    return json.loads(capsys.readouterr().out)["changes"]


def test_gpu_count_change_replaces_the_gpu_pool_naming_the_accelerator_config(tmp_path, capsys):
    (c,) = _changes(capsys, gke_t4_variant(tmp_path, "count: 1", "count: 2"))
    assert c["op"] == "replace" and c["urn"].endswith("::ml-gpu-gpu-t4")
    assert [r["property"] for r in c["replaceBecause"]] == ["nodeConfig.guestAccelerators[0].count"]


def test_max_nodes_change_is_an_update(tmp_path, capsys):
    changes = _changes(capsys, gke_t4_variant(tmp_path, "maxNodes: 20", "maxNodes: 10"))
    (c,) = [c for c in changes if c["urn"].endswith("::ml-gpu-gpu-t4")]
    assert (c["op"], c["properties"], c["replaceBecause"]) == (
        "update",
        ["autoscaling.totalMaxNodeCount"],
        [],
    )
    assert {c["op"] for c in changes} == {"update"}  # quotas sized from maxNodes update too


def test_machine_type_change_is_an_update_gke_migrates_nodes_in_place(tmp_path, capsys):
    (c,) = _changes(capsys, gke_t4_variant(tmp_path, "n1-highmem-8", "n1-highmem-16"))
    assert (c["op"], c["properties"]) == ("update", ["nodeConfig.machineType"])


def test_diff_table_names_the_forcing_property_and_flags_disruption(tmp_path, capsys):
    new = gke_t4_variant(tmp_path, "count: 1", "count: 2")
    assert plan_cli.main(["--stack", str(new), "--diff", str(T4)]) == 0
    out = capsys.readouterr().out
    assert "replace" in out and "(forces replacement)" in out and "DISRUPTIVE" in out


def test_same_file_has_no_changes(capsys):
    assert _changes(capsys, T4) == []


def test_gke_t4_json_cost_at_minimum_is_the_system_pool_alone(capsys):
    assert plan_cli.main(["--stack", "gke-t4", "--json"]) == 0
    cost = json.loads(capsys.readouterr().out)["cost"]
    # regional gke-t4: initialNodeCount 1 per zone x 3 default zones
    system = cost["systemPool"]
    assert system["minNodes"] == 3
    assert cost["atMinPerHour"] == pytest.approx(system["perNodePerHour"] * 3)
    assert cost["atMaxPerHour"] > cost["atMinPerHour"]


def test_gke_t4_table_shows_zones_cost_and_total_gpus(capsys):
    assert plan_cli.main(["--stack", "gke-t4", "--outputs"]) == 0
    out = capsys.readouterr().out
    assert "us-central1-a,b,c,f" in out
    assert "$0.40/h at minimum" in out and "/h at maximum" in out  # 3 x e2-standard-4
    assert "up to 20 GPUs" in out and "system pool: e2-standard-4" in out
    assert '"resourceName": "nvidia.com/gpu"' in out  # outputs are shown whole, not cut


@pytest.mark.parametrize("stack", STACKS)
def test_export_writes_schema_valid_manifests_and_pinned_gitops_wrappers(stack, tmp_path, capsys):
    assert plan_cli.main(["--stack", stack, "--export", str(tmp_path)]) == 0
    capsys.readouterr()
    found = [*(tmp_path / "manifests").glob("*.yaml"), *(tmp_path / "workloads").glob("*.yaml")]
    manifests = sorted(f for f in found if f.name != "kustomization.yaml")
    no_operator = "enabled: false" in (ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text()
    assert manifests or no_operator, "a stack with the operator creates at least its namespace"
    for f in manifests:
        doc = yaml.safe_load(f.read_text())
        assert doc["metadata"]["name"]
        if doc["apiVersion"] in CORE_GROUPS:
            kubernetes_validate.validate(doc, "1.33.0", strict=True)
    chart_apps = []
    for app in (tmp_path / "argocd").glob("*.yaml"):
        a = yaml.safe_load(app.read_text())
        assert a["kind"] == "Application" and a["spec"]["source"]["targetRevision"]
        # A chart's Application has Helm settings (an OCI chart has a path "." instead of a
        # chart name); the manifests/ Application has a path only.
        if "helm" in a["spec"]["source"]:
            chart_apps.append(a)
            assert a["spec"]["source"]["helm"]["valuesObject"] is not None
    for fx in (tmp_path / "flux" / "releases").glob("*.yaml"):
        repo, rel = yaml.safe_load_all(fx.read_text())
        assert repo["kind"] == "HelmRepository" and rel["kind"] == "HelmRelease"
        spec = rel["spec"]["chart"]["spec"]
        assert spec["version"] and spec["sourceRef"]["name"] == repo["metadata"]["name"]
    assert len(chart_apps) == len(list((tmp_path / "helm").glob("*.values.yaml")))
    assert len(list((tmp_path / "flux" / "releases").glob("*.yaml"))) == len(chart_apps)


def test_operator_values_export_carries_the_reasons(tmp_path, capsys):
    assert plan_cli.main(["--stack", "onprem-containerd", "--export", str(tmp_path)]) == 0
    text = (tmp_path / "helm" / "gpu-operator.values.yaml").read_text()
    assert "# Why each value is set:" in text and "CONTAINERD_SOCKET" in text
    assert yaml.safe_load(text)["toolkit"]["env"]


def test_helm_values_json_prints_json(capsys):
    assert plan_cli.main(["--stack", "onprem-containerd", "--helm-values", "--json"]) == 0
    values = json.loads(capsys.readouterr().out)
    assert values["toolkit"]["env"]


def test_export_into_a_path_that_is_a_file_exits_1_with_one_line(tmp_path, capsys):
    target = tmp_path / "taken"
    target.write_text("")
    assert plan_cli.main(["--stack", "gke-t4", "--export", str(target)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("plan failed: ") and str(target) in err[0]


def test_an_invalid_old_stack_file_for_diff_exits_2_naming_its_key(tmp_path, capsys):
    old = gke_t4_variant(tmp_path, "gpu-infra:platform: gke", "gpu-infra:platform: nope")
    assert plan_cli.main(["--stack", "gke-t4", "--diff", str(old)]) == 2
    err = capsys.readouterr().err
    assert "platform" in err and "Traceback" not in err


def test_eks_kubernetes_version_bump_updates_every_node_group_and_add_on_in_place(tmp_path, capsys):
    changes = eks_version_bump_changes(tmp_path, capsys)
    by_type: dict[str, list[dict]] = {}
    for c in changes:
        by_type.setdefault(c["urn"].rsplit("::", 2)[-2].rsplit("$", 1)[-1], []).append(c)
    groups = by_type["aws:eks/nodeGroup:NodeGroup"]
    addons = by_type["aws:eks/addon:Addon"]
    # 2 GPU groups + system; every add-on but vpc-cni, whose pin is the same on 1.33 and 1.34
    # (v1.20.4-eksbuild.1 in the user guide's table for both).
    assert len(groups) == 3 and len(addons) == 4
    assert not any(c["urn"].endswith("::ml-addons-vpc-cni") for c in addons)
    assert all(c["op"] == "update" and "version" in c["properties"] for c in groups)
    assert all(c["op"] == "update" and "addonVersion" in c["properties"] for c in addons)
