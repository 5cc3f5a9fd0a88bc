"""Read a Pulumi stack file as ``pulumi up`` reads it: bytes, YAML, root keys, config values.

``read_stack_file`` ends any bytes in a mapping or in clean ``ConfigErrors``: a size limit, UTF-8
(a bad byte named by its offset), the YAML of ``infra.core.stackfile.loader``, a mapping at the
root with the keys Pulumi's stack settings file defines, and each ``config:`` value as the program
receives it (``as_pulumi_reads``).
"""

from __future__ import annotations

import codecs
from pathlib import Path
from typing import Any

from infra.core.errors import Issues, closest, shown
from infra.core.stackfile.goyaml import go_key, go_text
from infra.core.stackfile.loader import load_yaml

# A stack file is a few KB; 256 KiB leaves room for large Helm values and bounds the parse (< 1 s).
MAX_BYTES = 256 * 1024


# Top-level attributes of Pulumi.<stack>.yaml (Pulumi stack settings file reference).
STACK_FILE_KEYS = ("config", "secretsprovider", "encryptedkey", "encryptionsalt", "environment")


def read_stack_file(path: str | Path, project: str) -> dict[str, Any]:
    """The stack file's root mapping, checked as described in the module docstring, its
    ``config:`` keys namespaced as Pulumi namespaces them (``namespaced``) for ``project``.

    Raises:
        ConfigErrors: one line per problem, ``<file>[:<line>:<column>]: <problem>``.
    """
    p = Path(path)
    issues = Issues()
    data = read_bytes(p, issues)
    text = decode(p, data, issues)
    doc = load_yaml(p, text, issues)
    if not isinstance(doc, dict):
        kind = "empty" if doc is None else f"a {_yaml_kind(doc)}"
        issues.add(
            str(p), f"the stack file must be a mapping with a 'config:' mapping; it is {kind}"
        )
        issues.raise_if_any()
        raise AssertionError("unreachable")
    _check_root_keys(doc, issues)
    issues.raise_if_any()
    if isinstance(doc.get("config"), dict):
        config = {go_key(k): as_pulumi_reads(v) for k, v in doc["config"].items()}
        doc["config"] = namespaced(config, project, issues)
        issues.raise_if_any()
    return doc


def namespaced(config: dict[str, Any], project: str, issues: Issues) -> dict[str, Any]:
    """``config`` with each key as Pulumi (>= 3.44) names it: ``<namespace>:<name>``.

    pulumi/pulumi sdk/go/common/workspace/loaders.go ``stackConfigNamespacedWithProject``: a key
    without ``:`` is rewritten to ``{project.Name}:{key}``; a key with one is kept. Then
    sdk/go/common/resource/config/key.go ``ParseKey`` (@1b5949891b) reads each: one ``:`` is
    ``<namespace>:<name>``; ``<namespace>:config:<name>`` (the old form) is ``<namespace>:<name>``;
    any other key is refused. All land in one Go map, so two spellings of one key collide, and
    which survives depends on Go's random map order: refused here, naming both.
    """
    spellings: dict[str, list[str]] = {}
    for key in config:
        full = pulumi_key(key, project)
        if full is None:
            issues.add(
                shown(key)[1:-1],
                f"could not parse {key} as a configuration key (configuration keys should be of "
                "the form `<namespace>:<name>`)",
            )
            continue
        spellings.setdefault(full, []).append(key)
    out: dict[str, Any] = {}
    for full, keys in spellings.items():
        if len(keys) == 1:
            out[full] = config[keys[0]]
            continue
        for key in keys:
            if key == full:
                continue
            others = " and as ".join(shown(k) for k in keys if k != key)
            form = "bare key" if ":" not in key else "old form <namespace>:config:<name>"
            times, which = (
                ("twice", "the two") if len(keys) == 2 else (f"{len(keys)} times", "them")
            )
            issues.add(
                shown(key)[1:-1],
                f"given {times}: as {shown(key)} and as {others}; Pulumi reads the {form} as "
                f"{shown(full)} too and keeps one of {which} at random: remove one",
            )
    return out


def pulumi_key(key: str, project: str) -> str | None:
    """``key`` as Pulumi names it (``namespaced``), or ``None`` if ``ParseKey`` refuses it.

    >>> pulumi_key("platform", "p"), pulumi_key("gcp:config:project", "p"), pulumi_key("a:b:c", "p")
    ('p:platform', 'gcp:project', None)
    """
    parts = key.split(":")
    if len(parts) == 1:
        return f"{project}:{key}"
    if len(parts) == 2:
        return key
    if len(parts) == 3 and parts[1] == "config":
        return f"{parts[0]}:{parts[2]}"
    return None


