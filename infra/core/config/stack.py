"""Parse a stack's config (``stacks/Pulumi.<stack>.yaml``) into a typed, validated ``StackConfig``.

The same function serves ``pulumi up`` (config from the engine), ``python -m infra.plan`` and
``python -m quota.check`` (config from the stack file), so all three agree on what a stack means.
Every problem is reported at once as ``<key path>: <reason>``.
"""

from __future__ import annotations

import copy
import functools
import json
import re
import types
import typing
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import yaml
from pydantic import BaseModel, TypeAdapter, ValidationError

from infra.core import rules
from infra.core.config.operator import GpuNamespaceSpec, GpuOperatorSpec, IntegrationsSpec
from infra.core.errors import (
    ConfigIssue,
    Issues,
    RuleError,
    closest,
    did_you_mean,
    join_path,
    shown,
)
from infra.core.stackfile.project import read_project_config
from infra.core.stackfile.reader import as_pulumi_reads, read_stack_file

PROJECT = "gpu-infra"
# libyaml's safe loader when PyYAML was built with it (it is in the PyPI wheels), else pure Python.
SAFE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
PlatformName = Literal["gke", "eks", "kubernetes"]
PLATFORMS: tuple[PlatformName, ...] = ("gke", "eks", "kubernetes")
# What the config reference calls each platform: (its section, the prefix of its blocks' headings).
TITLES: dict[PlatformName, tuple[str, str]] = {
    "gke": ("GKE", "GKE"),
    "eks": ("EKS", "EKS"),
    "kubernetes": ("Existing clusters", "Kubernetes"),
}


def schemas(platform: str) -> tuple[type[BaseModel], type[BaseModel]]:
    """The (cluster, pool) models of one platform, imported only for a stack of that platform.

    Each platform's models cost their import and pydantic schema build (EKS's ~30 ms); a GKE
    plan has no use for the EKS ones.
    """
    if platform == "gke":
        from infra.core.config.gke import GkeClusterSpec, GkePoolSpec

        return GkeClusterSpec, GkePoolSpec
    if platform == "eks":
        from infra.core.config.eks import EksClusterSpec, EksPoolSpec

        return EksClusterSpec, EksPoolSpec
    from infra.core.config.kubernetes import KubernetesClusterSpec, KubernetesPoolSpec

    return KubernetesClusterSpec, KubernetesPoolSpec


# The keys this project reads under gpu-infra:.
_PROJECT_KEYS = ("platform", "cluster", "gpuPools", "gpuOperator", "gpuNamespaces", "integrations")

# Location shapes: GCP regions/zones and AWS regions (the provider keys that must agree with them).
_GCP_REGION = re.compile(r"^[a-z]+-[a-z]+[0-9]+$")
_GCP_ZONE = re.compile(r"^([a-z]+-[a-z]+[0-9]+)-[a-z]$")
_AWS_REGION = re.compile(r"^[a-z]{2}(-gov)?-[a-z]+-[0-9]$")


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


def gcp_region_of(location: str) -> tuple[str, str | None] | None:
    """Split a GCP location into (region, zone-or-None); ``None`` if it is neither.

    >>> gcp_region_of("us-central1-a")
    ('us-central1', 'us-central1-a')
    """
    if m := _GCP_ZONE.fullmatch(location):
        return m.group(1), location
    if _GCP_REGION.fullmatch(location):
        return location, None
    return None


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
    doc = read_stack_file(p)
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


