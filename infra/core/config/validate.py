"""A config block validated against its schema, every pydantic error as ``<key path>: <reason>``.

Unknown keys get "did you mean" and the allowed keys; a union's per-member type errors become one
line; a field rule's ``RuleError`` keeps its own path; ``yes``/``off`` given for a boolean say that
Pulumi's YAML 1.2 reader hands them over as strings.
"""

from __future__ import annotations

import functools
import re
import types
import typing
from typing import Any, get_args, get_origin

from pydantic import BaseModel, TypeAdapter, ValidationError

from infra.core.errors import ConfigIssue, Issues, RuleError, did_you_mean, join_path, shown


@functools.cache
def _adapter(schema: Any) -> TypeAdapter[Any]:
    # Building a validator is the expensive part; each schema is built once per process.
    return TypeAdapter(schema)


def validate(schema: Any, value: Any, root: str, issues: Issues) -> Any:
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
