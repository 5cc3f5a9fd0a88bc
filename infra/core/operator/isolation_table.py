"""The isolation table: every combination gpu-infra supports, planned as a stack would be.

Platform x distribution or preset x chart version x driver source x CDI or legacy runtime: each
case is a one-pool stack planned by the real planners (``plan_platform``, ``plan_operator``), so a
row says what a stack of that shape gets, or why gpu-infra refuses it. Chart versions are grouped
where every fact the rows read is the same (the operator's, its toolkit's and device plugin's rows
in ``data/gpu_runtime_facts.csv``), one version planned per group. ``docs/gpu-operator.md``'s table
is ``markdown_table()``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from infra.core.catalog.runtime_facts import (
    BOTTLEROCKET,
    DEVICE_PLUGIN,
    EKS_AMI,
    OPERATOR,
    TOOLKIT,
    facts_of,
    runtime_fact,
    versions_of,
)
from infra.core.catalog.vendored import DATA_DIR, Catalog
from infra.core.config.stack import parse
from infra.core.errors import ConfigErrors, Issues
from infra.core.observed import Observed
from infra.core.operator.helm_values import chart_defaults, is_cdi_era, vendored_versions
from infra.core.operator.isolation import RuntimePath
from infra.core.operator.planner import plan_operator
from infra.core.platform import plan_platform

_OPERATOR_FACTS = (
    "toolkit.cdi-env",
    "toolkit.cdi-default-env",
    "toolkit.user-env-last",
    "devicePlugin.cdi-strategy",
    "devicePlugin.cdi-annotation-prefix",
    "devicePlugin.user-env-last",
    "runtimeClasses",
    "runtimeClasses.cdi-only",
    "runtimeClasses.none-with-nri",
)
_TOOLKIT_FACTS = (
    "accept-nvidia-visible-devices-envvar-when-unprivileged",
    "accept-nvidia-visible-devices-as-volume-mounts",
    "set-as-default",
    "envvar-gate",
    "auto-mode",
    "cdi-mount-forms",
    "nri-annotation-scope",
)


@dataclass(frozen=True, slots=True)
class Case:
    """One combination: the stack it is planned as, and its table labels."""

    platform: str
    preset: str
    charts: str  # the version group's label
    chart: str | None  # the version planned (None: the operator off)
    driver: str
    mode: str  # "chart default", "legacy" (cdi.enabled false)
    raw: Mapping[str, Any] = field(compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Row:
    """A planned case: its isolation row, or why gpu-infra refuses the stack."""

    case: Case
    path: RuntimePath | None
    refused: str = ""


def version_groups() -> tuple[tuple[str, ...], ...]:
    """Vendored chart versions, oldest first, grouped where every fact the rows read agrees."""
    groups: list[tuple[str, ...]] = []
    last: tuple[Any, ...] | None = None
    for v in vendored_versions():
        key = _facts_key(v)
        if key == last and groups:
            groups[-1] = (*groups[-1], v)
        else:
            groups.append((v,))
        last = key
    return tuple(groups)


def _facts_key(version: str) -> tuple[Any, ...]:
    values = chart_defaults(version)
    toolkit = str(values["toolkit"]["version"]).split("-", 1)[0]
    plugin = str(values["devicePlugin"]["version"])

    def value(receiver: str, v: str, fact: str) -> str | None:
        f = runtime_fact(receiver, v, fact, DATA_DIR)  # the docs' table: the vendored facts
        return f.value if f is not None else None

    return (
        is_cdi_era(version),
        *(value(OPERATOR, version, f) for f in _OPERATOR_FACTS),
        *(value(TOOLKIT, toolkit, f) for f in _TOOLKIT_FACTS),
        value(DEVICE_PLUGIN, plugin, "device-list-strategy"),
        bool(values.get("cdi", {}).get("enabled")),
    )


def _label(group: tuple[str, ...]) -> str:
    return group[0] if len(group) == 1 else f"{group[0]} to {group[-1]}"


@dataclass(frozen=True, slots=True)
class _Platform:
    """A platform as the table's stacks need it: its name, cluster block and provider keys."""

    name: str
    cluster: Mapping[str, Any]
    providers: Mapping[str, Any]


_GKE = _Platform(
    "gke",
    {"name": "ml", "location": "us-central1"},
    {"gcp:project": "demo-project", "gcp:region": "us-central1"},
)
_EKS = _Platform(
    "eks",
    {"name": "ml", "location": "us-west-2", "kubernetesVersion": "1.33"},
    {"aws:region": "us-west-2"},
)
_ONPREM = _Platform(
    "kubernetes",
    {"name": "lab", "location": "dc1", "kubeconfig": "~/.kube/lab.yaml", "context": "lab-admin"},
    {},
)


