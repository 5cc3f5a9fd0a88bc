"""Parse a stack's config (``stacks/Pulumi.<stack>.yaml``) into a typed, validated ``StackConfig``.

The same function serves ``pulumi up`` (config from the engine), ``python -m infra.plan`` and
``python -m quota.check`` (config from the stack file), so all three agree on what a stack means.
Every problem is reported at once as ``<key path>: <reason>``: each block validated against its
schema (``validate``), the location derived and checked (``location``), keys that would not apply
refused (``inert``).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from infra.core.catalog.vendored import DATA_DIR
from infra.core.config.base import ClusterIdentity
from infra.core.config.entry import platform_config
from infra.core.config.inert import check_inert
from infra.core.config.operator import GpuNamespaceSpec, GpuOperatorSpec, IntegrationsSpec
from infra.core.config.secrets import SECRET_KEYS, SecretRef, secret_refs
from infra.core.config.validate import validate
from infra.core.errors import (
    Issues,
    closest,
    did_you_mean,
    join_path,
    shown,
)
from infra.core.platforms import PLATFORMS, PlatformName
from infra.core.stackfile.project import read_project_config
from infra.core.stackfile.reader import as_pulumi_reads, read_stack_file

PROJECT = "gpu-infra"
# libyaml's safe loader when PyYAML was built with it (it is in the PyPI wheels), else pure Python.
SAFE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# The keys this project reads under gpu-infra: (the blocks, then the Pulumi secrets).
_PROJECT_KEYS = (
    "platform",
    "cluster",
    "gpuPools",
    "gpuOperator",
    "gpuNamespaces",
    "integrations",
    *SECRET_KEYS,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class StackConfig:
    """A validated stack.

    Attributes:
        stack: stack name (``gke-t4`` for ``stacks/Pulumi.gke-t4.yaml``).
        platform: ``gke`` | ``eks`` | ``kubernetes``.
        region: the cloud region every regional resource and quota lives in (zone -> region on
            GKE); ``None`` on ``kubernetes``.
        zone: the zone of a zonal GKE cluster, else ``None``.
        project: the GCP project (GKE only).
        cluster: the platform's cluster block.
        pools: the platform's GPU pool blocks, in file order.
        operator: the GPU Operator block.
        namespaces: GPU namespaces with quotas.
        integrations: settings of the generated workload integrations.
        provider_config: every non-``gpu-infra`` key, as given.
        secrets: the Pulumi secrets given (``infra.core.config.secrets``), by key: names only.
    """

    stack: str
    platform: PlatformName
    region: str | None
    zone: str | None
    project: str | None
    cluster: Any
    pools: tuple[Any, ...]
    operator: GpuOperatorSpec
    namespaces: tuple[GpuNamespaceSpec, ...]
    integrations: IntegrationsSpec = field(default_factory=IntegrationsSpec)
    provider_config: Mapping[str, Any] = field(default_factory=dict)
    secrets: Mapping[str, SecretRef] = field(default_factory=dict)

    def cluster_identity(self) -> ClusterIdentity:
        """The cluster this stack plans on: two stacks whose identities are equal share it."""
        return self.cluster.identity(self.project, self.region)


def load_stack_file(path: str | Path) -> tuple[str, dict[str, Any]]:
    """Read a stack file; returns (stack name, its ``config:`` mapping).

    The one reader both CLIs use (``infra.plan`` and ``quota.check``), so they report the same
    problems for the same file. Bytes, YAML, limits and root keys are checked by
    ``infra.core.stackfile.reader.read_stack_file``.

    Raises:
        ConfigErrors: the file is missing, not UTF-8, not YAML, over a limit, or not a stack file.
    """
    p = Path(path)
    name = p.name.removeprefix("Pulumi.").removesuffix(".yaml").removesuffix(".yml")
    doc = read_stack_file(p, PROJECT)
    issues = Issues()
    if doc.get("environment"):
        # ESC environments are opened by Pulumi Cloud when `pulumi up` starts
        # (https://www.pulumi.com/docs/esc/integrations/infrastructure/pulumi-iac/): offline,
        # their values are unknown, and a plan without them would not be the stack's plan.
        issues.add(
            "environment",
            "the stack imports ESC environments "
            f"({shown(doc['environment'], 80)}); the offline plan cannot read ESC environments: "
            "write their values under 'config:' to plan offline, or run `pulumi preview`",
        )
    issues.raise_if_any()
    config = with_project_config(p, doc.get("config") or {})
    # What the program reads under `pulumi up` (infra.program.engine_config): the engine hands
    # every value over as text, so a string holding a JSON object or list arrives as one.
    return name, decode_engine_config(encode_engine_config(config))


def with_project_config(path: Path, stack: Mapping[str, Any]) -> dict[str, Any]:
    """The stack file's config with Pulumi.yaml's project-level config merged under it, as
    Pulumi merges them (``stackfile.project.read_project_config``): a key the stack sets keeps the
    stack's value whole; a project key with no value anywhere is an error.

    Raises:
        ConfigErrors: the project file is invalid, or a required project key is not set.
    """
    project = read_project_config(path)
    merged = copy.deepcopy(dict(stack))
    if project is None:
        return merged
    for key, value in project.values.items():
        _fill_path(merged, key, value)
    issues = Issues()
    for key in project.required:
        if not _has_path(merged, key):
            issues.add(
                key.removeprefix(f"{PROJECT}:"),
                f"required by {project.path.name}'s project config (it gives no value or "
                "default); set it under 'config:' in the stack file",
            )
    issues.raise_if_any()
    return merged


def _path_of(key: str) -> tuple[str, list[str]]:
    """``ns:a.b.c`` -> (``ns:a``, [b, c]): Pulumi reads project keys as paths (config.go
    ``mergeConfig``: ``stackConfig.Get(key, true)`` / ``Set(key, value, true)``)."""
    ns, _, name = key.partition(":")
    first, *rest = name.split(".") if "[" not in name else [name]
    return f"{ns}:{first}", rest


def _fill_path(merged: dict[str, Any], key: str, value: Any) -> None:
    """Set ``key`` (a path) to ``value`` unless the stack already sets it; a path into a stack
    value that is not an object is left to the stack's value."""
    top, rest = _path_of(key)
    if not rest:
        merged.setdefault(top, value)
        return
    node = merged.setdefault(top, {})
    for part in rest[:-1]:
        if not isinstance(node, dict):
            return
        node = node.setdefault(part, {})
    if isinstance(node, dict):
        node.setdefault(rest[-1], value)


