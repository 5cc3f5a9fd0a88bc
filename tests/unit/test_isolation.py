"""GPU isolation on every runtime path: each row of the isolation table against the receivers'
own facts (``infra/core/data/gpu_runtime_facts.csv``, read from their source by
``scripts/refresh_runtime_facts.py``) and the vendored chart values, so a chart or toolkit bump
that changes a default fails here instead of silently reopening a path."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from infra.core.catalog.pins import pins
from infra.core.catalog.runtime_facts import (
    BOTTLEROCKET,
    DEVICE_PLUGIN,
    EKS_AMI,
    OPERATOR,
    TOOLKIT,
    runtime_fact,
    versions_of,
)
from infra.core.catalog.vendored import DATA_DIR
from infra.core.eks.bootstrap import TOOLKIT_ISOLATION
from infra.core.errors import ConfigErrors
from infra.core.operator.helm_values import CHART_DATA_DIR, is_cdi_era, vendored_versions
from infra.core.operator.isolation import ACCEPT_ENVVAR, ACCEPT_MOUNTS, summary
from infra.core.operator.isolation_table import _OPERATOR_FACTS, _TOOLKIT_FACTS, rows
from tests.unit.operator_fixtures import errors, plan, stack

NS = [{"name": "team-a", "gpus": 2}]
ACCEPT_MOUNTS_FLAG = "accept-nvidia-visible-devices-as-volume-mounts"


def _chart(version: str) -> dict[str, Any]:
    """The vendored chart values file itself (the receiver's artefact, not the model's view)."""
    return yaml.safe_load((CHART_DATA_DIR / f"values-{version}.yaml").read_text(encoding="utf-8"))


def _shipped(version: str) -> tuple[str, str]:
    values = _chart(version)
    return str(values["toolkit"]["version"]).split("-")[0], str(values["devicePlugin"]["version"])


def env_of(values: Any, component: str = "toolkit") -> dict[str, str]:
    return {e["name"]: e["value"] for e in values.get(component, {}).get("env", [])}


def _plugin_env(values: Any) -> dict[str, str]:
    return env_of(values, "devicePlugin")


# --- the facts cover every chart gpu-infra accepts ------------------------------------------------


@pytest.mark.parametrize("version", vendored_versions())
def test_every_vendored_chart_has_the_operator_facts_the_table_reads(version):
    missing = [f for f in _OPERATOR_FACTS if runtime_fact(OPERATOR, version, f, DATA_DIR) is None]
    assert missing == [], f"run scripts/refresh_runtime_facts.py for gpu-operator {version}"


@pytest.mark.parametrize("version", vendored_versions())
def test_the_toolkit_and_device_plugin_each_chart_ships_have_their_defaults_recorded(version):
    toolkit, plugin = _shipped(version)
    assert [f for f in _TOOLKIT_FACTS if runtime_fact(TOOLKIT, toolkit, f, DATA_DIR) is None] == []
    assert runtime_fact(DEVICE_PLUGIN, plugin, "device-list-strategy", DATA_DIR) is not None


def test_the_facts_were_read_at_the_commits_pins_csv_records_for_the_chart_tags():
    recorded = {
        p.version: p.commit for p in pins("gpu-operator-values", DATA_DIR).values() if p.commit
    }
    assert recorded  # v25.3.4, v25.10.1, v26.7.0 carry their commit
    for version, commit in recorded.items():
        fact = runtime_fact(OPERATOR, version, "runtimeClasses", DATA_DIR)
        assert fact is not None and commit.startswith(fact.commit), version


def test_every_recorded_toolkit_and_plugin_version_is_one_a_vendored_chart_ships():
    shipped = {_shipped(v) for v in vendored_versions()}
    assert set(versions_of(TOOLKIT, DATA_DIR)) == {t for t, _ in shipped}
    assert set(versions_of(DEVICE_PLUGIN, DATA_DIR)) == {d for _, d in shipped}


# --- the toolkit path (the operator installs the toolkit) -----------------------------------------


@pytest.mark.parametrize("version", vendored_versions())
def test_the_installer_honours_the_env_var_unprivileged_by_default_so_the_plan_sends_false(
    version,
):
    toolkit, _ = _shipped(version)
    default = runtime_fact(
        TOOLKIT, toolkit, "accept-nvidia-visible-devices-envvar-when-unprivileged", DATA_DIR
    )
    gate = runtime_fact(TOOLKIT, toolkit, "envvar-gate", DATA_DIR)
    assert default is not None and gate is not None
    assert (default.value, gate.value) == ("true", "privileged-or-accept")
    assert ACCEPT_ENVVAR in default.env.split()
    op = plan(stack("kubernetes", operator={"version": version}, namespaces=NS))
    assert op.release is not None
    assert env_of(dict(op.release.values))[ACCEPT_ENVVAR] == "false"
    (row,) = op.isolation
    assert row.enforced and toolkit in row.accept_envvar.source


@pytest.mark.parametrize("version", [v for v in vendored_versions() if is_cdi_era(v)])
def test_cdi_operator_keeps_nvidia_non_default_but_creates_runtime_class_nvidia(version):
    cdi_env = runtime_fact(OPERATOR, version, "toolkit.cdi-env", DATA_DIR)
    classes = runtime_fact(OPERATOR, version, "runtimeClasses", DATA_DIR)
    assert cdi_env is not None and "NVIDIA_RUNTIME_SET_AS_DEFAULT=false" in cdi_env.words
    assert classes is not None and "operator.runtimeClass" in classes.words
    assert _chart(version)["cdi"]["enabled"] is True
    op = plan(stack("kubernetes", operator={"version": version}, namespaces=NS))
    (row,) = op.isolation
    assert row.default_runtime.value == "runc"
    assert "nvidia" in row.runtime_classes.value  # the path NVIDIA/gpu-operator#1588's pods take
    assert row.accept_envvar.value is False and row.enforced
    plugin = runtime_fact(OPERATOR, version, "devicePlugin.cdi-strategy", DATA_DIR)
    assert plugin is not None and row.device_list.value == plugin.value  # allocated GPUs by CDI
    assert ACCEPT_MOUNTS not in env_of(dict(op.release.values))  # nothing else reopened


@pytest.mark.parametrize("version", [v for v in vendored_versions() if not is_cdi_era(v)])
def test_pre_cdi_installer_makes_nvidia_the_default_so_gpus_come_as_volume_mounts(version):
    toolkit, _ = _shipped(version)
    default = runtime_fact(TOOLKIT, toolkit, "set-as-default", DATA_DIR)
    cdi_env = runtime_fact(OPERATOR, version, "toolkit.cdi-env", DATA_DIR)
    assert default is not None and default.flag
    assert cdi_env is not None and not any("SET_AS_DEFAULT" in w for w in cdi_env.words)
    assert _chart(version)["cdi"]["enabled"] is False
    op = plan(stack("kubernetes", operator={"version": version}, namespaces=NS))
    assert op.release is not None
    env, plugin = env_of(dict(op.release.values)), _plugin_env(op.release.values)
    assert (env[ACCEPT_ENVVAR], env[ACCEPT_MOUNTS]) == ("false", "true")
    assert plugin["DEVICE_LIST_STRATEGY"] == "volume-mounts"
    (row,) = op.isolation
    assert row.default_runtime.value == "nvidia" and row.enforced and row.delivers


def test_a_chart_default_envvar_strategy_is_replaced_not_kept_v25_3_0():
    # v25.3.0's values.yaml lists devicePlugin.env DEVICE_LIST_STRATEGY=envvar itself: with the
    # env var refused, allocated GPUs would not arrive unless it is replaced.
    chart_env = {e["name"]: e["value"] for e in _chart("v25.3.0")["devicePlugin"]["env"]}
    assert chart_env["DEVICE_LIST_STRATEGY"] == "envvar"
    op = plan(stack("kubernetes", operator={"version": "v25.3.0"}))
    assert op.release is not None
    assert _plugin_env(op.release.values)["DEVICE_LIST_STRATEGY"] == "volume-mounts"


def test_legacy_mode_on_a_cdi_chart_gets_the_volume_mount_setup_too():
    op = plan(stack("kubernetes", operator={"values": {"cdi": {"enabled": False}}}, namespaces=NS))
    assert op.release is not None
    env = env_of(dict(op.release.values))
    assert (env[ACCEPT_ENVVAR], env[ACCEPT_MOUNTS]) == ("false", "true")
    (row,) = op.isolation
    assert (row.mode, row.default_runtime.value, row.runtime_classes.value) == (
        "legacy",
        "nvidia",
        ("nvidia",),
    )
    assert row.enforced and row.delivers


def test_up_to_v25_3_2_the_operator_applies_its_cdi_env_after_the_users():
    for version, last in (("v25.3.2", False), ("v25.3.3", True), ("v26.7.0", True)):
        fact = runtime_fact(OPERATOR, version, "devicePlugin.user-env-last", DATA_DIR)
        assert fact is not None and fact.flag is last, version
    # GKE's CDI setup on v25.3.2: the operator's envvar,cdi-annotations wins over volume-mounts;
    # annotations still hand allocated GPUs over with the env var refused.
    config = stack("gke", operator={"version": "v25.3.2"}, cluster={"minMasterVersion": "1.32"})
    (row,) = plan(config).isolation
    assert row.device_list.value == "envvar,cdi-annotations" and row.delivers and row.enforced


# --- which handover the nvidia runtime reads, in the mode it runs -------------------------------


def _fact(receiver: str, version: str, name: str) -> str:
    f = runtime_fact(receiver, version, name, DATA_DIR)
    assert f is not None, f"no fact {receiver} {version} {name}"
    return f.value


@pytest.mark.parametrize("version", ["v25.3.3", "v25.3.4"])
def test_gke_v25_3_cdi_default_runs_the_runtime_in_cdi_mode_so_the_operator_strategy_is_kept(
    version,
):
    # The operator sends NVIDIA_CONTAINER_RUNTIME_MODE=cdi with cdi.default and applies
    # devicePlugin.env after its own CDI env from v25.3.3; toolkit 1.17 in CDI mode reads only
    # cdi/... mounts, so a volume-mount strategy would hand over device IDs nothing reads.
    toolkit, _ = _shipped(version)
    assert "NVIDIA_CONTAINER_RUNTIME_MODE=cdi" in _fact(
        OPERATOR, version, "toolkit.cdi-default-env"
    )
    assert _fact(OPERATOR, version, "devicePlugin.user-env-last") == "true"
    assert _fact(TOOLKIT, toolkit, "cdi-mount-forms") == "cdi"
    strategy = _fact(OPERATOR, version, "devicePlugin.cdi-strategy")
    prefix = _fact(OPERATOR, version, "devicePlugin.cdi-annotation-prefix")
    assert "cdi-annotations" in strategy.split(",") and prefix == "nvidia.cdi.k8s.io/"
    config = stack("gke", operator={"version": version}, cluster={"minMasterVersion": "1.32"})
    op = plan(config)
    assert op.release is not None
    assert "DEVICE_LIST_STRATEGY" not in _plugin_env(op.release.values)
    assert ACCEPT_MOUNTS not in env_of(dict(op.release.values))
    (row,) = op.isolation
    assert (row.runtime_mode.value, row.device_list.value) == ("cdi", strategy)
    assert row.delivers and row.enforced


def test_toolkit_1_17_in_cdi_mode_drops_plain_id_mounts_so_a_volume_mount_strategy_is_refused():
    toolkit, _ = _shipped("v25.3.4")
    assert _fact(TOOLKIT, toolkit, "cdi-mount-forms") == "cdi"
    values = {"devicePlugin": {"env": [{"name": "DEVICE_LIST_STRATEGY", "value": "volume-mounts"}]}}
    config = stack(
        "gke",
        operator={"version": "v25.3.4", "values": values, "toolkitEnv": {ACCEPT_MOUNTS: "true"}},
        cluster={"minMasterVersion": "1.32"},
    )
    problem = errors(config)["gpuOperator.values.devicePlugin.env"]
    assert "would get no GPU" in problem and "cdi/<vendor>/<class>/<device>" in problem


@pytest.mark.parametrize("version", ["v25.3.0", "v25.3.1", "v25.3.2"])
def test_v25_3_cdi_without_default_leaves_toolkit_1_17_in_auto_legacy_mode_and_is_refused(version):
    # No NVIDIA_CONTAINER_RUNTIME_MODE without cdi.default; 1.17's auto mode resolves device IDs
    # to legacy, which never reads annotations; the operator's envvar,cdi-annotations wins over
    # devicePlugin.env up to v25.3.2; and the env var is refused.
    toolkit, _ = _shipped(version)
    assert _fact(TOOLKIT, toolkit, "auto-mode") == "legacy"
    assert "NVIDIA_CONTAINER_RUNTIME_MODE=cdi" not in _fact(OPERATOR, version, "toolkit.cdi-env")
    assert _fact(OPERATOR, version, "devicePlugin.user-env-last") == "false"
    config = stack(
        "kubernetes", operator={"version": version, "values": {"cdi": {"enabled": True}}}
    )
    problem = errors(config)["gpuOperator.values.cdi"]
    assert "would get no GPU" in problem and "set cdi.default: true" in problem
    assert "v25.3.3 or later" in problem
    # The fix it names plans: with cdi.default the runtime runs CDI mode and reads the annotations.
    fixed = {"cdi": {"enabled": True, "default": True}}
    (row,) = plan(stack("kubernetes", operator={"version": version, "values": fixed})).isolation
    assert (row.runtime_mode.value, row.delivers, row.enforced) == ("cdi", True, True)


@pytest.mark.parametrize("version", ["v25.3.3", "v25.3.4"])
def test_v25_3_3_cdi_without_default_gets_volume_mounts_the_legacy_runtime_reads(version):
    toolkit, _ = _shipped(version)
    assert _fact(TOOLKIT, toolkit, "auto-mode") == "legacy"
    assert _fact(OPERATOR, version, "devicePlugin.user-env-last") == "true"
    config = stack(
        "kubernetes", operator={"version": version, "values": {"cdi": {"enabled": True}}}
    )
    op = plan(config)
    assert op.release is not None
    assert _plugin_env(op.release.values)["DEVICE_LIST_STRATEGY"] == "volume-mounts"
    (row,) = op.isolation
    assert (row.runtime_mode.value, row.device_list.value) == ("legacy", "volume-mounts")
    assert row.delivers and row.enforced


@pytest.mark.parametrize("version", [v for v in vendored_versions() if is_cdi_era(v)])
def test_toolkit_1_18_auto_mode_is_jit_cdi_reading_plain_mounts_so_legacy_charts_get_mounts(
    version,
):
    toolkit, _ = _shipped(version)
    assert _fact(TOOLKIT, toolkit, "auto-mode") == "jit-cdi"
    assert "plain" in _fact(TOOLKIT, toolkit, "cdi-mount-forms").split()
    op = plan(
        stack("kubernetes", operator={"version": version, "values": {"cdi": {"enabled": False}}})
    )
    (row,) = op.isolation
    assert (row.runtime_mode.value, row.device_list.value) == ("jit-cdi", "volume-mounts")
    assert row.delivers


@pytest.mark.parametrize("version", [v for v in vendored_versions() if is_cdi_era(v)])
def test_cdi_era_annotations_use_containerd_prefix_so_they_arrive_with_runc_default(version):
    assert _fact(OPERATOR, version, "devicePlugin.cdi-annotation-prefix") == "cdi.k8s.io/"
    (row,) = plan(stack("kubernetes", operator={"version": version})).isolation
    assert row.default_runtime.value == "runc" and row.delivers


def test_a_stack_that_tells_the_toolkit_to_honour_the_env_var_is_marked_and_says_who_gets_what():
    env = {ACCEPT_ENVVAR: "true"}
    op = plan(stack("kubernetes", operator={"toolkitEnv": env}, namespaces=NS))
    (row,) = op.isolation
    assert (
        not row.enforced
        and row.accept_envvar.by
        == "gpuOperator.toolkitEnv ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED"
    )
    assert "a pod naming runtimeClassName nvidia or nvidia-legacy or nvidia-cdi" in (row.gap or "")
    (quota,) = [m for m in op.after_release if m["kind"] == "ResourceQuota"]
    assert quota["metadata"]["annotations"]["gpu-infra/not-enforced"].startswith(
        "gpu: a pod naming"
    )
    assert any(n.startswith("gpuNamespaces: the GPU quotas do not bind") for n in op.notes)


def test_a_toolkit_without_recorded_facts_is_unknown_never_isolated():
    values = {"toolkit": {"version": "v9.9.9"}}
    op = plan(stack("kubernetes", operator={"values": values}, namespaces=NS))
    (row,) = op.isolation
    assert not row.enforced and "v9.9.9" in row.accept_envvar.source
    (quota,) = [m for m in op.after_release if m["kind"] == "ResourceQuota"]
    assert "gpu-infra/not-enforced" in quota["metadata"]["annotations"]


def test_a_device_list_strategy_the_toolkit_refuses_is_an_error_naming_it():
    values = {"devicePlugin": {"env": [{"name": "DEVICE_LIST_STRATEGY", "value": "envvar"}]}}
    problem = errors(stack("kubernetes", operator={"values": values}))
    assert "would get no GPU" in problem["gpuOperator.values.devicePlugin.env"]


# --- the node image's path (EKS: the AMI's toolkit) -----------------------------------------------


@pytest.mark.parametrize("toolkit", versions_of(TOOLKIT, DATA_DIR))
def test_the_node_bootstrap_sets_keys_the_toolkit_runtime_reads_from_its_config(toolkit):
    # TOOLKIT_ISOLATION is written with `nvidia-ctk config --set`: each key must be one of the
    # runtime's config.toml keys (the Config struct's TOML tags) at every recorded toolkit version.
    keys = _fact(TOOLKIT, toolkit, "config-keys").split()
    assert {k for k, _ in TOOLKIT_ISOLATION} <= set(keys)
    flags = {"accept-nvidia-visible-devices-envvar-when-unprivileged", ACCEPT_MOUNTS_FLAG}
    assert flags <= set(keys)


def test_al2023_nodeadm_makes_nvidia_the_default_so_the_node_bootstrap_refuses_the_env_var():
    fact = runtime_fact(EKS_AMI, "al2023", "default-runtime", DATA_DIR)
    assert fact is not None and fact.value == "nvidia"
    assert ("accept-nvidia-visible-devices-envvar-when-unprivileged", "false") in TOOLKIT_ISOLATION
    (row,) = plan(stack("eks", namespaces=NS)).isolation
    assert row.default_runtime.value == "nvidia" and row.accept_envvar.value is False
    assert row.device_list.value == "volume-mounts" and row.enforced and row.delivers


def test_bottlerocket_defaults_refuse_the_env_var_and_hand_gpus_over_as_volume_mounts():
    facts = {
        f: runtime_fact(BOTTLEROCKET, "nvidia-k8s", f, DATA_DIR)
        for f in (
            "visible-devices-envvar-when-unprivileged",
            "visible-devices-as-volume-mounts",
            "device-list-strategy",
        )
    }
    assert {k: f.value for k, f in facts.items() if f} == {
        "visible-devices-envvar-when-unprivileged": "false",
        "visible-devices-as-volume-mounts": "true",
        "device-list-strategy": "volume-mounts",
    }
    row = next(r for r in rows() if r.case.preset == "eks-bottlerocket" and r.path)
    assert (
        row.path is not None
        and row.path.enforced
        and row.path.device_list.by == ("the node image's device plugin")
    )


# --- the whole table ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "row",
    rows(),
    ids=lambda r: (
        f"{r.case.platform}-{r.case.preset}-{r.case.charts}-{r.case.driver}-{r.case.mode}"
    ),
)
def test_every_row_is_closed_refused_or_marked_with_who_gets_what(row):
    if row.path is None:
        assert row.refused  # gpu-infra plans no such stack, and says why
        return
    if not row.path.enforced:
        # Only the user's own hosts without gpu-infra's operator: nothing planned decides it.
        assert (row.case.platform, row.case.chart) == ("kubernetes", None)
        assert "sees every GPU of its node" in (row.path.gap or "")
        return
    assert row.path.delivers
    if row.case.chart is not None and row.path.accept_envvar.by != "the node image":
        toolkit, _ = _shipped(row.case.chart)
        assert toolkit in row.path.accept_envvar.source  # the fact of the toolkit it runs


# --- Pod Security on team namespaces: the pods no runtime setting stops ---------------------------


def test_team_namespaces_enforce_pod_security_baseline_so_privileged_and_hostpath_pods_are_refused():
    # Privileged and CAP_SYS_ADMIN pods get NVIDIA_VISIBLE_DEVICES honoured whatever the toolkit's
    # gate (fact envvar-gate: privileged-or-accept); a hostPath /dev/null at
    # /var/run/nvidia-container-devices/all is a mount request for every GPU. Baseline refuses all.
    toolkit, _ = _shipped("v26.7.0")
    assert _fact(TOOLKIT, toolkit, "envvar-gate") == "privileged-or-accept"
    op = plan(stack("kubernetes", namespaces=NS))
    (ns,) = [m for m in op.after_release if m["kind"] == "Namespace"]
    assert ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "baseline"
    out = summary(op.isolation, op.pod_security)
    assert out["enforced"] is True
    assert out["namespaces"] == [
        {"name": "team-a", "podSecurityEnforce": "baseline", "by": "gpu-infra"}
    ]


def test_a_team_namespace_cannot_lower_its_pod_security_level():
    labels = {"pod-security.kubernetes.io/enforce": "privileged"}
    with pytest.raises(ConfigErrors) as e:
        stack("kubernetes", namespaces=[{"name": "team-a", "gpus": 2, "labels": labels}])
    (issue,) = e.value.issues
    assert issue.path.startswith("gpuNamespaces[0].labels") and "baseline" in issue.reason


def test_a_kubeflow_profile_namespace_is_not_vouched_for_so_isolation_is_not_enforced():
    profile = [{"name": "team-kf", "gpus": 1, "kubeflowProfile": {"owner": "a@example.com"}}]
    op = plan(stack("kubernetes", namespaces=profile))
    (row,) = op.isolation
    assert row.enforced  # the runtime path holds; the namespace's Pod Security is Kubeflow's
    out = summary(op.isolation, op.pod_security)
    assert out["enforced"] is False
    assert out["namespaces"][0]["podSecurityEnforce"] is None
    assert any("team-kf: the Kubeflow profile controller" in n for n in op.notes)


# --- the NRI plugin's annotation path ---------------------------------------------------------


def _nri_charts(scope: str) -> list[str]:
    return [
        v
        for v in vendored_versions()
        if "nriPluginEnabled" in _chart(v).get("cdi", {})
        and _fact(TOOLKIT, _shipped(v)[0], "nri-annotation-scope") == scope
    ]


@pytest.mark.parametrize("version", _nri_charts("nri-namespace"))
def test_toolkit_1_19_nri_plugin_serves_only_its_own_namespace_so_nri_mode_holds(version):
    # parseCDIDevices skips pods outside NRI_NAMESPACE, which the operator sets to the toolkit
    # pod's namespace; the operator creates no RuntimeClass with NRI (state_manager.go).
    assert _fact(OPERATOR, version, "runtimeClasses.none-with-nri") == "true"
    config = stack(
        "kubernetes",
        operator={"version": version, "values": {"cdi": {"nriPluginEnabled": True}}},
        namespaces=NS,
    )
    (row,) = plan(config).isolation
    assert (row.mode, row.runtime_classes.value, row.default_runtime.value) == ("nri", (), "runc")
    assert row.enforced and row.delivers


@pytest.mark.parametrize("version", _nri_charts("any-but-management"))
def test_toolkit_1_20_nri_plugin_serves_every_namespace_so_nri_mode_is_refused(version):
    config = stack(
        "kubernetes", operator={"version": version, "values": {"cdi": {"nriPluginEnabled": True}}}
    )
    problem = errors(config)["gpuOperator.values.cdi.nriPluginEnabled"]
    assert "nvidia.cdi.k8s.io/container.<name>: nvidia.com/gpu=all" in problem
    assert _shipped(version)[0] in problem  # the fact of the toolkit it runs


def test_both_nri_scopes_are_covered_by_a_vendored_chart():
    assert _nri_charts("nri-namespace") and _nri_charts("any-but-management")
