"""Read a Pulumi stack file so that any bytes end in a mapping or in clean ``ConfigErrors``.

PyYAML's safe loader is the base, with the limits a config file needs and YAML does not have:
- bytes must be UTF-8 (the stack settings file format); a bad byte is named by its offset;
- one document; a mapping at the root; keys Pulumi's stack settings file defines;
- no duplicate mapping keys (YAML 1.2 requires unique keys; PyYAML silently keeps the last);
- nesting depth and the size after alias expansion are bounded *while composing*, before any value
  is expanded (a "billion laughs" file is refused in milliseconds, not after gigabytes);
- every YAML error is ``<file>:<line>:<column>: <problem>``.

Sources: YAML 1.2.2 section 3.2.1.1 "keys are unique" (https://yaml.org/spec/1.2.2/); Pulumi stack settings
file attributes (https://www.pulumi.com/docs/iac/concepts/projects/stack-settings-file/).
"""

from __future__ import annotations

import codecs
import math
from pathlib import Path
from typing import Any

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.events import AliasEvent, StreamEndEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.parser import Parser
from yaml.reader import Reader
from yaml.resolver import Resolver
from yaml.scanner import Scanner

from infra.core.errors import Issues, closest, shown

# A stack file is a few KB; 256 KiB leaves room for large Helm values and bounds the parse (< 1 s).
MAX_BYTES = 256 * 1024
# Deepest nesting accepted: config > gpu-infra:gpuOperator > values > chart keys need about 10.
MAX_DEPTH = 48
# Values after alias expansion (every scalar, list and mapping counts 1): far above any real stack,
# far below what exhausts memory when a validator or serializer walks the expanded tree.
MAX_NODES = 20_000
# Top-level attributes of Pulumi.<stack>.yaml (Pulumi stack settings file reference).
STACK_FILE_KEYS = ("config", "secretsprovider", "encryptedkey", "encryptionsalt", "environment")
_MERGE_TAG = "tag:yaml.org,2002:merge"


class _Refused(yaml.MarkedYAMLError):
    """A limit of ours was hit (depth, expansion, duplicate key): reported like a YAML error."""

    def __init__(self, problem: str, mark: Any) -> None:
        super().__init__(None, None, problem, mark)


try:  # libyaml's parser when PyYAML was built with it (the PyPI wheels are): ~50x faster
    from yaml._yaml import CParser as _Parser  # pyright: ignore
except ImportError:  # pragma: no cover - pure-Python PyYAML

    class _Parser(Reader, Scanner, Parser):  # type: ignore[no-redef]
        def __init__(self, stream: str) -> None:
            Reader.__init__(self, stream)
            Scanner.__init__(self)
            Parser.__init__(self)


