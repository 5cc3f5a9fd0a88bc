"""One loader reads the catalog CSVs: each file is parsed once per process, prices included."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from infra.core.catalog import vendored
from infra.core.catalog.pricing import Prices
from infra.core.catalog.vendored import DATA_DIR, Catalog, forget, read_rows, table
from infra.core.platform_cost import price_of

ROOT = Path(__file__).resolve().parents[2]
# receiver_limits.csv is read by the field rules, which sit beside the catalog in the layering
# (tests/unit/test_layers.py) and so cannot import it; it has no other reader.
OTHER_READERS = {"infra/core/rules/limits.py"}


def _copy(tmp: Path) -> Path:
    for f in DATA_DIR.glob("*.csv"):
        shutil.copy(f, tmp / f.name)
    return tmp


def test_shapes_and_prices_of_one_catalog_parse_each_file_once(tmp_path):
    data = _copy(tmp_path)
    before = vendored._parsed.cache_info().misses
    cat = Catalog(data)
    cat.gcp_machine("g2-standard-8")
    cat.aws_instance("g4dn.xlarge")
    p = cat.prices
    p.gcp_node("g2-standard-8", "nvidia-l4", 1, "us-central1-a")
    p.aws_instance("g4dn.xlarge", "use1-az1")
    p.unit("aws", "nat-gateway", "us-east-1")
    p.gcp_vm_date("g2-standard-8", "us-central1-a", spot=False)
    p.aws_date("g4dn.xlarge", "use1-az1", spot=False)
    assert p.as_of["gcp"] and p.as_of["aws"]
    # a second catalog over the same files parses nothing again
    Catalog(data).prices.aws_instance("g4dn.xlarge", "use1-az1")
    list(read_rows("aws_gpu_instances.csv", data))
    read = {
        "gcp_accelerators.csv",
        "gcp_machine_types.csv",
        "gcp_n1_machine_types.csv",
        "gcp_gpu_attach_limits.csv",
        "gcp_accelerator_models.csv",
        "gcp_vm_prices.csv",
        "aws_gpu_instances.csv",
        "aws_vm_prices.csv",
        "aws_gpu_families.csv",
        "platform_prices.csv",
        "price_checks.csv",
    }
    assert vendored._parsed.cache_info().misses - before == len(read)


def test_the_default_catalog_answers_the_prices_every_consumer_uses():
    assert Prices.load() is Catalog.load().prices
    assert price_of(Prices.load(), "aws", "nat-gateway", "us-east-1") == Catalog.load().prices.unit(
        "aws", "nat-gateway", "us-east-1"
    )
    assert table("gcp_accelerators.csv", DATA_DIR) is table("gcp_accelerators.csv", DATA_DIR)


def test_a_rewritten_file_is_read_again_and_callers_get_rows_of_their_own(tmp_path):
    f = tmp_path / "t.csv"
    f.write_text("# source: here\na,b\n1,2\n", encoding="utf-8")
    assert [dict(r) for r in table("t.csv", tmp_path)] == [{"a": "1", "b": "2"}]
    row = next(read_rows("t.csv", tmp_path))
    row["a"] = "edited"
    assert table("t.csv", tmp_path)[0]["a"] == "1"
    f.write_text("# source: there\na,b\n3,4\n", encoding="utf-8")  # same size, maybe same tick
    forget()
    assert [dict(r) for r in table("t.csv", tmp_path)] == [{"a": "3", "b": "4"}]
    f.write_text("a,b\n5,6\n7,8\n", encoding="utf-8")  # another size: seen without forget()
    assert len(table("t.csv", tmp_path)) == 2


def test_no_module_but_the_catalog_loader_parses_a_data_csv():
    parsers = re.compile(r"csv\.(?:DictReader|reader)\(")
    found = {
        str(p.relative_to(ROOT))
        for top in ("infra", "quota", "scripts")
        for p in (ROOT / top).rglob("*.py")
        if parsers.search(p.read_text(encoding="utf-8"))
    }
    assert found - OTHER_READERS == {"infra/core/catalog/vendored.py"}
