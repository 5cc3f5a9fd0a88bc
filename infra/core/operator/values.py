"""Operator values: tolerations for operands, the user's ``gpuOperator.values`` and the rendered
``--helm-values`` file."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from infra.core.config.operator import GpuOperatorSpec
from infra.core.errors import Issues, did_you_mean
from infra.core.operator.helm_values import (
    Setting,
    chart_defaults,
    default_at,
    mistyped_paths,
    render_values_yaml,
    unknown_paths,
)
from infra.core.operator.model import OperatorPlan
from infra.core.pools import PoolHints, Taint


def render_helm_values(plan: Any) -> str:
    """The operator's Helm values as YAML with the reasons as comments (``--helm-values``).

    Args:
        plan: an ``OperatorPlan``, or an ``infra.core.plan.Plan`` (its ``.operator`` is used).

    Returns:
        YAML text; a comment line saying so when the stack does not install the operator.
    """
    op: OperatorPlan | None = plan if isinstance(plan, OperatorPlan) else plan.operator
    if op is None or op.release is None:
        return "# gpuOperator.enabled is false: no GPU Operator values for this stack\n{}\n"
    r = op.release
    header = [
        f"gpu-operator {r.version} from {r.repository} (preset {op.preset}), namespace {r.namespace}",
        f"helm upgrade --install {r.name} {r.chart} --repo {r.repository} --version {r.version} "
        f"-n {r.namespace} -f values.yaml",
    ]
    for m in (m for m in op.before_release if m["kind"] == "ConfigMap"):
        header.append(
            f"needs ConfigMap {m['metadata']['name']} in {r.namespace} "
            "(python -m infra.plan --json lists it)"
        )
    header.extend(f"note: {n}" for n in op.notes)
    return render_values_yaml(r.values, r.reasons, header)


# --------------------------------------------------------------------------------------------------
# Tolerations: operands and the NFD worker must reach every GPU node, whatever its taints


def toleration_settings(version: str, pools: Sequence[PoolHints]) -> list[Setting]:
    settings: list[Setting] = []
    for path, who in (
        ("daemonsets.tolerations", "operand DaemonSets"),
        ("node-feature-discovery.worker.tolerations", "the NFD worker"),
    ):
        base = default_at(version, path)
        tolerations: list[dict[str, str]] = list(base) if isinstance(base, list) else []
        added: set[str] = set()
        for t in (t for h in pools for t in h.taints):
            if not _tolerated(t, tolerations):
                tolerations.append({"key": t.key, "operator": "Exists", "effect": t.effect})
                added.add(t.key)
        if added:
            keys = ", ".join(sorted(added))
            # The list replaces the chart's, so the chart defaults stay at its head.
            settings.append(
                Setting(path, tolerations, f"chart defaults + GPU pool taints ({keys}) for {who}")
            )
    return settings


def _tolerated(taint: Taint, tolerations: Sequence[Mapping[str, str]]) -> bool:
    for t in tolerations:
        if t.get("key") != taint.key:
            continue
        if t.get("effect") not in (None, "", taint.effect):
            continue
        if t.get("operator", "Equal") == "Exists" or t.get("value", "") == taint.value:
            return True
    return False


# --------------------------------------------------------------------------------------------------
# User values


def user_settings(
    spec: GpuOperatorSpec, managed: Sequence[Setting], issues: Issues
) -> list[Setting]:
    """``gpuOperator.values`` as settings. Keys the chart lacks, and every path a preset or the
    pools/toolkitEnv set (managed), are errors: a user value there would silently undo them."""
    unknown = unknown_paths(spec.values, spec.chart_version)
    for path in unknown:
        parent, _, last = path.rpartition(".")
        siblings = (
            default_at(spec.chart_version, parent) if parent else chart_defaults(spec.chart_version)
        )
        hint = did_you_mean(last, list(siblings)) if isinstance(siblings, Mapping) else ""
        issues.add(
            f"gpuOperator.values.{path}",
            f"{path!r} is not a key of the gpu-operator {spec.chart_version} chart values{hint}",
        )
    for path, reason in mistyped_paths(spec.values, spec.chart_version):
        issues.add(
            f"gpuOperator.values.{path}", f"{reason} (gpu-operator {spec.chart_version} chart)"
        )
    # `toolkit.env[X]` manages the whole `toolkit.env` list; the first setting names the owner.
    owners: dict[str, str] = {}
    for s in managed:
        owners.setdefault(s.path.split("[")[0], s.reason)
    out: list[Setting] = []
    for path, value in _user_leaves(spec.values, spec.chart_version):
        if path in unknown:
            continue
        clash = next(
            (
                m
                for m in owners
                if m == path or m.startswith(path + ".") or path.startswith(m + ".")
            ),
            None,
        )
        if path == "toolkit.env" or path.startswith("toolkit.env."):
            issues.add(
                f"gpuOperator.values.{path}",
                "set toolkit env with gpuOperator.toolkitEnv (it maps the toolkit's CONTAINERD_* "
                "variables onto what this chart honours)",
            )
        elif clash is not None:
            issues.add(
                f"gpuOperator.values.{path}",
                f"gpu-infra manages {clash} ({owners[clash]}); gpuOperator.values may not "
                "override it: change the preset, the pools' sharing/MIG/taints or toolkitEnv",
            )
        else:
            out.append(Setting(path, value, "gpuOperator.values"))
    return out


def _user_leaves(values: Mapping[str, Any], version: str) -> list[tuple[str, Any]]:
    """Leaves of the user's values, walked alongside the chart's: free-form maps (labels, data) and
    unknown keys stay whole, and keys are matched literally, so a key containing '.' is one key."""
    out: list[tuple[str, Any]] = []

    def walk(given: Mapping[str, Any], default: Mapping[str, Any], prefix: str) -> None:
        for key, value in given.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            sub = default.get(key)
            if isinstance(value, dict) and value and isinstance(sub, dict) and sub:
                walk(value, sub, path)
            else:
                out.append((path, value))

    walk(values, chart_defaults(version), "")
    return out
