"""The sample stacks on the mock engine: no sample leaves an unrequested GPU reachable, the vSphere
vGPU sample creates its Secrets before the release and never shows a secret value (``--json``,
``--export``, a ``pulumi up`` whose engine decrypted them), and ``--diff`` of removing the operator
on k3s names the k3s restart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from infra import plan as plan_cli
from infra.cli import stack_file
from infra.core.operator.isolation import ACCEPT_ENVVAR
from infra.plan import load_path
from infra.planview.export import export_files
from tests.stack.harness import ROOT, run_stack, sample

SAMPLES = sorted(
    p.name[len("Pulumi.") : -len(".yaml")] for p in (ROOT / "stacks").glob("Pulumi.*.yaml")
)
VGPU = "onprem-vsphere-vgpu"


def _secure_texts() -> list[str]:
    doc = yaml.safe_load(stack_file(VGPU).read_text(encoding="utf-8"))
    return [v["secure"] for v in doc["config"].values() if isinstance(v, dict) and "secure" in v]


def _by_type(rec: Any, token: str) -> list[Any]:
    return [r for r in rec.resources if r.type == token]


@pytest.mark.parametrize("stack", SAMPLES)
def test_no_sample_stack_leaves_a_pod_a_gpu_it_did_not_request(stack):
    outputs = sample(stack).outputs
    isolation = outputs["gpuIsolation"]
    assert isolation["enforced"] is True, isolation
    assert all(p["unrequestedGpus"] == "none" for p in isolation["paths"])


@pytest.mark.parametrize("stack", ["onprem-containerd", "gke-t4"])
def test_seed_stacks_send_the_accept_envvar_setting_and_their_quotas_carry_no_mark(stack):
    rec = sample(stack)
    (release,) = _by_type(rec, "kubernetes:helm.sh/v3:Release")
    env = {e["name"]: e["value"] for e in release.inputs["values"]["toolkit"]["env"]}
    assert env[ACCEPT_ENVVAR] == "false"
    for quota in _by_type(rec, "kubernetes:core/v1:ResourceQuota"):
        assert "gpu-infra/not-enforced" not in quota.inputs["metadata"].get("annotations", {})


def test_the_vgpu_secrets_exist_before_the_release_which_the_smoke_test_waits_for():
    rec = sample(VGPU)
    secrets = _by_type(rec, "kubernetes:core/v1:Secret")
    assert {s.inputs["metadata"]["name"] for s in secrets} == {
        "gpu-infra-vgpu-licensing",
        "gpu-infra-vgpu-registry",
    }
    assert all(s.inputs["stringData"] == "[secret]" for s in secrets)
    (release,) = _by_type(rec, "kubernetes:helm.sh/v3:Release")
    assert {s.urn for s in secrets} <= set(release.depends_on)
    (job,) = _by_type(rec, "kubernetes:batch/v1:Job")
    assert release.urn in job.depends_on
    assert "License Status" in job.inputs["spec"]["template"]["spec"]["containers"][0]["command"][2]


def test_no_secret_text_is_in_the_plan_json_or_the_export(capsys, tmp_path):
    assert plan_cli.main(["--stack", VGPU, "--json"]) == 0
    document = capsys.readouterr().out
    _, _, plan = load_path(stack_file(VGPU))
    files = export_files(plan, sample(VGPU), "gitops")
    for text in _secure_texts():
        assert text not in document
        assert not any(text in f for f in files.values())
    assert not any(p.startswith("manifests/secret-") for p in files)
    assert "gpu-operator/gpu-infra-vgpu-licensing" in files["SECRETS.md"]


def test_secrets_the_engine_decrypted_stay_secret_outputs_and_never_reach_the_record(monkeypatch):
    raw = yaml.safe_load(stack_file(VGPU).read_text(encoding="utf-8"))["config"]
    plaintext = {
        k: f"plaintext-of-{k}" for k in raw if isinstance(raw[k], dict) and "secure" in raw[k]
    }
    # As `pulumi up` hands them over: decrypted, and listed among the config's secret keys.
    monkeypatch.setenv("PULUMI_CONFIG_SECRET_KEYS", json.dumps(sorted(plaintext)))
    rec = run_stack({**raw, **plaintext}, VGPU)
    recorded = json.dumps([r.to_json() for r in rec.resources]) + json.dumps(rec.outputs)
    assert not any(v in recorded for v in plaintext.values())
    assert all(
        s.inputs["stringData"] == "[secret]" for s in _by_type(rec, "kubernetes:core/v1:Secret")
    )


def test_diff_of_removing_the_operator_on_k3s_names_the_k3s_restart(tmp_path, capsys):
    text = stack_file("onprem-k3s-timeslicing").read_text(encoding="utf-8")
    off = text.replace(
        "  gpu-infra:gpuOperator:\n    enabled: true\n",
        "  gpu-infra:gpuOperator:\n    enabled: false\n",
    )
    off = off.replace("      sharing: {strategy: time-slicing, replicas: 4}\n", "")
    off = off.replace("      mig: {strategy: single, config: all-1g.5gb}\n", "")
    new = Path(tmp_path) / "Pulumi.onprem-k3s-timeslicing.yaml"
    new.write_text(off, encoding="utf-8")
    assert plan_cli.main(["--config", str(new), "--diff", "onprem-k3s-timeslicing", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (release,) = [c for c in doc["changes"] if c["urn"].endswith("::gpu-operator-release")]
    assert release["op"] == "delete"
    assert "k3s itself restarts there" in release["disruptive"]
    assert "prunes NFD's labels from every node" in release["disruptive"]
