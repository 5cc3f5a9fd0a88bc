"""Read a Pulumi stack file as ``pulumi up`` reads it, so that any bytes end in a mapping or in clean
``ConfigErrors``.

Pulumi reads stack files with Go's ``gopkg.in/yaml.v3`` (YAML 1.2 core schema) and hands structured
values to the program as JSON. PyYAML's parser is the base here, with:
- scalars resolved as yaml.v3's ``resolve.go`` resolves them: only ``true``/``false`` (three
  spellings) are booleans, so ``yes``/``no``/``on``/``off`` are strings; ``0o17``, ``0x1F``, ``1e3``
  are numbers; ``1:20`` is a string;
- duplicate keys refused as yaml.v3's ``decoder.mapping`` refuses them (by the key's text, so ``1``
  and ``"1"`` collide, and two ``<<`` merge keys in one mapping are an error), plus keys that only
  collide through an alias (yaml.v3 would silently keep the last);
- each ``config:`` value passed through what Pulumi does to it (``sdk/go/common/resource/config``
  ``object.go``: scalars become strings, objects JSON), so ``200.0`` reaches the program as ``200``
  (Go's ``encoding/json`` writes an integral float64 without a fraction; Python's ``json`` reads an int);
- values whose reading differs between YAML readers (YAML 1.1 boolean keys, base-60 numbers,
  unquoted timestamps, numbers beyond 64 bits) refused with what Pulumi would read;
- the limits a config file needs and YAML does not have: UTF-8 bytes (a bad byte is named by its
  offset), one document, a mapping at the root with the keys Pulumi's stack settings file defines,
  nesting depth and the size after alias expansion bounded *while composing*, before any value is
  expanded (a "billion laughs" file is refused in milliseconds);
- every YAML error is ``<file>:<line>:<column>: <problem>``.

Sources: go-yaml/yaml v3 ``resolve.go`` (``resolveMapList``, ``yamlStyleFloat``, ``parseTimestamp``)
and ``decode.go`` (``mapping``: "mapping key %#v already defined at line %d"; ``isMerge``); YAML 1.2.2
section 10.3.2 core schema tag resolution (https://yaml.org/spec/1.2.2/); pulumi/pulumi
``sdk/go/common/resource/config/object.go`` (``unmarshalObject``, ``MarshalString``); Pulumi stack
settings file attributes (https://www.pulumi.com/docs/iac/concepts/projects/stack-settings-file/).
"""

from __future__ import annotations

import base64
import codecs
import datetime
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.events import AliasEvent, StreamEndEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.parser import Parser
from yaml.reader import Reader
from yaml.resolver import BaseResolver
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


