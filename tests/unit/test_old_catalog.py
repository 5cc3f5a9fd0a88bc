"""``--old-catalog``: the old side of ``--diff`` planned over an earlier GPU catalog."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from infra.core.catalog.vendored import DATA_DIR
from infra.core.errors import ConfigErrors
from infra.planview.catalogs import old_catalog_dir


def catalog_before_refresh(tmp_path: Path, name: str, prefix: str, zone: str) -> Path:
    """A copy of the catalog CSVs without ``name``'s rows starting ``prefix`` in ``zone``: the
    catalog as it was before a refresh added that zone."""
    data = tmp_path / "old-catalog"
    data.mkdir()
    for f in DATA_DIR.glob("*.csv"):
        shutil.copy(f, data / f.name)
    rows = (data / name).read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [r for r in rows if not (r.startswith(prefix) and f",{zone}," in r)]
    assert len(kept) < len(rows)
    (data / name).write_text("".join(kept), encoding="utf-8")
    return data


def test_old_catalog_ref_reads_every_catalog_file_at_that_commit():
    if subprocess.run(["git", "-C", str(DATA_DIR), "rev-parse"], capture_output=True).returncode:
        pytest.skip("not a git checkout")
    with old_catalog_dir("HEAD") as d:
        assert sorted(p.name for p in d.glob("*.csv")) == sorted(
            p.name for p in DATA_DIR.glob("*.csv")
        )
        head = subprocess.run(
            ["git", "show", "HEAD:./aws_gpu_instances.csv"],
            cwd=DATA_DIR,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert (d / "aws_gpu_instances.csv").read_text(encoding="utf-8") == head


@pytest.mark.parametrize("ref", ["-x", "", "no-such-ref-anywhere"])
def test_old_catalog_bad_ref_is_a_usage_error_naming_the_flag(ref):
    if ref and subprocess.run(["git", "-C", str(DATA_DIR), "rev-parse"]).returncode:
        pytest.skip("not a git checkout")
    with pytest.raises(ConfigErrors) as e, old_catalog_dir(ref):
        pass
    assert [i.path for i in e.value.issues] == ["--old-catalog"]
