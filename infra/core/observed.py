"""What a plan read from the live platform before deciding: one frozen value per stack.

Pure data. On ``pulumi up`` the observe step of the stack's platform (``infra.observe``) reads
every live value the plan decides over, before planning; ``build_plan`` records it in the Plan and
``python -m infra.plan --json`` shows it as ``"observed"``. Offline nothing is read:
``Observed.none()``, or for ``--diff`` what a deploy of the old side leaves running. A read that
finds nothing is an empty observation; one that fails is ``ObserveError``, never an empty one.

The value itself is the platform's own type (``infra.core.<platform>.observed``); this container
holds it under the platform's name without knowing which platforms there are (the registry,
``infra.core.platforms``, reads one back from JSON).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from infra.core.errors import ConfigIssue

T = TypeVar("T")


class Observation(Protocol):
    """One platform's observed value."""

    def to_json(self) -> dict[str, Any]:
        """Its JSON form (``from_json`` of its type reads it back)."""
        ...


@dataclass(frozen=True, slots=True)
class Observed:
    """What the observe step of ``platform`` read (``value``); ``Observed.none()``: nothing
    (offline, or a platform that reads nothing: ``kubernetes``'s cluster is its kubeconfig's)."""

    platform: str = ""
    value: Observation | None = None

    @classmethod
    def none(cls) -> Observed:
        """Nothing read: an offline plan."""
        return cls()

    def part(self, kind: type[T]) -> T | None:
        """The observed value if it is a ``kind`` (a platform's planner asks for its own type)."""
        return self.value if isinstance(self.value, kind) else None

    def to_json(self) -> dict[str, Any]:
        """``{platform: {...}}`` when something was read; ``{}`` offline."""
        return {self.platform: self.value.to_json()} if self.value is not None else {}


class ObserveError(Exception):
    """A live read that failed for another reason than "not found": the run stops, since an
    unread value is unknown, not absent. ``str()`` is ``<key path>: <reason>``."""

    def __init__(self, path: str, reason: str) -> None:
        self.issue = ConfigIssue(path, reason)
        super().__init__(str(self.issue))
