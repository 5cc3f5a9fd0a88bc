"""Read the container-runtime facts GPU isolation rests on from the receivers' own source.

For every vendored gpu-operator chart (``infra/core/data/gpu-operator/values-<tag>.yaml``) it reads,
at the chart's tag, which RuntimeClasses the operator creates and which env it sets on the toolkit
and device plugin in CDI mode; at the toolkit and device-plugin versions the chart ships (its
``toolkit.version`` / ``devicePlugin.version``), the installer's defaults and env names and the
runtime's gate on ``NVIDIA_VISIBLE_DEVICES``; and what the EKS AL2023 NVIDIA AMI's nodeadm and
Bottlerocket's NVIDIA variants configure. Writes ``infra/core/data/gpu_runtime_facts.csv`` (facts
only, each with the file it was read from and the commit).

    .venv/bin/python scripts/refresh_runtime_facts.py --operator DIR --toolkit DIR \\
        --device-plugin DIR --eks-ami DIR --bottlerocket DIR [--date YYYY-MM-DD]

Each DIR is a clone or a bare git directory of NVIDIA/gpu-operator, NVIDIA/nvidia-container-toolkit,
NVIDIA/k8s-device-plugin, awslabs/amazon-eks-ami and bottlerocket-os/bottlerocket. A chart or a
toolkit this script cannot read a fact of is an error, not a guess.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import io
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from go_source import (
    _without,
    block,
    bool_flag,
    commit_of,
    func_body,
    git,
    go_consts,
    set_env,
    show,
)

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "infra" / "core" / "data" / "gpu_runtime_facts.csv"
CHARTS = ROOT / "infra" / "core" / "data" / "gpu-operator"
FIELDS = ("receiver", "version", "commit", "fact", "value", "env", "source")

# Installer flags whose default and env names the isolation model reads.
TOOLKIT_FLAGS = (
    "accept-nvidia-visible-devices-envvar-when-unprivileged",
    "accept-nvidia-visible-devices-as-volume-mounts",
    "cdi-enabled",
    "set-as-default",
)
# Where the installer defines them, before and after the 1.18 move to cmd/nvidia-ctk-installer.
TOOLKIT_FILES = (
    ("tools/container/toolkit/toolkit.go", "tools/container/runtime/runtime.go"),
    (
        "cmd/nvidia-ctk-installer/toolkit/toolkit.go",
        "cmd/nvidia-ctk-installer/container/runtime/runtime.go",
    ),
)
# The runtime's gate on env-var device requests: legacy hook, CDI modifier (1.17), image (1.18+).
GATES = (
    (
        "cmd/nvidia-container-runtime-hook/container_config.go",
        r"privileged \|\| hookConfig\.AcceptEnvvarUnprivileged",
    ),
    (
        "internal/modifier/cdi.go",
        r"cfg\.AcceptEnvvarUnprivileged \|\| image\.IsPrivileged\(rawSpec\)",
    ),
    ("internal/config/image/cuda_image.go", r"i\.isPrivileged \|\| i\.acceptEnvvarUnprivileged"),
)
# How the runtime resolves mode "auto" (the installer's NVIDIA_CONTAINER_RUNTIME_MODE is unset) for
# a request that is not only fully-qualified CDI names, as the device plugin's device IDs are:
# 1.17 returns "legacy" on an NVML host; 1.18+ returns the resolver's default, jit-cdi, which the
# runtime does not override (only the legacy hook passes WithDefaultMode).
AUTO_MODES = (
    (
        "internal/info/auto.go",
        r'case info\.PlatformNVML, info\.PlatformWSL:\s*return "legacy"',
        "legacy",
    ),
    ("internal/info/auto.go", r"defaultMode:\s*JitCDIRuntimeMode", "jit-cdi"),
)
RUNTIME_FACTORY = "internal/runtime/runtime_factory.go"
# The volume-mount device names the runtime reads in CDI mode: 1.17's CDI modifier reads only
# cdi/<vendor>/<class>/<device> mounts (CDIDevicesFromMounts); 1.18+'s image reads plain device IDs
# too (visibleDevicesFromMounts' default case).
MOUNT_FORMS = (
    ("internal/modifier/cdi.go", r"container\.CDIDevicesFromMounts\(\)", "cdi"),
    (
        "internal/config/image/cuda_image.go",
        r"func \(i CUDA\) visibleDevicesFromMounts\(\).*?default:\s*devices = append\(devices, device\)",
        "cdi plain",
    ),
)
# Which pods the toolkit's NRI plugin injects annotated CDI devices into (parseCDIDevices): 1.19
# only pods in its own namespace (NRI_NAMESPACE); 1.20 any pod, management devices excepted.
NRI_PLUGIN = "cmd/nvidia-ctk-installer/container/runtime/nri/plugin.go"
NRI_SCOPES = (
    (r"if p\.namespace != pod\.Namespace \{", "nri-namespace"),
    (
        r"management\.nvidia\.com/gpu.*?slices\.Contains\(p\.namespaces, pod\.Namespace\)",
        "any-but-management",
    ),
)
# The installer's containerd defaults: the config it edits and reverts, and how it restarts.
CONTAINERD_GO = (
    "tools/container/runtime/containerd/containerd.go",
    "cmd/nvidia-ctk-installer/container/runtime/containerd/containerd.go",
)
# Where the runtime's config.toml schema (the Config struct's TOML keys) lives, before and after
# its move to api/config/v1.
CONFIG_GO = ("internal/config/config.go", "api/config/v1/config.go")
# The licensing Secret keys the operator mounts into the vGPU driver container.
VGPU_CONSTS = "internal/consts/consts.go"
CHART_DIR = "deployments/gpu-operator"
NFD_POST_DELETE = f"{CHART_DIR}/charts/node-feature-discovery/templates/post-delete-job.yaml"
OPERATOR = "gpu-operator"
OPERATOR_GO = "controllers/object_controls.go"
CDI_IF = "if config.CDI.IsEnabled() {"
STATE_GO = "controllers/state_manager.go"


def toolkit_rows(repo: str, version: str) -> Iterator[dict[str, str]]:
    commit = commit_of(repo, version)
    for toolkit_go, runtime_go in TOOLKIT_FILES:
        text = show(repo, version, toolkit_go)
        runtime = show(repo, version, runtime_go)
        if text is None or runtime is None:
            continue
        for flag in TOOLKIT_FLAGS:
            src, where = (runtime, runtime_go) if flag == "set-as-default" else (text, toolkit_go)
            default, env = bool_flag(src, flag)
            yield _row("nvidia-container-toolkit", version, commit, flag, default, env, where)
        break
    else:
        raise SystemExit(f"toolkit {version}: no installer source found")
    yield from _mode_rows(repo, version, commit)
    yield _installer_env_row(repo, version, commit)
    gates = [path for path, rx in GATES if re.search(rx, show(repo, version, path) or "")]
    if not gates:
        raise SystemExit(f"toolkit {version}: no NVIDIA_VISIBLE_DEVICES gate found")
    yield _row(
        "nvidia-container-toolkit",
        version,
        commit,
        "envvar-gate",
        "privileged-or-accept",
        "",
        " + ".join(gates),
    )


# The installer's sources before and after the 1.18 move; every flag names its env variables as
# ``EnvVars: []string{...}`` (urfave/cli v2) or ``Sources: cli.EnvVars(...)`` (v3).
INSTALLER_DIRS = ("tools/container", "cmd/nvidia-ctk-installer")
_ENV_VARS = re.compile(r"EnvVars(?::\s*\[\]string\{|\()([^})]*)")


def env_names(source: str) -> set[str]:
    """Every env variable the flags of Go ``source`` read, in either urfave/cli form."""
    return {
        n for m in _ENV_VARS.finditer(source) for n in re.findall(r'"([A-Z0-9_]+)"', m.group(1))
    }


def _installer_env_row(repo: str, version: str, commit: str) -> dict[str, str]:
    """Fact ``installer-env``: every variable the installer's flags read at ``version``."""
    for where in INSTALLER_DIRS:
        files = git(repo, "ls-tree", "-r", "--name-only", version, "--", where).split()
        names: set[str] = set()
        for path in files:
            if path.endswith(".go") and not path.endswith("_test.go"):
                names |= env_names(show(repo, version, path) or "")
        if names:
            value = " ".join(sorted(names))
            return _row(
                "nvidia-container-toolkit", version, commit, "installer-env", value, "", where
            )
    raise SystemExit(f"toolkit {version}: no installer flag env variables found")