class _GoYamlResolver(BaseResolver):
    """Tags as yaml.v3 resolves them (``resolve``): plain scalars by ``go_yaml_tag``, quoted ones
    are strings, explicit tags are kept (and checked against the text in ``_check_scalar``)."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:  # type: ignore[override]
        if kind is ScalarNode:
            return go_yaml_tag(value) if implicit[0] else _STR_TAG
        return super().resolve(kind, value, implicit)


class _Loader(_Parser, Composer, SafeConstructor, _GoYamlResolver):
    """The safe loader's parts, composing in Python so depth, alias expansion and duplicate keys
    are checked node by node, before anything is constructed or expanded."""

    def __init__(self, stream: str) -> None:
        _Parser.__init__(self, stream)
        Composer.__init__(self)
        SafeConstructor.__init__(self)
        _GoYamlResolver.__init__(self)
        self._depth = 0
        # Expanded size of each finished node, by id (the nodes stay alive in the tree).
        self._sizes: dict[int, int] = {}
        self._keys: list[Any] = []  # key path of the node being composed
        # Where a mapping key written as an alias stands, by (mapping id, pair index): the node
        # itself carries its anchor's position.
        self._alias_keys: dict[tuple[int, int], Any] = {}

    def compose_node(self, parent: Node | None, index: Any) -> Node:  # type: ignore[override]
        self._keys.append(index.value if isinstance(index, ScalarNode) else index)
        try:
            if self.check_event(AliasEvent):
                event = self.peek_event()
                if index is None and isinstance(parent, MappingNode):
                    self._alias_keys[id(parent), len(parent.value)] = event.start_mark
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
            elif node.tag not in _JSON_TAGS:
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

    def _not_json(self, node: Node) -> str:
        """Pulumi's config is JSON (strings, numbers, booleans, null, lists, mappings): another
        tag is refused anywhere, saying what yaml.v3 would read instead."""
        kind = node.tag.removeprefix("tag:yaml.org,2002:")
        return (
            f"{self._path()}a YAML {kind} is not a JSON value; Pulumi would read "
            f"{_go_yaml_reads(node)}; write the value without the tag"
        )

    def compose_scalar_node(self, anchor: str | None) -> ScalarNode:  # type: ignore[override]
        event = self.peek_event()
        node = super().compose_scalar_node(anchor)  # type: ignore[arg-type]
        # yaml.v3 resolves plain untagged scalars only; quoted ones are strings, tags are explicit.
        node.plain = bool(event.implicit[0])  # type: ignore[attr-defined]
        node.explicit = event.tag not in (None, "!")  # type: ignore[attr-defined]
        return node

    def _check_scalar(self, node: ScalarNode, *, is_key: bool) -> None:
        """Scalars YAML readers disagree on, refused saying what Pulumi (yaml.v3) would read."""
        where = self._path()
        value = node.value
        plain = getattr(node, "plain", False)
        if plain and is_key and value in _YAML11_BOOLS:
            raise _Refused(
                f"{where}key {value!r} is read as boolean (YAML 1.1); quote it: '{value}'",
                node.start_mark,
            )
        if plain and _YAML11_SEXAGESIMAL.fullmatch(value):
            raise _Refused(
                f"{where}{value!r} is read as a base-60 number (YAML 1.1 sexagesimal) by some "
                f"readers and as the string '{value}' by Pulumi; quote it: '{value}'",
                node.start_mark,
            )
        if getattr(node, "explicit", False) and node.tag in _SCALAR_TAGS:
            _check_explicit_tag(node, where)
        if node.tag == _TIMESTAMP_TAG:
            raise _Refused(self._timestamp(node), node.start_mark)
        number = _go_int(value) if plain or node.tag == _INT_TAG else None
        if number is not None and not _INT64_MIN <= number <= _INT64_MAX:
            raise _Refused(
                f"{where}integer {shown(value, 40)} is outside the 64-bit range the "
                "Pulumi and Kubernetes APIs take",
                node.start_mark,
            )
        overflow = plain and node.tag == _STR_TAG and _overflows(value)
        if (node.tag == _FLOAT_TAG and not _finite(value)) or overflow:
            raise _Refused(
                f"{where}{value} is not a finite number (JSON has none)", node.start_mark
            )
        if node.tag not in _JSON_TAGS and node.tag != _MERGE_TAG:
            raise _Refused(self._not_json(node), node.start_mark)

    def _timestamp(self, node: ScalarNode) -> str:
        """yaml.v3 reads an unquoted date as a time.Time; Pulumi stores its ``String()``."""
        return (
            f"{self._path()}a YAML timestamp is not a JSON value; Pulumi reads "
            f"{node.value} as the time {_go_time_string(node.value)!r}; quote it to pass "
            f"the text '{node.value}'"
        )

    def compose_mapping_node(self, anchor: str | None) -> MappingNode:  # type: ignore[override]
        node = super().compose_mapping_node(anchor)  # type: ignore[arg-type]
        # yaml.v3 decode.go mapping(): keys with the same text collide, whatever their tag, and
        # '<<' is no exception; a key reached through an alias counts by its target's text.
        first: dict[str, int] = {}
        for i, (key, _) in enumerate(node.value):
            if not isinstance(key, ScalarNode):
                continue  # complex keys fail in the constructor
            for text in dict.fromkeys((key.value, _go_key_text(key))):
                if (j := first.setdefault(text, i)) != i:
                    where = _key_path([*self._keys[1:], key.value])
                    mark = self._alias_keys.get((id(node), i), key.start_mark)
                    raise _Refused(self._duplicate(where, key, node.value[j][0]), mark)
        # A whole config value may be a secret (`pulumi config set --secret`); nested, it is not.
        if self._keys[1:2] == ["config"] and len(self._keys) > 3 and _is_secure(node):
            raise _Refused(
                f"{self._path()}a mapping whose one key is 'secure' is how Pulumi stores a "
                "secret: `pulumi up` would try to decrypt its text with the stack's secrets "
                "provider, where this reader sees a plain mapping; write the value itself",
                node.start_mark,
            )
        return node

    @staticmethod
    def _duplicate(where: str, key: ScalarNode, seen: Node) -> str:
        line = seen.start_mark.line + 1
        if key.tag == _MERGE_TAG:
            return (
                f"duplicate key {where} (first on line {line}); Pulumi's YAML reader refuses "
                "two '<<' merge keys in one mapping: merge several with '<<: [*a, *b]'"
            )
        again = ", repeated through an alias" if key is seen else ""
        return (
            f"duplicate key {where} (first on line {line}{again}); "
            "YAML would silently keep only the last one"
        )

    def construct_go_int(self, node: ScalarNode) -> int:
        """An int as Go's strconv.ParseInt(text, 0, 64) reads it (yaml.v3 resolve), '_' removed."""
        number = _go_int(str(self.construct_scalar(node)))
        if number is None:
            raise ValueError(f"{shown(node.value)} is not an integer")
        return number


