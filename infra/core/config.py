"""Parse a stack's config (``stacks/Pulumi.<stack>.yaml``) into a typed, validated ``StackConfig``.

The same function serves ``pulumi up`` (config from the engine), ``python -m infra.plan`` and
``python -m quota.check`` (config from the stack file), so all three agree on what a stack means.
Every problem is reported at once as ``<key path>: <reason>``.
"""

from __future__ import annotations

import functools
import json
import re
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import yaml
from pydantic import BaseModel, TypeAdapter, ValidationError

from infra.core.config_eks import EksClusterSpec, EksPoolSpec
from infra.core.config_gke import GkeClusterSpec, GkePoolSpec
from infra.core.config_kubernetes import KubernetesClusterSpec, KubernetesPoolSpec
from infra.core.config_operator import GpuNamespaceSpec, GpuOperatorSpec, IntegrationsSpec
from infra.core.errors import ConfigIssue, Issues, join_path

PROJECT = "gpu-infra"
# libyaml's safe loader when PyYAML was built with it (it is in the PyPI wheels), else pure Python.
SAFE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
Platform = Literal["gke", "eks", "kubernetes"]
PLATFORMS: tuple[Platform, ...] = ("gke", "eks", "kubernetes")

_SCHEMAS: dict[str, tuple[type[BaseModel], type[BaseModel]]] = {
    "gke": (GkeClusterSpec, GkePoolSpec),
    "eks": (EksClusterSpec, EksPoolSpec),
    "kubernetes": (KubernetesClusterSpec, KubernetesPoolSpec),
}

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
    platform: Platform
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
    if m := _GCP_ZONE.match(location):
        return m.group(1), location
    if _GCP_REGION.match(location):
        return location, None
    return None


def load_stack_file(path: str | Path) -> tuple[str, dict[str, Any]]:
    """Read a stack file; returns (stack name, its ``config:`` mapping).

    Raises:
        ConfigErrors: the file is missing, not YAML, or has no mapping under ``config``.
    """
    p = Path(path)
    name = p.name.removeprefix("Pulumi.").removesuffix(".yaml").removesuffix(".yml")
    issues = Issues()
    try:
        doc = yaml.load(p.read_text(encoding="utf-8"), Loader=SAFE_LOADER)
    except OSError as e:
        issues.add(str(p), f"cannot read the stack file: {e.strerror}")
        issues.raise_if_any()
        raise AssertionError from e  # unreachable
    except yaml.YAMLError as e:
        issues.add(str(p), f"not valid YAML: {e}".replace("\n", " "))
        issues.raise_if_any()
        raise AssertionError from e  # unreachable
    if doc is None:
        doc = {}
    if not isinstance(doc, dict) or not isinstance(doc.get("config", {}), dict):
        issues.add("config", "the stack file must be a mapping with a 'config:' mapping")
        issues.raise_if_any()
    return name, dict(doc.get("config") or {})


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
    """The inverse of ``decode_engine_config``: what ``pulumi config`` would hand the program."""
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in config.items()}


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
        if not sep:
            issues.add(str(key), f"config keys are namespaced; use '{PROJECT}:{key}'")
        elif ns == PROJECT:
            if name in _PROJECT_KEYS:
                own[name] = value
            else:
                issues.add(name, f"unknown key; allowed: {', '.join(_PROJECT_KEYS)}")
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

    cluster_model, pool_model = _SCHEMAS[platform]
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
    if namespaces is not None:
        _check_unique([n.name for n in namespaces], "gpuNamespaces", issues)
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


def _location(
    platform: str, cluster: Any, providers: Mapping[str, Any], issues: Issues
) -> tuple[str | None, str | None, str | None]:
    """Derive (region, zone, project) from ``cluster.location`` and check provider keys agree."""
    if cluster is None:
        return None, None, None
    loc: str = cluster.location
    if platform == "gke":
        project = providers.get("gcp:project")
        if not isinstance(project, str) or not project:
            issues.add("gcp:project", "required on gke stacks (the project the cluster lives in)")
        split = gcp_region_of(loc)
        if split is None:
            issues.add(
                "cluster.location",
                f"{loc!r} is neither a GCP region (us-central1) nor a zone (us-central1-a)",
            )
            return None, None, project if isinstance(project, str) else None
        region, zone = split
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
        if not _AWS_REGION.match(loc):
            issues.add("cluster.location", f"{loc!r} is not an AWS region such as us-west-2")
            return None, None, None
        given = providers.get("aws:region")
        if given is None:
            issues.add("aws:region", f"required on eks stacks; set it to {loc!r}")
        elif given != loc:
            issues.add(
                "aws:region",
                f"{given!r} disagrees with cluster.location {loc!r}; "
                "quotas and node groups must live in one region",
            )
        return loc, None, None
    return None, None, None


def _check_pools_common(pools: list[Any], issues: Issues) -> None:
    _check_unique([p.name for p in pools], "gpuPools", issues)
    for i, p in enumerate(pools):
        if p.min_nodes > p.max_nodes:
            issues.add(
                join_path("gpuPools", i, "minNodes"),
                f"{p.min_nodes} is above maxNodes {p.max_nodes}",
            )


def _check_unique(names: list[str], path: str, issues: Issues) -> None:
    seen: set[str] = set()
    for i, n in enumerate(names):
        if n in seen:
            issues.add(join_path(path, i, "name"), f"{n!r} is used by an earlier entry")
        seen.add(n)


@functools.cache
def _adapter(schema: Any) -> TypeAdapter[Any]:
    # Building a validator is the expensive part; each schema is built once per process.
    return TypeAdapter(schema)


def _validate(schema: Any, value: Any, root: str, issues: Issues) -> Any:
    """Validate ``value`` against ``schema``; on failure record every error under ``root``."""
    try:
        return _adapter(schema).validate_python(value)
    except ValidationError as e:
        issues.extend(_issues_from(e, schema, root))
        return None


def _issues_from(error: ValidationError, schema: Any, root: str) -> list[ConfigIssue]:
    out: list[ConfigIssue] = []
    for err in error.errors(include_url=False):
        loc = [p for p in err["loc"] if not _is_union_tag(p)]
        path = join_path(root, *loc)
        kind = err["type"]
        value = err.get("input")
        if kind == "extra_forbidden":
            allowed = _allowed_keys(schema, loc[:-1])
            hint = f"; allowed: {', '.join(allowed)}" if allowed else ""
            reason = f"unknown key{hint}"
        elif kind == "missing":
            reason = "required"
        elif kind == "literal_error":
            expected = err.get("ctx", {}).get("expected", "")
            reason = f"{value!r} is not allowed; expected {expected}"
        elif kind in ("value_error", "assertion_error"):
            reason = (
                str(err["msg"]).removeprefix("Value error, ").removeprefix("Assertion failed, ")
            )
        else:
            reason = f"{err['msg'][0].lower()}{err['msg'][1:]} (got {value!r})"
        out.append(ConfigIssue(path, reason))
    return out


def _is_union_tag(part: Any) -> bool:
    # pydantic puts the union member's type name into loc ("str", "list[str]", "GkeSharingSpec").
    return isinstance(part, str) and (
        part in ("str", "int", "bool", "list[str]", "dict[str,str]") or part[:1].isupper()
    )


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