def _first_match(
    repo: str, version: str, candidates: tuple[tuple[str, str, str], ...]
) -> tuple[str, str]:
    """(value, file) of the first candidate whose pattern the file at ``version`` contains."""
    for path, rx, value in candidates:
        if re.search(rx, show(repo, version, path) or "", re.DOTALL):
            return value, path
    raise SystemExit(f"toolkit {version}: none of {[c[0] for c in candidates]} matched")


def _mode_rows(repo: str, version: str, commit: str) -> Iterator[dict[str, str]]:
    auto, where = _first_match(repo, version, AUTO_MODES)
    if auto == "jit-cdi" and "WithDefaultMode" in (show(repo, version, RUNTIME_FACTORY) or ""):
        raise SystemExit(f"toolkit {version}: the runtime sets its own auto-mode default")
    yield _row("nvidia-container-toolkit", version, commit, "auto-mode", auto, "", where)
    forms, where = _first_match(repo, version, MOUNT_FORMS)
    yield _row("nvidia-container-toolkit", version, commit, "cdi-mount-forms", forms, "", where)
    yield from _containerd_rows(repo, version, commit)
    yield from _config_key_rows(repo, version, commit)
    yield from _nri_rows(repo, version, commit)


def _nri_rows(repo: str, version: str, commit: str) -> Iterator[dict[str, str]]:
    plugin = show(repo, version, NRI_PLUGIN)
    if plugin is None:
        scope = "no-plugin"
    else:
        body = func_body(plugin, "(p *Plugin) parseCDIDevices")
        scope = next((v for rx, v in NRI_SCOPES if re.search(rx, body, re.DOTALL)), "any")
    yield _row(
        "nvidia-container-toolkit", version, commit, "nri-annotation-scope", scope, "", NRI_PLUGIN
    )


