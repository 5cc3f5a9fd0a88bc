"""Day-2 cases as data: ``tests/day2/<case>/step1.yaml`` (the running stack), ``step2.yaml`` (the
edit) and ``expect.json`` (what ``python -m infra.plan --stack step2 --diff step1`` must answer).

``expect.json`` keys: ``why`` (the receiver's rule, for the reader), ``args`` (extra flags),
``exit``, ``disruptive`` (resource name -> text its disruption names), ``changes`` (resource
name -> fields its change must have; ``propertiesUnder``: every changed path starts so),
``stderr`` (texts stderr names), ``stderrNot`` (texts it must not name) and ``oldPins``
(``"pin,key": version``: the old side is planned with a catalog whose pins.csv has that version,
as ``--old-catalog REF`` of an older gpu-infra), ``oldLifecycleWithout`` (a type token: the old
side's catalog lacks its lifecycle.csv rows, as the catalog of a gpu-infra from before that row),
``oldLimitsWithout`` (a limit: the old side's receiver_limits.csv lacks its row, likewise) and
``beside`` (stack files of the case, each another stack deployed on the same cluster:
``--beside``; ``FILE@old``: deployed by the older gpu-infra those ``old*`` keys describe). A case
without ``step1.yaml`` is a new stack (``--diff /dev/null``); its ``old*`` keys describe only the
catalog its ``@old`` neighbours were deployed with.
Every case also checks the contract: each replace in ``--diff --json`` has ``order`` and ``why``.
"""

from __future__ import annotations

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


def _without(path: Path, first_cell: str) -> None:
    """Drop the rows of a catalog CSV whose first cell is ``first_cell``."""
    rows = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text(
        "".join(r for r in rows if not r.startswith(first_cell + ",")), encoding="utf-8"
    )


def _old_catalog(pins: dict[str, str], tmp: Path, without: str = "", limit: str = "") -> Path:
    """A copy of the catalog whose pins.csv has the given versions (and whose lifecycle.csv has
    no row for type ``without``, whose receiver_limits.csv none for ``limit``)."""
    data = tmp / "catalog"
    shutil.copytree(DATA_DIR, data, ignore=shutil.ignore_patterns("gpu-operator", "karpenter"))
    if without:
        _without(data / "lifecycle.csv", without)
    if limit:
        _without(data / "receiver_limits.csv", limit)
    lines = (data / "pins.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    for spec, version in pins.items():
        prefix = spec + ","
        (i,) = [i for i, line in enumerate(lines) if line.startswith(prefix)]
        cells = lines[i].split(",")
        cells[5] = version  # pin,key,kind,repository,name,version,...
        lines[i] = ",".join(cells)
    (data / "pins.csv").write_text("".join(lines), encoding="utf-8")
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
    old = None
    if {"oldPins", "oldLifecycleWithout", "oldLimitsWithout"} & set(expect):
        old = _old_catalog(
            expect.get("oldPins", {}),
            tmp_path,
            expect.get("oldLifecycleWithout", ""),
            expect.get("oldLimitsWithout", ""),
        )
        if old_file.exists():
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
    for c in changes.values():  # the contract: every replace says in which order, and why
        assert c["op"] != "replace" or (c["order"] in ("delete-first", "create-first") and c["why"])
