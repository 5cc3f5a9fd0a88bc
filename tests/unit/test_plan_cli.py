"""``python -m infra.plan`` paths that do not need the mock engine: Helm values export, failures."""

from __future__ import annotations

import yaml

from infra import mockanswers, mockengine
from infra import plan as plan_cli


def test_helm_values_export_is_yaml_with_the_seed_toolkit_mapping(capsys):
    assert plan_cli.main(["--stack", "onprem-containerd", "--helm-values"]) == 0
    out = capsys.readouterr().out
    values = yaml.safe_load(out)
    env = {e["name"]: e["value"] for e in values["toolkit"]["env"]}
    assert env["CONTAINERD_SOCKET"] == "/run/containerd/containerd.sock"
    assert "NVIDIA_RUNTIME_SET_AS_DEFAULT" not in env and "CONTAINERD_SET_AS_DEFAULT" not in env
    assert "# note: gpuOperator.toolkitEnv.CONTAINERD_SET_AS_DEFAULT: not applied" in out
    assert "helm upgrade --install gpu-operator" in out  # the header says how to apply it


def test_helm_values_of_a_stack_without_the_operator_say_so(capsys):
    assert plan_cli.main(["--stack", "gke-a100-mig", "--helm-values"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# gpuOperator.enabled is false")
    assert yaml.safe_load(out) == {}


def test_engine_failure_exits_1_with_one_line(monkeypatch, capsys):
    def broken(*_: object, **__: object) -> None:
        raise mockanswers.UnmockedInvokeError("unmocked invoke x:y/z:z; add it\nsecond line")

    monkeypatch.setattr(mockengine, "run", broken)
    assert plan_cli.main(["--stack", "gke-t4"]) == 1
    err = capsys.readouterr().err
    failure = [line for line in err.splitlines() if not line.startswith("note: ")]
    assert failure == ["plan failed: UnmockedInvokeError: unmocked invoke x:y/z:z; add it"]
