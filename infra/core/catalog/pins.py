"""Every upstream version the plan emits, as data: ``infra/core/data/pins.csv``.

One row per pin (a chart, an image, an AMI alias, a manifest's commit, a vendored values file),
each with its source and the day it was pinned; code asks for a pin by name (and key) and never
spells a version. Artefacts vendored from a pin (the Karpenter CRDs, chart facts files, the GPU
Operator values files) are checked against their row by ``tests/unit/test_pins.py``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from infra.core.catalog.vendored import DATA_DIR, table

PINS_FILE = "pins.csv"
Kind = Literal["chart", "image", "alias", "manifest", "values"]
KINDS: tuple[Kind, ...] = ("chart", "image", "alias", "manifest", "values")
_DAY = re.compile(r"20[0-9]{2}-[01][0-9]-[0-3][0-9]")
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


@dataclass(frozen=True, slots=True)
class Pin:
    """One row of ``pins.csv`` (the file's header explains each column)."""

    pin: str
    key: str
    kind: Kind
    repository: str
    name: str
    version: str
    digest: str
    commit: str
    source: str
    as_of: str

    @property
    def image(self) -> str:
        """The image reference: ``repository[:tag][@digest]``."""
        tag = f":{self.version}" if self.version else ""
        return f"{self.repository}{tag}{'@' + self.digest if self.digest else ''}"

    @property
    def chart(self) -> str:
        """The chart as Helm takes it: its name beside a repository URL, or the whole ``oci://``
        reference (Helm pulls an OCI chart by reference; it has no repository URL)."""
        return f"{self.repository}/{self.name}" if self.oci else self.name

    @property
    def repo(self) -> str:
        """The chart repository URL; empty for an OCI chart."""
        return "" if self.oci else self.repository

    @property
    def oci(self) -> bool:
        return self.repository.startswith("oci://")


def _problem(p: Pin) -> str | None:
    if p.kind not in KINDS:
        return f"kind {p.kind!r} is not one of {', '.join(KINDS)}"
    if not p.source or not _DAY.fullmatch(p.as_of):
        return "needs a source and an as_of day (YYYY-MM-DD)"
    if p.digest and not _DIGEST.fullmatch(p.digest):
        return f"digest {p.digest!r} is not sha256:<64 hex>"
    if p.kind == "chart" and not (p.repository and p.name and p.version):
        return "a chart needs a repository, a name and a version"
    if p.kind == "image" and not (p.repository and (p.version or p.digest)):
        return "an image needs a repository and a tag or a digest"
    if p.kind in ("alias", "values") and not p.version:
        return f"an {p.kind} pin needs a version"
    if p.kind == "manifest" and not p.commit:
        return "a manifest pin needs the commit it was read at"
    return None


def all_pins(data_dir: Path) -> tuple[Pin, ...]:
    """Every pin, in file order; a malformed row or a repeated (pin, key) raises ValueError.

    ``data_dir``: a catalog directory (``--old-catalog``) whose ``pins.csv`` the old side of a
    diff is planned with; one without the file falls back to today's."""
    return _all_pins(data_dir if (data_dir / PINS_FILE).exists() else DATA_DIR)


@functools.cache
def _all_pins(data_dir: Path) -> tuple[Pin, ...]:
    out: list[Pin] = []
    seen: set[tuple[str, str]] = set()
    for r in table(PINS_FILE, data_dir):
        p = Pin(**{f: r[f] for f in Pin.__dataclass_fields__})  # type: ignore[arg-type]
        if (problem := _problem(p)) or (p.pin, p.key) in seen:
            raise ValueError(f"{PINS_FILE}: {p.pin} {p.key}: {problem or 'listed twice'}".strip())
        seen.add((p.pin, p.key))
        out.append(p)
    return tuple(out)


def pins(name: str, data_dir: Path) -> dict[str, Pin]:
    """The rows of pin ``name`` by key, in file order (KeyError if there are none)."""
    found = {p.key: p for p in all_pins(data_dir) if p.pin == name}
    if not found:
        raise KeyError(f"{PINS_FILE} has no pin {name!r}")
    return found


def pin(name: str, data_dir: Path, key: str = "") -> Pin:
    """Pin ``name`` of the catalog in ``data_dir`` (its row ``key`` when it has several); KeyError
    if the file lacks it."""
    try:
        return pins(name, data_dir)[key]
    except KeyError:
        raise KeyError(f"{PINS_FILE} has no pin {name!r} {key!r}") from None
