"""Field rules of images and paths (``infra.core.rules.images_paths``): image references, host and
kubeconfig paths, the kubeconfig context, the runtime class, the container toolkit's environment
and the chart's values, each as its receiver reads it.
"""

from __future__ import annotations

import pytest

from infra.core import rules
from infra.core.errors import RuleError
from tests.unit.config_rules_fixtures import refused


@pytest.mark.parametrize(
    "good",
    [
        "busybox",
        "nvcr.io/nvidia/cuda:12.2.2-base-ubuntu22.04",
        "localhost:5000/a/b:1",
        "registry.example.com/ml/img@sha256:" + "a" * 64,
        "ghcr.io/org/img:tag@sha256:" + "0" * 64,
    ],
)
def test_check_image_reference_accepts_registry_repo_tag_digest(good):
    assert rules.check_image_reference(good) == good


@pytest.mark.parametrize(
    "bad",
    [
        "nvcr.io/x && curl x | sh",
        "nvcr.io/Nvidia/cuda:1",
        "img:",
        "img:tag with space",
        "img@sha256:short",
        "img;rm",
        "a/" * 200 + "b",
        "localhost:5000/" + "a" * 250,
        "",
    ],
)
def test_check_image_reference_refuses_shell_text_and_bad_grammar(bad):
    assert "is not an image reference" in refused(rules.check_image_reference, bad)


@pytest.mark.parametrize(
    "good", ["nvcr.io/nvidia", "registry.example.com:5000/nvidia/k8s", "nvidia"]
)
def test_check_image_repository_accepts_registry_and_path(good):
    assert rules.check_image_repository(good) == good


@pytest.mark.parametrize(
    "bad",
    ["nvcr.io/nvidia:v1", "nvcr.io/Nvidia", "nvcr.io/nvidia driver", "nvcr.io/nvidia/", "a" * 256],
)
def test_check_image_repository_refuses_tags_capital_paths_spaces_and_256_chars(bad):
    assert "is not an image repository" in refused(rules.check_image_repository, bad)


@pytest.mark.parametrize("good", ["v25.3.0", "sha256:" + "a" * 64, "a" * 128])
def test_check_image_tag_accepts_tags_up_to_128_and_digests(good):
    assert rules.check_image_tag(good) == good


@pytest.mark.parametrize("bad", ["-v1", "v1 2", "v1;rm", "a" * 129, ""])
def test_check_image_tag_refuses_leading_dash_spaces_shell_text_and_129_chars(bad):
    assert "is not an image tag" in refused(rules.check_image_tag, bad)


@pytest.mark.parametrize("good", ["/etc/containerd/config.toml", "/run/k3s/containerd/c.sock", "/"])
def test_check_host_path_accepts_clean_absolute_paths(good):
    assert rules.check_host_path(good) == good


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        ("/etc/x; curl x | sh", "contains ';'"),
        ("/etc/x\nINJECT=1", "contains '\\n'"),
        ("/etc/my config.toml", "contains ' '"),
        ("etc/config.toml", "not an absolute path"),
        ("/etc/../var/x", "not a clean path"),
        ("/etc//x", "not a clean path"),
        ("/" + "a" * 100_000, "longer than 1024"),
        ("/etc/$(id)", "contains '$'"),
    ],
)
def test_check_host_path_refuses_shell_characters_relative_and_unbounded_paths(bad, why):
    msg = refused(rules.check_host_path, bad)
    assert why in msg
    assert len(msg) < 300


def test_check_kubeconfig_path_allows_home_relative_paths():
    assert rules.check_kubeconfig_path("~/.kube/config") == "~/.kube/config"
    assert "not an absolute path" in refused(rules.check_kubeconfig_path, "kube/config")


@pytest.mark.parametrize("bad", ["~/./config", "~//config", "~/", "~/.kube/"])
def test_check_kubeconfig_path_keeps_home_relative_paths_clean(bad):
    assert "is not a clean path" in refused(rules.check_kubeconfig_path, bad)


