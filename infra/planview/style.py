"""Colour for the plan's text output, where ``infra.cli.colour_enabled`` allows it.

The text is the same with and without colour: only ANSI SGR codes are added around parts of a
line.
"""

from __future__ import annotations

import re

from infra.cli import colour_enabled

__all__ = ["colour_enabled", "colour_line", "colour_text", "paint"]

_SGR = {"bold": "1", "red": "31", "green": "32", "yellow": "33", "magenta": "35", "dim": "2"}
# A diff line's op symbol, as print_review writes it ("{symbol:>2} {op:<7} ...").
_OPS = {" +": "green", " ~": "yellow", "+-": "magenta", " -": "red", " ?": "yellow"}
_HEADER = re.compile(r"^(GPU POOL|STACK|TYPE)\s")


def paint(text: str, style: str) -> str:
    """``text`` wrapped in the ANSI codes of ``style``."""
    return f"\033[{_SGR[style]}m{text}\033[0m"


def colour_line(line: str) -> str:
    """One line of the plan or diff text with colour added where it helps the eye."""
    if _HEADER.match(line):
        return paint(line, "bold")
    style = _OPS.get(line[:2])
    if style and line[2:3] == " ":
        return paint(line, style)
    for word, style in (("DISRUPTIVE", "red"), ("NOTE", "yellow")):
        if line.lstrip().startswith(word + ":"):
            return line.replace(word, paint(word, style), 1)
    for prefix in ("cost", "totals", "cost at minimum", "cost at maximum"):
        if line.startswith(prefix + ":"):
            return paint(prefix, "bold") + line[len(prefix) :]
    return line


def colour_text(text: str) -> str:
    """Every line of ``text`` through ``colour_line``."""
    return "\n".join(colour_line(x) for x in text.split("\n"))
