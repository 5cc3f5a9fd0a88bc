"""What a plan read from the live platform before deciding: one frozen value per stack.

Pure data. On ``pulumi up`` the observe step of the stack's platform (``infra.observe``) reads
every live value the plan decides over, before planning; ``build_plan`` records it in the Plan and
``python -m infra.plan --json`` shows it as ``"observed"``. Offline nothing is read:
``Observed.none()``, or for ``--diff`` what a deploy of the old side leaves running. A read that
finds nothing is an empty observation; one that fails is ``ObserveError``, never an empty one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from infra.core.errors import ConfigIssue

if TYPE_CHECKING:  # a platform's types are imported only to read its JSON (start-up stays lean)
    from infra.core.eks.observed import EksObserved
    from infra.core.gke.observed import GkeObserved


@dataclass(frozen=True, slots=True, kw_only=True)
class Observed:
    """Per platform, what its observe step read; a platform that read nothing is ``None``
    (the ``kubernetes`` platform reads nothing: its cluster is the kubeconfig's)."""

    gke: GkeObserved | None = None
    eks: EksObserved | None = None

    @classmethod
    def none(cls) -> Observed:
        """Nothing read: an offline plan."""
        return cls()

    def to_json(self) -> dict[str, Any]:
        """``{platform: {...}}`` for each platform that read something; ``{}`` offline."""
        out: dict[str, Any] = {}
        if self.gke is not None:
            out["gke"] = self.gke.to_json()
        if self.eks is not None:
            out["eks"] = self.eks.to_json()
        return out

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Observed:
        """The value ``to_json`` wrote.

        Raises:
            ValueError: a key ``to_json`` never writes.
        """
        if unknown := sorted(set(doc) - {"gke", "eks"}):
            raise ValueError(f"observed: unknown platform(s) {', '.join(unknown)}")
        from infra.core.eks.observed import EksObserved
        from infra.core.gke.observed import GkeObserved

        gke, eks = doc.get("gke"), doc.get("eks")
        return cls(
            gke=GkeObserved.from_json(gke) if gke is not None else None,
            eks=EksObserved.from_json(eks) if eks is not None else None,
        )


class ObserveError(Exception):
    """A live read that failed for another reason than "not found": the run stops, since an
    unread value is unknown, not absent. ``str()`` is ``<key path>: <reason>``."""

    def __init__(self, path: str, reason: str) -> None:
        self.issue = ConfigIssue(path, reason)
        super().__init__(str(self.issue))
