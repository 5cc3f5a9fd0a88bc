"""One platform's part of the stack config: what ``stack.parse`` asks of the stack's platform.

Each platform's schema module (``gke``, ``eks``, ``kubernetes`` in this package) holds its
``PlatformConfig``; the registry (``infra.core.platforms``) names it, so the parser imports only
the stack's own platform's models (each costs its import and pydantic schema build).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infra.core.config.base import ClusterBase, PoolBase
from infra.core.config.inert import Inert
from infra.core.errors import Issues
from infra.core.platforms import ENTRIES, PlatformName, load

# (region, zone, project) of a stack from its validated cluster block and its provider keys, for
# a plan over the catalog in a data directory (where the platform's regions are checked).
Location = tuple[str | None, str | None, str | None]
Locate = Callable[[Any, Mapping[str, Any], Issues, Path], Location]


def nowhere(
    _cluster: Any, _providers: Mapping[str, Any], _issues: Issues, _data_dir: Path
) -> Location:
    """The location of a stack whose cluster is in no cloud: no region, zone or project."""
    return None, None, None


@dataclass(frozen=True, slots=True)
class PlatformConfig:
    """One platform's part of the stack config.

    Attributes:
        cluster: the model of its ``cluster`` block.
        pool: the model of each of its ``gpuPools`` entries.
        titles: (its section in the config reference, the prefix of its blocks' headings there).
        locate: where a stack of it lives: (region, zone, project) from its validated cluster
            block and the provider keys, each disagreeing key reported.
        inert: its keys that would not apply with its other keys as given (``inert.check_inert``).
    """

    cluster: type[ClusterBase]
    pool: type[PoolBase]
    titles: tuple[str, str]
    locate: Locate = nowhere
    inert: tuple[Inert, ...] = ()


def platform_config(platform: PlatformName) -> PlatformConfig:
    """The config part of ``platform`` (its schema module imported now)."""
    found: PlatformConfig = load(ENTRIES[platform].config)
    return found
