"""The code layout of ``docs/architecture.md``, generated from package and module docstrings.

Every package under ``infra/`` and ``quota/`` is listed with the first paragraph of its
``__init__`` docstring, every module under it with the first paragraph of its own, so the map
changes when the code does. A module without a docstring is an error, not a gap.
"""

from __future__ import annotations

import ast
import inspect
import tokenize
from collections.abc import Iterator
from pathlib import Path

from infra.docsgen.config_ref import item

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("infra", "quota")


def docstring(source: str) -> str | None:
    """The module docstring of ``source``: its first statement if that is a string. Read from the
    tokens, so a large module is not parsed whole."""
    lines = iter(source.splitlines(keepends=True))
    for tok in tokenize.generate_tokens(lambda: next(lines, "")):
        if tok.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.ENCODING):
            continue
        if tok.type != tokenize.STRING:
            return None
        value = ast.literal_eval(tok.string)
        return inspect.cleandoc(value) if isinstance(value, str) else None
    return None


def summary(path: Path) -> str:
    """The first paragraph of a module's docstring, on one line, as Markdown."""
    doc = docstring(path.read_text(encoding="utf-8"))
    if not doc:
        raise ValueError(f"{path.relative_to(ROOT)}: no module docstring")
    first = doc.strip().split("\n\n")[0]
    return " ".join(first.split()).replace("``", "`")


def _package(directory: Path, depth: int) -> Iterator[str]:
    """The package's line, then its modules', then each subpackage's, nested one level."""
    rel = directory.relative_to(ROOT).as_posix()
    yield item(f"`{rel}/`: {summary(directory / '__init__.py')}", "  " * depth)
    children = sorted(directory.iterdir())
    for child in children:
        if child.suffix == ".py" and child.name != "__init__.py":
            yield item(f"`{child.name}`: {summary(child)}", "  " * (depth + 1))
    for child in children:
        if child.is_dir() and (child / "__init__.py").exists():
            yield from _package(child, depth + 1)


def render() -> str:
    """The generated part of the code layout section: one nested list of packages and modules."""
    lines: list[str] = []
    for name in PACKAGES:
        lines += _package(ROOT / name, 0)
    return "\n".join(lines) + "\n"