def _has_path(merged: Mapping[str, Any], key: str) -> bool:
    top, rest = _path_of(key)
    node: Any = merged
    for part in (top, *rest):
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return True


def decode_engine_config(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Turn the engine's config (object values as JSON text) into plain values.

    ``pulumi config`` stores structured values as JSON strings; scalars stay strings.
    """
    out: dict[str, Any] = {}
    for k, v in raw.items():
        if isinstance(v, str) and v[:1] in "[{":
            try:
                out[k] = json.loads(v)
                continue
            except json.JSONDecodeError:
                pass
        out[k] = v
    return out


def encode_engine_config(config: Mapping[str, Any]) -> dict[str, str]:
    """The inverse of ``decode_engine_config``: what ``pulumi config`` would hand the program
    (Pulumi's config ``object.go``: scalars as text, objects as JSON; ``stackfile.reader.as_pulumi_reads``)."""
    out: dict[str, str] = {}
    for k, v in config.items():
        given = as_pulumi_reads(v)
        out[k] = given if isinstance(given, str) else json.dumps(given, allow_nan=False)
    return out


def parse(raw: Mapping[str, Any], stack: str, data_dir: Path = DATA_DIR) -> StackConfig:
    """Validate a stack's config mapping (keys as in the stack file, e.g. ``gpu-infra:cluster``),
    for a plan over the catalog in ``data_dir`` (default: the vendored one; ``--old-catalog``:
    an earlier one), whose GKE regions the location is checked against.

    Raises:
        ConfigErrors: with every problem found, each as ``<key path>: <reason>``.
    """
    issues = Issues()
    own: dict[str, Any] = {}
    providers: dict[str, Any] = {}
    for key, value in raw.items():
        ns, sep, name = str(key).partition(":")
        if ns == PROJECT and sep:
            if name in _PROJECT_KEYS:
                own[name] = value
            else:
                issues.add(shown(name)[1:-1], _unknown_own_key(name, value))
        elif (problem := _foreign_key(str(key))) is not None:
            issues.add(shown(str(key))[1:-1], problem)
        else:
            providers[str(key)] = value

    platform = own.get("platform")
    if platform is None:
        issues.add("platform", f"required; one of: {', '.join(PLATFORMS)}")
    elif platform not in PLATFORMS:
        issues.add("platform", f"{platform!r} is not one of: {', '.join(PLATFORMS)}")
    if "cluster" not in own:
        issues.add("cluster", "required (name, location)")
    if not isinstance(platform, str) or platform not in PLATFORMS:
        issues.raise_if_any()
        raise AssertionError("unreachable")

    # The stack's own platform's part only: each costs its import and pydantic schema build.
    part = platform_config(platform)
    cluster = (
        validate(part.cluster, own["cluster"], "cluster", issues) if "cluster" in own else None
    )
    pools = validate(list[part.pool], own.get("gpuPools", []), "gpuPools", issues)
    operator = validate(GpuOperatorSpec, own.get("gpuOperator", {}), "gpuOperator", issues)
    namespaces = validate(
        list[GpuNamespaceSpec], own.get("gpuNamespaces", []), "gpuNamespaces", issues
    )

    integrations = validate(IntegrationsSpec, own.get("integrations", {}), "integrations", issues)
    secrets = secret_refs({k: v for k, v in own.items() if k in SECRET_KEYS}, issues.add)
    region, zone, project = (
        part.locate(cluster, providers, issues, data_dir)
        if cluster is not None
        else (None, None, None)
    )
    if pools is not None:
        _check_pools_common(pools, issues)
    if cluster is not None:
        _check_cluster_common(cluster, issues)
    if namespaces is not None:
        _check_unique([n.name for n in namespaces], "gpuNamespaces", issues)
    if not issues:
        models = {"cluster": cluster, "gpuOperator": operator}
        check_inert(part.inert, own, {k: m for k, m in models.items() if m is not None}, issues)
    issues.raise_if_any()
    return StackConfig(
        stack=stack,
        platform=platform,  # type: ignore[arg-type]  # checked against PLATFORMS above
        region=region,
        zone=zone,
        project=project,
        cluster=cluster,
        pools=tuple(pools or ()),
        operator=operator or GpuOperatorSpec(),
        namespaces=tuple(namespaces or ()),
        integrations=integrations or IntegrationsSpec(),
        provider_config=providers,
        secrets=secrets,
    )


def parse_file(path: str | Path) -> StackConfig:
    """Load and parse a stack file (see ``parse``)."""
    name, raw = load_stack_file(path)
    return parse(raw, name)


# Provider namespaces whose keys this project reads or passes to its providers (Pulumi provider
# config: https://www.pulumi.com/docs/iac/concepts/config/#provider-configuration-options).
# The provider keys this project reads (for "did you mean" on a key missing its namespace).
_PROVIDER_KEYS = ("gcp:project", "gcp:region", "gcp:zone", "aws:region")
_PROVIDER_NAMESPACES = ("gcp", "aws", "kubernetes", "eks", "pulumi", "random", "tls", "command")


# Keys of a provider's own config that share a name with one of ours: the Kubernetes provider's
# `cluster` (https://www.pulumi.com/registry/packages/kubernetes/api-docs/provider/#inputs).
_PROVIDER_OWN_KEYS = {"kubernetes": ("cluster",)}


def _unknown_own_key(name: str, value: Any) -> str:
    """Why ``gpu-infra:<name>`` is not read. A bare key in the stack file arrives here too: Pulumi
    names it ``gpu-infra:<key>`` (``stackfile.reader.namespaced``)."""
    if closest(name, [PROJECT], cutoff=0.75) is not None and isinstance(value, dict):
        inner = [f"'{PROJECT}:{k}'" for k in value if k in _PROJECT_KEYS][:3]
        example = ", ".join(inner) or f"'{PROJECT}:platform'"
        return (
            "unknown key: a block of keys is not read, Pulumi config keys are flat "
            f"'namespace:key'; did you mean {example}?"
        )
    if hint := did_you_mean(name, _PROJECT_KEYS):
        return f"unknown key{hint}"
    providers = [f"'{k}'" for k in _PROVIDER_KEYS if k.split(":")[1] == name.lower()]
    if providers:
        return (
            f"unknown key: Pulumi reads a key without a namespace as '{PROJECT}:{name}'; the "
            f"provider's key is {' or '.join(providers)}"
        )
    return f"unknown key; allowed: {', '.join(_PROJECT_KEYS)}"


def _foreign_key(key: str) -> str | None:
    """Why a config key outside ``gpu-infra:`` would be silently ignored, or ``None`` if it is fine.

    Pulumi config keys are flat ``namespace:key`` (https://www.pulumi.com/docs/iac/concepts/config/);
    a misspelt namespace, another project's namespace, or one of our keys under a provider's
    namespace (``gcp:gpuPools``) reaches nobody. A key without a namespace cannot come from a
    stack file (Pulumi names it ``gpu-infra:<key>``) nor from the engine.
    """
    ns, sep, name = key.partition(":")
    own_like = closest(ns, [PROJECT], cutoff=0.75) is not None
    if not sep:
        return f"a config key has a namespace ('{PROJECT}:{key}' as Pulumi reads a bare key)"
    if ns in _PROVIDER_NAMESPACES:
        if name in _PROJECT_KEYS and name not in _PROVIDER_OWN_KEYS.get(ns, ()):
            return (
                f"'{name}' is a key of this project, not of the {ns} provider, which ignores it: "
                f"write '{PROJECT}:{name}' (or the bare '{name}')"
            )
        return None
    if own_like:
        return f"namespace '{ns}' is not this project's; did you mean '{PROJECT}:{name}'?"
    if name in _PROJECT_KEYS:
        return (
            f"'{ns}:' is another project's namespace and is not read; this project is "
            f"'{PROJECT}': did you mean '{PROJECT}:{name}'?"
        )
    return None


def _check_pools_common(pools: list[Any], issues: Issues) -> None:
    _check_unique([p.name for p in pools], "gpuPools", issues)
    for i, p in enumerate(pools):
        if p.min_nodes > p.max_nodes:
            issues.add(
                join_path("gpuPools", i, "minNodes"),
                f"{p.min_nodes} is above maxNodes {p.max_nodes}",
            )
        if p.warm > p.max_nodes:
            # Each placeholder holds its own node (infra.core.warm): one beyond maxNodes would
            # stay Pending for ever, a warm node the autoscaler may never add.
            issues.add(
                join_path("gpuPools", i, "warm"),
                f"{p.warm} is above maxNodes {p.max_nodes}: each warm placeholder holds a node "
                "of the pool, so warm may be at most maxNodes",
            )
        nodes = p.listed_nodes()  # on-prem pools list the nodes they already have
        if nodes and len(nodes) > p.max_nodes:
            issues.add(
                join_path("gpuPools", i, "nodes"),
                f"lists {len(nodes)} nodes, more than maxNodes {p.max_nodes}",
            )
        if nodes:
            _check_unique_values(nodes, join_path("gpuPools", i, "nodes"), issues)


def _check_cluster_common(cluster: Any, issues: Issues) -> None:
    """The system pool obeys the GPU pools' rules (min <= max; its machine type is typed)."""
    system = cluster.system_pool_range()
    if system is not None and system[0] > system[1]:
        issues.add("cluster.systemPool.minNodes", f"{system[0]} is above maxNodes {system[1]}")


def _repeats(values: Sequence[str]) -> Iterator[tuple[int, str]]:
    """``(index, value)`` of each value an earlier entry already has."""
    seen: set[str] = set()
    for i, v in enumerate(values):
        if v in seen:
            yield i, v
        seen.add(v)


def _check_unique_values(values: Sequence[str], path: str, issues: Issues) -> None:
    for i, v in _repeats(values):
        issues.add(join_path(path, i), f"{shown(v)} is listed twice")


def _check_unique(names: list[str], path: str, issues: Issues) -> None:
    for i, n in _repeats(names):
        issues.add(join_path(path, i, "name"), f"{n!r} is used by an earlier entry")
