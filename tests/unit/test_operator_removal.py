"""``--diff`` of removing the GPU Operator says what the uninstall does, read from the release and
the receivers' facts (``gpu_runtime_facts.csv``): the chart's hooks, operands and RuntimeClasses
deleted, NFD labels pruned where the chart prunes them, containerd (on k3s/RKE2: k3s) restarted."""

from __future__ import annotations

from typing import Any

from infra.core.catalog.runtime_facts import K3S_CONTAINERD_SOCKET, OPERATOR, TOOLKIT, runtime_fact
from infra.core.catalog.vendored import DATA_DIR
from infra.core.diff import HELM_RELEASE, diff
from infra.core.operator.helm_values import chart_defaults
from infra.core.operator.removal import removal_effects


def _release(
    values: dict[str, Any], chart: str = "gpu-operator", version: str = "v26.7.0"
) -> dict[str, Any]:
    return {
        "urn": f"urn:pulumi:s::p::{HELM_RELEASE}::gpu-operator-release",
        "id": "gpu-operator-release_id",
        "type": HELM_RELEASE,
        "name": "gpu-operator-release",
        "custom": True,
        "inputs": {
            "name": "gpu-operator",
            "namespace": "gpu-operator",
            "chart": chart,
            "version": version,
            "values": values,
        },
        "dependsOn": [],
    }


def _removal(values: dict[str, Any], chart: str = "gpu-operator", version: str = "v26.7.0") -> str:
    (c,) = diff([_release(values, chart, version)], [])
    assert c.op == "delete"
    return c.disruptive


K3S = {"toolkit": {"env": [{"name": "CONTAINERD_SOCKET", "value": K3S_CONTAINERD_SOCKET}]}}


def _fact(receiver: str, version: str, name: str) -> str:
    f = runtime_fact(receiver, version, name, DATA_DIR)
    assert f is not None, (receiver, version, name)
    return f.value


def _toolkit(version: str) -> str:
    return str(chart_defaults(version)["toolkit"]["version"]).split("-", 1)[0]


def test_k3s_removal_reverts_a_config_k3s_never_reads_and_restarts_k3s_with_its_api_server():
    # The CDI-era k3s preset sends only the socket, so the toolkit reverts its default config;
    # its default restart (signal) ends k3s's containerd child, and k3s exits with it.
    tk = _toolkit("v26.7.0")
    config, mode = (
        _fact(TOOLKIT, tk, "containerd-config"),
        _fact(TOOLKIT, tk, "containerd-restart-mode"),
    )
    assert mode == "signal"
    text = _removal(K3S)
    assert text.startswith("removal of Helm release gpu-operator (helm uninstall)")
    assert f"reverts {config}" in text and "which k3s's containerd does not read" in text
    assert "k3s itself restarts there" in text and "API server and etcd" in text
    # The installer removes its directory only on install, and k3s registers what it finds there.
    assert "keeps /usr/local/nvidia/toolkit" in text
    assert "installed again" not in text  # a removal, not the replace text


def test_the_operands_and_runtime_classes_go_with_the_clusterpolicy_but_operator_labels_stay():
    text = _removal({})
    assert "MIG manager" in text and "RuntimeClasses" in text
    assert "nvidia.com/gpu.deploy.*" in text and "stay" in text


def test_v26_7_runs_its_unconditional_pre_delete_job_first():
    hooks = _fact(OPERATOR, "v26.7.0", "pre-delete-hooks").split()
    assert "cleanup_gpucluster.yaml:-" in hooks
    assert "pre-delete Job (cleanup_gpucluster.yaml) runs first" in _removal({})
    assert all(
        not h.endswith(":-") for h in _fact(OPERATOR, "v25.10.1", "pre-delete-hooks").split()
    )
    assert "pre-delete" not in _removal({}, version="v25.10.1")


def test_v25_3_nfd_prune_is_not_gated_so_post_delete_cleanup_false_still_prunes():
    off = {"node-feature-discovery": {"postDeleteCleanup": False}}
    assert _fact(OPERATOR, "v25.3.4", "nfd.post-delete-gate") == ""
    assert "prunes NFD's labels" in _removal(off, version="v25.3.4")
    assert _fact(OPERATOR, "v26.7.0", "nfd.post-delete-gate") == "postDeleteCleanup"
    assert "NFD" not in _removal(off)
    assert "prunes NFD's labels from every node" in _removal({})


def test_stock_containerd_restarts_without_k3s_and_the_chart_defaults_are_read():
    defaults = chart_defaults("v26.7.0")
    assert defaults["toolkit"]["enabled"] is True and defaults["nfd"]["enabled"] is True
    drop_in = _fact(TOOLKIT, _toolkit("v26.7.0"), "containerd-drop-in")
    text = _removal({})
    assert "restarts containerd on every GPU node" in text and "k3s" not in text
    assert f"removes {drop_in}" in text
    assert "unload the NVIDIA kernel modules" in text


def test_with_the_amis_toolkit_nothing_is_restarted_and_without_nfd_nothing_is_pruned():
    off = {"toolkit": {"enabled": False}, "nfd": {"enabled": False}, "driver": {"enabled": False}}
    text = _removal(off)
    assert "containerd" not in text and "NFD" not in text and "kernel modules" not in text
    assert "every operand with it" in text


def test_a_toolkit_told_not_to_restart_unconfigures_only():
    values = {"toolkit": {"env": [{"name": "RUNTIME_RESTART_MODE", "value": "none"}]}}
    assert removal_effects(_release(values)["inputs"], DATA_DIR)[-1].endswith(
        "RUNTIME_RESTART_MODE=none)"
    )


def test_another_chart_is_removed_without_the_operators_effects():
    text = _removal({}, chart="nvidia-device-plugin")
    assert (
        text
        == "removal of Helm release gpu-operator (helm uninstall): its objects and pods are deleted"
    )


def test_a_replacement_keeps_its_own_text_and_adds_what_the_uninstall_in_between_does():
    old = _release(K3S)
    new = _release(K3S)
    new["inputs"] = {**new["inputs"], "namespace": "gpu-ops"}
    (c,) = diff([old], [new])
    assert c.op == "replace"
    assert "uninstalled and installed again, its pods restart" in c.disruptive
    assert "the uninstall in between:" in c.disruptive and "k3s itself restarts" in c.disruptive