_Loader.add_constructor("tag:yaml.org,2002:int", _Loader.construct_go_int)  # pyright: ignore[reportArgumentType]

_STR_TAG = "tag:yaml.org,2002:str"
_INT_TAG = "tag:yaml.org,2002:int"
_FLOAT_TAG = "tag:yaml.org,2002:float"
_BOOL_TAG = "tag:yaml.org,2002:bool"
_NULL_TAG = "tag:yaml.org,2002:null"
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
_SCALAR_TAGS = (_BOOL_TAG, _INT_TAG, _FLOAT_TAG, _NULL_TAG)
# JSON's types (RFC 8259): what Helm values and Pulumi config objects carry.
_JSON_TAGS = frozenset(
    f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null", "seq", "map")
)
# Kubernetes and Pulumi integers are int64 (JSON numbers beyond it lose precision or fail to decode).
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

# yaml.v3 resolve.go resolveMapList: the only plain scalars that are not strings or numbers.
_GO_YAML_MAP = {
    **dict.fromkeys(("true", "True", "TRUE", "false", "False", "FALSE"), _BOOL_TAG),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), _NULL_TAG),
    **dict.fromkeys(
        (f"{s}.{w}" for s in ("", "+", "-") for w in ("inf", "Inf", "INF")), _FLOAT_TAG
    ),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), _FLOAT_TAG),
    "<<": _MERGE_TAG,
}
# YAML 1.1 booleans (https://yaml.org/type/bool.html, PyYAML's resolver) that yaml.v3 reads as strings.
_YAML11_BOOLS = frozenset(
    w for b in ("yes", "no", "on", "off", "true", "false") for w in (b, b.title(), b.upper())
)
# yaml.v3 resolve.go yamlStyleFloat; Go's strconv.ParseFloat then refuses what overflows float64.
_YAML_STYLE_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
# Go strconv.ParseInt(s, 0, 64) syntax: sign, then 0x/0o/0b prefixes or a leading 0 for octal.
_GO_INT = re.compile(
    r"[-+]?(?:0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)", re.ASCII
)
# YAML 1.1 base-60 ints and floats (https://yaml.org/type/int.html, /float.html); yaml.v3 drops them.
_YAML11_SEXAGESIMAL = re.compile(r"[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?", re.ASCII)
# yaml.v3 resolve.go parseTimestamp: allowedTimestampFormats, tried after "YYYY-".
_GO_TIMESTAMP = re.compile(
    r"(?P<y>[0-9]{4})-(?P<m>[0-9]{1,2})-(?P<d>[0-9]{1,2})"
    r"(?:(?:[Tt](?P<t1>[0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:\.[0-9]+)?)"
    r"(?P<z>Z|[-+][0-9]{2}:[0-9]{2}))|(?: (?P<t2>[0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:\.[0-9]+)?)))?",
    re.ASCII,
)