def _containerd_rows(repo: str, version: str, commit: str) -> Iterator[dict[str, str]]:
    for path in CONTAINERD_GO:
        consts = go_consts(show(repo, version, path) or "")
        if "DefaultRestartMode" in consts and "DefaultConfig" in consts:
            break
    else:
        raise SystemExit(f"toolkit {version}: containerd defaults not found")
    for fact, const in (
        ("containerd-restart-mode", "DefaultRestartMode"),
        ("containerd-config", "DefaultConfig"),
    ):
        yield _row("nvidia-container-toolkit", version, commit, fact, consts[const], "", path)
    # From 1.18 the installer writes its runtimes to a drop-in file ("" before).
    drop_in = consts.get("DefaultDropInConfig", "")
    yield _row("nvidia-container-toolkit", version, commit, "containerd-drop-in", drop_in, "", path)


def _config_key_rows(repo: str, version: str, commit: str) -> Iterator[dict[str, str]]:
    """The top-level keys of the runtime's config.toml (what ``nvidia-ctk config --set`` writes
    and the runtime reads), as the Config struct's TOML tags name them."""
    for path in CONFIG_GO:
        text = show(repo, version, path)
        if text and re.search(r"^type Config struct", text, re.MULTILINE):
            body = func_like(text, "type Config struct")
            keys = [k.split(",", 1)[0] for k in re.findall(r'toml:"([^"]+)"', body)]
            yield _row(
                "nvidia-container-toolkit", version, commit, "config-keys", " ".join(keys), "", path
            )
            return
    raise SystemExit(f"toolkit {version}: Config struct not found")


def func_like(source: str, header: str) -> str:
    """The text from ``header`` at column 0 to the next closing brace at column 0."""
    m = re.search(rf"^{re.escape(header)}.*?^}}", source, re.MULTILINE | re.DOTALL)
    if m is None:
        raise SystemExit(f"no {header}")
    return m.group(0)


def vgpu_rows(repo: str, tag: str, commit: str) -> Iterator[dict[str, str]]:
    consts = go_consts(show(repo, tag, VGPU_CONSTS) or "")
    for fact, const in (
        ("vgpu.licensing-file", "VGPULicensingFileName"),
        ("vgpu.nls-token-file", "NLSClientTokenFileName"),
    ):
        if const not in consts:
            raise SystemExit(f"operator {tag}: {const} not found")
        yield _row(OPERATOR, tag, commit, fact, consts[const], "", VGPU_CONSTS)


