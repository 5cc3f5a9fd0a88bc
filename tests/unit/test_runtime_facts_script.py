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


def _repo(tmp_path: Path, tags: dict[str, dict[str, str]]) -> str:
    """A git repository whose tag ``t`` holds the files ``tags[t]`` (path -> text)."""
    import subprocess

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "t")
    for tag, files in tags.items():
        git("rm", "-rqf", "--ignore-unmatch", ".")  # each tag holds only its own files
        for path, text in files.items():
            f = tmp_path / path
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(text)
        git("add", "-A")
        git("commit", "-qm", tag, "--allow-empty")
        git("tag", tag)
    return str(tmp_path)


_V117 = {
    "internal/info/auto.go": 'switch p {\n\tcase info.PlatformNVML, info.PlatformWSL:\n\t\treturn "legacy"\n\t}\n',
    "internal/modifier/cdi.go": "mountDevices := container.CDIDevicesFromMounts()\n",
    "tools/container/runtime/containerd/containerd.go": (
        'const (\n\tDefaultConfig = "/etc/containerd/config.toml"\n\tDefaultRestartMode = "signal"\n)\n'
    ),
    "internal/config/config.go": (
        'type Config struct {\n\tA bool `toml:"accept-nvidia-visible-devices-envvar-when-unprivileged"`\n'
        '\tF *F `toml:"features,omitempty"`\n}\n'
    ),
}
_V120 = {
    "internal/info/auto.go": "r := &modeResolver{\n\t\tdefaultMode: JitCDIRuntimeMode,\n\t}\n",
    "internal/modifier/cdi.go": "",
    "internal/config/image/cuda_image.go": (
        "func (i CUDA) visibleDevicesFromMounts() []string {\n\tswitch {\n\tdefault:\n"
        "\t\tdevices = append(devices, device)\n\t}\n}\n"
    ),
    "cmd/nvidia-ctk-installer/container/runtime/containerd/containerd.go": (
        'const (\n\tDefaultConfig = "/etc/containerd/config.toml"\n'
        '\tDefaultDropInConfig = "/etc/containerd/conf.d/99-nvidia.toml"\n'
        '\tDefaultRestartMode = "signal"\n)\n'
    ),
    "api/config/v1/config.go": 'type Config struct {\n\tD bool `toml:"disable-require"`\n}\n',
    "cmd/nvidia-ctk-installer/container/runtime/nri/plugin.go": (
        "func (p *Plugin) parseCDIDevices(pod *api.PodSandbox) []string {\n"
        '\tif strings.Contains(names, "management.nvidia.com/gpu") {\n'
        "\t\tif !slices.Contains(p.namespaces, pod.Namespace) {\n\t\t\treturn nil\n\t\t}\n\t}\n}\n"
    ),
}


def _rows(repo: str, version: str) -> dict[str, str]:
    out = {}
    readers = (facts._mode_rows, facts._containerd_rows, facts._config_key_rows, facts._nri_rows)
    for reader in readers:
        out |= {r["fact"]: r["value"] for r in reader(repo, version, "c0ffee")}
    return out


def test_the_toolkit_readers_record_auto_mode_mount_forms_and_containerd_defaults(tmp_path):
    repo = _repo(tmp_path, {"v1.17.8": _V117, "v1.20.0": _V120})
    old, new = _rows(repo, "v1.17.8"), _rows(repo, "v1.20.0")
    assert (old["auto-mode"], old["cdi-mount-forms"]) == ("legacy", "cdi")
    assert (new["auto-mode"], new["cdi-mount-forms"]) == ("jit-cdi", "cdi plain")
    assert (old["containerd-restart-mode"], old["containerd-drop-in"]) == ("signal", "")
    assert new["containerd-drop-in"] == "/etc/containerd/conf.d/99-nvidia.toml"
    assert old["config-keys"] == "accept-nvidia-visible-devices-envvar-when-unprivileged features"
    assert new["config-keys"] == "disable-require"  # read from the struct's new home
    assert (old["nri-annotation-scope"], new["nri-annotation-scope"]) == (
        "no-plugin",
        "any-but-management",
    )


def test_a_toolkit_whose_mode_resolution_is_not_recognised_stops_the_refresh(tmp_path):
    repo = _repo(tmp_path, {"v9.0.0": {**_V117, "internal/info/auto.go": "return mode\n"}})
    with pytest.raises(SystemExit, match="none of"):
        list(facts._mode_rows(repo, "v9.0.0", "c0ffee"))


def test_installer_env_names_are_every_flags_env_vars_in_both_urfave_cli_forms():
    assert facts.env_names(FLAGS) == {
        "ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED",
        "ACCEPT_NVIDIA_VISIBLE_DEVICES_AS_VOLUME_MOUNTS",
        "NVIDIA_RUNTIME_SET_AS_DEFAULT",
        "CONTAINERD_SET_AS_DEFAULT",
    }