def as_pulumi_reads(value: Any) -> Any:
    """A ``config:`` value as the program receives it from Pulumi.

    pulumi/pulumi ``sdk/go/common/resource/config/object.go``: ``MarshalString`` turns a scalar into
    its text (``true``, ``3``) and an object or list into JSON, which the Python SDK's
    ``Config.get_object`` reads back with ``json.loads``; ``unmarshalObject`` names map keys with
    ``fmt.Sprintf("%v", k)``. Go's ``encoding/json`` writes an integral float64 below 1e21 without a
    fraction, so ``200.0`` arrives as the integer ``200``.

    >>> as_pulumi_reads({"diskSizeGb": 200.0, 1: True}), as_pulumi_reads(3)
    ({'diskSizeGb': 200, '1': True}, '3')
    """
    if isinstance(value, dict | list):
        return _json_round_trip(value)
    if value is None or isinstance(value, str):
        return value
    return go_text(value)


def _json_round_trip(value: Any) -> Any:
    if isinstance(value, dict):
        return {go_key(k): _json_round_trip(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_round_trip(v) for v in value]
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return int(value)
    return value


def read_bytes(p: Path, issues: Issues) -> bytes:
    try:
        with p.open("rb") as f:
            data = f.read(MAX_BYTES + 1)
    except OSError as e:
        issues.add(str(p), f"cannot read the stack file: {e.strerror or e}")
        issues.raise_if_any()
        raise AssertionError("unreachable") from e
    if len(data) > MAX_BYTES:
        issues.add(str(p), f"larger than {MAX_BYTES // 1024} KiB; a stack file is a few KB")
        issues.raise_if_any()
    return data


# Byte-order marks yaml.v3 reads (readerc.go yaml_parser_determine_encoding: UTF-16LE, UTF-16BE,
# UTF-8; no BOM means UTF-8), with the codec that reads what follows each.
_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def encoding_of(data: bytes) -> tuple[bytes, str]:
    """(the file's byte-order mark, the codec of the bytes after it), as yaml.v3 decides them."""
    return next(((bom, c) for bom, c in _BOMS if data.startswith(bom)), (b"", "utf-8"))


def decode(p: Path, data: bytes, issues: Issues) -> str:
    """The text as yaml.v3 reads it: UTF-8, or UTF-16 after its BOM; a bad byte is named with
    its offset, line and column."""
    bom, codec = encoding_of(data)
    try:
        return data[len(bom) :].decode(codec)
    except UnicodeDecodeError as e:
        good = data[len(bom) : len(bom) + e.start].decode(codec)
        line, col = good.count("\n") + 1, len(good) - (good.rfind("\n") + 1) + 1
        bad = data[len(bom) + e.start : len(bom) + e.end].hex(" ")
        name = "UTF-8" if codec == "utf-8" else codec.upper().replace("UTF-16-", "UTF-16")
        issues.add(
            f"{p}:{line}:{col}",
            f"not {name}: byte 0x{bad} at byte offset {len(bom) + e.start} ({e.reason}); "
            "save the stack file as UTF-8",
        )
        issues.raise_if_any()
        raise AssertionError("unreachable") from e


def _yaml_kind(value: Any) -> str:
    if isinstance(value, list):
        return "list"
    if isinstance(value, str):
        return "string"
    return type(value).__name__


def _check_root_keys(doc: dict[Any, Any], issues: Issues) -> None:
    """Every root key is one Pulumi reads; config keys at the root mean a missing ``config:``."""
    unwrapped = [k for k in doc if isinstance(k, str) and ":" in k]
    for key in doc:
        if key in STACK_FILE_KEYS or (isinstance(key, str) and ":" in key):
            continue
        close = closest(str(key), STACK_FILE_KEYS)
        hint = f"did you mean '{close}'?" if close else f"allowed: {', '.join(STACK_FILE_KEYS)}"
        issues.add(
            shown(key)[1:-1] if isinstance(key, str) else shown(key),
            f"not a stack file key; {hint}",
        )
    if unwrapped:
        first = unwrapped[0]
        more = f" and {len(unwrapped) - 1} more" if len(unwrapped) > 1 else ""
        issues.add(
            shown(first)[1:-1],
            f"config keys belong under 'config:' (found at the root{more}); "
            f"did you mean 'config:' followed by '  {shown(first)[1:-1]}: ...'?",
        )
    config = doc.get("config")
    if config is not None and not isinstance(config, dict):
        issues.add(
            "config", f"must be a mapping of 'namespace:key' entries; it is a {_yaml_kind(config)}"
        )