def chart_hook_rows(repo: str, tag: str, commit: str) -> Iterator[dict[str, str]]:
    """What ``helm uninstall`` runs besides deleting the release's objects: NFD's post-delete
    prune Job (and the value gating it, "" when it is not gated) and the chart's pre-delete hooks
    (``file:gate``, gate ``-`` when unconditional)."""
    nfd = show(repo, tag, NFD_POST_DELETE)
    if nfd is None or '"helm.sh/hook": post-delete' not in nfd:
        raise SystemExit(f"operator {tag}: NFD post-delete job not found")
    gate = re.match(r"\{\{-? if \.Values\.([A-Za-z.]+) \}\}", nfd)
    value = gate.group(1) if gate else ""
    yield _row(OPERATOR, tag, commit, "nfd.post-delete-gate", value, "", NFD_POST_DELETE)
    nfd_values = f"{CHART_DIR}/charts/node-feature-discovery/values.yaml"
    default = (yaml.safe_load(show(repo, tag, nfd_values) or "") or {}).get(value) if value else ""
    if value and not isinstance(default, bool):
        raise SystemExit(f"operator {tag}: NFD {value} default not found")
    yield _row(
        OPERATOR, tag, commit, "nfd.post-delete-default", str(default).lower(), "", nfd_values
    )
    hooks = []
    templates = f"{CHART_DIR}/templates"
    for name in git(repo, "ls-tree", "--name-only", f"{tag}:{templates}").split():
        text = show(repo, tag, f"{templates}/{name}") or ""
        if '"helm.sh/hook": pre-delete' not in text:
            continue
        m = re.match(r"\{\{-? if \.Values\.([A-Za-z.]+) \}\}", text)
        hooks.append(f"{name}:{m.group(1) if m else '-'}")
    yield _row(
        OPERATOR, tag, commit, "pre-delete-hooks", " ".join(hooks), "", f"{templates}/*.yaml"
    )


def operator_rows(repo: str, tag: str) -> Iterator[dict[str, str]]:
    commit = commit_of(repo, tag)
    go = show(repo, tag, OPERATOR_GO) or ""
    consts = go_consts(go)
    toolkit = func_body(go, "TransformToolkit")
    for_cdi = re.search(r"^func transformToolkitCtrForCDI\(", go, re.MULTILINE)
    cdi = func_body(go, "transformToolkitCtrForCDI") if for_cdi else block(toolkit, CDI_IF)
    default_only = block(cdi, "if config.CDI.IsDefault() {")
    nri_only = block(cdi, "if nriPluginEnabled {")
    always = set_env(_without(cdi, default_only, nri_only), consts)
    yield _row(OPERATOR, tag, commit, "toolkit.cdi-env", " ".join(always), "", OPERATOR_GO)
    only = " ".join(set_env(default_only, consts))
    yield _row(OPERATOR, tag, commit, "toolkit.cdi-default-env", only, "", OPERATOR_GO)
    last = _last(toolkit, "config.Toolkit.Env")
    yield _row(OPERATOR, tag, commit, "toolkit.user-env-last", last, "", OPERATOR_GO)
    plugin = func_body(go, "TransformDevicePlugin")
    for_plugin = re.search(r"^func transformDevicePluginCtrForCDI\(", go, re.MULTILINE)
    cdi_plugin = (
        func_body(go, "transformDevicePluginCtrForCDI") if for_plugin else block(plugin, CDI_IF)
    )
    strategy = [e for e in set_env(cdi_plugin, consts) if e.startswith("DEVICE_LIST_STRATEGY=")]
    if len(strategy) != 1:
        raise SystemExit(f"operator {tag}: CDI device-list strategy not found")
    yield _row(
        "gpu-operator",
        tag,
        commit,
        "devicePlugin.cdi-strategy",
        strategy[0].split("=", 1)[1],
        "DEVICE_LIST_STRATEGY",
        OPERATOR_GO,
    )
    prefix = [e for e in set_env(cdi_plugin, consts) if e.startswith("CDI_ANNOTATION_PREFIX=")]
    yield _row(
        "gpu-operator",
        tag,
        commit,
        "devicePlugin.cdi-annotation-prefix",
        _one(prefix, f"operator {tag}: CDI annotation prefix"),
        "CDI_ANNOTATION_PREFIX",
        OPERATOR_GO,
    )
    yield _row(
        "gpu-operator",
        tag,
        commit,
        "devicePlugin.user-env-last",
        _last(plugin, "config.DevicePlugin.Env"),
        "",
        OPERATOR_GO,
    )
    yield from _runtime_class_rows(repo, tag, commit, go)
    yield from chart_hook_rows(repo, tag, commit)
    yield from vgpu_rows(repo, tag, commit)


