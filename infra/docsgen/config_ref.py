"""The config reference, generated from the stack-config schema (``infra.core.config``).

Each key's path, type, allowed values, bounds, default and field rule come from the pydantic
models themselves; what the key does is its ``Field(description=...)``. The few keys the schema
does not model (provider keys, the top-level ``gpu-infra:`` blocks) are listed in ``TOP_LEVEL``,
which a test ties to the keys the parser reads.
"""

from __future__ import annotations

import functools
import json
import re
import textwrap
import types
import typing
from collections.abc import Iterator
from typing import Any, Literal, get_args, get_origin

from pydantic import AfterValidator, BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from infra.core.config.secrets import SECRET_KEYS

WIDTH = 100

# Keys outside the models: (key, type, what it does). Read by infra.core.config.stack.parse.
TOP_LEVEL: tuple[tuple[str, str, str], ...] = (
    ("gpu-infra:platform", "", "Required: which platform the stack runs on."),
    (
        "gpu-infra:cluster",
        "object",
        "Required: the platform's cluster block (`name`, `location`, ...), below per platform.",
    ),
    ("gpu-infra:gpuPools", "list of object", "The platform's GPU pools, in order."),
    ("gpu-infra:gpuOperator", "object", "The NVIDIA GPU Operator release."),
    ("gpu-infra:gpuNamespaces", "list of object", "Namespaces with a GPU ResourceQuota."),
    ("gpu-infra:integrations", "object", "Settings of the generated workload integrations."),
    (
        "gcp:project",
        "string",
        "GKE: required; the project the cluster lives in, a project ID (6-30 lowercase "
        "letters, digits, `-`), not its name or number.",
    ),
    *((f"gpu-infra:{k}", "Pulumi secret", why) for k, why in SECRET_KEYS.items()),
    ("gcp:region", "string", "GKE: optional; must agree with `cluster.location`'s region."),
    ("gcp:zone", "string", "GKE: optional; a zone of that region."),
    ("aws:region", "string", "EKS: required; must equal `cluster.location`."),
)

_SCALARS = {bool: "boolean", int: "integer", float: "number", str: "string", Any: "any value"}


def _md(text: str) -> str:
    """A docstring's reStructuredText literals as Markdown ones."""
    return text.replace("``", "`")


def _rule_text(meta: object) -> str | None:
    """The first line of the rule an ``Annotated`` type runs (``infra.core.rules.check_*``)."""
    if isinstance(meta, AfterValidator):
        doc = getattr(meta.func, "__doc__", None) or ""
        first = doc.strip().split("\n\n")[0]
        return _md(" ".join(first.split())) or None
    return None


def type_text(tp: Any) -> str:
    """``tp`` as a reader would name it: ``list of string``, `` `a` | `b` ``, ``object``."""
    origin = get_origin(tp)
    if origin is typing.Annotated:
        return type_text(get_args(tp)[0])
    if origin is Literal:
        return " | ".join(f"`{v}`" for v in get_args(tp))
    if origin in (typing.Union, types.UnionType):
        members = [a for a in get_args(tp) if a is not type(None)]
        literals = [v for a in members if get_origin(a) is Literal for v in get_args(a)]
        if len(literals) == len(members) or all(get_origin(a) is Literal for a in members):
            return " | ".join(f"`{v}`" for v in literals)
        return " or ".join(type_text(a) for a in members)
    if origin is list:
        return f"list of {type_text(get_args(tp)[0])}"
    if origin is dict:
        key, value = get_args(tp)
        return f"mapping of {type_text(key)} to {type_text(value)}"
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return "object"
    return _SCALARS.get(tp, getattr(tp, "__name__", str(tp)))


def _nested_rules(tp: Any) -> list[str]:
    """Rules of ``Annotated`` types inside ``tp`` (``list[AzId]``, ``dict[AzId, str]``)."""
    found: list[str] = []
    if get_origin(tp) is typing.Annotated:
        found += [r for m in get_args(tp)[1:] if (r := _rule_text(m))]
    for arg in get_args(tp) if get_origin(tp) is not Literal else ():
        found += _nested_rules(arg)
    return found


def _bounds(info: FieldInfo) -> list[str]:
    """Constraints of the field itself: numeric bounds, lengths, a pattern."""
    out: list[str] = []
    names = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<"}
    unit = "characters" if str in (info.annotation, *get_args(info.annotation)) else "items"
    for m in info.metadata:
        for attr, sign in names.items():
            if (v := getattr(m, attr, None)) is not None:
                out.append(f"{sign} {v}")
        if (v := getattr(m, "min_length", None)) is not None:
            out.append("not empty" if v == 1 else f"at least {v} {unit}")
        if (v := getattr(m, "max_length", None)) is not None:
            out.append(f"at most {v} {unit}")
        if (v := getattr(m, "pattern", None)) is not None:
            out.append(f"pattern `{v}`")
    return out


