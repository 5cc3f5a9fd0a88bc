"""What a plan read from the live platform before deciding: one frozen value per stack.

Pure data. On ``pulumi up`` the observe step of the stack's platform (``infra.observe``) reads
every live value the plan decides over, before planning; ``build_plan`` records it in the Plan and
``python -m infra.plan --json`` shows it as ``"observed"``. Offline nothing is read:
``Observed.none()``, or for ``--diff`` what a deploy of the old side leaves running. A read that
finds nothing is an empty observation; one that fails is ``ObserveError``, never an empty one.

The value itself is the platform's own type (``infra.core.<platform>.observed``); this container
holds it under the platform's name without knowing which platforms there are (``observed_from_json``
asks the registry, ``infra.core.platforms``, for the type to read one back with).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypedDict, TypeVar

from infra.core.errors import ConfigIssue
from infra.core.platforms import ENTRIES, load

T = TypeVar("T")


class Observation(Protocol):
    """One platform's observed value."""

    def to_json(self) -> dict[str, Any]:
        """Its JSON form (``from_json`` of its type reads it back)."""
        ...


class ClusterAccess(TypedDict):
    """What reaching an observed cluster takes (its kubeconfig's parts), on every platform."""

    name: str
    endpoint: str
    certificate_authority: str


class _HasAccess(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def endpoint(self) -> str: ...
    @property
    def certificate_authority(self) -> str: ...


def access_to_json(c: _HasAccess) -> dict[str, Any]:
    """A cluster's ``ClusterAccess`` in its camelCase JSON form (``access_from_json`` reads it)."""
    return {"name": c.name, "endpoint": c.endpoint, "certificateAuthority": c.certificate_authority}


def access_from_json(c: Mapping[str, Any]) -> ClusterAccess:
    """The ``ClusterAccess`` that ``access_to_json`` wrote."""
    return ClusterAccess(
        name=str(c["name"]),
        endpoint=str(c["endpoint"]),
        certificate_authority=str(c["certificateAuthority"]),
    )


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


def observed_from_json(doc: Mapping[str, Any]) -> Observed:
    """The ``Observed`` that ``Observed.to_json`` wrote (``{}``: nothing read).

    Raises:
        ValueError: more than one platform, or one that observes nothing, or a key its type
            never writes.
    """
    kinds = {name: e.observation for name, e in ENTRIES.items() if e.observation is not None}
    if not doc:
        return Observed.none()
    if unknown := sorted(set(doc) - set(kinds)):
        raise ValueError(
            f"observed: unknown platform(s) {', '.join(unknown)} "
            f"(those that observe: {', '.join(sorted(kinds))})"
        )
    if len(doc) != 1:
        raise ValueError(f"observed: one platform's observation, not {len(doc)}")
    ((name, value),) = doc.items()
    return Observed(name, load(kinds[name]).from_json(value))


class ObserveError(Exception):
    """A live read that failed for another reason than "not found": the run stops, since an
    unread value is unknown, not absent. ``str()`` is ``<key path>: <reason>``."""

    def __init__(self, path: str, reason: str) -> None:
        self.issue = ConfigIssue(path, reason)
        super().__init__(str(self.issue))


# The wrappers around a bridged provider's failed read, outermost first: the Python SDK's
# "invoke of <tok> failed: <error>" (pulumi/pulumi sdk/python/lib/pulumi/runtime/invoke.py), the
# engine's "invocation of <tok> returned an error: <err>" (pkg/resource/deploy/source_eval.go
# ResourceMonitor.Invoke), the bridge's "invoking <tok>: <err>" (pulumi/pulumi-terraform-bridge
# pkg/tfbridge/provider.go Invoke). Inside them the provider's diagnostics, joined by go-multierror
# (pkg/tfshim/sdk-v2/diagnostics.go ``errors``): "1 error occurred:\n\t* <reason>\n\n", or
# "<n> errors occurred:\n\t* <a>\n\t* <b>\n\n" (hashicorp/go-multierror format.go ListFormatFunc).
_WRAPPERS = re.compile(
    r"^(?:invoke of \S+ failed: |invocation of \S+ returned an error: |invoking \S+: )+"
)
_BULLET = "\t* "


def failure_reason(error: str) -> str:
    """The provider's own reason(s) for a failed read, in one line: every go-multierror bullet
    (joined by ``; ``), else the first line without the SDK's, engine's and bridge's wrappers."""
    bullets = [ln[len(_BULLET) :].strip() for ln in error.splitlines() if ln.startswith(_BULLET)]
    if bullets:
        return "; ".join(b for b in bullets if b) or "no reason given"
    first = _WRAPPERS.sub("", (error.strip().splitlines() or [""])[0]).removesuffix(" ()")
    return first.strip() or "no reason given"
