"""``--diff`` of removing the GPU Operator says what the uninstall does, read from the release:
operands deleted, NFD labels pruned, containerd (on k3s/RKE2: k3s) restarted on every GPU node."""

from __future__ import annotations

from typing import Any

from infra.core.catalog.runtime_facts import K3S_CONTAINERD_SOCKET
from infra.core.diff import HELM_RELEASE, diff
from infra.core.operator.helm_values import chart_defaults
from infra.core.operator.removal import removal_effects


def _release(values: dict[str, Any], chart: str = "gpu-operator") -> dict[str, Any]:
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
            "version": "v26.7.0",
            "values": values,
        },
        "dependsOn": [],
    }


def _removal(values: dict[str, Any], chart: str = "gpu-operator") -> str:
    (c,) = diff([_release(values, chart)], [])
    assert c.op == "delete"
    return c.disruptive


K3S = {"toolkit": {"env": [{"name": "CONTAINERD_SOCKET", "value": K3S_CONTAINERD_SOCKET}]}}


def test_removing_the_operator_on_k3s_names_the_containerd_and_k3s_restart():
    text = _removal(K3S)
    assert text.startswith("removal of Helm release gpu-operator (helm uninstall)")
    assert "un-configures containerd and restarts it on every GPU node" in text
    assert "k3s itself restarts there" in text
    assert "prunes NFD's labels from every node" in text
    assert "every operand with it" in text
    assert "installed again" not in text  # a removal, not the replace text


def test_stock_containerd_restarts_without_k3s_and_the_chart_defaults_are_read():
    defaults = chart_defaults("v26.7.0")
    assert defaults["toolkit"]["enabled"] is True and defaults["nfd"]["enabled"] is True
    text = _removal({})
    assert "restarts it on every GPU node" in text and "k3s" not in text


def test_with_the_amis_toolkit_nothing_is_restarted_and_without_nfd_nothing_is_pruned():
    text = _removal({"toolkit": {"enabled": False}, "nfd": {"enabled": False}})
    assert "containerd" not in text and "NFD" not in text
    assert "every operand with it" in text


def test_a_toolkit_told_not_to_restart_unconfigures_only():
    values = {"toolkit": {"env": [{"name": "RUNTIME_RESTART_MODE", "value": "none"}]}}
    assert removal_effects(_release(values)["inputs"])[-1].endswith("RUNTIME_RESTART_MODE=none)")


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
