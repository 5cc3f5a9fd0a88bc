"""Config problems as data: every problem names its key path, the value and the rule.

Problems are collected and raised once (``ConfigErrors``) so a user sees all of them in one run.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

# The offending value is shown at most this long (a 100 KB path is named, not echoed).
MAX_VALUE = 80
# One problem, one line: nothing a user must scroll through.
MAX_LINE = 400
# A generated or pasted file can hold thousands of problems; the first ones are what gets fixed.
MAX_SHOWN_ISSUES = 50


def shown(value: Any, limit: int = MAX_VALUE) -> str:
    """``repr(value)`` cut to ``limit`` characters, saying how long it was when cut.

    Containers are summarised before ``repr`` so a huge (or alias-shared) value is never rendered whole.
    """
    if isinstance(value, dict | list | tuple | set) and len(value) > 8:
        return f"<a {type(value).__name__} of {len(value)} items>"
    text = _bounded_repr(value, limit + 1)
    if len(text) <= limit:
        return text
    size = f" ({len(value)} characters)" if isinstance(value, str) else ""
    return text[: limit - 1] + "\u2026" + size


def _bounded_repr(value: Any, limit: int, depth: int = 0) -> str:
    """``repr`` that stops once ``limit`` characters are produced (never walks a whole tree)."""
    if isinstance(value, str):
        return repr(value[:limit] + ("." if len(value) > limit else ""))[: limit + 1]
    if depth > 4:
        return "\u2026"
    if isinstance(value, dict):
        items = (
            f"{_bounded_repr(k, limit, depth + 1)}: {_bounded_repr(v, limit, depth + 1)}"
            for k, v in value.items()
        )
        return "{" + _joined_until(items, limit) + "}"
    if isinstance(value, list | tuple):
        return "[" + _joined_until((_bounded_repr(v, limit, depth + 1) for v in value), limit) + "]"
    return repr(value)[: limit + 1]


def _joined_until(parts: Iterable[str], limit: int) -> str:
    """``", ".join(parts)``, rendering parts only until ``limit`` characters are passed."""
    out: list[str] = []
    used = 2
    for part in parts:
        out.append(part)
        used += len(part) + 2
        if used > limit:
            break
    return ", ".join(out)


@dataclass(frozen=True, slots=True)
class ConfigIssue:
    """One problem in a stack file.

    Attributes:
        path: key path as the user wrote it, e.g. ``gpuPools[0].zones[1]`` or ``gcp:region``.
        reason: a sentence with the offending value and the rule it breaks.
    """

    path: str
    reason: str

    def __str__(self) -> str:
        # A last guard: a reason built from a huge value still prints as one readable line.
        line = f"{self.path}: {self.reason}".replace("\n", "\\n")
        return line if len(line) <= MAX_LINE else line[: MAX_LINE - 1] + "\u2026"


class ConfigErrors(Exception):
    """All problems found in a stack file; ``str()`` is one ``<path>: <reason>`` line per problem."""

    def __init__(self, issues: Iterable[ConfigIssue]) -> None:
        # Stable order and no repeats, so output and tests are deterministic.
        self.issues: tuple[ConfigIssue, ...] = tuple(dict.fromkeys(issues))
        super().__init__(str(self))

    def __str__(self) -> str:
        shown_ = [str(i) for i in self.issues[:MAX_SHOWN_ISSUES]]
        if (more := len(self.issues) - MAX_SHOWN_ISSUES) > 0:
            shown_.append(f"\u2026 and {more} more problem{'s' if more > 1 else ''}")
        return "\n".join(shown_)


class Issues:
    """Collector for ``ConfigIssue``: add problems as they are found, raise once at the end."""

    def __init__(self) -> None:
        self._items: list[ConfigIssue] = []

    def add(self, path: str, reason: str) -> None:
        """Record one problem."""
        self._items.append(ConfigIssue(path, reason))

    def extend(self, issues: Iterable[ConfigIssue]) -> None:
        """Record problems found elsewhere."""
        self._items.extend(issues)

    def count(self) -> int:
        """How many problems are recorded so far (to tell whether a step added any)."""
        return len(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)

    def raise_if_any(self) -> None:
        """Raise ``ConfigErrors`` with everything recorded, if anything was."""
        if self._items:
            raise ConfigErrors(self._items)


def join_path(*parts: str | int | None) -> str:
    """Build a key path: ``join_path("gpuPools", 0, "zones", 1) == "gpuPools[0].zones[1]"``.

    ``None`` parts are skipped (an index that does not apply).
    """
    out = ""
    for p in parts:
        if p is None:
            continue
        if isinstance(p, int):
            out += f"[{p}]"
        elif out:
            out += f".{p}"
        else:
            out = p
    return out


def closest(word: object, choices: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The choice closest to ``word`` (case and ``_``/``-``/space ignored), or ``None``."""
    if not isinstance(word, str):
        return None
    norm = {c.lower().replace("_", "-").replace(" ", "-"): c for c in choices}
    got = word.lower().replace("_", "-").replace(" ", "-")
    if got in norm:
        return norm[got]
    close = difflib.get_close_matches(got, list(norm), n=1, cutoff=cutoff)
    return norm[close[0]] if close else None


def did_you_mean(word: object, choices: Iterable[str], cutoff: float = 0.6) -> str:
    """``"; did you mean 'x'?"`` for the closest choice (case and ``_``/``-`` ignored), else ``""``."""
    guess = closest(word, choices, cutoff)
    return f"; did you mean '{guess}'?" if guess is not None else ""


class RuleError(ValueError):
    """A field rule's failure; ``at`` extends the key path below the field (a dict key, an index)."""

    def __init__(self, reason: str, at: tuple[str | int, ...] = ()) -> None:
        super().__init__(reason)
        self.at = at