def _stack(
    platform: _Platform,
    pool: Mapping[str, Any],
    operator: Mapping[str, Any],
    cluster: Mapping[str, Any],
) -> dict[str, Any]:
    return {
        **platform.providers,
        "gpu-infra:platform": platform.name,
        "gpu-infra:cluster": {**platform.cluster, **cluster},
        "gpu-infra:gpuPools": [{"name": "gpu", "maxNodes": 2, **pool}],
        "gpu-infra:gpuOperator": dict(operator),
    }


_ONPREM_POOL = {
    "machineType": "server",
    "gpu": {"model": "A40"},
    "nodeSelector": {"gpu-infra/pool": "gpu"},
    "vcpus": 16,
    "memoryGib": 64,
}
_T4 = {"machineType": "n1-standard-8", "gpu": {"type": "nvidia-tesla-t4", "count": 1}}
_G4DN = {"machineType": "g4dn.xlarge"}
_BOTTLEROCKET = {**_G4DN, "amiFamily": "bottlerocket"}
_VGPU = {
    "driverRepository": "registry.example.com/nvidia",
    "driverVersion": "580.95.05",
    "licensing": {"existingSecret": "licensing-config"},
    "pullSecret": {"existingSecret": "registry-secret"},
}


def _operator_cases(label: str, v: str) -> list[Case]:
    """The cases a chart version group plans (the operator on)."""
    out: list[Case] = []
    op = {"version": v}
    legacy = {"version": v, "values": {"cdi": {"enabled": False}}}
    # v25.3's CDI without cdi.default: the toolkit's runtime stays in auto mode.
    cdi_only = {"version": v, "values": {"cdi": {"enabled": True}}}
    nri = {"version": v, "values": {"cdi": {"nriPluginEnabled": True}}}
    labels = {id(legacy): "legacy", id(cdi_only): "cdi, not default", id(nri): "NRI plugin"}

    def add(p: _Platform, preset: str, driver: str, pool: Mapping[str, Any], **kw: Any) -> None:
        operator = kw.get("operator", op)
        mode = labels.get(id(operator), "chart default")
        raw = _stack(p, pool, {**operator, "preset": preset}, kw.get("cluster", {}))
        out.append(Case(p.name, preset, label, v, driver, mode, raw))

    for dist in ("containerd", "k3s", "rke2", "microk8s"):
        add(_ONPREM, dist, "operator", _ONPREM_POOL)
    add(_ONPREM, "containerd", "preinstalled", {**_ONPREM_POOL, "driver": "preinstalled"})
    if is_cdi_era(v):  # pre-CDI charts are legacy already
        add(_ONPREM, "containerd", "operator", _ONPREM_POOL, operator=legacy)
    else:
        add(_ONPREM, "containerd", "operator", _ONPREM_POOL, operator=cdi_only)
    if "nriPluginEnabled" in chart_defaults(v).get("cdi", {}):
        add(_ONPREM, "containerd", "operator", _ONPREM_POOL, operator=nri)
    vgpu = {**op, "vgpu": _VGPU}
    add(_ONPREM, "containerd", "vgpu", {**_ONPREM_POOL, "driver": "vgpu"}, operator=vgpu)
    # GKE below 1.33 for a 25.3 chart: its toolkit cannot read the config file newer GKE needs.
    # 1.32 is past standard support now: the Extended channel runs it (gke.versions).
    gke = {} if is_cdi_era(v) else {"minMasterVersion": "1.32", "releaseChannel": "EXTENDED"}
    add(_GKE, "gke-google-driver", "gke-default", _T4, cluster=gke)
    ubuntu = {**_T4, "gpu": {**_T4["gpu"], "driver": "operator"}, "imageType": "UBUNTU_CONTAINERD"}
    add(_GKE, "gke-operator-driver", "operator", ubuntu, cluster=gke)
    add(_EKS, "eks-al2023", "preinstalled", _G4DN)
    add(_EKS, "eks-bottlerocket", "preinstalled", _BOTTLEROCKET)
    return out


def _off_cases() -> list[Case]:
    off = {"enabled": False}
    preinstalled = {**_ONPREM_POOL, "driver": "preinstalled"}
    return [
        Case(p.name, "-", "-", None, driver, "-", _stack(p, pool, off, {}))
        for p, driver, pool in (
            (_GKE, "gke-default", _T4),
            (_EKS, "preinstalled", _G4DN),
            (_EKS, "preinstalled", _BOTTLEROCKET),
            (_ONPREM, "preinstalled", preinstalled),
        )
    ]


