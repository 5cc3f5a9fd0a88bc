"""GKE + GPU Operator driver path: pools send INSTALLATION_DISABLED and COS pools get Google's
installer DaemonSet (NVIDIA google-gke.html "Using the Google Driver Installer"; manifests
GoogleCloudPlatform/container-engine-accelerators nvidia-driver-installer/cos/)."""

from __future__ import annotations

from typing import Any

import pytest

from infra.core.config.stack import parse
from infra.core.errors import ConfigErrors
from infra.core.gke.driver_installer import (
    COS_INSTALLER_IMAGE,
    GKE_DRIVER_DIR,
    INSTALLER_COMMIT,
    INSTALLER_NAMESPACE,
    INSTALLER_SOURCES,
    installer_daemonset,
    needs_installer,
)
from infra.core.gke.model import NO_GKE_DEVICE_PLUGIN
from infra.core.gke.pools import driver_version
from infra.core.plan import Plan, build_plan
from tests.conftest import gke_config


def build(pool: dict[str, Any] | None = None, **top: Any) -> Plan:
    return build_plan(parse(gke_config(pool, **top), "s"))


def daemonsets(p: Plan) -> list[dict[str, Any]]:
    assert p.operator is not None
    return [m for m in p.operator.before_release if m["kind"] == "DaemonSet"]


def pod_spec(ds: dict[str, Any]) -> dict[str, Any]:
    return ds["spec"]["template"]["spec"]


