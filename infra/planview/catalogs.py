"""``--old-catalog``: plan the ``--diff`` old side over an earlier GPU catalog.

A catalog refresh (``python -m infra.catalog_refresh``) rewrites ``infra/core/data/*.csv``: AZs and
zones offering a type, prices. ``--old-catalog REF`` reads those files as they were at a git
``REF`` (or from a directory holding copies), so ``--diff`` shows what the refresh alone changes.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from infra.core.catalog.vendored import DATA_DIR

if TYPE_CHECKING:
    from infra.core.plan import Plan

FLAG = "--old-catalog"


@contextmanager
def old_catalog_dir(spec: str, data_dir: Path = DATA_DIR, flag: str = FLAG) -> Iterator[Path]:
    """A directory with the catalog CSVs of ``spec``: a directory as given, or a git ref's.

    For a ref, every ``*.csv`` of ``data_dir`` is read with ``git show REF:./<name>`` from that
    directory; a file the ref does not have yet is taken as it is now.

    Raises:
        ConfigErrors: git cannot resolve ``REF`` (or it is empty or starts with ``-``), under
            ``flag``.
    """
    from infra.planview.review import git_show

    given = Path(spec)
    if spec and given.is_dir():
        yield given
        return
    # `git show REF:./` lists the directory's entries at REF (and fails on a bad ref).
    listing = git_show(spec, spec, "./", flag=flag, cwd=data_dir).splitlines()[2:]
    with tempfile.TemporaryDirectory(prefix="infra-plan-catalog-") as tmp:
        out = Path(tmp)
        for f in sorted(data_dir.glob("*.csv")):
            if f.name in listing:
                text = git_show(spec, spec, f"./{f.name}", flag=flag, cwd=data_dir)
                (out / f.name).write_text(text, encoding="utf-8", newline="")
            else:
                shutil.copy(f, out / f.name)
        yield out


def widened_zones(old: Plan, new: Plan) -> list[str]:
    """Notes for pools that list no ``zones`` and resolve to zones the old side did not have."""
    from infra.planview.pin import resolved_zones

    moves = new.platform.zones_widen
    if moves is None:
        return []  # a live node group keeps its AZs; the deploy says so (components/eks_nodes)
    before, after = resolved_zones(old), resolved_zones(new)
    old_index = {p.name: i for i, p in enumerate(old.config.pools)}
    notes = []
    for i, zones in after.items():
        name = new.config.pools[i].name
        was = before.get(old_index.get(name, -1))
        added = [z for z in zones if was is not None and z not in was]
        if was and added:
            notes.append(
                f"{new.config.platform.upper()}: gpuPools[{i}] ({name}) lists no zones and the catalog now also offers "
                f"{', '.join(added)}: {moves}; `zones: [{', '.join(was)}]` keeps it "
                "where it runs (`python -m infra.plan --pin-zones --old-catalog REF` writes "
                "the old catalog's zones of every such pool into the stack file)"
            )
    return notes
