"""The machine-series table: how a machine type finds its row, and a table that cannot load."""

from __future__ import annotations

from pathlib import Path

import pytest

from infra.core.gke.series import SERIES_FILE, load_series, series_of

HEADER = "# source: test\nprefix,series,boot_disk_types,provisioning,local_ssd_count,gpus\n"


def _table(tmp_path: Path, *rows: str) -> Path:
    (tmp_path / SERIES_FILE).write_text(HEADER + "".join(f"{r}\n" for r in rows))
    return tmp_path


def test_exact_machine_type_row_wins_over_its_series_row(tmp_path):
    d = _table(tmp_path, "x1-,X1,pd-ssd,on-demand|spot,0", "x1-big,X1 big,pd-ssd,spot,2")
    big, small = series_of("x1-big", d), series_of("x1-small", d)
    assert big is not None and (big.series, big.local_ssd_count) == ("X1 big", 2)
    assert small is not None and small.series == "X1"


def test_row_without_trailing_dash_matches_only_that_machine_type(tmp_path):
    d = _table(tmp_path, "x1-big,X1,pd-ssd,spot,0")
    assert series_of("x1-big", d) is not None
    assert series_of("x1-big-2", d) is None


def test_unknown_provisioning_model_in_the_table_is_refused_naming_file_and_row(tmp_path):
    d = _table(tmp_path, "x1-,X1,pd-ssd,on-demand|preemptible,0")
    with pytest.raises(ValueError, match=rf"{SERIES_FILE}: x1-: provisioning \['preemptible'\]"):
        load_series(d)


def test_a_gpus_value_outside_built_in_attached_or_empty_fails_to_load(tmp_path):
    d = _table(tmp_path, "x1-,X1,pd-ssd,spot,0,bundled")
    with pytest.raises(ValueError, match="x1-: gpus 'bundled'"):
        load_series(d)