def go_yaml_tag(text: str) -> str:
    """The tag yaml.v3 (``resolve.go`` ``resolve``) gives a plain scalar.

    >>> [go_yaml_tag(t).rsplit(":", 1)[1] for t in ("yes", "on", "True", "0o17", "1e3", "1:20")]
    ['str', 'str', 'bool', 'int', 'float', 'str']
    """
    if text in _GO_YAML_MAP:
        return _GO_YAML_MAP[text]
    hint = text[:1]
    if hint == ".":  # strconv.ParseFloat(in): '_' only between digits (Python's float agrees)
        return _FLOAT_TAG if _float_text(text) else _STR_TAG
    if not hint or hint not in "+-0123456789":
        return _STR_TAG  # letters (including y/n/on/off) resolve by the map above only
    if _timestamp(text) is not None:
        return _TIMESTAMP_TAG
    plain = text.replace("_", "")
    number = _go_int(text)
    if number is not None and -(2**63) <= number < 2**64:  # ParseInt, then ParseUint
        return _INT_TAG
    if _YAML_STYLE_FLOAT.fullmatch(plain) and _float_text(plain):
        return _FLOAT_TAG
    return _STR_TAG


def _go_int(text: str) -> int | None:
    """``strconv.ParseInt(strings.Replace(text, "_", "", -1), 0, ...)`` without the bit size."""
    plain = text.replace("_", "")
    if not _GO_INT.fullmatch(plain):
        return None
    sign = -1 if plain[0] == "-" else 1
    digits = plain.lstrip("+-")
    base = {"0x": 16, "0o": 8, "0b": 2}.get(digits[:2].lower())
    body = digits[2:] if base else digits
    base = base or (8 if digits.startswith("0") else 10)
    body = body.lstrip("0") or "0"
    if len(body) > 70:  # beyond 64 bits in every base: no need to convert thousands of digits
        return sign * 2**70
    return sign * int(body, base)


def _float_text(text: str) -> bool:
    """strconv.ParseFloat accepts ``text`` (finite: an overflow is an error there)."""
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def _overflows(text: str) -> bool:
    """A float literal beyond float64 (``1.0e+400``): yaml.v3's ParseFloat fails, leaving a string."""
    if text.startswith("."):  # the '.' branch of resolve() hands ParseFloat the text as is
        return _is_float(text) and not _float_text(text)
    plain = text.replace("_", "")
    return bool(_YAML_STYLE_FLOAT.fullmatch(plain)) and _is_float(plain) and not _float_text(plain)


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _finite(text: str) -> bool:
    """A float scalar is finite: not .nan/.inf and not overflowing (1.0e+400)."""
    return text not in _GO_YAML_MAP and _float_text(text.replace("_", ""))


def _timestamp(text: str) -> datetime.datetime | None:
    """yaml.v3 parseTimestamp: the time ``text`` names, or ``None`` (time.Parse checks the date)."""
    m = _GO_TIMESTAMP.fullmatch(text)
    if m is None:
        return None
    try:
        day = datetime.datetime(int(m["y"]), int(m["m"]), int(m["d"]), tzinfo=datetime.UTC)
        clock = m["t1"] or m["t2"]
        if clock:
            h, mi, s = clock.split(":")
            day = day.replace(hour=int(h), minute=int(mi), second=int(float(s)))
    except ValueError:
        return None
    return day


