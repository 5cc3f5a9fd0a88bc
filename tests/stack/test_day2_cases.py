"""Day-2 cases as data: ``tests/day2/<case>/step1.yaml`` (the running stack), ``step2.yaml`` (the
edit) and ``expect.json`` (what ``python -m infra.plan --stack step2 --diff step1`` must answer).

``expect.json`` keys: ``why`` (the receiver's rule, for the reader), ``args`` (extra flags),
``exit``, ``disruptive`` (resource name -> text its disruption names), ``changes`` (resource
name -> fields its change must have; ``propertiesUnder``: every changed path starts so),
``stderr`` (texts stderr names), ``stderrNot`` (texts it must not name), ``oldRows`` (the old
side is planned with ``--old-catalog`` over a copy of today's catalog whose CSVs are edited as
listed, as the catalog of an older gpu-infra or of the day before a refresh: ``{"<file>.csv":
[{"where": {column: value}, "drop": true} | {"where": {...}, "set": {column: value}}]}``; each
edit must match a row), ``nothingElse`` (``true``: ``changes`` names every changed resource) and
``beside`` (stack files of the case, each another stack deployed on the same cluster:
``--beside``; ``FILE@old``: deployed by the older gpu-infra ``oldRows`` describes). A case
without ``step1.yaml`` is a new stack (``--diff /dev/null``); its ``oldRows`` describe only the
catalog its ``@old`` neighbours were deployed with.
Every case also checks the contract: each replace in ``--diff --json`` has ``order`` and ``why``.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from infra import plan as plan_cli
from infra.core.catalog.vendored import DATA_DIR
from tests.stack.harness import ROOT

CASES = ROOT / "tests" / "day2"
NAMES = sorted(p.name for p in CASES.iterdir() if (p / "expect.json").exists())


def _edited(path: Path, edits: list[dict[str, Any]]) -> None:
    """Rewrite a catalog CSV with ``edits`` applied: its ``#`` header kept, each edit's ``where``
    rows dropped (``drop``) or given the ``set`` values."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    header = [line for line in lines if line.startswith("#")]
    reader = csv.DictReader(line for line in lines if not line.startswith("#"))
    rows, columns = list(reader), list(reader.fieldnames or ())
    for edit in edits:
        where = edit["where"]
        hits = [r for r in rows if all(r[k] == v for k, v in where.items())]
        assert hits, f"{path.name}: no row where {where}"
        if edit.get("drop"):
            rows = [r for r in rows if r not in hits]
        for r in hits:
            assert set(edit.get("set", {})) <= set(columns), edit
            r.update(edit.get("set", {}))
    with path.open("w", encoding="utf-8", newline="") as f:
        f.writelines(header)
        writer = csv.DictWriter(f, columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def _old_catalog(edits: dict[str, list[dict[str, Any]]], tmp: Path) -> Path:
    """A copy of today's catalog with ``edits`` (file -> its row edits) applied."""
    data = tmp / "catalog"
    shutil.copytree(DATA_DIR, data, ignore=shutil.ignore_patterns("gpu-operator", "karpenter"))
    for name, rows in edits.items():
        _edited(data / name, rows)
    return data


def _by_name(changes: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {c["urn"].rsplit("::", 1)[-1]: c for c in changes}


@pytest.mark.parametrize("case", NAMES)
def test_day2_case_answers_as_the_receivers_do(case: str, tmp_path: Path, capsys):
    src = CASES / case
    expect = json.loads((src / "expect.json").read_text())
    new = tmp_path / f"Pulumi.{case}.yaml"
    shutil.copy(src / "step2.yaml", new)
    old_file = src / "step1.yaml"
    old_arg = str(old_file) if old_file.exists() else "/dev/null"
    args = ["--stack", str(new), "--diff", old_arg, "--json", *expect["args"]]
    old = _old_catalog(expect["oldRows"], tmp_path) if "oldRows" in expect else None
    if old is not None and old_file.exists():
        args += ["--old-catalog", str(old)]
    for f in expect.get("beside", ()):
        name, by_old = f.removesuffix("@old"), f.endswith("@old")
        args += ["--beside", str(src / name) + (f"@{old}" if by_old else "")]
    code = plan_cli.main(args)
    out, err = capsys.readouterr()
    assert code == expect["exit"], err
    for text in expect.get("stderr", ()):
        assert text in err
    for text in expect.get("stderrNot", ()):
        assert text not in err
    if code == 2:
        return  # refused: nothing is planned
    changes = _by_name(json.loads(out)["changes"])
    for name, text in expect.get("disruptive", {}).items():
        assert text in (changes[name]["disruptive"] or ""), changes.get(name)
    for name, fields in expect.get("changes", {}).items():
        c = changes[name]
        under = fields.get("propertiesUnder")
        assert not under or (c["properties"] and all(p.startswith(under) for p in c["properties"]))
        assert {k: c[k] for k in fields if k != "propertiesUnder"} == {
            k: v for k, v in fields.items() if k != "propertiesUnder"
        }
    if expect.get("nothingElse"):
        assert sorted(changes) == sorted(expect["changes"])
    for c in changes.values():  # the contract: every replace says in which order, and why
        assert c["op"] != "replace" or (c["order"] in ("delete-first", "create-first") and c["why"])
