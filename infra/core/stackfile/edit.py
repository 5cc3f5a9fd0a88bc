"""Write keys back into a stack file (``--pin-zones``), keeping every other byte as written."""

from __future__ import annotations

from collections.abc import Mapping

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from infra.core.errors import Issues

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
    # The bare key is the same one (Pulumi namespaces it: stackfile.reader.namespaced).
    for names in (("config",), ("gpu-infra:gpuPools", "gpuPools")):
        if not isinstance(node, MappingNode):
            return None
        node = next((v for k, v in node.value if getattr(k, "value", None) in names), None)
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