def parse(raw: Mapping[str, Any], stack: str) -> StackConfig:
    """Validate a stack's config mapping (keys as in the stack file, e.g. ``gpu-infra:cluster``).

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
                hint = did_you_mean(name, _PROJECT_KEYS) or f"; allowed: {', '.join(_PROJECT_KEYS)}"
                issues.add(shown(name)[1:-1], f"unknown key{hint}")
        elif (problem := _foreign_key(str(key), value)) is not None:
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

    cluster_model, pool_model = schemas(platform)
    cluster = (
        _validate(cluster_model, own["cluster"], "cluster", issues) if "cluster" in own else None
    )
    pools = _validate(list[pool_model], own.get("gpuPools", []), "gpuPools", issues)
    operator = _validate(GpuOperatorSpec, own.get("gpuOperator", {}), "gpuOperator", issues)
    namespaces = _validate(
        list[GpuNamespaceSpec], own.get("gpuNamespaces", []), "gpuNamespaces", issues
    )

    integrations = _validate(IntegrationsSpec, own.get("integrations", {}), "integrations", issues)
    region, zone, project = _location(platform, cluster, providers, issues)
    if pools is not None:
        _check_pools_common(pools, issues)
    if cluster is not None:
        _check_cluster_common(cluster, issues)
    if namespaces is not None:
        _check_unique([n.name for n in namespaces], "gpuNamespaces", issues)
    if not issues:
        _check_inert(platform, own, issues)
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


def _foreign_key(key: str, value: Any) -> str | None:
    """Why a config key outside ``gpu-infra:`` would be silently ignored, or ``None`` if it is fine.

    Pulumi config keys are flat ``namespace:key`` (https://www.pulumi.com/docs/iac/concepts/config/);
    a block of keys, a misspelt namespace or another project's namespace reaches nobody.
    """
    ns, sep, name = key.partition(":")
    own_like = closest(ns, [PROJECT], cutoff=0.75) is not None
    if not sep:
        if own_like and isinstance(value, dict):
            inner = [f"'{PROJECT}:{k}'" for k in value if k in _PROJECT_KEYS][:3]
            example = ", ".join(inner) or f"'{PROJECT}:platform'"
            return (
                "a block of keys is not read: Pulumi config keys are flat 'namespace:key'; "
                f"did you mean {example}?"
            )
        if guess := closest(key, _PROJECT_KEYS):
            return f"config keys are namespaced; did you mean '{PROJECT}:{guess}'?"
        if hint := did_you_mean(key.replace("-", ":", 1), _PROVIDER_KEYS, cutoff=0.8):
            return f"config keys are namespaced{hint}"
        return f"config keys are namespaced ('{PROJECT}:<key>', 'gcp:<key>', 'aws:<key>')"
    if ns in _PROVIDER_NAMESPACES:
        return None
    if own_like:
        return f"namespace '{ns}' is not this project's; did you mean '{PROJECT}:{name}'?"
    if name in _PROJECT_KEYS:
        return (
            f"'{ns}:' is another project's namespace and is not read; this project is "
            f"'{PROJECT}': did you mean '{PROJECT}:{name}'?"
        )
    return None


def _location(
    platform: str, cluster: Any, providers: Mapping[str, Any], issues: Issues
) -> tuple[str | None, str | None, str | None]:
    """Derive (region, zone, project) from ``cluster.location`` and check provider keys agree."""
    if cluster is None:
        return None, None, None
    loc: str = cluster.location
    if platform == "gke":
        project = providers.get("gcp:project")
        if project is None or project == "":
            hint = did_you_mean("gcp:project", [str(k) for k in providers], cutoff=0.8)
            issues.add(
                "gcp:project", f"required on gke stacks (the project the cluster lives in){hint}"
            )
        else:
            try:
                rules.check_gcp_project_id(project)
            except ValueError as e:
                issues.add("gcp:project", str(e))
                project = None
        split = gcp_region_of(loc)
        if split is None:
            issues.add(
                "cluster.location",
                f"{loc!r} is neither a GCP region (us-central1) nor a zone (us-central1-a)",
            )
            return None, None, project if isinstance(project, str) else None
        region, zone = split
        if not cluster.existing:  # an existing cluster is wherever it is
            _check_gcp_location(region, zone, issues)
        given = providers.get("gcp:region")
        if given is not None and given != region:
            issues.add(
                "gcp:region",
                f"{given!r} disagrees with cluster.location {loc!r} (region {region}); "
                "quotas and pools must live in one region",
            )
        gzone = providers.get("gcp:zone")
        if gzone is not None and (not isinstance(gzone, str) or not gzone.startswith(region + "-")):
            issues.add("gcp:zone", f"{gzone!r} is not a zone of region {region}")
        return region, zone, project if isinstance(project, str) else None
    if platform == "eks":
        if not _AWS_REGION.fullmatch(loc):
            issues.add("cluster.location", f"{loc!r} is not an AWS region such as us-west-2")
            return None, None, None
        given = providers.get("aws:region")
        if given is None:
            hint = did_you_mean("aws:region", [str(k) for k in providers], cutoff=0.8)
            issues.add("aws:region", f"required on eks stacks; set it to {loc!r}{hint}")
        elif given != loc:
            issues.add(
                "aws:region",
                f"{given!r} disagrees with cluster.location {loc!r}; "
                "quotas and node groups must live in one region",
            )
        return loc, None, None
    return None, None, None


@functools.cache
def _gcp_gpu_zones() -> dict[str, tuple[str, ...]]:
    """Region -> zones with any GPU, from the catalog (zones and regions that exist for us)."""
    from infra.core.catalog.vendored import Catalog  # the catalog only when a GKE stack needs it

    catalog = Catalog.load()
    out: dict[str, set[str]] = {}
    for acc in catalog.gcp_accelerators():
        for region in catalog.gcp_regions_offering(acc):
            out.setdefault(region, set()).update(catalog.gcp_zones_offering(acc, region))
    return {r: tuple(sorted(z)) for r, z in sorted(out.items())}


def _check_gcp_location(region: str, zone: str | None, issues: Issues) -> None:
    """The region (and zone) must be one the catalog lists with GPUs (gcp_accelerators.csv)."""
    zones = _gcp_gpu_zones()
    if region not in zones:
        hint = did_you_mean(region, list(zones), cutoff=0.8)
        issues.add(
            "cluster.location",
            f"{shown(region)} is not a GCP region with GPUs in the catalog{hint}",
        )
    elif zone is not None and zone not in zones[region]:
        offered = ", ".join(zones[region])
        issues.add(
            "cluster.location",
            f"{shown(zone)} is not a zone of {region} with GPUs in the catalog (those: {offered})",
        )


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
        nodes = getattr(p, "nodes", None)  # on-prem pools list the nodes they already have
        if nodes and len(nodes) > p.max_nodes:
            issues.add(
                join_path("gpuPools", i, "nodes"),
                f"lists {len(nodes)} nodes, more than maxNodes {p.max_nodes}",
            )
        if nodes:
            _check_unique_values(nodes, join_path("gpuPools", i, "nodes"), issues)


def _check_cluster_common(cluster: Any, issues: Issues) -> None:
    """The system pool obeys the GPU pools' rules (min <= max; its machine type is typed)."""
    system = getattr(cluster, "system_pool", None)
    if system is not None and system.min_nodes > system.max_nodes:
        issues.add(
            "cluster.systemPool.minNodes",
            f"{system.min_nodes} is above maxNodes {system.max_nodes}",
        )


# Keys that would not apply under another key's value: (platforms, block, condition key, value
# that makes them inert ("*" = any value given), the inert keys, why). Each row is what the planner
# named does: it never reads those keys in that case.
_INERT: tuple[tuple[tuple[str, ...], str, str, Any, tuple[str, ...], str], ...] = (
    # infra.core.operator.planner.plan_operator returns before reading them.
    (
        PLATFORMS,
        "gpuOperator",
        "enabled",
        False,
        ("version", "preset", "namespace", "toolkitEnv", "values", "timeout"),
        "the GPU Operator is not installed",
    ),
    # gke.planner / eks.system.plan_system: the system pool is planned for created clusters only.
    (
        ("gke", "eks"),
        "cluster",
        "existing",
        True,
        ("systemPool",),
        "an existing cluster keeps its own system nodes",
    ),
    # infra/components/gke.py _create/_cluster_args: gcp.container.Cluster arguments only. Not
    # releaseChannel: gke.rules.auto_upgrade reads it for pools added to an existing cluster.
    (
        ("gke",),
        "cluster",
        "existing",
        True,
        ("deletionProtection", "dataplaneV2", "dcgmMetrics", "maintenance"),
        "they are settings of a cluster this stack creates",
    ),
    # infra/components/eks.py: access entries and endpoint settings are eks.Cluster arguments.
    (
        ("eks",),
        "cluster",
        "existing",
        True,
        ("endpointPublicAccess", "publicAccessCidrs", "accessEntries"),
        "they are settings of a cluster this stack creates",
    ),
    # eks.network.plan_network: with a given VPC its subnets are used, the CIDR never read.
    (("eks",), "cluster.vpc", "id", "*", ("cidr",), "the given VPC keeps its own address range"),
    # eks.planner: the autoscaler's values are built only when it is enabled.
    (
        ("eks",),
        "cluster.autoscaler",
        "enabled",
        False,
        ("expander", "scaleDownGpuUtilizationThreshold", "scaleDownUnneededTime"),
        "no cluster-autoscaler is installed",
    ),
    # eks.planner: with karpenter no cluster-autoscaler is planned; these are its flags
    # (--expander, --scale-down-gpu-utilization-threshold). scaleDownUnneededTime stays: it is
    # each NodePool's disruption.consolidateAfter (eks.karpenter.plan).
    (
        ("eks",),
        "cluster.autoscaler",
        "kind",
        "karpenter",
        ("expander", "scaleDownGpuUtilizationThreshold"),
        "they are cluster-autoscaler flags (Karpenter scales down by its NodePools' disruption "
        "settings)",
    ),
    # eks.karpenter.pools: terminationGracePeriod is a NodePool field; node groups have none.
    (
        ("eks",),
        "cluster.autoscaler",
        "kind",
        "cluster-autoscaler",
        ("terminationGracePeriod",),
        "it is a Karpenter NodePool setting",
    ),
)


def _check_inert(platform: str, own: Mapping[str, Any], issues: Issues) -> None:
    """A key that would not apply with the other keys as given is an error naming both."""
    for platforms, block, when, value, keys, why in _INERT:
        if platform not in platforms:
            continue
        node: Any = own
        for part in block.split("."):
            node = node.get(part) if isinstance(node, Mapping) else None
        if not isinstance(node, Mapping) or when not in node:
            continue
        if value != "*" and node[when] != value:
            continue
        for key in keys:
            if key in node:
                shown_when = "given" if value == "*" else f"{json.dumps(node[when])}"
                issues.add(
                    join_path(block, key),
                    f"would not apply: {block}.{when} is {shown_when} and {why}; remove it",
                )


def _repeats(values: list[str]) -> Iterator[tuple[int, str]]:
    """``(index, value)`` of each value an earlier entry already has."""
    seen: set[str] = set()
    for i, v in enumerate(values):
        if v in seen:
            yield i, v
        seen.add(v)


def _check_unique_values(values: list[str], path: str, issues: Issues) -> None:
    for i, v in _repeats(values):
        issues.add(join_path(path, i), f"{shown(v)} is listed twice")


def _check_unique(names: list[str], path: str, issues: Issues) -> None:
    for i, n in _repeats(names):
        issues.add(join_path(path, i, "name"), f"{n!r} is used by an earlier entry")


@functools.cache
def _adapter(schema: Any) -> TypeAdapter[Any]:
    # Building a validator is the expensive part; each schema is built once per process.
    return TypeAdapter(schema)


def _validate(schema: Any, value: Any, root: str, issues: Issues) -> Any:
    """Validate ``value`` against ``schema``; on failure record every error under ``root``."""
    try:
        # Keys are camelCase in the stack file; a snake_case field name is an unknown key there.
        return _adapter(schema).validate_python(value, by_name=False)
    except ValidationError as e:
        issues.extend(_issues_from(e, schema, root))
        return None


def _issues_from(error: ValidationError, schema: Any, root: str) -> list[ConfigIssue]:
    """One ``<key path>: <reason>`` per problem; a union's per-member type errors become one."""
    by_path: dict[str, list[str]] = {}
    type_errors: dict[str, tuple[list[str], Any]] = {}
    for err in error.errors(include_url=False):
        raw_loc = list(err["loc"])
        loc = [p for p in raw_loc if not _is_union_tag(p)]
        ctx = err.get("ctx") or {}
        cause = ctx.get("error")
        if isinstance(cause, RuleError):
            loc += list(cause.at)
        path = join_path(root, *loc)
        kind = err["type"]
        value = err.get("input")
        if kind == "extra_forbidden":
            allowed = _allowed_keys(schema, loc[:-1])
            hint = did_you_mean(loc[-1], allowed) if allowed else ""
            listed = f"; allowed: {', '.join(allowed)}" if allowed else ""
            reason = f"unknown key{hint}{listed}"
        elif kind == "missing":
            if isinstance(value, dict) and _snake(str(loc[-1])) in value:
                continue  # the snake_case spelling is reported as an unknown key with its fix
            reason = "required"
        elif kind == "literal_error":
            expected = str(ctx.get("expected", ""))
            choices = re.findall(r"'([^']*)'", expected)
            hint = did_you_mean(value, choices) if choices else ""
            reason = f"{shown(value)} is not allowed; expected {expected}{hint}"
        elif (hint := _pulumi_string_hint(kind, value)) is not None:
            reason = hint
        elif kind in ("value_error", "assertion_error"):
            reason = str(cause) if cause is not None else str(err["msg"])
            reason = reason.removeprefix("Value error, ").removeprefix("Assertion failed, ")
        else:
            msg = str(err["msg"])
            if len(raw_loc) != len(loc) and msg.startswith("Input should be "):
                if (hint := _pulumi_string_hint(kind, value)) is not None:
                    by_path.setdefault(path, []).append(hint)
                    continue
                # a union member's type error: merged below into one line per path
                type_errors.setdefault(path, ([], value))[0].append(
                    msg.removeprefix("Input should be ")
                )
                continue
            reason = f"{msg[0].lower()}{msg[1:]} (got {shown(value)})"
        by_path.setdefault(path, []).append(reason)
    for path, (wants, value) in type_errors.items():
        if path in by_path:
            continue  # a member got further than a type error: its message is the useful one
        alts = list(dict.fromkeys(wants))
        joined = alts[0] if len(alts) == 1 else f"{', '.join(alts[:-1])} or {alts[-1]}"
        by_path[path] = [f"input should be {joined} (got {shown(value)})"]
    return [ConfigIssue(path, r) for path, reasons in by_path.items() for r in reasons]


# YAML 1.1 booleans that Pulumi's reader (yaml.v3, YAML 1.2 core schema: resolve.go resolveMapList
# holds true/True/TRUE/false/False/FALSE only) hands the program as strings.
_YAML11_TRUE = frozenset(w for b in ("yes", "on", "y") for w in (b, b.title(), b.upper()))
_YAML11_FALSE = frozenset(w for b in ("no", "off", "n") for w in (b, b.title(), b.upper()))


def _pulumi_string_hint(kind: str, value: Any) -> str | None:
    """A boolean key given ``yes``/``off``: say Pulumi reads a string (not a type error)."""
    if kind != "bool_type" or not isinstance(value, str):
        return None
    if value in _YAML11_TRUE or value in _YAML11_FALSE:
        meant = "true" if value in _YAML11_TRUE else "false"
        return (
            f"{shown(value)} is a string to Pulumi, not a boolean: its YAML 1.2 reader takes only "
            f"true and false as booleans (yes/no/on/off stay strings); write {meant}"
        )
    return None


def _snake(camel: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", camel).lower()


def _is_union_tag(part: Any) -> bool:
    """pydantic puts a union member's name into ``loc`` (``str``, ``list[str]``, a model's class
    name, ``function-after[...]``) and ``[key]`` for a dict key's own error; user keys are kept."""
    if not isinstance(part, str):
        return False
    return (
        part in ("str", "int", "bool", "float", "list[str]", "dict[str,str]", "[key]")
        or part.startswith(("function-", "list[", "dict[", "json-or-python["))
        or part in _model_names()
    )


@functools.cache
def _model_names() -> frozenset[str]:
    seen: set[str] = set()
    todo: list[type] = [BaseModel]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            if sub.__name__ not in seen:
                seen.add(sub.__name__)
                todo.append(sub)
    return frozenset(seen)


def _allowed_keys(schema: Any, loc: list[Any]) -> list[str]:
    """The camelCase keys the model at ``loc`` accepts (for 'unknown key' hints)."""
    current: Any = schema
    for part in [*loc, None]:
        current = _unwrap(current)
        if part is None:
            break
        if isinstance(part, int):
            continue
        if isinstance(current, type) and issubclass(current, BaseModel):
            fields = current.model_fields
            match = next((f for n, f in fields.items() if (f.alias or n) == part), None)
            if match is None:
                return []
            current = match.annotation
        else:
            return []
    if isinstance(current, type) and issubclass(current, BaseModel):
        return [f.alias or n for n, f in current.model_fields.items()]
    return []


def _unwrap(tp: Any) -> Any:
    """Strip Optional/list/Annotated wrappers down to a model class when there is exactly one."""
    while True:
        origin = get_origin(tp)
        if origin is typing.Annotated or origin in (list, tuple):
            tp = get_args(tp)[0]
        elif origin in (typing.Union, types.UnionType):
            models = [
                a
                for a in get_args(tp)
                if isinstance(_unwrap(a), type) and issubclass(_unwrap(a), BaseModel)
            ]
            if len(models) != 1:
                return tp
            tp = models[0]
        else:
            return tp
