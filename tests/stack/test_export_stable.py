"""An export is byte-identical for an unchanged stack, whatever order the engine hands keys in."""

from __future__ import annotations

import functools
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml

from infra import mockengine
from infra.plan import load_path
from infra.planview.export import export_files
from tests.stack.harness import sample_stacks

ROOT = Path(__file__).resolve().parents[2]
STACKS = sample_stacks()


def _reversed_keys(doc: Any) -> Any:
    if isinstance(doc, dict):
        return {k: _reversed_keys(doc[k]) for k in reversed(list(doc))}
    if isinstance(doc, list):
        return [_reversed_keys(v) for v in doc]
    return doc


@functools.cache
def planned(stack: str) -> tuple[Any, mockengine.Recording]:
    """The sample's plan and its run on the mock engine, once for both tests (they only read)."""
    raw, config, plan = load_path(ROOT / "stacks" / f"Pulumi.{stack}.yaml")
    return plan, mockengine.run(raw, config.stack, plan.catalog)


@pytest.mark.parametrize("stack", STACKS)
def test_two_exports_of_every_sample_stack_are_byte_identical(stack):
    plan, recording = planned(stack)
    first = export_files(plan, recording, "gitops")
    # The engine's protobuf Structs give keys in no fixed order: the same inputs, keys reversed.
    shuffled = SimpleNamespace(
        resources=[
            SimpleNamespace(
                type=r.type,
                name=r.name,
                custom=r.custom,
                inputs=_reversed_keys(dict(r.inputs)),
                options=r.options,
            )
            for r in recording.resources
        ],
        outputs=recording.outputs,
    )
    assert export_files(plan, shuffled, "gitops") == first


@pytest.mark.parametrize("stack", STACKS)
def test_exported_documents_start_with_api_version_kind_and_metadata(stack):
    plan, recording = planned(stack)
    for path, text in export_files(plan, recording, "gitops").items():
        if path.startswith("helm/") or not path.endswith(".yaml"):  # values, SECRETS.md
            continue
        for doc in text.split("\n---\n"):
            keys = [ln.split(":")[0] for ln in doc.splitlines() if ln and ln[0].isalpha()]
            assert keys[:2] == ["apiVersion", "kind"], path
            assert "metadata" not in keys or keys[2] == "metadata", path


def test_warm_placeholders_export_to_their_own_unawaited_app_and_kustomization_never_waited_for():
    import yaml

    plan, recording = planned("gke-l4-spot")  # warm: 1
    files = export_files(plan, recording, "gitops")
    placeholders = [p for p in files if p.startswith("unawaited/deployment-")]
    assert placeholders and not any(p.startswith("workloads/deployment-gpu-warm") for p in files)
    assert "pulumi.com/skipAwait" not in files[placeholders[0]]
    app = yaml.safe_load(files["argocd/gpu-infra-unawaited.yaml"])
    waves = [
        int(yaml.safe_load(t)["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"])
        for p, t in files.items()
        if p.startswith("argocd/") and p != "argocd/gpu-infra-unawaited.yaml"
    ]
    assert int(app["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"]) > max(waves)
    flux = {d["metadata"]["name"]: d for d in yaml.safe_load_all(files["flux/gpu-infra.yaml"])}
    warm = flux["gpu-infra-unawaited"]["spec"]
    assert warm["wait"] is False and "healthChecks" not in warm
    assert warm["path"] == "./gitops/unawaited"
    assert all(
        d["spec"].get("dependsOn") != [{"name": "gpu-infra-unawaited"}] for d in flux.values()
    )


