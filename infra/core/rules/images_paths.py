"""Field rules for container image references and host paths the GPU Operator mounts."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from infra.core.errors import RuleError, shown
from infra.core.rules._common import _full, _matching
from infra.core.rules.kubernetes import check_dns1123_label

# --- Container images ---------------------------------------------------------------------------
# github.com/distribution/reference regexp.go: domain, path components, tag and digest grammar.
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*|\[[0-9a-fA-F:]+\])(?::[0-9]+)?"
_PATH_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_TAG = r"[\w][\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
_RE_IMAGE = _full(
    rf"(?:{_DOMAIN}/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*(?::{_TAG})?(?:@{_DIGEST})?"
)


def check_image_reference(v: str) -> str:
    """``[registry/]repo[:tag][@digest]`` as container runtimes parse it (distribution/reference)."""
    name = v.split("@", 1)[0]
    if name.rfind(":") > name.rfind("/"):
        name = name[: name.rfind(":")]  # drop the tag, not a registry port
    if len(v) > 512 or not _RE_IMAGE.fullmatch(v) or len(name) > 255:  # NameTotalLengthMax = 255
        raise ValueError(
            f"{shown(v)} is not an image reference: registry/repository[:tag][@digest], "
            "lowercase repository path, no spaces or shell characters"
        )
    return v


_RE_IMAGE_REPOSITORY = _full(rf"(?:{_DOMAIN}/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*")
_RE_TAG_OR_DIGEST = _full(rf"{_TAG}|{_DIGEST}")


check_image_repository = _matching(
    "check_image_repository",
    _RE_IMAGE_REPOSITORY,
    "is not an image repository: registry/path, lowercase path, no tag, spaces or shell characters",
    max_len=255,
    doc="``registry/path`` without tag (the chart's ``*.repository``; distribution/reference).",
)


check_image_tag = _matching(
    "check_image_tag",
    _RE_TAG_OR_DIGEST,
    "is not an image tag (letters, digits, '_', '.', '-', at most 128) or digest (sha256:...)",
    doc="An image tag (``v25.3.0``) or digest (``sha256:...``), as the chart's ``*.version``.",
)


def check_operator_values(v: Mapping[str, Any]) -> Mapping[str, Any]:
    """Image fields in free-form chart values: ``*.repository``, ``*.image``, ``*.version`` (an
    image tag wherever the chart has one; "" leaves the chart default) and
    ``operator.runtimeClass`` (gpu-operator values.yaml names them so)."""

    def walk(node: Any, at: tuple[str | int, ...]) -> None:
        if isinstance(node, list):
            for i, item in enumerate(node):
                walk(item, (*at, i))
            return
        if not isinstance(node, Mapping):
            return
        for key, value in node.items():
            here = (*at, key)
            try:
                if isinstance(value, str):
                    if key == "repository":
                        check_image_repository(value)
                    elif key == "image":
                        check_image_reference(value)
                    elif key == "version" and value:  # every chart `version` is an image tag
                        check_image_tag(value)
                    elif here == ("operator", "runtimeClass"):
                        check_runtime_class(value)
            except ValueError as e:
                raise RuleError(str(e), at=here) from None
            walk(value, here)

    walk(v, ())
    return v


# --- Paths --------------------------------------------------------------------------------------
# A path the toolkit or a node tool uses: absolute (the toolkit container mounts host paths), clean,
# and bounded (Linux PATH_MAX is 4096; no real config path is near it).
MAX_PATH = 1024
_PATH_FORBIDDEN = re.compile(r"[\s;|&$`'\"<>()*?\\!{}\[\]#~]")


def check_host_path(v: str, *, allow_home: bool = False) -> str:
    """An absolute, normalised path without whitespace, shell characters or '..' parts."""
    if len(v) > MAX_PATH:
        raise ValueError(f"a path of {len(v)} characters is longer than {MAX_PATH}")
    body = v[2:] if allow_home and v.startswith("~/") else v
    if bad := _PATH_FORBIDDEN.search(body):
        raise ValueError(
            f"{shown(v)} contains {bad.group()!r}; paths take no spaces or shell characters"
        )
    if not (v.startswith("/") or (allow_home and v.startswith("~/"))):
        raise ValueError(
            f"{shown(v)} is not an absolute path" + (" (or ~/...)" if allow_home else "")
        )
    parts = body.split("/")
    # On v, not body: "~//x" and "~/" are no cleaner than "//x" and "/x/".
    if ".." in parts or "." in parts or "//" in v or (len(v) > 1 and v.endswith("/")):
        raise ValueError(f"{shown(v)} is not a clean path (no '.', '..', '//' or trailing '/')")
    return v


def check_kubeconfig_path(v: str) -> str:
    """A kubeconfig file path: absolute or ``~/``-relative (the Kubernetes provider expands ``~``)."""
    return check_host_path(v, allow_home=True)


def check_kubeconfig_context(v: str) -> str:
    """A kubeconfig context name: ``contexts[].name`` of the file, which the provider looks up
    verbatim (pulumi-kubernetes ``context``; client-go clientcmd ``Contexts[name]``): a name with
    a newline, a control character or a blank at either end matches no context."""
    if not v or len(v) > MAX_PATH:
        raise ValueError(f"a context name of 1-{MAX_PATH} characters, not {len(v)}")
    if v != v.strip() or any(ord(c) < 32 or ord(c) == 127 for c in v):
        raise ValueError(
            f"{shown(v)} has a control character or blank at an end (a trailing newline?); "
            "a kubeconfig context name is one line, as `kubectl config get-contexts` shows it"
        )
    return v


# A RuntimeClass's name is a DNS-1123 subdomain and its handler a DNS-1123 label
# (https://kubernetes.io/docs/concepts/containers/runtime-class/); the operator uses one value for
# both (operator.runtimeClass), so it must be a label.
def check_runtime_class(v: str) -> str:
    """A RuntimeClass name the operator also uses as the containerd handler."""
    try:
        return check_dns1123_label(v)
    except ValueError:
        raise ValueError(
            f"{shown(v)} is not a RuntimeClass handler name: a DNS-1123 label (lowercase letters, "
            "digits and '-', at most 63 characters)"
        ) from None


# toolkit.env variables whose values are host paths, listed by name (a suffix guess misread the
# boolean CONTAINERD_USE_LEGACY_CONFIG): NVIDIA/gpu-operator controllers/object_controls.go sets
# RUNTIME_CONFIG, CONTAINERD_CONFIG, RUNTIME_SOCKET, CONTAINERD_SOCKET, RUNTIME_DROP_IN_CONFIG and
# RUNTIME_DROP_IN_CONFIG_HOST_PATH; NVIDIA/nvidia-container-toolkit cmd/nvidia-ctk-installer
# (@d34b3046) reads the rest as paths: main.go (TOOLKIT_INSTALL_DIR/ROOT, TOOLKIT_SOURCE_ROOT,
# TOOLKIT_PID_FILE/PID_FILE, NRI_SOCKET), toolkit/toolkit.go (NVIDIA_DRIVER_ROOT/DRIVER_ROOT,
# DRIVER_ROOT_CTR_PATH, NVIDIA_DEV_ROOT/DEV_ROOT, DEV_ROOT_CTR_PATH, CDI_OUTPUT_DIR),
# container/runtime/runtime.go (RUNTIME_EXECUTABLE_PATH), crio/crio.go (CRIO_HOOKS_DIR), and
# HOST_ROOT_MOUNT, DOCKER_CONFIG / DOCKER_SOCKET.
_PATH_ENV = frozenset(
    {
        "RUNTIME_CONFIG",
        "CONTAINERD_CONFIG",
        "DOCKER_CONFIG",
        "RUNTIME_SOCKET",
        "CONTAINERD_SOCKET",
        "DOCKER_SOCKET",
        "RUNTIME_DROP_IN_CONFIG",
        "RUNTIME_DROP_IN_CONFIG_HOST_PATH",
        "HOST_ROOT_MOUNT",
        "RUNTIME_EXECUTABLE_PATH",
        "TOOLKIT_INSTALL_DIR",
        "ROOT",
        "TOOLKIT_SOURCE_ROOT",
        "TOOLKIT_PID_FILE",
        "PID_FILE",
        "NRI_SOCKET",
        "NVIDIA_DRIVER_ROOT",
        "DRIVER_ROOT",
        "DRIVER_ROOT_CTR_PATH",
        "NVIDIA_DEV_ROOT",
        "DEV_ROOT",
        "DEV_ROOT_CTR_PATH",
        "CDI_OUTPUT_DIR",
        "CRIO_HOOKS_DIR",
    }
)
# cdi-output-dir: "If this is set to '', no CDI specification is generated" (toolkit/toolkit.go).
_EMPTY_MEANS_OFF = frozenset({"CDI_OUTPUT_DIR"})
# One flag, --runtime-name, reads these three (container/runtime/runtime.go: Sources
# cli.EnvVars("NVIDIA_RUNTIME_NAME", "CONTAINERD_RUNTIME_CLASS", "DOCKER_RUNTIME_NAME")): each is
# the runtime handler's name, so each takes the RuntimeClass handler rule.
_RUNTIME_NAME_ENV = frozenset(
    {"NVIDIA_RUNTIME_NAME", "CONTAINERD_RUNTIME_CLASS", "DOCKER_RUNTIME_NAME"}
)
MAX_ENV_VALUE = 4096


# The variables the toolkit container's installer reads (NVIDIA/nvidia-container-toolkit
# cmd/nvidia-ctk-installer @ d34b3046758cb1a5db606b2a39519c731bbf9f56: every flag's EnvVars in
# main.go, toolkit/, container/ and container/runtime/*): toolkit.env goes into a privileged
# container, so nothing else is passed (LD_PRELOAD, PATH, a proxy would reach the host's runtime).
TOOLKIT_ENV_VARS = frozenset(
    [
        "ACCEPT_NVIDIA_VISIBLE_DEVICES_AS_VOLUME_MOUNTS",
        "ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED",
        "CDI_ENABLED",
        "CDI_KIND",
        "CDI_OUTPUT_DIR",
        "CONTAINERD_CONFIG",
        "CONTAINERD_RUNTIME_CLASS",
        "CONTAINERD_RUNTIME_CONFIG_OVERRIDE",
        "CONTAINERD_RUNTIME_TYPE",
        "CONTAINERD_SET_AS_DEFAULT",
        "CONTAINERD_SOCKET",
        "CONTAINERD_USE_LEGACY_CONFIG",
        "CREATE_DEVICE_NODES",
        "CRIO_CONFIG_MODE",
        "CRIO_HOOKS_DIR",
        "CRIO_HOOK_FILENAME",
        "DEV_ROOT",
        "DEV_ROOT_CTR_PATH",
        "DOCKER_CONFIG",
        "DOCKER_RUNTIME_NAME",
        "DOCKER_SET_AS_DEFAULT",
        "DOCKER_SOCKET",
        "DRIVER_ROOT",
        "DRIVER_ROOT_CTR_PATH",
        "ENABLE_CDI",
        "ENABLE_NRI_PLUGIN",
        "HOST_ROOT_MOUNT",
        "NO_DAEMON",
        "NO_RUNTIME_CONFIG",
        "NRI_MANAGEMENT_CDI_DEVICE_NAMESPACES",
        "NRI_NAMESPACE",
        "NRI_PLUGIN_INDEX",
        "NRI_SOCKET",
        "NVIDIA_CONTAINER_CLI_DEBUG",
        "NVIDIA_CONTAINER_RUNTIME_DEBUG",
        "NVIDIA_CONTAINER_RUNTIME_HOOK_SKIP_MODE_DETECTION",
        "NVIDIA_CONTAINER_RUNTIME_LOG_LEVEL",
        "NVIDIA_CONTAINER_RUNTIME_MODE",
        "NVIDIA_CONTAINER_RUNTIME_MODES_CDI_ANNOTATION_PREFIXES",
        "NVIDIA_CONTAINER_RUNTIME_MODES_CDI_DEFAULT_KIND",
        "NVIDIA_CONTAINER_RUNTIME_RUNTIMES",
        "NVIDIA_CONTAINER_TOOLKIT_OPT_IN_FEATURES",
        "NVIDIA_DEV_ROOT",
        "NVIDIA_DRIVER_ROOT",
        "NVIDIA_RUNTIME_NAME",
        "NVIDIA_RUNTIME_SET_AS_DEFAULT",
        "PID_FILE",
        "ROOT",
        "RUNTIME",
        "RUNTIME_CONFIG",
        "RUNTIME_CONFIG_OVERRIDE",
        "RUNTIME_CONFIG_SOURCE",
        "RUNTIME_CONFIG_SOURCES",
        "RUNTIME_DROP_IN_CONFIG",
        "RUNTIME_DROP_IN_CONFIG_HOST_PATH",
        "RUNTIME_ENABLE_CDI",
        "RUNTIME_EXECUTABLE_PATH",
        "RUNTIME_RESTART_MODE",
        "RUNTIME_SOCKET",
        "TOOLKIT_DEBUG",
        "TOOLKIT_INSTALL_DIR",
        "TOOLKIT_PACKAGE_TYPE",
        "TOOLKIT_PID_FILE",
        "TOOLKIT_SOURCE_ROOT",
    ]
)
# What each path variable names, by its file's kind: containerd reads TOML (its config.toml, a
# conf.d drop-in, or the templates k3s and MicroK8s render: config.toml.tmpl,
# containerd-template.toml); sockets are Unix sockets; Docker's daemon.json is JSON; RUNTIME_CONFIG
# is any of the three runtimes' (CRI-O's crio.conf too).
_TOML = (".toml", ".toml.tmpl")
_PATH_SUFFIXES: dict[str, tuple[str, ...]] = {
    "CONTAINERD_CONFIG": _TOML,
    "RUNTIME_DROP_IN_CONFIG": _TOML,
    "RUNTIME_DROP_IN_CONFIG_HOST_PATH": _TOML,
    "RUNTIME_CONFIG": (*_TOML, ".conf", ".json"),
    "DOCKER_CONFIG": (".json",),
    "CONTAINERD_SOCKET": (".sock",),
    "RUNTIME_SOCKET": (".sock",),
    "DOCKER_SOCKET": (".sock",),
    "NRI_SOCKET": (".sock",),
}


def check_toolkit_env(v: Mapping[str, Any]) -> Mapping[str, Any]:
    """``toolkit.env``: only the installer's variables; path-valued ones clean absolute paths to
    a file of the kind they name; every value one line."""
    for name, value in v.items():
        if name not in TOOLKIT_ENV_VARS:
            raise RuleError(
                f"{shown(name)} is not a variable the toolkit installer (nvidia-ctk-installer) "
                "reads; toolkitEnv goes into a privileged container, so only the installer's "
                "variables are passed",
                at=(name,),
            )
        if isinstance(value, str):
            try:
                if name in _RUNTIME_NAME_ENV:
                    check_runtime_class(value)
                elif name in _EMPTY_MEANS_OFF and value == "":
                    pass
                elif name in _PATH_ENV:
                    check_host_path(value)
                    ends = _PATH_SUFFIXES.get(name, ())
                    if ends and not value.endswith(ends):
                        raise ValueError(
                            f"{shown(value)} is not a {name} file: it ends in {' or '.join(ends)}"
                        )
                elif len(value) > MAX_ENV_VALUE or "\n" in value or "\r" in value or "\0" in value:
                    raise ValueError(f"{shown(value)} must be one line of at most {MAX_ENV_VALUE}")
            except ValueError as e:
                raise RuleError(str(e), at=(name,)) from None
    return v