def test_check_toolkit_env_checks_path_variables_and_names_the_variable():
    with pytest.raises(RuleError) as e:
        rules.check_toolkit_env({"CONTAINERD_SOCKET": "/run/x.sock; reboot"})
    assert e.value.at == ("CONTAINERD_SOCKET",)
    assert "must be one line" in refused(rules.check_toolkit_env, {"CDI_KIND": "a\nb"})
    assert rules.check_toolkit_env({"CONTAINERD_SET_AS_DEFAULT": "true", "NRI_PLUGIN_INDEX": 1})


@pytest.mark.parametrize("name", ["LD_PRELOAD", "PATH", "HTTPS_PROXY", "containerd_config"])
def test_check_toolkit_env_passes_only_the_installers_variables(name):
    """NVIDIA/nvidia-container-toolkit cmd/nvidia-ctk-installer: its flags' EnvVars only."""
    with pytest.raises(RuleError) as e:
        rules.check_toolkit_env({name: "x"})
    assert e.value.at == (name,) and "nvidia-ctk-installer" in str(e.value)


@pytest.mark.parametrize(
    ("name", "value", "ok"),
    [
        ("CONTAINERD_CONFIG", "/etc/containerd/config.toml", True),
        ("CONTAINERD_CONFIG", "/var/lib/rancher/k3s/agent/etc/containerd/config.toml.tmpl", True),
        ("CONTAINERD_CONFIG", "/etc/shadow", False),
        ("RUNTIME_DROP_IN_CONFIG", "/etc/containerd/conf.d/99-nvidia.toml", True),
        ("RUNTIME_CONFIG", "/etc/crio/crio.conf", True),
        ("DOCKER_CONFIG", "/etc/docker/daemon.json", True),
        ("CONTAINERD_SOCKET", "/run/containerd/containerd.sock", True),
        ("CONTAINERD_SOCKET", "/etc/passwd", False),
    ],
)
def test_check_toolkit_env_paths_name_a_file_of_their_kind(name, value, ok):
    try:
        rules.check_toolkit_env({name: value})
    except RuleError:
        assert not ok
    else:
        assert ok


def test_check_runtime_class_is_a_dns_label_usable_as_handler():
    assert rules.check_runtime_class("nvidia") == "nvidia"
    assert "RuntimeClass handler" in refused(rules.check_runtime_class, "Nvidia_Runtime")
    with pytest.raises(RuleError) as e:
        rules.check_toolkit_env({"CONTAINERD_RUNTIME_CLASS": "nvidia.runtime"})
    assert e.value.at == ("CONTAINERD_RUNTIME_CLASS",)


def test_check_toolkit_env_lists_path_variables_by_name_not_by_config_suffix():
    env = {
        "CONTAINERD_USE_LEGACY_CONFIG": "true",
        "CONTAINERD_CONFIG": "/etc/containerd/config.toml",
    }
    assert rules.check_toolkit_env(env) == env
    with pytest.raises(RuleError, match="not an absolute path"):
        rules.check_toolkit_env({"RUNTIME_DROP_IN_CONFIG_HOST_PATH": "conf.d/99-nvidia.toml"})


@pytest.mark.parametrize(
    ("values", "at"),
    [
        ({"driver": {"repository": "nvcr.io/nvidia; curl x|sh"}}, ("driver", "repository")),
        ({"driver": {"repository": "nvcr.io/nvidia:latest"}}, ("driver", "repository")),
        ({"toolkit": {"version": "v1.17.0 --privileged"}}, ("toolkit", "version")),
        ({"dcgm": {"image": "dcgm exporter"}}, ("dcgm", "image")),
        ({"operator": {"runtimeClass": "Nvidia_RT"}}, ("operator", "runtimeClass")),
        (
            {"validator": {"plugin": {"env": [{"repository": "a b"}]}}},
            ("validator", "plugin", "env", 0, "repository"),
        ),
    ],
)
def test_check_operator_values_checks_image_fields_and_runtime_class_naming_the_path(values, at):
    with pytest.raises(RuleError) as e:
        rules.check_operator_values(values)
    assert e.value.at == at


def test_check_operator_values_accepts_chart_style_image_blocks_and_digests():
    values = {
        "driver": {"repository": "nvcr.io/nvidia", "image": "driver", "version": "595.91.07"},
        "toolkit": {"version": "sha256:" + "a" * 64},
        "vgpuManager": {"version": ""},
        "operator": {"runtimeClass": "nvidia"},
    }
    assert rules.check_operator_values(values) == values


