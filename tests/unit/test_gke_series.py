"""The machine-series table: how a machine type finds its row, and a table that cannot load."""

from __future__ import annotations

from pathlib import Path

import pytest

from infra.core.catalog.vendored import DATA_DIR, read_rows
from infra.core.config.stack import parse
from infra.core.errors import ConfigErrors
from infra.core.gke.series import (
    ATTACHED,
    BUILT_IN,
    SERIES_FILE,
    gpu_families,
    has_built_in_gpus,
    load_series,
    series_of,
)
from infra.core.plan import build_plan
from tests.conftest import gke_config

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


# --- which series carry their GPUs (https://cloud.google.com/compute/docs/gpus) ----------------


def test_built_in_gpu_series_are_the_series_of_the_catalogs_gpu_machine_types():
    """The series table's gpus column and gcp_machine_types.csv (machineTypes[].accelerators)
    name the same families: every GPU machine type is of a built-in series and vice versa."""
    machine_families = {
        r["machine_type"].split("-", 1)[0] for r in read_rows("gcp_machine_types.csv", DATA_DIR)
    }
    assert set(gpu_families(BUILT_IN, DATA_DIR)) == machine_families
    assert gpu_families(ATTACHED, DATA_DIR) == ("n1",)  # gcp_gpu_attach_limits.csv: N1 hosts only
    assert has_built_in_gpus("a3-newgpu-8g", DATA_DIR) and not has_built_in_gpus(
        "n1-standard-8", DATA_DIR
    )


def test_a_type_of_no_gpu_series_needs_its_gpu_named_with_the_series_that_imply_one():
    with pytest.raises(ConfigErrors) as e:
        build_plan(parse(gke_config({"machineType": "n2-standard-8", "gpu": None}), "s"))
    reason = {i.path: i.reason for i in e.value.issues}["gpuPools[0].gpu.type"]
    assert "only a2/a3/a4/a4x/g2/g4 machine types imply their GPU" in reason