def _value(v: Any) -> str:
    if isinstance(v, BaseModel):
        v = v.model_dump(mode="json", by_alias=True)
    elif isinstance(v, list):
        v = [i.model_dump(mode="json", by_alias=True) if isinstance(i, BaseModel) else i for i in v]
    return f"`{v}`" if isinstance(v, str) and v else f"`{json.dumps(v)}`"


def default_text(info: FieldInfo) -> str:
    """``required``, ``optional`` (no default), or ``default `value```."""
    if info.is_required():
        return "required"
    if info.default_factory is not None:
        made = info.default_factory()  # type: ignore[call-arg]  # no factory here takes data
        if isinstance(made, BaseModel):
            return "default: the defaults of its keys"
        return f"default {_value(made)}"
    if info.default is None or info.default is PydanticUndefined:
        return "optional"
    return f"default {_value(info.default)}"


def _model_of(tp: Any) -> tuple[type[BaseModel], bool] | None:
    """The model a field holds, and whether as a list (``gpuPools[]``), if it holds one."""
    origin = get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        inner = [m for a in get_args(tp) if (m := _model_of(a))]
        return inner[0] if len(inner) == 1 else None
    if origin is list:
        inner = _model_of(get_args(tp)[0])
        return (inner[0], True) if inner else None
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return tp, False
    return None


def entries(model: type[BaseModel], path: str) -> Iterator[tuple[str, FieldInfo]]:
    """Every key under ``model`` at ``path``, depth first, in the model's field order."""
    model.model_rebuild()
    for name, info in model.model_fields.items():
        key = f"{path}.{info.alias or name}" if path else (info.alias or name)
        yield key, info
        nested = _model_of(info.annotation)
        if nested is not None:
            sub, many = nested
            yield from entries(sub, f"{key}[]" if many else key)


def entry_text(key: str, info: FieldInfo) -> str:
    """One key as a Markdown list item: path, type, default; what it does; its rule."""
    kind = type_text(info.annotation)
    rules = [r for m in info.metadata if (r := _rule_text(m))] + _nested_rules(info.annotation)
    head = ", ".join([kind, *_bounds(info), default_text(info)])
    if not info.description:
        raise ValueError(f"{key}: the schema field has no description")
    body = _md(info.description)
    if rules:
        body += " Rule: " + " ".join(r if r.endswith(".") else r + "." for r in rules)
    text = f"`{key}` ({head}): {body}"
    return item(text)


def item(text: str, indent: str = "") -> str:
    """``text`` as a Markdown list item wrapped at ``WIDTH``, never inside a word or a path."""
    return textwrap.fill(
        text,
        WIDTH,
        initial_indent=indent + "- ",
        subsequent_indent=indent + "  ",
        break_on_hyphens=False,
        break_long_words=False,
    )


def section(title: str, model: type[BaseModel], path: str) -> str:
    lines = [f"### {title}", ""]
    lines += [entry_text(k, i) for k, i in entries(model, path)]
    return "\n".join(lines) + "\n"


def _top_level() -> str:
    from infra.core.platforms import PLATFORMS

    lines = ["### Top-level keys", ""]
    for key, kind, what in TOP_LEVEL:
        kind = kind or " | ".join(f"`{p}`" for p in PLATFORMS)
        lines.append(item(f"`{key}` ({kind}): {what}"))
    return "\n".join(lines) + "\n"


@functools.cache
def render() -> str:
    """The whole generated part of ``docs/config-reference.md``."""
    from infra.core.config import operator
    from infra.core.config.entry import platform_config
    from infra.core.platforms import PLATFORMS

    parts = [_top_level()]
    for name in PLATFORMS:
        part = platform_config(name)
        title, heading = part.titles
        parts += [
            f"## {title} (`platform: {name}`)\n",
            section(f"{heading} `cluster`", part.cluster, "cluster"),
            section(f"{heading} `gpuPools[]`", part.pool, "gpuPools[]"),
        ]
    parts += [
        "## Every platform\n",
        section("`gpuOperator`", operator.GpuOperatorSpec, "gpuOperator"),
        section("`gpuNamespaces[]`", operator.GpuNamespaceSpec, "gpuNamespaces[]"),
        section("`integrations`", operator.IntegrationsSpec, "integrations"),
    ]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(parts))


def keys() -> set[str]:
    """Every key path the reference lists (``cluster.vpc.natGateways``, ``gpuPools[].zones``)."""
    return set(re.findall(r"^- `([^`]+)`", render(), re.MULTILINE))