def cases() -> tuple[Case, ...]:
    """Every case of the table, in table order."""
    out: list[Case] = []
    for group in version_groups():
        out += _operator_cases(_label(group), group[-1])
    return (*out, *_off_cases())


def plan_case(case: Case, catalog: Catalog | None = None) -> Row:
    """Plan one case as ``python -m infra.plan`` would plan its stack."""
    try:
        config = parse(case.raw, "isolation-table")
        issues = Issues()
        platform = plan_platform(config, catalog or Catalog.load(), issues, Observed.none())
        op = plan_operator(config, platform.pools, platform, issues)
        issues.raise_if_any()
    except ConfigErrors as e:
        first = e.issues[0]
        return Row(case, None, f"{first.path}: {first.reason}")
    assert op is not None
    (path,) = op.isolation
    return Row(case, path)


@functools.cache
def rows() -> tuple[Row, ...]:
    catalog = Catalog.load()
    return tuple(plan_case(c, catalog) for c in cases())


def _cell(value: Any) -> str:
    if value is None:
        return "unknown"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, tuple | list):
        return ", ".join(f"`{v}`" for v in value) or "none"
    return f"`{value}`"


_COLUMNS: tuple[tuple[str, Callable[[Row], str]], ...] = (
    ("platform", lambda r: r.case.platform),
    ("preset", lambda r: r.case.preset),
    ("chart", lambda r: r.case.charts),
    ("driver", lambda r: r.case.driver),
    # A refused row has no path: it shows what the case asked for instead.
    ("runtime", lambda r: r.path.mode if r.path else _asked(r)),
    ("nvidia runtime mode", lambda r: _mode_cell(r)),
    ("default runtime", lambda r: _cell(r.path.default_runtime.value) if r.path else ""),
    ("RuntimeClasses", lambda r: _cell(r.path.runtime_classes.value) if r.path else ""),
    (
        "env var honoured unprivileged",
        lambda r: _cell(r.path.accept_envvar.value) if r.path else "",
    ),
    ("device list", lambda r: _cell(r.path.device_list.value) if r.path else ""),
    ("unrequested GPUs", lambda r: _verdict(r)),
)


def _asked(r: Row) -> str:
    return "-" if r.case.mode in ("-", "chart default") else f"({r.case.mode})"


def _mode_cell(r: Row) -> str:
    if r.path is None:
        return ""
    if r.path.runtime_mode.value is None and r.path.default_runtime.by.startswith("the node"):
        return "the image's"
    return _cell(r.path.runtime_mode.value)


def _verdict(r: Row) -> str:
    if r.path is None:
        return f"refused ({r.refused.split(':', 1)[0]})"
    if r.path.enforced:
        return "none"
    return "**open**: quota marked `gpu-infra/not-enforced`"


def markdown_table() -> str:
    """The table of ``docs/gpu-operator.md`` and the sources its cells come from."""
    lines = [
        "| " + " | ".join(name for name, _ in _COLUMNS) + " |",
        "|" + "---|" * len(_COLUMNS),
    ]
    lines += ["| " + " | ".join(cell(r) for _, cell in _COLUMNS) + " |" for r in rows()]
    lines += [
        "",
        "Read from (`infra/core/data/gpu_runtime_facts.csv`, each fact at its commit):",
        "",
    ]
    lines += [
        f"- {receiver} `{file}`: {', '.join(at)}" for (receiver, file), at in _sources().items()
    ]
    return "\n".join(lines) + "\n"


def _sources() -> dict[tuple[str, str], list[str]]:
    """(receiver, file) -> the ``version@commit`` of every fact the planned rows read there."""
    wanted: list[tuple[str, str, str]] = []
    for r in rows():
        if r.path is None or r.case.chart is None:
            continue
        values = chart_defaults(r.case.chart)
        toolkit = str(values["toolkit"]["version"]).split("-", 1)[0]
        plugin = str(values["devicePlugin"]["version"])
        wanted += [(OPERATOR, r.case.chart, f) for f in _OPERATOR_FACTS]
        wanted += [(TOOLKIT, toolkit, f) for f in _TOOLKIT_FACTS]
        wanted.append((DEVICE_PLUGIN, plugin, "device-list-strategy"))
    facts = [f for w in wanted if (f := runtime_fact(*w, DATA_DIR)) is not None]
    for receiver in (EKS_AMI, BOTTLEROCKET):
        for version in versions_of(receiver, DATA_DIR):
            facts += facts_of(receiver, version, DATA_DIR)
    out: dict[tuple[str, str], list[str]] = {}
    for f in facts:
        at = f"{f.version}@{f.commit}"
        seen = out.setdefault((f.receiver, f.file), [])
        if at not in seen:
            seen.append(at)
    return dict(sorted(out.items()))
