"""Generated blocks in Markdown pages: found, compared and replaced by name, text around kept.

A block is the text between ``<!-- generated: NAME ... -->`` and ``<!-- end generated: NAME -->``
(HTML comments, invisible once rendered); everything outside the markers is hand-written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_BLOCK = re.compile(
    r"(?P<begin><!-- generated: (?P<name>[a-z0-9-]+)\b[^>]*-->\n)"
    r"(?P<body>.*?)"
    r"(?P<end><!-- end generated: (?P=name) -->)",
    re.DOTALL,
)


def begin_marker(name: str) -> str:
    return f"<!-- generated: {name} (python -m infra.docsgen --write; do not edit) -->"


def end_marker(name: str) -> str:
    return f"<!-- end generated: {name} -->"


def blocks(text: str) -> dict[str, str]:
    """Name -> body of every generated block in ``text`` (a name twice is an error)."""
    found: dict[str, str] = {}
    for m in _BLOCK.finditer(text):
        if m["name"] in found:
            raise ValueError(f"generated block {m['name']!r} appears twice")
        found[m["name"]] = m["body"]
    return found


def replaced(text: str, bodies: Mapping[str, str]) -> str:
    """``text`` with the body of each named block replaced; a name it lacks is an error."""
    missing = sorted(set(bodies) - set(blocks(text)))
    if missing:
        raise ValueError(f"no generated block named {', '.join(missing)}")

    def body(m: re.Match[str]) -> str:
        new = bodies.get(m["name"])
        if new is None:
            return m[0]
        return m["begin"] + (new if new.endswith("\n") else new + "\n") + m["end"]

    return _BLOCK.sub(body, text)