class _Loader(_Parser, Composer, SafeConstructor, Resolver):
    """The safe loader's parts, composing in Python so depth, alias expansion and duplicate keys
    are checked node by node, before anything is constructed or expanded."""

    def __init__(self, stream: str) -> None:
        _Parser.__init__(self, stream)
        Composer.__init__(self)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)
        self._depth = 0
        # Expanded size of each finished node, by id (the nodes stay alive in the tree).
        self._sizes: dict[int, int] = {}
        self._keys: list[Any] = []  # key path of the node being composed

    def compose_node(self, parent: Node | None, index: Any) -> Node:  # type: ignore[override]
        self._keys.append(index.value if isinstance(index, ScalarNode) else index)
        try:
            if self.check_event(AliasEvent):
                event = self.peek_event()
                node = _node(super().compose_node(parent, index))  # type: ignore[arg-type]
                if id(node) not in self._sizes:
                    raise _Refused(
                        f"alias *{event.anchor} refers to a node containing itself",
                        event.start_mark,
                    )
                return node
            self._depth += 1
            if self._depth > MAX_DEPTH:
                raise _Refused(
                    f"nested deeper than {MAX_DEPTH} levels",
                    self.peek_event().start_mark,
                )
            node = _node(super().compose_node(parent, index))  # type: ignore[arg-type]
            self._depth -= 1
            if isinstance(node, ScalarNode):
                self._check_scalar(node, is_key=index is None and isinstance(parent, MappingNode))
            elif self._in_free_form() and node.tag not in _JSON_TAGS:
                raise _Refused(self._not_json(node), node.start_mark)
            self._sizes[id(node)] = size = 1 + sum(self._sizes[id(c)] for c in _children(node))
            if size > MAX_NODES:
                raise _Refused(
                    f"this value expands to more than {MAX_NODES} values (through aliases or "
                    "sheer size); refused before expanding it",
                    node.start_mark,
                )
            return node
        finally:
            self._keys.pop()

    def _path(self) -> str:
        """``<key path>: `` of the node being composed (empty at the root)."""
        path = _key_path([k for k in self._keys[1:] if k is not None])
        return f"{path}: " if path else ""

    def _in_free_form(self) -> bool:
        """Inside ``gpuOperator.values``: passed to Helm as JSON, so only JSON types."""
        return self._keys[1:4] == ["config", "gpu-infra:gpuOperator", "values"]

    def _not_json(self, node: Node) -> str:
        kind = node.tag.rsplit(":", 1)[-1]
        return (
            f"{self._path()}a YAML {kind} is not a JSON value; Helm values take strings, "
            "numbers, booleans, null, lists and mappings (quote it to pass a string)"
        )

    def _check_scalar(self, node: ScalarNode, *, is_key: bool) -> None:
        """Scalars PyYAML (YAML 1.1) reads unlike Pulumi (Go, YAML 1.2) or JSON, refused early."""
        where = self._path()
        value = node.value
        if is_key and node.tag == _BOOL_TAG:
            raise _Refused(
                f"{where}key {value!r} is read as boolean (YAML 1.1); quote it: '{value}'",
                node.start_mark,
            )
        if node.tag in (_INT_TAG, _FLOAT_TAG) and ":" in value:
            raise _Refused(
                f"{where}{value!r} is read as a base-60 number (YAML 1.1 sexagesimal); "
                f"quote it: '{value}'",
                node.start_mark,
            )
        if node.tag == _INT_TAG and not _fits_int64(value):
            raise _Refused(
                f"{where}integer {shown(value, 40)} is outside the 64-bit range the "
                "Pulumi and Kubernetes APIs take",
                node.start_mark,
            )
        if node.tag == _FLOAT_TAG and not _finite(value):
            raise _Refused(
                f"{where}{value} is not a finite number (JSON has none)",
                node.start_mark,
            )
        if self._in_free_form() and node.tag not in _JSON_TAGS:
            raise _Refused(self._not_json(node), node.start_mark)

    def compose_mapping_node(self, anchor: str | None) -> MappingNode:  # type: ignore[override]
        node = super().compose_mapping_node(anchor)  # type: ignore[arg-type]
        first: dict[tuple[str, str], Node] = {}
        for key, _ in node.value:
            if not isinstance(key, ScalarNode) or key.tag == _MERGE_TAG:
                continue  # merge keys ('<<') may repeat; complex keys fail in the constructor
            seen = first.setdefault((key.tag, key.value), key)
            if seen is not key:
                where = _key_path([*self._keys[1:], key.value])
                raise _Refused(
                    f"duplicate key {where} (first on line {seen.start_mark.line + 1}); "
                    "YAML would silently keep only the last one",
                    key.start_mark,
                )
        return node


_INT_TAG = "tag:yaml.org,2002:int"
_FLOAT_TAG = "tag:yaml.org,2002:float"
_BOOL_TAG = "tag:yaml.org,2002:bool"
# JSON's types (RFC 8259): what Helm values and Pulumi config objects carry.
_JSON_TAGS = frozenset(
    f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null", "seq", "map")
)
# Kubernetes and Pulumi integers are int64 (JSON numbers beyond it lose precision or fail to decode).
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _fits_int64(text: str) -> bool:
    """A YAML 1.1 int scalar (as PyYAML's SafeConstructor reads it) within int64, bounded work."""
    t = text.replace("_", "")
    sign = -1 if t.startswith("-") else 1
    t = t.lstrip("+-")
    base, digits = 10, t
    if t.startswith("0b"):
        base, digits = 2, t[2:]
    elif t.startswith("0x"):
        base, digits = 16, t[2:]
    elif t.startswith("0o"):
        base, digits = 8, t[2:]
    elif t.startswith("0") and len(t) > 1:
        base, digits = 8, t[1:]
    digits = digits.lstrip("0") or "0"
    if len(digits) > 70:  # more than 64 bits in any base PyYAML reads
        return False
    try:
        return _INT64_MIN <= sign * int(digits, base) <= _INT64_MAX
    except ValueError:
        return True  # not an int after all: the constructor reports it


def _finite(text: str) -> bool:
    """A YAML 1.1 float scalar is finite: not .nan/.inf, and not overflowing (1.0e+400 reads inf)."""
    t = text.replace("_", "").lower().lstrip("+-")
    if t in (".nan", ".inf"):
        return False
    try:
        return math.isfinite(float(t))
    except ValueError:
        return True  # not a plain float after all: the constructor decides


