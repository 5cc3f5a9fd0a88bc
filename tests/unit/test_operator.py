"""GPU Operator plan: presets, golden values, chart-key validation, toolkit env mapping, GKE extras."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, get_args

import pytest
import yaml

from infra.core.catalog.pins import pin
from infra.core.catalog.vendored import DATA_DIR
from infra.core.config.operator import Preset
from infra.core.errors import ConfigErrors
from infra.core.operator import (
    DEVICE_PLUGIN_CONFIG_LABEL,
    PRIVILEGED_PSA,
    preset_settings,
    render_helm_values,
)
from infra.core.operator.helm_values import (
    chart_defaults,
    is_cdi_era,
    merge_settings,
    unknown_paths,
    vendored_versions,
)
from tests.unit.operator_fixtures import (
    assert_golden,
    errors,
    hints_for,
    plan,
    platform_of,
    stack,
)

# The chart version a stack naming none gets (pins.csv row gpu-operator).
DEFAULT_OPERATOR_VERSION = pin("gpu-operator", DATA_DIR).version
PRESETS: tuple[str, ...] = get_args(Preset)


def errors_of_parse(operator: dict[str, Any]) -> dict[str, str]:
    """Issue path -> reason of a ``gpuOperator`` block that fails schema validation."""
    with pytest.raises(ConfigErrors) as e:
        stack("kubernetes", operator=operator)
    return {i.path: i.reason for i in e.value.issues}


def env_of(values: dict[str, Any], path: str = "toolkit") -> dict[str, str]:
    return {e["name"]: e["value"] for e in values.get(path, {}).get("env", [])}


# One representative stack per preset: (platform, pool overrides, hint overrides, operator block).
PRESET_CASES: dict[str, tuple[str, dict[str, Any], dict[str, Any], dict[str, Any]]] = {
    "gke-google-driver": ("gke", {}, {}, {}),
    "gke-operator-driver": (
        "gke",
        {},
        {"driver": "operator", "node_image": "UBUNTU_CONTAINERD"},
        {},
    ),
    "eks-al2023": ("eks", {}, {}, {}),
    "eks-bottlerocket": ("eks", {}, {"node_image": "BOTTLEROCKET_x86_64_NVIDIA"}, {}),
    "containerd": ("kubernetes", {}, {}, {}),
    "k3s": ("kubernetes", {}, {}, {"preset": "k3s"}),
    "rke2": ("kubernetes", {}, {}, {"preset": "rke2"}),
    "microk8s": ("kubernetes", {}, {}, {"preset": "microk8s"}),
}


def preset_plan(preset: str, version: str = DEFAULT_OPERATOR_VERSION):
    platform, pool, hint, op = PRESET_CASES[preset]
    cfg = stack(platform, [pool], {**op, "version": version})
    return plan(cfg, hints_for(cfg, **hint))


def test_every_preset_has_a_case():
    assert set(PRESET_CASES) == set(PRESETS)


@pytest.mark.parametrize("preset", PRESETS)
def test_preset_is_chosen_automatically_from_platform_and_pools(preset):
    platform, _, _, op = PRESET_CASES[preset]
    if "preset" in op:  # k3s/rke2/microk8s come from cluster.distribution
        cfg = stack(platform, cluster={"distribution": op["preset"]})
        _, _, hint, _ = PRESET_CASES[preset]
        assert plan(cfg, hints_for(cfg, **hint)).preset == preset
    else:
        assert preset_plan(preset).preset == preset


@pytest.mark.parametrize("preset", PRESETS)
def test_golden_values_per_preset(preset):
    assert_golden(preset_plan(preset), f"gpu-operator-{preset}")


@pytest.mark.parametrize("version", ["v25.3.4", "v25.10.1", "v26.3.3", DEFAULT_OPERATOR_VERSION])
@pytest.mark.parametrize("preset", PRESETS)
def test_preset_values_use_only_keys_of_that_chart_version(preset, version):
    platform, _, _, _ = PRESET_CASES[preset]
    cfg = stack(platform, cluster={"minMasterVersion": "1.32"} if platform == "gke" else None)
    platform = platform_of(cfg)
    settings = preset_settings(platform.presets()[preset], version, platform, hints_for(cfg))
    values, _ = merge_settings(settings, version)
    assert unknown_paths(values, version) == []


# What gpu-infra adds to every toolkit the operator installs (infra.core.operator.isolation).
ISOLATED = {"ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED": "false"}


def test_values_hold_only_overrides_with_a_reason_each():
    op = preset_plan("gke-google-driver")
    assert op.release is not None
    defaults = chart_defaults(op.release.version)
    assert op.release.values["driver"] == {"enabled": False}  # not the whole driver block
    assert "cdi" not in op.release.values  # cdi.enabled is already true in v26.7.0
    assert defaults["cdi"]["enabled"] is True
    reasons = op.release.reasons
    assert set(reasons) == {
        "driver.enabled",
        "hostPaths.driverInstallDir",
        "toolkit.installDir",
        "toolkit.env[RUNTIME_CONFIG_SOURCE]",
        "toolkit.env[ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED]",
    }
    assert all(r and "\n" not in r for r in reasons.values())


def test_pinned_default_version_is_vendored_and_cdi_era():
    assert DEFAULT_OPERATOR_VERSION in vendored_versions()
    assert is_cdi_era(DEFAULT_OPERATOR_VERSION)
    assert not is_cdi_era("v25.3.4")


def test_unknown_chart_version_is_rejected():
    errs = errors(stack("kubernetes", operator={"version": "v24.9.0"}))
    assert "v24.9.0" in errs["gpuOperator.version"]


def test_unknown_user_values_key_is_rejected_with_its_path():
    cfg = stack("kubernetes", operator={"values": {"toolkit": {"enabled": True, "nope": 1}}})
    errs = errors(cfg)
    assert "not a key of the gpu-operator v26.7.0 chart" in errs["gpuOperator.values.toolkit.nope"]


def test_user_values_under_free_form_maps_accept_dotted_keys():
    labels = {"example.com/team": "ml"}
    op = plan(stack("kubernetes", operator={"values": {"daemonsets": {"labels": labels}}}))
    assert op.release is not None
    assert op.release.values["daemonsets"]["labels"] == labels


def test_unknown_user_values_key_with_a_dot_is_blamed_on_values_not_the_preset():
    errs = errors(stack("kubernetes", operator={"values": {"foo.bar": 1}}))
    assert list(errs) == ["gpuOperator.values.foo.bar"]


def test_user_values_set_keys_gpu_infra_does_not_manage():
    cfg = stack("kubernetes", operator={"values": {"dcgmExporter": {"enabled": False}}})
    op = plan(cfg)
    assert op.release is not None
    assert op.release.values["dcgmExporter"] == {"enabled": False}
    assert op.release.reasons["dcgmExporter.enabled"] == "gpuOperator.values"


def test_user_values_may_not_undo_a_preset_value():
    cfg = stack("gke", operator={"values": {"driver": {"enabled": True}}})
    reason = errors(cfg)["gpuOperator.values.driver.enabled"]
    assert "preset gke-google-driver" in reason


def test_user_values_may_not_replace_an_env_list_gpu_infra_sets():
    env = [{"name": "X", "value": "1"}]
    cfg = stack(
        "kubernetes",
        operator={
            "preset": "microk8s",
            "version": "v25.3.4",
            "values": {"devicePlugin": {"env": env}},
        },
    )
    assert "GPU isolation" in errors(cfg)["gpuOperator.values.devicePlugin.env"]


def test_user_values_may_not_fight_pool_derived_values():
    cfg = stack(
        "kubernetes",
        [{"sharing": {"replicas": 4}}],
        operator={"values": {"devicePlugin": {"config": {"name": "mine"}}}},
    )
    assert "gpuOperator.values.devicePlugin.config.name" in errors(cfg)


def test_toolkit_env_in_values_points_to_toolkit_env_key():
    cfg = stack(
        "kubernetes", operator={"values": {"toolkit": {"env": [{"name": "A", "value": "b"}]}}}
    )
    assert "toolkitEnv" in errors(cfg)["gpuOperator.values.toolkit.env"]


# --- seed 003's toolkit env ------------------------------------------------------------------------

SEED_003_ENV = {
    "CONTAINERD_CONFIG": "/etc/containerd/config.toml",
    "CONTAINERD_SOCKET": "/run/containerd/containerd.sock",
    "CONTAINERD_RUNTIME_CLASS": "nvidia",
    "CONTAINERD_SET_AS_DEFAULT": "true",
}


def test_cdi_chart_never_makes_nvidia_the_default_runtime_and_says_why():
    # Seed 003's CONTAINERD_SET_AS_DEFAULT=true on a CDI-era chart would re-open the isolation
    # bypass (any CUDA image sees every GPU without a request); it is dropped with a printed note.
    op = plan(stack("kubernetes", operator={"toolkitEnv": SEED_003_ENV}))
    assert op.release is not None
    env = env_of(dict(op.release.values))
    assert env == {
        "CONTAINERD_CONFIG": "/etc/containerd/config.toml",
        "CONTAINERD_SOCKET": "/run/containerd/containerd.sock",
        "ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED": "false",
    }
    (note,) = op.notes
    assert note.startswith("gpuOperator.toolkitEnv.CONTAINERD_SET_AS_DEFAULT: not applied")
    assert "bypassing the namespace GPU quotas" in note
    # runtime class 'nvidia' is the chart default: operator.runtimeClass needs no override.
    assert "operator" not in op.release.values


def test_seed_env_runtime_class_goes_to_operator_runtime_class():
    env = {**SEED_003_ENV, "CONTAINERD_RUNTIME_CLASS": "nvidia-gpu"}
    op = plan(stack("kubernetes", operator={"toolkitEnv": env}))
    assert op.release is not None
    assert op.release.values["operator"] == {"runtimeClass": "nvidia-gpu"}
    assert "CONTAINERD_RUNTIME_CLASS" not in env_of(dict(op.release.values))


def test_seed_env_on_pre_cdi_chart_keeps_containerd_set_as_default():
    op = plan(stack("kubernetes", operator={"toolkitEnv": SEED_003_ENV, "version": "v25.3.4"}))
    assert op.release is not None
    env = env_of(dict(op.release.values))
    assert env["CONTAINERD_SET_AS_DEFAULT"] == "true"
    assert "NVIDIA_RUNTIME_SET_AS_DEFAULT" not in env
    assert "CONTAINERD_RUNTIME_CLASS" not in env


def test_toolkit_env_values_become_strings_and_pass_through():
    op = plan(
        stack(
            "kubernetes",
            operator={"toolkitEnv": {"CONTAINERD_SET_AS_DEFAULT": False, "NRI_PLUGIN_INDEX": 3}},
        )
    )
    assert op.release is not None
    # false is what a CDI-era operator sets anyway: nothing to add, nothing to note.
    assert env_of(dict(op.release.values)) == {"NRI_PLUGIN_INDEX": "3", **ISOLATED}
    assert op.notes == ()


def test_toolkit_env_user_value_wins_over_preset_env():
    cfg = stack(
        "kubernetes", operator={"preset": "k3s", "toolkitEnv": {"CONTAINERD_SOCKET": "/x.sock"}}
    )
    op = plan(cfg)
    assert op.release is not None
    assert env_of(dict(op.release.values)) == {"CONTAINERD_SOCKET": "/x.sock", **ISOLATED}


@pytest.mark.parametrize(
    ("env", "path"),
    [
        ({"NVIDIA_RUNTIME_NAME": "x"}, "gpuOperator.toolkitEnv.NVIDIA_RUNTIME_NAME"),
        ({"RUNTIME_CONFIG": "/x.toml"}, "gpuOperator.toolkitEnv.RUNTIME_CONFIG"),
        ({"CONTAINERD_SET_AS_DEFAULT": "yes"}, "gpuOperator.toolkitEnv.CONTAINERD_SET_AS_DEFAULT"),
    ],
)
def test_toolkit_env_that_breaks_the_runtime_wiring_is_rejected(env, path):
    assert path in errors(stack("kubernetes", operator={"toolkitEnv": env}))


def test_runtime_config_source_is_rejected_on_toolkit_117():
    cfg = stack(
        "kubernetes",
        operator={"version": "v25.3.4", "toolkitEnv": {"RUNTIME_CONFIG_SOURCE": "file"}},
    )
    assert "1.18" in errors(cfg)["gpuOperator.toolkitEnv.RUNTIME_CONFIG_SOURCE"]


def test_toolkit_env_names_must_be_env_var_names():
    assert "gpuOperator.toolkitEnv" in errors_of_parse({"toolkitEnv": {"BAD-NAME": "x"}})


def test_toolkit_env_is_rejected_when_the_preset_disables_the_toolkit():
    assert "gpuOperator.toolkitEnv" in errors(stack("eks", operator={"toolkitEnv": SEED_003_ENV}))


# --- GKE extras -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "expected"),
    [("1.32", False), ("1.33", True), ("1.34.1-gke.100", True), (None, True)],
)
def test_runtime_config_source_file_on_gke_133_and_later(version, expected):
    cfg = stack("gke", cluster={"minMasterVersion": version} if version else {})
    op = plan(cfg)
    assert op.release is not None
    assert (env_of(dict(op.release.values)).get("RUNTIME_CONFIG_SOURCE") == "file") is expected


def test_pre_cdi_chart_on_gke_133_is_rejected():
    cfg = stack("gke", operator={"version": "v25.3.4"}, cluster={"minMasterVersion": "1.33"})
    assert "toolkit 1.17" in errors(cfg)["gpuOperator.version"]


def test_gke_gets_the_critical_priority_class_quota_in_the_operator_namespace():
    op = plan(stack("gke"))
    (quota,) = [m for m in op.before_release if m["kind"] == "ResourceQuota"]
    assert quota["metadata"]["namespace"] == "gpu-operator"
    (expr,) = quota["spec"]["scopeSelector"]["matchExpressions"]
    assert expr == {
        "operator": "In",
        "scopeName": "PriorityClass",
        "values": ["system-node-critical", "system-cluster-critical"],
    }


@pytest.mark.parametrize("platform", ["eks", "kubernetes"])
def test_no_critical_quota_off_gke(platform):
    assert not [m for m in plan(stack(platform)).before_release if m["kind"] == "ResourceQuota"]


def test_operator_namespace_is_privileged():
    op = plan(stack("eks"))
    assert op.namespace_object is not None
    assert PRIVILEGED_PSA.items() <= op.namespace_object["metadata"]["labels"].items()


@pytest.mark.parametrize(
    ("preset", "hint", "reason"),
    [
        (
            "gke-google-driver",
            {"driver": "operator", "node_image": "UBUNTU_CONTAINERD"},
            "Google's driver installer",
        ),
        ("gke-operator-driver", {"driver": "gke-default"}, "two drivers conflict"),
        ("gke-operator-driver", {"driver": "operator"}, "UBUNTU_CONTAINERD"),
    ],
)
def test_preset_contradicting_the_pool_driver_mode_is_rejected(preset, hint, reason):
    cfg = stack("gke", operator={"preset": preset})
    assert reason in errors(cfg, hints_for(cfg, **hint))["gpuOperator.preset"]


def test_pools_with_different_driver_modes_are_rejected_at_the_pool():
    cfg = stack("gke", [{"name": "a"}, {"name": "b"}])
    a, b = hints_for(cfg)
    b = replace(b, driver="operator", node_image="UBUNTU_CONTAINERD")
    assert "gpuPools[1].gpu.driver" in errors(cfg, (a, b))


def test_preset_of_another_platform_is_rejected():
    assert "gpuOperator.preset" in errors(stack("kubernetes", operator={"preset": "eks-al2023"}))


def test_eks_ami_type_decides_the_preset_and_mixed_amis_are_rejected():
    cfg = stack("eks", [{"name": "a"}, {"name": "b"}])
    a, b = hints_for(cfg)
    assert (
        plan(cfg, (replace(a, node_image="BOTTLEROCKET_ARM_64_NVIDIA"),)).preset
        == "eks-bottlerocket"
    )
    errs = errors(cfg, (a, replace(b, node_image="BOTTLEROCKET_x86_64_NVIDIA")))
    assert "AL2023 NVIDIA AMI" in errs["gpuPools[1].amiFamily"]


def test_eks_al2023_without_nvidia_ami_is_rejected():
    cfg = stack("eks")
    errs = errors(cfg, hints_for(cfg, node_image="AL2023_x86_64_STANDARD"))
    assert any("NVIDIA AMI" in r for r in errs.values())


def test_render_helm_values_is_the_release_values_with_reasons_as_comments():
    op = plan(stack("kubernetes", operator={"toolkitEnv": SEED_003_ENV}))
    assert op.release is not None
    text = render_helm_values(op)
    assert yaml.safe_load(text) == op.release.values
    assert "#   toolkit.env[CONTAINERD_SOCKET]: gpuOperator.toolkitEnv CONTAINERD_SOCKET" in text
    assert "# note: gpuOperator.toolkitEnv.CONTAINERD_SET_AS_DEFAULT: not applied" in text


def test_disabled_operator_has_no_release_and_rejects_operator_sharing():
    op = plan(stack("kubernetes", operator={"enabled": False}))
    assert op.release is None and op.namespace_object is None
    assert "no GPU Operator values" in render_helm_values(op)
    cfg = stack("kubernetes", [{"sharing": {"replicas": 2}}], operator={"enabled": False})
    assert "gpuOperator.enabled is false" in errors(cfg)["gpuPools[0].sharing"]


def test_device_plugin_label_constant_matches_the_operator():
    # config-manager reads this exact label (assets/state-device-plugin, NODE_LABEL env).
    assert DEVICE_PLUGIN_CONFIG_LABEL == "nvidia.com/device-plugin.config"


def _isolation(values: dict[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    plugin = {e["name"]: e["value"] for e in values.get("devicePlugin", {}).get("env", [])}
    return env_of(values), plugin


def test_pre_cdi_default_runtime_is_paired_with_gpu_isolation_settings():
    # onprem-containerd's seed env on v25.3.4 and the microk8s preset both make nvidia the default
    # runtime; rke2-docs gpu_operators.md (v25.3) requires the isolation settings with it.
    seed = plan(stack("kubernetes", operator={"toolkitEnv": SEED_003_ENV, "version": "v25.3.4"}))
    for op in (seed, preset_plan("microk8s", "v25.3.4")):
        assert op.release is not None
        env, plugin = _isolation(dict(op.release.values))
        assert env["CONTAINERD_SET_AS_DEFAULT"] == "true"
        assert env["ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED"] == "false"
        assert env["ACCEPT_NVIDIA_VISIBLE_DEVICES_AS_VOLUME_MOUNTS"] == "true"
        assert plugin["DEVICE_LIST_STRATEGY"] == "volume-mounts"
    # CDI-era charts need none of it.
    op = preset_plan("microk8s")
    assert op.release is not None
    env, plugin = _isolation(dict(op.release.values))
    assert "ACCEPT_NVIDIA_VISIBLE_DEVICES_AS_VOLUME_MOUNTS" not in env
    assert "DEVICE_LIST_STRATEGY" not in plugin


def test_pre_cdi_unset_set_as_default_is_the_installers_true_and_gets_isolation_too():
    # toolkit 1.17's installer makes nvidia the default runtime unless told otherwise.
    op = preset_plan("containerd", "v25.3.4")
    assert op.release is not None
    env, plugin = _isolation(dict(op.release.values))
    assert "CONTAINERD_SET_AS_DEFAULT" not in env
    assert env["ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED"] == "false"
    assert env["ACCEPT_NVIDIA_VISIBLE_DEVICES_AS_VOLUME_MOUNTS"] == "true"
    assert plugin["DEVICE_LIST_STRATEGY"] == "volume-mounts"


def test_gke_google_driver_preset_follows_nvidias_gke_guide_so_prints_no_deviation_note():
    for preset in ("gke-google-driver", "gke-operator-driver"):
        assert not [n for n in preset_plan(preset).notes if "GKE" in n]


def test_eks_presets_note_that_nvidia_validates_ubuntu_nodes_on_eks():
    for preset in ("eks-al2023", "eks-bottlerocket"):
        (note,) = [n for n in preset_plan(preset).notes if n.startswith("EKS:")]
        assert "Ubuntu" in note and "platform-support" in note


def test_k3s_and_rke2_cdi_charts_note_the_containerd_2_requirement():
    for preset in ("k3s", "rke2"):
        (note,) = [n for n in preset_plan(preset).notes if "containerd >= 2.0" in n]
        assert "docs.rke2.io/add-ons/gpu_operators" in note
    assert not [n for n in preset_plan("containerd").notes if "containerd >= 2.0" in n]


# Fact installer-env (gpu_runtime_facts.csv, read by scripts/refresh_runtime_facts.py from every
# flag's EnvVars): toolkit v1.17.5 (chart v25.3.0) keeps its installer under tools/container and
# reads no TOOLKIT_INSTALL_DIR (added with cmd/nvidia-ctk-installer in 1.18) and no NRI_SOCKET
# (1.19); toolkit v1.19.0 (chart v26.3.1) reads both.
@pytest.mark.parametrize(
    ("version", "name", "unread"),
    [
        ("v25.3.0", "TOOLKIT_INSTALL_DIR", True),
        ("v25.3.0", "NRI_SOCKET", True),
        ("v25.3.0", "DRIVER_ROOT", False),
        ("v26.3.1", "TOOLKIT_INSTALL_DIR", False),
        ("v26.3.1", "NRI_SOCKET", False),
    ],
)
def test_a_toolkit_env_variable_the_pinned_charts_toolkit_does_not_read_is_noted(
    version, name, unread
):
    value = "/var/run/nri/nri.sock" if name == "NRI_SOCKET" else "/usr/local/nvidia"
    op = plan(stack("kubernetes", operator={"toolkitEnv": {name: value}, "version": version}))
    noted = [n for n in op.notes if n.startswith(f"gpuOperator.toolkitEnv.{name}: the installer")]
    assert bool(noted) is unread, op.notes
    if unread:
        assert "container toolkit v1.17.5" in noted[0] and "does not read it" in noted[0]
