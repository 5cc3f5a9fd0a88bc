"""``scripts/refresh_runtime_facts.py`` reads what the receivers' source says: its Go readers on
sources written the way urfave/cli flags and the operator's transforms are written."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "refresh_runtime_facts.py"
_spec = importlib.util.spec_from_file_location("refresh_runtime_facts", SCRIPT)
assert _spec is not None and _spec.loader is not None
facts = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(facts)

FLAGS = """
const (
\tdefaultSetAsDefault = true
)

func flags(opts *options) []cli.Flag {
\treturn []cli.Flag{
\t\t&cli.BoolFlag{
\t\t\tName:        "accept-nvidia-visible-devices-envvar-when-unprivileged",
\t\t\tValue:       true,
\t\t\tSources:     cli.EnvVars("ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED"),
\t\t},
\t\t&cli.BoolFlag{
\t\t\tName:        "accept-nvidia-visible-devices-as-volume-mounts",
\t\t\tSources:     cli.EnvVars("ACCEPT_NVIDIA_VISIBLE_DEVICES_AS_VOLUME_MOUNTS"),
\t\t},
\t\t&cli.BoolFlag{
\t\t\tName:        "set-as-default",
\t\t\tValue:       defaultSetAsDefault,
\t\t\tEnvVars:     []string{"NVIDIA_RUNTIME_SET_AS_DEFAULT", "CONTAINERD_SET_AS_DEFAULT"},
\t\t},
\t}
}
"""

TRANSFORM = """
const (
\tCDIEnabledEnvName = "CDI_ENABLED"
\tNvidiaRuntimeSetAsDefaultEnvName = "NVIDIA_RUNTIME_SET_AS_DEFAULT"
\tCDIEnableNRIPlugin = "CDI_ENABLE_NRI_PLUGIN"
)

func transformToolkitCtrForCDI(container *corev1.Container, nri bool) {
\tsetContainerEnv(container, CDIEnabledEnvName, "true")
\tsetContainerEnv(container, NvidiaRuntimeSetAsDefaultEnvName, "false")
\tif nri {
\t\tsetContainerEnv(container, CDIEnableNRIPlugin, "true")
\t}
}
"""


def test_a_bool_flags_default_is_its_value_a_const_it_names_or_false_and_its_env_in_order():
    assert facts.bool_flag(FLAGS, "accept-nvidia-visible-devices-envvar-when-unprivileged") == (
        "true",
        "ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED",
    )
    assert facts.bool_flag(FLAGS, "accept-nvidia-visible-devices-as-volume-mounts")[0] == "false"
    assert facts.bool_flag(FLAGS, "set-as-default") == (
        "true",
        "NVIDIA_RUNTIME_SET_AS_DEFAULT CONTAINERD_SET_AS_DEFAULT",
    )


def test_a_flag_the_source_lacks_stops_the_refresh_instead_of_guessing():
    with pytest.raises(SystemExit):
        facts.bool_flag(FLAGS, "no-such-flag")


def test_the_operators_env_is_read_with_its_consts_resolved_and_a_nested_block_apart():
    body = facts.func_body(TRANSFORM, "transformToolkitCtrForCDI")
    nri = facts.block(body, "if nri {")
    consts = facts.go_consts(TRANSFORM)
    assert facts.set_env(facts._without(body, nri), consts) == [
        "CDI_ENABLED=true",
        "NVIDIA_RUNTIME_SET_AS_DEFAULT=false",
    ]
    assert facts.set_env(nri, consts) == ["CDI_ENABLE_NRI_PLUGIN=true"]
