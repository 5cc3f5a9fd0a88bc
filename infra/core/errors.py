"""Config problems as data: every problem names its key path, the value and the rule.

Problems are collected and raised once (``ConfigErrors``) so a user sees all of them in one run.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


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
        return f"{self.path}: {self.reason}"


class ConfigErrors(Exception):
    """All problems found in a stack file; ``str()`` is one ``<path>: <reason>`` line per problem."""

    def __init__(self, issues: Iterable[ConfigIssue]) -> None:
        # Stable order and no repeats, so output and tests are deterministic.
        self.issues: tuple[ConfigIssue, ...] = tuple(dict.fromkeys(issues))
        super().__init__(str(self))

    def __str__(self) -> str:
        return "\n".join(str(i) for i in self.issues)


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