@pytest.mark.parametrize("bad", ["lab\n", " lab", "lab\t", "la\x00b", ""])
def test_check_kubeconfig_context_refuses_what_names_no_context(bad):
    with pytest.raises(ValueError):
        rules.check_kubeconfig_context(bad)


@pytest.mark.parametrize(
    "good", ["lab", "arn:aws:eks:us-west-2:123456789012:cluster/ml", "gke_p_z_c"]
)
def test_check_kubeconfig_context_accepts_kubectl_context_names(good):
    assert rules.check_kubeconfig_context(good) == good


# NVIDIA/nvidia-container-toolkit cmd/nvidia-ctk-installer @ d34b3046: each of these is a flag
# whose Usage names a path (install dir, source root, pid file, NRI socket, driver and /dev roots,
# CDI output dir, CRI-O hooks dir, runtime executable); its default is the valid value.
INSTALLER_PATHS = [
    ("RUNTIME_EXECUTABLE_PATH", "/usr/bin/containerd"),
    ("TOOLKIT_INSTALL_DIR", "/usr/local/nvidia"),  # defaultToolkitInstallDir
    ("ROOT", "/usr/local/nvidia"),
    ("TOOLKIT_SOURCE_ROOT", "/artifacts/deb"),
    ("TOOLKIT_PID_FILE", "/run/nvidia/toolkit/toolkit.pid"),  # defaultPidFile
    ("PID_FILE", "/run/nvidia/toolkit/toolkit.pid"),
    ("NRI_SOCKET", "/var/run/nri/nri.sock"),  # nriapi.DefaultSocketPath
    ("NVIDIA_DRIVER_ROOT", "/run/nvidia/driver"),  # DefaultNvidiaDriverRoot
    ("DRIVER_ROOT", "/run/nvidia/driver"),
    ("DRIVER_ROOT_CTR_PATH", "/run/nvidia/driver"),
    ("NVIDIA_DEV_ROOT", "/"),
    ("DEV_ROOT", "/"),
    ("DEV_ROOT_CTR_PATH", "/host"),
    ("CDI_OUTPUT_DIR", "/var/run/cdi"),  # the flag's Value
    ("CRIO_HOOKS_DIR", "/usr/share/containers/oci/hooks.d"),  # defaultHooksDir
]


@pytest.mark.parametrize(("name", "default"), INSTALLER_PATHS)
def test_check_toolkit_env_installer_path_variables_take_clean_absolute_paths(name, default):
    assert rules.check_toolkit_env({name: default}) == {name: default}
    for bad in ("relative/dir", "/run/x; reboot", "/run/../etc"):
        with pytest.raises(RuleError) as e:
            rules.check_toolkit_env({name: bad})
        assert e.value.at == (name,)


def test_check_toolkit_env_nri_socket_is_a_unix_socket():
    assert "ends in .sock" in refused(rules.check_toolkit_env, {"NRI_SOCKET": "/etc/passwd"})


def test_check_toolkit_env_empty_cdi_output_dir_turns_cdi_specs_off():
    # cdi-output-dir: "If this is set to '', no CDI specification is generated".
    assert rules.check_toolkit_env({"CDI_OUTPUT_DIR": ""}) == {"CDI_OUTPUT_DIR": ""}
    with pytest.raises(RuleError):
        rules.check_toolkit_env({"DRIVER_ROOT": ""})


# container/runtime/runtime.go: --runtime-name reads NVIDIA_RUNTIME_NAME, CONTAINERD_RUNTIME_CLASS
# and DOCKER_RUNTIME_NAME, one flag: each is the runtime handler, a DNS-1123 label.
@pytest.mark.parametrize(
    "name", ["NVIDIA_RUNTIME_NAME", "CONTAINERD_RUNTIME_CLASS", "DOCKER_RUNTIME_NAME"]
)
def test_check_toolkit_env_runtime_name_aliases_take_the_runtime_class_rule(name):
    assert rules.check_toolkit_env({name: "nvidia-cdi"})
    with pytest.raises(RuleError, match="RuntimeClass handler") as e:
        rules.check_toolkit_env({name: "Nvidia_RT"})
    assert e.value.at == (name,)
