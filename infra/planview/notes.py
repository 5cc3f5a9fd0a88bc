"""Notes and warnings on stderr, each with an id a user can silence (``--hide-note ID``).

An id is the note's subject (the text before its first ``:``) as a slug, plus four hex digits of
a hash of the whole text: readable, and stable while the note's text is (a changed note shows
again, which is the point). ``GPU_INFRA_HIDE_NOTES=ID,ID`` silences notes for every command of a
CI job; ``all`` silences every note (warnings that ``pulumi up`` would log too).
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from collections.abc import Iterable, Sequence

ENV = "GPU_INFRA_HIDE_NOTES"


def note_id(text: str) -> str:
    """``eks-3f2a``: the subject's slug and a short hash of the text."""
    subject = text.split(":", 1)[0] if ":" in text[:80] else " ".join(text.split()[:3])
    slug = re.sub(r"[^a-z0-9.]+", "-", subject.lower()).strip("-.")[:40] or "note"
    return f"{slug}-{hashlib.sha256(text.encode()).hexdigest()[:4]}"


def hidden(flags: Iterable[str]) -> frozenset[str]:
    """The ids to silence: ``--hide-note`` flags and the ``GPU_INFRA_HIDE_NOTES`` list."""
    env = [x.strip() for x in os.environ.get(ENV, "").split(",")]
    return frozenset(x for x in (*flags, *env) if x)


# Every note id this process has met (printed or silenced): a --hide-note id never met is a typo
# or a note that changed, and is worth a warning instead of silently hiding nothing.
_MET: set[str] = set()


def shown(text: str, hide: frozenset[str]) -> bool:
    """Whether a note is printed."""
    nid = note_id(text)
    _MET.add(nid)
    return "all" not in hide and nid not in hide


def unknown_ids(flags: Iterable[str]) -> list[str]:
    """The ``--hide-note`` ids that matched no note this run (``all`` always matches)."""
    return [x for x in dict.fromkeys(flags) if x and x != "all" and x not in _MET]


def warn_unknown(flags: Iterable[str]) -> None:
    """One ``warning:`` line on stderr per ``--hide-note`` id that matched no note."""
    for x in unknown_ids(flags):
        print(
            f"warning: --hide-note {x}: no note has this id (each note ends with its id in "
            "[brackets]; a note whose text changed has a new id)",
            file=sys.stderr,
        )


def print_notes(notes: Sequence[str], hide: frozenset[str]) -> None:
    """``note: text [ID]`` on stderr for each note not silenced."""
    for n in notes:
        if shown(n, hide):
            print(f"note: {n} [{note_id(n)}]", file=sys.stderr)


def print_logs(logs: Iterable[tuple[str, str]], notes: Sequence[str], hide: frozenset[str]) -> None:
    """What ``pulumi up`` would log as warning or error, each line once (notes not repeated)."""
    for level, message in logs:
        if level not in ("warning", "error") or message in notes:
            continue
        if level == "error" or shown(message, hide):  # errors are never silenced
            print(f"{level}: {message} [{note_id(message)}]", file=sys.stderr)
