"""The YAML loader of stack files: PyYAML's parser, composing with yaml.v3's rules and our limits.

Each node is checked as it is composed, before anything is constructed or expanded: nesting depth
and the size after alias expansion bounded (a "billion laughs" file is refused in milliseconds),
duplicate keys refused as yaml.v3's ``decoder.mapping`` refuses them (and keys that only collide
through an alias), values whose reading differs between YAML readers refused with what Pulumi
would read, one document only; every error is ``<file>:<line>:<column>: <problem>``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.events import AliasEvent, DocumentStartEvent, StreamEndEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.parser import Parser
from yaml.reader import Reader
from yaml.resolver import BaseResolver
from yaml.scanner import Scanner

from infra.core.errors import Issues, shown
from infra.core.stackfile.goyaml import (
    FLOAT_TAG,
    INT64_MAX,
    INT64_MIN,
    INT_TAG,
    JSON_TAGS,
    MERGE_TAG,
    SCALAR_TAGS,
    STR_TAG,
    TIMESTAMP_TAG,
    YAML11_BOOLS,
    YAML11_SEXAGESIMAL,
    finite,
    go_int,
    go_key_text,
    go_time_string,
    go_yaml_reads,
    go_yaml_tag,
    is_secure,
    overflows,
)

# Deepest nesting accepted: config > gpu-infra:gpuOperator > values > chart keys need about 10.
MAX_DEPTH = 48
# Values after alias expansion (every scalar, list and mapping counts 1): far above any real stack,
# far below what exhausts memory when a validator or serializer walks the expanded tree.
MAX_NODES = 20_000


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
            return go_yaml_tag(value) if implicit[0] else STR_TAG
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
        # Nesting depth below each finished node once aliases are expanded (1: a scalar).
        self._heights: dict[int, int] = {}
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
                # Expanded, the anchored node nests where the alias stands: the limit holds for
                # the tree a reader of the values (Helm, the API server) walks.
                if self._depth + self._heights[id(node)] > MAX_DEPTH:
                    raise _Refused(
                        f"nested deeper than {MAX_DEPTH} levels through alias *{event.anchor} "
                        f"({self._heights[id(node)]} levels placed at level {self._depth})",
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
            elif node.tag not in JSON_TAGS:
                raise _Refused(self._not_json(node), node.start_mark)
            children = _children(node)
            self._heights[id(node)] = 1 + max((self._heights[id(c)] for c in children), default=0)
            self._sizes[id(node)] = size = 1 + sum(self._sizes[id(c)] for c in children)
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
            f"{go_yaml_reads(node)}; write the value without the tag"
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
        if plain and is_key and value in YAML11_BOOLS:
            raise _Refused(
                f"{where}key {value!r} is read as boolean (YAML 1.1); quote it: '{value}'",
                node.start_mark,
            )
        if plain and YAML11_SEXAGESIMAL.fullmatch(value):
            raise _Refused(
                f"{where}{value!r} is read as a base-60 number (YAML 1.1 sexagesimal) by some "
                f"readers and as the string '{value}' by Pulumi; quote it: '{value}'",
                node.start_mark,
            )
        if getattr(node, "explicit", False) and node.tag in SCALAR_TAGS:
            _check_explicit_tag(node, where)
        if node.tag == TIMESTAMP_TAG:
            raise _Refused(self._timestamp(node), node.start_mark)
        number = go_int(value) if plain or node.tag == INT_TAG else None
        if number is not None and not INT64_MIN <= number <= INT64_MAX:
            raise _Refused(
                f"{where}integer {shown(value, 40)} is outside the 64-bit range the "
                "Pulumi and Kubernetes APIs take",
                node.start_mark,
            )
        overflow = plain and node.tag == STR_TAG and overflows(value)
        if (node.tag == FLOAT_TAG and not finite(value)) or overflow:
            raise _Refused(
                f"{where}{value} is not a finite number (JSON has none)", node.start_mark
            )
        if node.tag not in JSON_TAGS and node.tag != MERGE_TAG:
            raise _Refused(self._not_json(node), node.start_mark)

    def _timestamp(self, node: ScalarNode) -> str:
        """yaml.v3 reads an unquoted date as a time.Time; Pulumi stores its ``String()``."""
        return (
            f"{self._path()}a YAML timestamp is not a JSON value; Pulumi reads "
            f"{node.value} as the time {go_time_string(node.value)!r}; quote it to pass "
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
            for text in dict.fromkeys((key.value, go_key_text(key))):
                if (j := first.setdefault(text, i)) != i:
                    where = _key_path([*self._keys[1:], key.value])
                    mark = self._alias_keys.get((id(node), i), key.start_mark)
                    raise _Refused(self._duplicate(where, key, node.value[j][0]), mark)
        # A whole config value may be a secret (`pulumi config set --secret`); nested, it is not.
        if self._keys[1:2] == ["config"] and len(self._keys) > 3 and is_secure(node):
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
        if key.tag == MERGE_TAG:
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
        number = go_int(str(self.construct_scalar(node)))
        if number is None:
            raise ValueError(f"{shown(node.value)} is not an integer")
        return number


_Loader.add_constructor("tag:yaml.org,2002:int", _Loader.construct_go_int)  # pyright: ignore[reportArgumentType]


def _check_explicit_tag(node: ScalarNode, where: str) -> None:
    """yaml.v3 fails "cannot decode !!str `yes` as a !!bool" where PyYAML would convert."""
    got = go_yaml_tag(node.value)
    if got == node.tag or (node.tag == FLOAT_TAG and got == INT_TAG):
        return
    want, have = node.tag.rsplit(":", 1)[1], got.rsplit(":", 1)[1]
    raise _Refused(
        f"{where}Pulumi's YAML reader cannot decode !!{have} `{shown(node.value, 40)[1:-1]}` as a "
        f"!!{want}; write the value without the tag",
        node.start_mark,
    )


def _check_version(loader: _Loader) -> None:
    """yaml.v3 reads ``%YAML 1.1`` documents only (or none named): go-yaml/yaml v3 parserc.go
    ``yaml_parser_process_directives`` fails "found incompatible YAML document" on any other
    version, where libyaml takes 1.2 too."""
    if not loader.check_event(DocumentStartEvent):
        return
    event = loader.peek_event()
    version = getattr(event, "version", None)
    if version is not None and tuple(version) != (1, 1):
        raise _Refused(
            f"found incompatible YAML document: %YAML {'.'.join(map(str, version))}; Pulumi's "
            "YAML reader (yaml.v3) reads only '%YAML 1.1' documents: remove the directive",
            event.start_mark,
        )


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


def load_yaml(p: Path, text: str, issues: Issues) -> Any:
    loader: _Loader | None = None
    try:
        if bad := Reader.NON_PRINTABLE.search(text):  # YAML 1.1 section 5.1 character set
            pos = bad.start()
            raise yaml.reader.ReaderError(str(p), pos, ord(bad.group()), "unicode", "")
        loader = _Loader(text)
        loader.get_event()  # stream start
        _check_version(loader)
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
