"""The GitOps export of a stack on a GKE cluster it shares: its ComputeClass and node pool names are
the ones the deployed stack runs under, taken from its outputs, or marked as a first deploy's.

The stack of tests/day2/gke-existing-upgrade-keeps-pool-names was deployed by an older gpu-infra
as pools ``gpu`` and ``gpu-a31395`` and ComputeClass ``gpu``; its upgrade keeps those names (the
day-2 case). An offline plan names them ``<name>-<hash>``, a first deploy's names.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from infra import mockengine
from infra import plan as plan_cli
from infra.mocklive import after
from infra.plan import load_path
from infra.planview.export import ExportOptions, export_files, kubernetes_objects
from tests.stack.harness import ROOT
from tests.unit.test_neighbours import older_gpu_infra_catalog

STEP = ROOT / "tests" / "day2" / "gke-existing-upgrade-keeps-pool-names" / "step1.yaml"


def _upgraded(tmp_path: Path) -> tuple[Path, mockengine.Recording]:
    """The stack file (as stack team-b) and the run of its upgrade over what the older
    gpu-infra's deploy left running: what ``pulumi up`` of the upgrade deploys."""
    stack_file = tmp_path / "Pulumi.team-b.yaml"
    stack_file.write_text(STEP.read_text(encoding="utf-8"), encoding="utf-8")
    old_catalog = older_gpu_infra_catalog(tmp_path)
    raw, config, old_plan = load_path(stack_file, None, old_catalog)
    old_run = mockengine.run(raw, config.stack, old_plan.catalog, old_catalog)
    _, _, plan = load_path(stack_file)
    live = after(old_plan, old_run, config)
    observed = mockengine.observe(raw, config.stack, live, plan.catalog)
    return stack_file, mockengine.run(raw, config.stack, plan.catalog, observed=observed)


def _objects(files: dict[str, str]) -> dict[tuple[str, str], Any]:
    docs = (yaml.safe_load(t) for p, t in files.items() if p.startswith(("manifests/", "unaw")))
    return {
        (d["kind"], d["metadata"]["name"]): d for d in docs if d and d["kind"] != "Kustomization"
    }


def test_with_the_deployed_outputs_the_export_writes_the_objects_the_upgrade_runs(tmp_path):
    stack_file, deployed = _upgraded(tmp_path)
    outputs: dict[str, Any] = json.loads(json.dumps(deployed.outputs))  # as the CLI reads them
    raw, config, plan = load_path(stack_file)
    offline = mockengine.run(raw, config.stack, plan.catalog)
    files = export_files(plan, offline, "gitops", ExportOptions(stack_outputs=outputs))
    running = {
        (m["kind"], m["metadata"]["name"]): m for m in kubernetes_objects(deployed.resources)
    }
    exported = _objects(files)
    assert ("ComputeClass", "gpu") in exported
    assert exported[("ComputeClass", "gpu")]["spec"] == running[("ComputeClass", "gpu")]["spec"]
    warm = next(m for k, m in exported.items() if k[0] == "Deployment")
    (same,) = [m for k, m in running.items() if k == ("Deployment", warm["metadata"]["name"])]
    assert warm["spec"]["template"]["spec"] == same["spec"]["template"]["spec"]
    assert "manifests/computeclass-gpu.yaml" in files
    assert not any("first deploy gives" in t for t in files.values())


def test_an_offline_export_says_its_shared_cluster_names_are_a_first_deploys(tmp_path, capsys):
    stack_file, _ = _upgraded(tmp_path)
    code = plan_cli.main(["--stack", str(stack_file), "--export", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 0
    assert "--export: gpu-a31395-a6822b, gpu-a6822b: the names a first deploy gives" in err
    assert "--stack-outputs FILE" in err
    text = (tmp_path / "out" / "manifests" / "computeclass-gpu-a6822b.yaml").read_text()
    assert text.startswith("# PLACEHOLDERS: --export: gpu-a31395-a6822b, gpu-a6822b:")
