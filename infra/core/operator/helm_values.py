"""Helm values for the NVIDIA GPU Operator as data: overrides with reasons, checked against the chart.

A value is a ``Setting(path, value, reason)``. Settings are merged in order (later wins), settings
equal to the chart default are dropped, and every path must exist in the vendored ``values.yaml`` of
the pinned chart version (``infra/core/data/gpu-operator/``). ``toolkit.env`` entries are settings
too (path ``toolkit.env[NAME]``) so each variable keeps its own reason.
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from infra.core.config.stack import SAFE_LOADER

CHART_DATA_DIR = Path(__file__).parent.parent / "data" / "gpu-operator"

# `toolkit.env[NAME]`-style paths: an item of a {name, value} list, addressed by its name.
_ENV_ITEM = re.compile(r"^(?P<list>.+)\[(?P<name>[A-Za-z_][A-Za-z0-9_]*)\]$")
_VERSION = re.compile(r"^v(\d+)\.(\d+)\.(\d+)$")

# 25.10.0 made CDI the default; from then on the operator sets NVIDIA_RUNTIME_SET_AS_DEFAULT=false and
# ships toolkit >= 1.18 (RUNTIME_CONFIG_SOURCE, drop-in config): NVIDIA gpu-operator release notes
# 25.10.0 (https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/release-notes.html).
CDI_ERA = (25, 10, 0)


@dataclass(frozen=True, slots=True)
class Setting:
    """One Helm value override.

    Attributes:
        path: dotted key path (``driver.enabled``) or an env item (``toolkit.env[CONTAINERD_SOCKET]``).
        value: the value (env item values are strings).
        reason: one line saying why; rendered next to the value.
    """

    path: str
    value: Any
    reason: str


def version_tuple(version: str) -> tuple[int, int, int]:
    """``"v26.7.0" -> (26, 7, 0)``.

    Raises:
        ValueError: not a ``vMAJOR.MINOR.PATCH`` version.
    """
    m = _VERSION.fullmatch(version)
    if m is None:
        raise ValueError(f"{version!r} is not a chart version: vMAJOR.MINOR.PATCH")
    return int(m.group(1)), int(m.group(2)), int(m.group(3))


def is_cdi_era(version: str) -> bool:
    """True for chart versions with CDI on by default (>= v25.10.0)."""
    return version_tuple(version) >= CDI_ERA


def vendored_versions() -> tuple[str, ...]:
    """Chart versions whose values file is vendored, oldest first."""
    names = [
        p.name.removeprefix("values-").removesuffix(".yaml")
        for p in CHART_DATA_DIR.glob("values-v*.yaml")
    ]
    return tuple(sorted(names, key=version_tuple))


@functools.cache
def chart_defaults(version: str) -> Mapping[str, Any]:
    """The default values of chart ``version`` (parsed vendored ``values.yaml``).

    Raises:
        KeyError: the version is not vendored.
    """
    path = CHART_DATA_DIR / f"values-{version}.yaml"
    if not path.is_file():
        raise KeyError(version)
    # libyaml parses the 20 KB chart values ~10x faster than the pure-Python loader.
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=SAFE_LOADER)
    return data if isinstance(data, dict) else {}


def default_at(version: str, path: str) -> Any:
    """The chart default at dotted ``path`` (a deep copy), or ``None`` if absent."""
    node: Any = chart_defaults(version)
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return copy.deepcopy(node)


def unknown_paths(values: Mapping[str, Any], version: str) -> list[str]:
    """Dotted paths in ``values`` that the chart's values file does not have.

    Maps that are empty in the chart (``devicePlugin.config.data``, ``daemonsets.labels``) are free
    form, and lists are leaves (their items are the chart's business), so only keys are checked.
    """
    out: list[str] = []

    def walk(given: Mapping[str, Any], default: Mapping[str, Any], prefix: str) -> None:
        for key, value in given.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            if key not in default:
                out.append(path)
                continue
            sub = default[key]
            if isinstance(value, dict) and isinstance(sub, dict) and sub:
                walk(value, sub, path)

    walk(values, chart_defaults(version), "")
    return out


def mistyped_paths(values: Mapping[str, Any], version: str) -> list[tuple[str, str]]:
    """``(dotted path, reason)`` for each value whose JSON type differs from the chart default's.

    Helm renders templates with Go's text/template, whose ``if`` is true for any non-empty string,
    so ``nfd.enabled: "false"`` would enable NFD (https://pkg.go.dev/text/template "The empty
    values are false, 0, any nil pointer or interface value, and any array, slice, map, or string
    of length zero"). Only boolean and numeric defaults are typed: a string default may stand for
    an int-or-string field (``daemonsets.rollingUpdate.maxUnavailable: "1"``,
    ``driver.upgradePolicy.maxUnavailable: 25%``; the chart's values.yaml: "either as number or
    percentage"; the ClusterPolicy CRD marks them ``x-kubernetes-int-or-string``). A mapping default
    still wants a mapping. A ``null`` chart default takes any type; keys the chart lacks are
    ``unknown_paths``' business.
    """
    out: list[tuple[str, str]] = []

    def walk(given: Mapping[str, Any], default: Mapping[str, Any], prefix: str) -> None:
        for key, value in given.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            if key not in default or default[key] is None or value is None:
                continue
            want, got = _json_type(default[key]), _json_type(value)
            if want not in _TYPED and "a mapping" not in (want, got):
                continue
            if want != got and not (want == "a number" and got == "an integer"):
                out.append(
                    (
                        path,
                        f"{got} {_shown(value)} where the chart's default is {want} "
                        f"{_shown(default[key])}{_hint(want, value)}",
                    )
                )
            elif isinstance(value, Mapping) and isinstance(default[key], Mapping):
                walk(value, default[key], path)

    walk(values, chart_defaults(version), "")
    return out


# Defaults whose type the templates rely on (`if`, arithmetic); strings and lists are not typed.
_TYPED = frozenset({"a boolean", "an integer", "a number"})


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a mapping" if isinstance(value, Mapping) else "a list"


def _shown(value: Any) -> str:
    text = repr(value) if isinstance(value, str | bool | int | float) else ""
    return f"({text[:40]})" if text else ""


def _hint(want: str, value: Any) -> str:
    if want == "a boolean" and isinstance(value, str):
        return "; Helm's templates take any non-empty string as true: write true or false unquoted"
    if want in ("an integer", "a number") and isinstance(value, str):
        return "; write the number unquoted"
    return ""


def merge_settings(
    settings: Iterable[Setting], version: str
) -> tuple[dict[str, Any], dict[str, str]]:
    """Merge settings in order into (values, reasons), dropping values equal to the chart default.

    Returns:
        ``values``: the nested Helm values; ``reasons``: dotted path (or ``list[NAME]``) -> reason.
    """
    leaves: dict[str, Setting] = {}
    env: dict[str, dict[str, Setting]] = {}
    for s in settings:
        if m := _ENV_ITEM.fullmatch(s.path):
            env.setdefault(m.group("list"), {})[m.group("name")] = s
        else:
            # A parent set later replaces what was set below it (and vice versa).
            for p in [
                p for p in leaves if p.startswith(s.path + ".") or s.path.startswith(p + ".")
            ]:
                del leaves[p]
            leaves[s.path] = s
    values: dict[str, Any] = {}
    reasons: dict[str, str] = {}
    for path, s in leaves.items():
        if s.value == default_at(version, path):
            continue
        _put(values, path, copy.deepcopy(s.value))
        reasons[path] = s.reason
    for list_path, items in env.items():
        base = default_at(version, list_path)
        merged = [dict(e) for e in base] if isinstance(base, list) else []
        for name, s in items.items():
            merged = [e for e in merged if e.get("name") != name]
            merged.append({"name": name, "value": s.value})
            reasons[f"{list_path}[{name}]"] = s.reason
        _put(values, list_path, merged)
    return values, reasons


def render_values_yaml(
    values: Mapping[str, Any], reasons: Mapping[str, str], header: Sequence[str] = ()
) -> str:
    """Render Helm values as YAML, reasons as a comment block (``# path: reason``) on top."""
    lines = [f"# {h}" for h in header]
    if reasons:
        lines.append("# Overrides of the chart defaults, and why:")
        lines.extend(f"#   {path}: {reason}" for path, reason in sorted(reasons.items()))
    body = yaml.safe_dump(dict(values), sort_keys=True, default_flow_style=False, width=100)
    return "\n".join(lines) + ("\n" if lines else "") + (body if values else "{}\n")


def _put(values: dict[str, Any], path: str, value: Any) -> None:
    parts = path.split(".")
    node = values
    for part in parts[:-1]:
        nxt = node.get(part)
        if not isinstance(nxt, dict):
            nxt = {}
            node[part] = nxt
        node = nxt
    node[parts[-1]] = value