@pytest.mark.parametrize("stack", STACKS)
def test_every_exported_file_holding_an_autonamed_resources_logical_name_has_a_header_naming_it(
    stack,
):
    import re

    from infra.planview.placeholders import autonamed

    plan, recording = planned(stack)
    names = autonamed(recording.resources)
    for path, text in export_files(plan, recording, "gitops").items():
        head = "".join(ln + "\n" for ln in text.splitlines() if ln.startswith("# PLACEHOLDERS"))
        body = text.removeprefix(head)
        for name in names:
            if re.search(r"(?<![\w.-])" + re.escape(name) + r"(?![\w.-])", body):
                assert f"# PLACEHOLDERS: {name} is the logical name of a" in head, (path, name)
                assert "random 7-character suffix" in head, path


def test_karpenter_node_role_and_controller_role_are_flagged_as_autonamed_in_the_export():
    plan, recording = planned("eks-karpenter")
    files = export_files(plan, recording, "gitops")
    nodeclasses = [p for p in files if p.startswith("workloads/ec2nodeclass-")]
    assert nodeclasses
    for p in nodeclasses:
        assert files[p].startswith("# PLACEHOLDERS: karp-nodes is the logical name of a Role"), p
    for p in ("helm/karpenter.values.yaml", "argocd/karpenter.yaml"):
        assert "# PLACEHOLDERS: karp-karpenter-role is the logical name of a Role" in files[p]


def _real_outputs(recording: mockengine.Recording) -> dict[str, Any]:
    """What `pulumi stack output --json` of the deployed stack would print: real names carry
    Pulumi's random suffix, ARNs another account."""
    names = {
        logical: {
            "name": f"{v['name']}-a1b2c3d" if v.get("name") else None,
            "arn": v["arn"].replace("123456789012", "111122223333") + "-a1b2c3d"
            if v.get("arn")
            else None,
        }
        for logical, v in recording.outputs["deployedNames"].items()
    }
    return {
        "clusterEndpoint": "https://A1B2.gr7.us-west-2.eks.amazonaws.com",
        "deployedNames": names,
    }


def test_stack_outputs_and_the_repo_url_fill_every_placeholder_of_the_karpenter_export():
    from infra.planview.export import ExportOptions
    from infra.planview.gitops import Target

    plan, recording = planned("eks-karpenter")
    before = export_files(plan, recording, "gitops")
    assert any(t.startswith("# PLACEHOLDERS") for t in before.values())
    target = Target("eks-karpenter", "https://git.example.org/ops.git")
    options = ExportOptions(target, _real_outputs(recording))
    files = export_files(plan, recording, "gitops", options)
    assert [p for p, t in files.items() if "PLACEHOLDERS" in t] == []
    assert "role: karp-nodes-a1b2c3d" in files["workloads/ec2nodeclass-l4.yaml"]
    assert (
        "arn:aws:iam::111122223333:role/karp-karpenter-role-a1b2c3d"
        in files["argocd/karpenter.yaml"]
    )


def test_two_sample_stacks_exports_have_no_application_name_in_common():
    from infra.planview.export import ExportOptions
    from infra.planview.gitops import Target

    names = []
    for stack in ("eks-karpenter", "eks-g4dn"):
        plan, recording = planned(stack)
        files = export_files(plan, recording, stack, ExportOptions(Target(stack)))
        names.append(
            {
                doc["metadata"]["name"]
                for p, text in files.items()
                if p.startswith(("argocd", "flux"))
                for doc in yaml.safe_load_all(text)
                if doc
            }
        )
    assert names[0] and names[1] and not names[0] & names[1]


def test_team_namespaces_pulumi_retains_are_exported_not_prunable():
    plan, recording = planned("onprem-containerd")
    files = export_files(plan, recording, "gitops")
    # stacks/Pulumi.onprem-containerd.yaml: gpuNamespaces [{name: ml-team, gpus: 2}]
    teams = [files["manifests/namespace-ml-team.yaml"]]
    assert teams
    for text in teams:
        notes = yaml.safe_load(text)["metadata"]["annotations"]
        assert notes["argocd.argoproj.io/sync-options"] == "Prune=false,Delete=false"
        assert notes["kustomize.toolkit.fluxcd.io/prune"] == "disabled"