def _go_time_string(text: str) -> str:
    """Go's time.Time.String() of a date or UTC time (what Pulumi's object.go stores)."""
    t = _timestamp(text)
    if t is None or (m := _GO_TIMESTAMP.fullmatch(text)) is None or m["z"] not in (None, "Z"):
        return text
    return t.strftime("%Y-%m-%d %H:%M:%S +0000 UTC")


def _is_secure(node: MappingNode) -> bool:
    """pulumi/pulumi ``sdk/go/common/resource/config/object.go`` ``isSecureValue``: a map of length
    one whose ``secure`` value is a string is ciphertext, at any depth of a config value."""
    if len(node.value) != 1:
        return False
    key, value = node.value[0]
    return (
        isinstance(key, ScalarNode)
        and key.value == "secure"
        and isinstance(value, ScalarNode)
        and value.tag == _STR_TAG
    )


def _go_yaml_reads(node: Node) -> str:
    """What yaml.v3 decodes a node with a tag outside JSON into (``decode.go``): a mapping or a
    sequence whatever its tag (``!!set {a, b}`` is ``{a: null, b: null}``); a scalar with an
    unresolvable tag as its text, ``!!binary`` after base64 decoding (``resolved = string(data)``).
    """
    if isinstance(node, MappingNode):
        return "a mapping" + (" of its members to null" if node.tag.endswith(":set") else "")
    if not isinstance(node, ScalarNode):
        return "a list"
    text = node.value
    if node.tag == "tag:yaml.org,2002:binary":
        try:
            text = base64.b64decode("".join(text.split()), validate=True).decode("utf-8")
        except UnicodeDecodeError:
            return "bytes that are not UTF-8 text"
        except ValueError:  # "!!binary value contains invalid base64 data"
            return "nothing: it fails on invalid base64 data"
    return f"the text {shown(text, 40)}"


def _check_explicit_tag(node: ScalarNode, where: str) -> None:
    """yaml.v3 fails "cannot decode !!str `yes` as a !!bool" where PyYAML would convert."""
    got = go_yaml_tag(node.value)
    if got == node.tag or (node.tag == _FLOAT_TAG and got == _INT_TAG):
        return
    want, have = node.tag.rsplit(":", 1)[1], got.rsplit(":", 1)[1]
    raise _Refused(
        f"{where}Pulumi's YAML reader cannot decode !!{have} `{shown(node.value, 40)[1:-1]}` as a "
        f"!!{want}; write the value without the tag",
        node.start_mark,
    )


def _go_key_text(key: ScalarNode) -> str:
    """A key as Pulumi's object.go stores it (``fmt.Sprintf("%v", k)``), for collision checks."""
    if key.tag == _INT_TAG and (number := _go_int(key.value)) is not None:
        return str(number)
    if key.tag == _BOOL_TAG:
        return key.value.lower()
    return key.value


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
    if isinstance(doc.get("config"), dict):
        doc["config"] = {_go_key(k): as_pulumi_reads(v) for k, v in doc["config"].items()}
    return doc


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
    return _go_text(value)