def _one(found: list[str], what: str) -> str:
    if len(found) != 1:
        raise SystemExit(f"{what} not found")
    return found[0].split("=", 1)[1]


def _last(body: str, user_env: str) -> str:
    """Whether the user's env list is applied after the CDI block (so it overrides it)."""
    user = body.find(f"range {user_env}")
    cdi = body.find("config.CDI.IsEnabled()")
    if user < 0 or cdi < 0:
        raise SystemExit(f"order of {user_env} and the CDI block not found")
    return "true" if user > cdi else "false"


def _runtime_class_rows(repo: str, tag: str, commit: str, go: str) -> Iterator[dict[str, str]]:
    assets = "assets/pre-requisites"
    names = []
    for path in git(repo, "ls-tree", "--name-only", f"{tag}:{assets}").split():
        doc = yaml.safe_load(show(repo, tag, f"{assets}/{path}") or "") or {}
        if doc.get("kind") == "RuntimeClass":
            name = str(doc["metadata"]["name"])
            names.append("operator.runtimeClass" if name == "FILLED_BY_OPERATOR" else name)
    body = func_body(go, "RuntimeClasses")
    cdi_only = re.findall(
        r'obj\.Name == "([a-z-]+)"', body.split("CDI.IsEnabled()", 1)[-1].split("\n", 1)[0]
    )
    if not names or not cdi_only:
        raise SystemExit(f"operator {tag}: runtime classes not found")
    yield _row(
        "gpu-operator",
        tag,
        commit,
        "runtimeClasses",
        " ".join(names),
        "",
        f"{assets}/*runtime_class*.yaml",
    )
    yield _row(
        "gpu-operator",
        tag,
        commit,
        "runtimeClasses.cdi-only",
        " ".join(sorted(cdi_only)),
        "",
        f"{OPERATOR_GO} RuntimeClasses",
    )
    state = show(repo, tag, STATE_GO) or ""
    nri = re.search(
        r'case "pre-requisites":\s*return !clusterPolicySpec\.CDI\.IsNRIPluginEnabled\(\)', state
    )
    yield _row(
        "gpu-operator",
        tag,
        commit,
        "runtimeClasses.none-with-nri",
        "true" if nri else "false",
        "",
        f"{STATE_GO} isStateEnabled",
    )


def device_plugin_rows(repo: str, version: str) -> Iterator[dict[str, str]]:
    commit = commit_of(repo, version)
    main = show(repo, version, "cmd/nvidia-device-plugin/main.go") or ""
    consts = go_consts(show(repo, version, "api/config/v1/consts.go") or "")
    m = re.search(
        r'Name:\s*"device-list-strategy",\s*Value:\s*cli\.NewStringSlice\(string\(spec\.([A-Za-z]+)\)\)',
        main,
    )
    if m is None or m.group(1) not in consts:
        raise SystemExit(f"device plugin {version}: default strategy not found")
    yield _row(
        "k8s-device-plugin",
        version,
        commit,
        "device-list-strategy",
        consts[m.group(1)],
        "DEVICE_LIST_STRATEGY",
        "cmd/nvidia-device-plugin/main.go + api/config/v1/consts.go",
    )


def eks_ami_rows(repo: str) -> Iterator[dict[str, str]]:
    path = "nodeadm/internal/containerd/runtime_config_nvidia.go"
    go = show(repo, "HEAD", path) or ""
    name = re.search(r'nvidiaRuntimeName\s*=\s*"([^"]+)"', go)
    binary = re.search(r'nvidiaRuntimeBinaryPath\s*=\s*"([^"]+)"', go)
    if name is None or binary is None or "opts.RuntimeName = nvidiaRuntimeName" not in go:
        raise SystemExit("amazon-eks-ami: nodeadm's NVIDIA runtime mixin not found")
    commit = commit_of(repo, "HEAD")
    yield _row(
        "amazon-eks-ami",
        "al2023",
        commit,
        "default-runtime",
        name.group(1),
        "",
        f"{path} (when {binary.group(1)} exists)",
    )


