"""Check registered resource inputs against the provider SDKs' own input types.

A property the SDK does not know (a typo in a raw dict, a field from another provider version) is
reported with its path, e.g. ``nodeConfig.guestAccelerators[0].gpuDriverInstalationConfig``.
Used by the stack-test harness and by ``python -m infra.plan --strict``.
"""

from __future__ import annotations

import functools
import importlib
import types
import typing
from typing import Any

from pulumi import _types as pulumi_types

_PACKAGES = {
    "gcp": "pulumi_gcp",
    "aws": "pulumi_aws",
    "kubernetes": "pulumi_kubernetes",
    "eks": "pulumi_eks",
}


@functools.cache
def args_class(token: str) -> type | None:
    """The SDK's ``*Args`` input type for a resource type token, or ``None`` if not an SDK resource.

    ``gcp:container/nodePool:NodePool`` -> ``pulumi_gcp.container.NodePoolArgs``;
    ``kubernetes:core/v1:Namespace`` -> ``pulumi_kubernetes.core.v1.NamespaceInitArgs``;
    ``pulumi:providers:kubernetes`` -> ``pulumi_kubernetes.ProviderArgs``.
    """
    pkg, _, rest = token.partition(":")
    if pkg == "pulumi" and rest.startswith("providers:"):
        module_name, cls_name = _PACKAGES.get(rest.split(":", 1)[1], ""), "Provider"
    else:
        mod, _, cls_name = rest.partition(":")
        base = _PACKAGES.get(pkg)
        if base is None or not cls_name:
            return None
        if pkg == "kubernetes":
            group, _, version = mod.partition("/")
            parts = [group.split(".")[0], version] if version else [group.split(".")[0]]
            module_name = ".".join([base, *parts])
        elif mod == "index":
            module_name = base
        else:
            module_name = f"{base}.{mod.split('/')[0]}"
    if not module_name:
        return None
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return None
    for candidate in (f"{cls_name}InitArgs", f"{cls_name}Args"):
        cls = getattr(module, candidate, None)
        if isinstance(cls, type) and pulumi_types.is_input_type(cls):
            return cls
    return None


def unknown_properties(token: str, inputs: dict[str, Any]) -> list[str]:
    """Paths of every input property that the SDK's types for ``token`` do not declare.

    Raises:
        LookupError: ``token`` is not a resource of a known provider SDK.
    """
    cls = args_class(token)
    if cls is None:
        raise LookupError(f"no provider SDK input type for {token}")
    out: list[str] = []
    _walk(inputs, cls, "", out)
    return out


@functools.cache
def _fields(cls: type) -> dict[str, Any]:
    return dict(pulumi_types.input_type_types(cls))


def _walk(value: Any, tp: Any, path: str, out: list[str]) -> None:
    if value is None:
        return
    target = _input_class(tp)
    if target is not None and isinstance(value, dict):
        fields = _fields(target)
        for key, sub in value.items():
            if key not in fields:
                out.append(f"{path}.{key}" if path else key)
            else:
                _walk(sub, fields[key], f"{path}.{key}" if path else key, out)
        return
    item = _element_type(tp, list)
    if item is not None and isinstance(value, list):
        for i, sub in enumerate(value):
            _walk(sub, item, f"{path}[{i}]", out)
        return
    val = _element_type(tp, dict)
    if val is not None and isinstance(value, dict):
        for key, sub in value.items():
            _walk(sub, val, f"{path}.{key}", out)


def _members(tp: Any) -> list[Any]:
    """Flatten Optional/Union/Input/Awaitable/Output wrappers into the candidate types."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return [m for a in typing.get_args(tp) for m in _members(a)]
    return [tp]


def _input_class(tp: Any) -> type | None:
    for m in _members(tp):
        if isinstance(m, type) and pulumi_types.is_input_type(m):
            return m
    return None


def _element_type(tp: Any, kind: type) -> Any | None:
    """The element type of a Sequence (kind=list) or the value type of a Mapping (kind=dict)."""
    import collections.abc as abc

    seqs = (list, abc.Sequence) if kind is list else (dict, abc.Mapping)
    for m in _members(tp):
        origin = typing.get_origin(m)
        if origin in seqs:
            args = typing.get_args(m)
            if args:
                return args[-1]
    return None