def _json_round_trip(value: Any) -> Any:
    if isinstance(value, dict):
        return {_go_key(k): _json_round_trip(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_round_trip(v) for v in value]
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return int(value)
    return value


def _go_key(key: Any) -> str:
    """``fmt.Sprintf("%v", k)`` of a decoded YAML key."""
    return "<nil>" if key is None else key if isinstance(key, str) else _go_text(key)


def _go_text(value: bool | int | float) -> str:
    """Go's text of a decoded scalar (``encoding/json`` and ``%v`` agree for these values)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return repr(value)


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


# Project file names Pulumi looks for, walking up from the working directory
# (pulumi/pulumi sdk/go/common/workspace/paths.go ``DetectProjectPathFrom``).
PROJECT_FILE_NAMES = ("Pulumi.yaml", "Pulumi.yml")
# Attributes of one project-level config entry (sdk/go/common/workspace/project.go
# ``ProjectConfigType``).
PROJECT_CONFIG_ATTRS = ("type", "description", "items", "default", "value", "secret")


def project_file_of(stack_path: str | Path) -> Path | None:
    """The Pulumi.yaml whose stacks live in ``stack_path``'s folder, or ``None``.

    Pulumi uses the nearest project file above the working directory and reads stack files from
    its ``stackConfigDir`` (default: the project's own folder). A stack file elsewhere (a copy in
    another folder) belongs to no project here, so no project config applies to it.
    """
    folder = Path(stack_path).resolve().parent
    for candidate in (folder, *folder.parents):
        for name in PROJECT_FILE_NAMES:
            if (candidate / name).is_file():
                return candidate / name
    return None


@dataclass(frozen=True, slots=True)
class ProjectConfig:
    """Pulumi.yaml's project-level config: ``values`` by namespaced key (as the program receives
    them), and the project keys with neither ``value`` nor ``default`` (``required``)."""

    path: Path
    values: dict[str, Any]
    required: tuple[str, ...]


def read_project_config(stack_path: str | Path) -> ProjectConfig | None:
    """Pulumi.yaml's project-level ``config:`` for the stack at ``stack_path``; ``None`` when no
    project file holds this stack's folder.

    Sources: pulumi/pulumi sdk/go/common/workspace/project.go ``RewriteShorthandConfigValues``
    (a bare scalar or list is the ``default`` of a project key, the ``value`` of another
    namespace's key) and ``Validate``; config.go ``parseConfigKey`` (a key without ``:`` means
    ``<project>:<key>``) and ``mergeConfig`` (a stack value wins whole; a project key with neither
    ``value`` nor ``default`` must be set by the stack); project-level configuration:
    https://www.pulumi.com/docs/iac/concepts/config/#project-level-configuration

    Raises:
        ConfigErrors: the project file is not YAML, or its ``config:`` is not what Pulumi accepts.
    """
    p = project_file_of(stack_path)
    if p is None:
        return None
    issues = Issues()
    doc = _load(p, _decode(p, _read_bytes(p, issues), issues), issues)
    if not isinstance(doc, dict):
        return None
    config_dir = doc.get("stackConfigDir")
    if not isinstance(config_dir, str) and isinstance(doc.get("config"), str):
        config_dir = doc["config"]  # the older spelling: ``config: <folder>``
    stacks = (p.parent / config_dir).resolve() if isinstance(config_dir, str) else p.parent
    if stacks != Path(stack_path).resolve().parent:
        return None
    entries = doc.get("config")
    entries = entries if isinstance(entries, dict) else {}
    project = doc.get("name")
    if not isinstance(project, str) or not project:
        issues.add(f"{p}: name", "the project file is missing a 'name' attribute")
        issues.raise_if_any()
        raise AssertionError("unreachable")
    values: dict[str, Any] = {}
    required: list[str] = []
    for key, entry in entries.items():
        name = _go_key(key)
        full = name if ":" in name else f"{project}:{name}"
        given = _project_entry(p, project, name, entry, issues)
        if given is not None:
            values[full] = given
        elif full.startswith(f"{project}:"):
            required.append(full)
    issues.raise_if_any()
    return ProjectConfig(p, values, tuple(required))


def _project_entry(p: Path, project: str, key: str, entry: Any, issues: Issues) -> Any:
    """One ``config:`` entry of Pulumi.yaml: its value for stacks (``None``: none given)."""
    own = ":" not in key or key.startswith(f"{project}:")
    where = f"{p}: config.{key}"
    if not isinstance(entry, dict):  # shorthand: a project key's default, another's value
        return as_pulumi_reads(entry)
    unknown = [str(a) for a in entry if a not in PROJECT_CONFIG_ATTRS]
    if unknown:
        issues.add(
            where, f"unknown attribute {unknown[0]!r}; allowed: " + ", ".join(PROJECT_CONFIG_ATTRS)
        )
    if "default" in entry and "value" in entry:
        issues.add(where, "project config cannot have both a 'default' and 'value' attribute")
    if not own and "default" in entry:
        issues.add(where, "not namespaced by the project, so it takes 'value', not 'default'")
    elif not own and "value" not in entry:
        issues.add(where, "a key of another namespace must give its 'value'")
    if not own and "type" in entry:
        issues.add(where, "not namespaced by the project, so it cannot declare a 'type'")
    given = entry.get("default", entry.get("value"))
    return None if given is None else as_pulumi_reads(given)


# --- writing keys back into a stack file ------------------------------------------------------

# Where a pinned key goes in a block-style pool: after the last of these keys written on one line.
_PIN_AFTER = ("maxNodes", "minNodes", "machineType", "name")


def with_pool_keys(text: str, key: str, values: dict[int, str]) -> str:
    """``text`` with ``key: <flow YAML>`` added to ``gpu-infra:gpuPools[i]`` for each ``i``.

    A line-preserving insert, not a re-dump: every other byte (comments, order, quoting, line
    endings) stays as written. A block-style pool gets one new line after its last
    ``maxNodes``/``minNodes``/``machineType``/``name`` entry, at that entry's indentation; a
    flow-style pool (``- {name: a, ...}``) gets ``, key: value`` before its ``}``.

    Raises:
        ConfigErrors: ``gpuPools[i]`` is not a mapping in the file, already has ``key``, or has
            no one-line entry to insert after.
    """
    issues = Issues()
    lines = text.split("\n")  # yaml.v3 and PyYAML count lines by "\n" ("\r\n" ends in "\r")
    pools = _pools_node(yaml.compose(text, Loader=yaml.SafeLoader))
    edits: list[tuple[int, int, str]] = []  # (line, column, text): applied bottom-up
    for i, value in sorted(values.items()):
        where = f"gpuPools[{i}]"
        item = pools[i] if pools is not None and i < len(pools) else None
        if not isinstance(item, MappingNode):
            issues.add(where, "not a mapping written in the stack file")
            continue
        keys = {k.value: (k, v) for k, v in item.value if isinstance(k, ScalarNode)}
        if key in keys:
            issues.add(f"{where}.{key}", "already written")
        elif item.flow_style:
            end = item.end_mark  # just after the closing "}"
            edits.append((end.line, end.column - 1, f", {key}: {value}"))
        else:
            edit = _block_insert(keys, key, value, lines)
            if edit is None:
                issues.add(where, f"no one-line {'/'.join(_PIN_AFTER)} entry to add {key} after")
            else:
                edits.append(edit)
    issues.raise_if_any()
    for line, column, added in sorted(edits, reverse=True):
        lines[line] = lines[line][:column] + added + lines[line][column:]
    return "\n".join(lines)


def _pools_node(root: Node | None) -> list[Node] | None:
    """The items of ``config: {gpu-infra:gpuPools: [...]}`` as composed nodes, if written."""
    node: Node | None = root
    for name in ("config", "gpu-infra:gpuPools"):
        if not isinstance(node, MappingNode):
            return None
        node = next((v for k, v in node.value if getattr(k, "value", None) == name), None)
    return list(node.value) if isinstance(node, SequenceNode) else None


def _block_insert(
    keys: Mapping[str, tuple[Node, Node]], key: str, value: str, lines: list[str]
) -> tuple[int, int, str] | None:
    """A new line ``<indent>key: value`` after the last one-line anchor entry of a pool."""
    anchors = [keys[a] for a in _PIN_AFTER if a in keys]
    one_line = [
        (k, v)
        for k, v in anchors
        if v.start_mark.line == v.end_mark.line == k.start_mark.line
        and (
            v.style in (None, "'", '"')
            if isinstance(v, ScalarNode)
            else bool(getattr(v, "flow_style", False))
        )
    ]
    if not one_line:
        return None
    k, v = max(one_line, key=lambda kv: kv[1].end_mark.line)
    line = lines[v.end_mark.line]
    cr = line.endswith("\r")  # a CRLF file: the new line ends in "\r\n" too
    added = f"{chr(13) if cr else ''}\n{' ' * k.start_mark.column}{key}: {value}"
    return v.end_mark.line, len(line) - cr, added