def match(ds: dict[str, Any]) -> dict[str, dict[str, Any]]:
    aff = pod_spec(ds)["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    (term,) = aff["nodeSelectorTerms"]
    return {e["key"]: e for e in term["matchExpressions"]}


def test_gke_default_cos_pool_gets_the_preloaded_installer_pinned_as_upstream():
    (ds,) = daemonsets(build())
    assert ds["metadata"]["annotations"]["gpu-infra/source"] == INSTALLER_SOURCES["gke-default"]
    assert INSTALLER_COMMIT in INSTALLER_SOURCES["gke-default"]
    assert INSTALLER_SOURCES["gke-default"].endswith("/cos/daemonset-preloaded.yaml")
    installer, partition = pod_spec(ds)["initContainers"]
    # Preloaded on the node, never pulled (upstream: imagePullPolicy Never).
    assert (installer["image"], installer["imagePullPolicy"]) == (COS_INSTALLER_IMAGE, "Never")
    assert installer["securityContext"] == {"privileged": True}
    script = installer["command"][2]
    assert "/cos-gpu-installer install ||" in script and "--version" not in script
    assert "lsmod | grep nvidia" in script  # an already loaded driver is kept
    # Images pulled from a registry are pinned by digest, as upstream pins them.
    assert "@sha256:" in partition["image"]
    assert all("@sha256:" in c["image"] for c in pod_spec(ds)["containers"])


def test_gke_latest_pool_gets_the_latest_installer():
    (ds,) = daemonsets(
        build({"gpu": {"type": "nvidia-tesla-t4", "count": 1, "driver": "gke-latest"}})
    )
    assert ds["metadata"]["annotations"]["gpu-infra/source"].endswith(
        "/cos/daemonset-preloaded-latest.yaml"
    )
    script = pod_spec(ds)["initContainers"][0]["command"][2]
    assert "/cos-gpu-installer install --version=latest" in script


def test_installer_writes_the_driver_where_the_operator_preset_reads_it():
    p = build()
    (ds,) = daemonsets(p)
    host = {v["name"]: v["hostPath"]["path"] for v in pod_spec(ds)["volumes"]}
    assert host["nvidia-install-dir-host"] == GKE_DRIVER_DIR == "/home/kubernetes/bin/nvidia"
    env = {e["name"]: e["value"] for e in pod_spec(ds)["initContainers"][0]["env"]}
    assert env["NVIDIA_INSTALL_DIR_HOST"] == GKE_DRIVER_DIR
    assert env["COS_TOOLS_DIR_HOST"] == host["cos-tools"] == "/var/lib/cos-tools"
    assert host["root-mount"] == "/" and env["ROOT_MOUNT_DIR"] == "/root"
    assert p.operator is not None and p.operator.release is not None
    values = p.operator.release.values
    assert values["hostPaths"]["driverInstallDir"] == GKE_DRIVER_DIR
    assert values["driver"]["enabled"] is False


def test_installer_tolerates_every_taint_and_lands_only_on_the_operators_gke_gpu_pools():
    (ds,) = daemonsets(build())
    assert pod_spec(ds)["tolerations"] == [{"operator": "Exists"}]
    m = match(ds)
    assert m["cloud.google.com/gke-accelerator"]["operator"] == "Exists"
    # Upstream: never on nodes GKE installed a driver on, nor on Confidential GKE Nodes.
    assert m["cloud.google.com/gke-gpu-driver-version"]["operator"] == "DoesNotExist"
    assert m["cloud.google.com/gke-confidential-nodes-instance-type"]["operator"] == "DoesNotExist"
    assert m[NO_GKE_DEVICE_PLUGIN]["values"] == ["true"]
    assert m["cloud.google.com/gke-nodepool"]["values"] == ["gpu-t4"]


def test_installer_runs_system_node_critical_in_kube_system_outside_the_operator_quota():
    p = build()
    (ds,) = daemonsets(p)
    assert ds["metadata"]["namespace"] == INSTALLER_NAMESPACE == "kube-system"
    assert pod_spec(ds)["priorityClassName"] == "system-node-critical"
    assert p.operator is not None
    (quota,) = [m for m in p.operator.before_release if m["kind"] == "ResourceQuota"]
    # The operator namespace's critical-pod quota is not where the installer is admitted.
    assert quota["metadata"]["namespace"] != ds["metadata"]["namespace"]


def test_mixed_default_and_latest_pools_get_one_installer_each_bound_to_their_own_pools():
    ds = installer_daemonset("gke-latest", ["b", "a"])
    assert ds["metadata"]["name"] == "nvidia-driver-installer-latest"
    assert match(ds)["cloud.google.com/gke-nodepool"]["values"] == ["a", "b"]
    default = installer_daemonset("gke-default", ["c"])
    assert default["metadata"]["name"] != ds["metadata"]["name"]


@pytest.mark.parametrize(
    ("driver", "image", "needs"),
    [
        ("gke-default", "COS_CONTAINERD", True),
        ("gke-latest", "COS_CONTAINERD", True),
        ("operator", "UBUNTU_CONTAINERD", False),  # the operator builds it
        ("gke-default", "UBUNTU_CONTAINERD", False),
    ],
)
def test_only_cos_pools_with_a_google_driver_mode_need_the_installer(driver, image, needs):
    assert needs_installer(driver, image) is needs


def test_operator_built_driver_pools_get_no_installer_and_no_gke_driver():
    p = build(
        {
            "imageType": "UBUNTU_CONTAINERD",
            "gpu": {"type": "nvidia-tesla-t4", "count": 1, "driver": "operator"},
        }
    )
    assert daemonsets(p) == []
    assert (
        p.platform.name == "gke"
        and p.platform.plan.pools[0].driver_version == "INSTALLATION_DISABLED"
    )


@pytest.mark.parametrize(
    ("driver", "operator_on", "expected"),
    [
        ("gke-default", True, "INSTALLATION_DISABLED"),
        ("gke-latest", True, "INSTALLATION_DISABLED"),
        ("operator", True, "INSTALLATION_DISABLED"),
        ("gke-default", False, "DEFAULT"),
        ("gke-latest", False, "LATEST"),
    ],
)
def test_gke_installs_no_driver_iff_the_gpu_operator_is_on(driver, operator_on, expected):
    assert driver_version(driver, operator_on) == expected


def test_operator_off_keeps_gke_installing_the_driver_with_no_installer():
    p = build(**{"gpu-infra:gpuOperator": {"enabled": False}})
    assert p.platform.name == "gke" and p.platform.plan.pools[0].driver_version == "DEFAULT"
    assert p.operator is None or not [
        m for m in p.operator.before_release if m["kind"] == "DaemonSet"
    ]


def test_cos_pools_keep_secure_boot_with_googles_signed_driver():
    p = build()
    assert p.platform.name == "gke" and p.platform.plan.pools[0].secure_boot


def test_google_driver_preset_rejects_ubuntu_pools_it_has_no_installer_for():
    with pytest.raises(ConfigErrors) as e:
        build({"imageType": "UBUNTU_CONTAINERD"})
    reasons = {i.path: i.reason for i in e.value.issues}
    assert "COS_CONTAINERD" in reasons["gpuPools[0].gpu.driver"]
