"""List every function in infra/ and quota/ longer than a screen (80 lines, decorators excluded).

A function's length is ``end_lineno - lineno + 1`` of its ``def`` (docstring and nested functions
included). Exits 1 when any is listed, so it can gate CI or a pre-commit hook.

    .venv/bin/python scripts/long_functions.py [--max 80] [PATH ...]
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 80
DEFAULT_ROOTS = ("infra", "quota")


def long_functions(source: str, limit: int = MAX_LINES) -> Iterator[tuple[str, int, int]]:
    """(qualified name, first line, length) of every function in ``source`` over ``limit`` lines."""

    def walk(node: ast.AST, prefix: str) -> Iterator[tuple[str, int, int]]:
        for child in ast.iter_child_nodes(node):
            name = prefix
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}."
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (child.end_lineno or child.lineno) - child.lineno + 1
                if length > limit:
                    yield name.rstrip("."), child.lineno, length
            yield from walk(child, name)

    yield from walk(ast.parse(source), "")


def scan(paths: Iterable[Path], limit: int = MAX_LINES) -> list[str]:
    """``path:line: name is N lines`` for every long function under ``paths``, sorted."""
    found: list[str] = []
    for root in paths:
        for path in sorted(root.rglob("*.py")) if root.is_dir() else [root]:
            for name, line, length in long_functions(path.read_text(encoding="utf-8"), limit):
                rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
                found.append(f"{rel}:{line}: {name} is {length} lines (max {limit})")
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max", type=int, default=MAX_LINES, help="longest allowed (default 80)")
    ap.add_argument("paths", nargs="*", type=Path, help="files or folders (default infra quota)")
    a = ap.parse_args(argv)
    found = scan(a.paths or [ROOT / d for d in DEFAULT_ROOTS], a.max)
    print("\n".join(found) if found else f"no function over {a.max} lines")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