def bottlerocket_rows(repo: str) -> Iterator[dict[str, str]]:
    commit = commit_of(repo, "HEAD")
    for path, key in (
        (
            "sources/shared-defaults/nvidia-k8s-container-toolkit.toml",
            "visible-devices-envvar-when-unprivileged",
        ),
        (
            "sources/shared-defaults/nvidia-k8s-container-toolkit.toml",
            "visible-devices-as-volume-mounts",
        ),
        ("sources/shared-defaults/nvidia-k8s-device-plugin.toml", "device-list-strategy"),
    ):
        m = re.search(
            rf'^{re.escape(key)}\s*=\s*"?([a-z-]+)"?', show(repo, "HEAD", path) or "", re.MULTILINE
        )
        if m is None:
            raise SystemExit(f"bottlerocket: {key} not found in {path}")
        yield _row("bottlerocket", "nvidia-k8s", commit, key, m.group(1), "", path)


def _row(
    receiver: str, version: str, commit: str, fact: str, value: str, env: str, source: str
) -> dict[str, str]:
    return dict(zip(FIELDS, (receiver, version, commit, fact, value, env, source), strict=True))


def chart_versions() -> list[tuple[str, str, str]]:
    """(chart tag, toolkit tag, device plugin tag) of every vendored chart."""
    out = []
    for p in sorted(CHARTS.glob("values-v*.yaml"), key=lambda p: _semver(p.stem)):
        values = yaml.safe_load(p.read_text(encoding="utf-8"))
        toolkit = str(values["toolkit"]["version"]).split("-", 1)[0]
        out.append(
            (p.stem.removeprefix("values-"), toolkit, str(values["devicePlugin"]["version"]))
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for name in ("operator", "toolkit", "device-plugin", "eks-ami", "bottlerocket"):
        ap.add_argument(f"--{name}", required=True)
    ap.add_argument("--date", default=datetime.date.today().isoformat())
    a = ap.parse_args()
    rows: list[dict[str, str]] = []
    charts = chart_versions()
    for tag, _, _ in charts:
        rows += operator_rows(a.operator, tag)
    for version in sorted({t for _, t, _ in charts}, key=_semver):
        rows += toolkit_rows(a.toolkit, version)
    for version in sorted({d for _, _, d in charts}, key=_semver):
        rows += device_plugin_rows(a.device_plugin, version)
    rows += eks_ami_rows(a.eks_ami)
    rows += bottlerocket_rows(a.bottlerocket)
    buf = io.StringIO()
    buf.write(
        "# Container-runtime facts GPU isolation rests on, per receiver version: which RuntimeClasses the\n"
        "# GPU Operator creates and the env it sets in CDI mode (per chart tag), the toolkit installer's\n"
        "# defaults and env names and the runtime's NVIDIA_VISIBLE_DEVICES gate (per toolkit tag a chart\n"
        "# ships), the device plugin's default device-list strategy, what the EKS AL2023 NVIDIA AMI and\n"
        "# Bottlerocket's NVIDIA variants configure.\n"
        "# source: NVIDIA/gpu-operator, NVIDIA/nvidia-container-toolkit, NVIDIA/k8s-device-plugin,\n"
        "# awslabs/amazon-eks-ami, bottlerocket-os/bottlerocket at the commit of each row, file in `source`;\n"
        f"# read {a.date} by scripts/refresh_runtime_facts.py (facts only); the node images at their\n"
        f"# HEAD: {_dated(a.eks_ami, 'amazon-eks-ami')}, {_dated(a.bottlerocket, 'bottlerocket')}.\n"
    )
    w = csv.DictWriter(buf, FIELDS, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    OUT.write_text(buf.getvalue(), encoding="utf-8")
    print(f"wrote {len(rows)} facts to {OUT.relative_to(ROOT)}")


def _dated(repo: str, name: str) -> str:
    """``name <commit> committed <date>``: how old a HEAD-read receiver's facts are."""
    return f"{name} {commit_of(repo, 'HEAD')} committed {git(repo, 'log', '-1', '--format=%cs', 'HEAD').strip()}"


def _semver(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v)[:3])


if __name__ == "__main__":
    sys.exit(main())