def _node(node: Node | None) -> Node:
    assert node is not None  # compose_node returns None only at the end of the stream
    return node


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def _key_path(keys: list[Any]) -> str:
    """``['config', 'gpu-infra:cluster', 'name']`` -> ``cluster.name`` (the paths errors use)."""
    parts = list(keys)
    if parts[:1] == ["config"]:
        parts = parts[1:]
        if parts and isinstance(parts[0], str) and parts[0].startswith("gpu-infra:"):
            parts[0] = parts[0].removeprefix("gpu-infra:")
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out += f".{p}" if out else str(p)
    out = out or ".".join(str(k) for k in keys)  # a root key such as config itself
    return shown(out, 120)[1:-1] if len(out) > 120 else out


def read_stack_file(path: str | Path) -> dict[str, Any]:
    """The stack file's root mapping, checked as described in the module docstring.

    Raises:
        ConfigErrors: one line per problem, ``<file>[:<line>:<column>]: <problem>``.
    """
    p = Path(path)
    issues = Issues()
    data = _read_bytes(p, issues)
    text = _decode(p, data, issues)
    doc = _load(p, text, issues)
    if not isinstance(doc, dict):
        kind = "empty" if doc is None else f"a {_yaml_kind(doc)}"
        issues.add(
            str(p), f"the stack file must be a mapping with a 'config:' mapping; it is {kind}"
        )
        issues.raise_if_any()
        raise AssertionError("unreachable")
    _check_root_keys(doc, issues)
    issues.raise_if_any()
    return doc


def _read_bytes(p: Path, issues: Issues) -> bytes:
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


def _decode(p: Path, data: bytes, issues: Issues) -> str:
    """UTF-8 (a BOM is tolerated); a bad byte is named with its offset, line and column."""
    bom = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    try:
        return data[bom:].decode("utf-8")
    except UnicodeDecodeError as e:
        good = data[bom : bom + e.start].decode("utf-8")
        line, col = good.count("\n") + 1, len(good) - (good.rfind("\n") + 1) + 1
        bad = data[bom + e.start : bom + e.end].hex(" ")
        hint = " (the file is UTF-16)" if data[:2] in (b"\xff\xfe", b"\xfe\xff") else ""
        issues.add(
            f"{p}:{line}:{col}",
            f"not UTF-8{hint}: byte 0x{bad} at byte offset {bom + e.start} ({e.reason}); "
            "save the stack file as UTF-8",
        )
        issues.raise_if_any()
        raise AssertionError("unreachable") from e


def _load(p: Path, text: str, issues: Issues) -> Any:
    loader: _Loader | None = None
    try:
        if bad := Reader.NON_PRINTABLE.search(text):  # YAML 1.1 section 5.1 character set
            pos = bad.start()
            raise yaml.reader.ReaderError(str(p), pos, ord(bad.group()), "unicode", "")
        loader = _Loader(text)
        loader.get_event()  # stream start
        node = None if loader.check_event(StreamEndEvent) else loader.compose_document()
        if not loader.check_event(StreamEndEvent):
            mark = loader.peek_event().start_mark
            raise _Refused(
                "a stack file holds one YAML document; a second one starts here "
                "(remove the '---' or split the file)",
                mark,
            )
        return None if node is None else loader.construct_document(node)
    except yaml.MarkedYAMLError as e:
        issues.add(*_marked(p, e))
    except yaml.reader.ReaderError as e:
        if e.reason:  # libyaml's own reader error: its position counts bytes, not characters
            issues.add(str(p), f"not valid YAML: {shown(str(e.reason), 200)[1:-1]}")
            issues.raise_if_any()
        line = text.count("\n", 0, e.position) + 1
        col = e.position - (text.rfind("\n", 0, e.position) + 1) + 1
        issues.add(
            f"{p}:{line}:{col}",
            f"character U+{e.character:04X} is not allowed in YAML (control characters are not)"
            if isinstance(e.character, int)
            else str(e.reason),
        )
    except yaml.YAMLError as e:  # no position known
        issues.add(str(p), f"not valid YAML: {shown(str(e), 200)[1:-1]}")
    except ValueError as e:  # a constructor's int()/float()/base64 on a scalar composing let pass
        issues.add(str(p), f"not valid YAML: {shown(str(e), 200)[1:-1]}")
    finally:
        if loader is not None:
            loader.dispose()
    issues.raise_if_any()
    raise AssertionError("unreachable")


def _marked(p: Path, e: yaml.MarkedYAMLError) -> tuple[str, str]:
    mark = e.problem_mark or e.context_mark
    where = f"{p}:{mark.line + 1}:{mark.column + 1}" if mark else str(p)
    problem = e.problem or "not valid YAML"
    if e.context and not isinstance(e, _Refused):
        ctx = e.context
        if e.context_mark and e.problem_mark and e.context_mark.line != e.problem_mark.line:
            ctx += f" (line {e.context_mark.line + 1})"
        problem = f"{problem} ({ctx})" if ctx.startswith("while") else f"{ctx}: {problem}"
    return where, " ".join(problem.split())


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
