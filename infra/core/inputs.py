"""Paths into a resource's inputs, as ``--diff`` compares them: the leaf paths where two input
trees differ (``a.b[0].c``), the value at such a path, and whether a rule's property path covers
or is set by a changed one. Pure, and shared by the replace rules (``infra.core.diff``) and the
disruption table (``infra.core.disruption``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def covers(rule_path: str, changed: str) -> bool:
    """``nodeConfig.guestAccelerators`` covers ``nodeConfig.guestAccelerators[0].count``."""
    bare = strip_indexes(changed)
    return bare == rule_path or bare.startswith(rule_path + ".")


def forces(rule_path: str, changed: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """A change at or below ``rule_path``, or of a whole block (added, removed, a list item added)
    that sets ``rule_path`` on either side. A block whose ForceNew children are all unset is
    updated in place: the provider diffs children, not the block (terraform-plugin-sdk
    helper/schema: ForceNew is per attribute; e.g. privateClusterConfig.enablePrivateNodes is
    updatable while its masterIpv4CidrBlock is ForceNew)."""
    block = strip_indexes(changed)
    if rule_path.endswith(".#"):  # the block itself is ForceNew: adding or removing it replaces
        return block == rule_path[:-2]
    if covers(rule_path, changed):
        return True
    if not rule_path.startswith(block + "."):
        return False
    rest = rule_path[len(block) + 1 :].split(".")
    return any(_sets(_value_at(side, changed), rest) for side in (old, new))


def _value_at(inputs: Any, path: str) -> Any:
    """The value at a changed path (dotted, with ``[i]`` list indexes); None when absent."""
    node = inputs
    for part in path.split("."):
        key, _, tail = part.partition("[")
        node = node.get(key) if isinstance(node, Mapping) else None
        for idx in tail.split("[") if tail else ():
            i = int(idx.rstrip("]"))
            node = node[i] if isinstance(node, list) and i < len(node) else None
    return node


def _sets(value: Any, rest: Sequence[str]) -> bool:
    """Whether ``value`` (a block, a list of blocks, or a leaf) holds a non-null value at ``rest``.
    A non-null value of another shape where a block is expected counts as set (never fail open)."""
    if isinstance(value, list):
        return any(_sets(v, rest) for v in value)
    if not rest or value is None:
        return value is not None
    return _sets(value.get(rest[0]), rest[1:]) if isinstance(value, Mapping) else True


def strip_indexes(path: str) -> str:
    out, depth = [], 0
    for ch in path:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def changed_paths(old: Any, new: Any, prefix: str = "") -> list[str]:
    """Leaf paths where ``old`` and ``new`` differ (a key only on one side counts as changed)."""
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        out: list[str] = []
        for k in sorted(set(old) | set(new)):
            p = f"{prefix}.{k}" if prefix else str(k)
            if k not in old or k not in new:
                out.append(p)
            else:
                out.extend(changed_paths(old[k], new[k], p))
        return out
    if (
        isinstance(old, list)
        and isinstance(new, list)
        and len(old) == len(new)
        and all(isinstance(x, Mapping | list) for x in (*old, *new))
    ):
        out = []
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            out.extend(changed_paths(a, b, f"{prefix}[{i}]"))
        return out
    return [] if old == new else [prefix]


def value_at(inputs: Any, path: str, absent: Any = None) -> Any:
    """The value at a path of ``changed_paths`` (``a.b[0].c``) in ``inputs``; ``absent`` if unset.

    A key may hold dots itself (tag and label keys such as ``karpenter.sh/discovery``): where a
    part is no key, it is joined with the next parts until one is.
    """
    node: Any = inputs
    parts = [p for p in path.replace("[", ".[").split(".") if p]
    i = 0
    while i < len(parts):
        part = parts[i]
        if part.startswith("["):
            n = int(part[1:-1])
            if not isinstance(node, list) or n >= len(node):
                return absent
            node, i = node[n], i + 1
            continue
        if not isinstance(node, Mapping):
            return absent
        j = next((j for j in range(i + 1, len(parts) + 1) if ".".join(parts[i:j]) in node), None)
        if j is None:
            return absent
        node, i = node[".".join(parts[i:j])], j
    return node
