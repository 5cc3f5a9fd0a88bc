"""``--pin-zones``: resolved zones written back as ``gpuPools[].zones``, nothing else touched."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from infra.core.catalog.vendored import DATA_DIR, Catalog
from infra.core.config.stack import load_stack_file, parse
from infra.core.errors import ConfigErrors
from infra.core.plan import build_plan
from infra.core.stackfile.edit import with_pool_keys
from infra.plan import main
from infra.planview.pin import resolved_zones
from tests.unit.test_old_catalog import catalog_before_refresh

ROOT = Path(__file__).resolve().parents[2]

BLOCK = """\
# a comment kept as written
config:
  aws:region: us-west-2   # trailing comment
  gpu-infra:platform: eks
  gpu-infra:cluster: {name: ml, location: us-west-2}
  gpu-infra:gpuPools:
    - name: a
      machineType: "g4dn.xlarge"
      maxNodes: 4  # up to four
      spot: false
    - {name: b, machineType: g4dn.xlarge, maxNodes: 2}
    - name: c
      machineType:
        - g4dn.xlarge
      zones: [usw2-az1]
"""


def _without_added_lines(before: str, after: str) -> str:
    """``after`` with the lines ``before`` lacks removed (block-style inserts only)."""
    kept = set(before.split("\n"))
    return "\n".join(ln for ln in after.split("\n") if ln in kept)


def test_pinning_adds_one_line_per_block_pool_and_leaves_every_other_byte_as_written():
    out = with_pool_keys(BLOCK, "zones", {0: "[usw2-az1, usw2-az2]"})
    added = [ln for ln in out.split("\n") if ln not in BLOCK.split("\n")]
    assert added == ["      zones: [usw2-az1, usw2-az2]"]  # at the pool's own indentation
    assert out.index(added[0]) > out.index("maxNodes: 4  # up to four")  # after its last size
    assert _without_added_lines(BLOCK, out) == BLOCK


def test_pinning_a_flow_style_pool_adds_the_key_inside_its_braces():
    out = with_pool_keys(BLOCK, "zones", {1: "[usw2-az1]"})
    assert "    - {name: b, machineType: g4dn.xlarge, maxNodes: 2, zones: [usw2-az1]}\n" in out
    assert out.replace(", zones: [usw2-az1]", "") == BLOCK


def test_pinning_keeps_crlf_line_endings_and_the_file_still_reads_the_same_apart_from_zones(
    tmp_path,
):
    crlf = BLOCK.replace("\n", "\r\n")
    out = with_pool_keys(crlf, "zones", {0: "[usw2-az1]"})
    assert "      maxNodes: 4  # up to four\r\n      zones: [usw2-az1]\r\n" in out
    assert out.count("\r\n") == crlf.count("\r\n") + 1 and "\n" not in out.replace("\r\n", "")
    (tmp_path / "Pulumi.a.yaml").write_bytes(crlf.encode())
    (tmp_path / "Pulumi.b.yaml").write_bytes(out.encode())
    _, before = load_stack_file(tmp_path / "Pulumi.a.yaml")
    _, after = load_stack_file(tmp_path / "Pulumi.b.yaml")
    assert after["gpu-infra:gpuPools"][0].pop("zones") == ["usw2-az1"]
    assert after == before


def test_a_pool_that_already_lists_the_key_is_refused_not_written_twice():
    with pytest.raises(ConfigErrors) as e:
        with_pool_keys(BLOCK, "zones", {2: "[usw2-az2]"})
    assert [(i.path, i.reason) for i in e.value.issues] == [
        ("gpuPools[2].zones", "already written")
    ]


def _plan(path: Path, catalog: Catalog | None = None):
    name, raw = load_stack_file(path)
    return build_plan(parse(raw, name), catalog)


def test_pin_zones_writes_the_resolved_az_ids_and_the_pinned_file_plans_the_same_groups(
    tmp_path, capsys
):
    f = tmp_path / "Pulumi.eks-g4dn.yaml"
    original = (ROOT / "stacks" / "Pulumi.eks-g4dn.yaml").read_bytes()
    f.write_bytes(original)
    assert main(["--config", str(f), "--pin-zones"]) == 0
    before, after = _plan(ROOT / "stacks" / "Pulumi.eks-g4dn.yaml"), _plan(f)
    assert before.platform.name == "eks" and after.platform.name == "eks"
    assert resolved_zones(after) == {}  # nothing left to pin: a second run changes nothing
    assert [s.zones for s in after.config.pools] == [
        list(g.az_ids) for g in before.platform.plan.groups
    ]
    groups = [[(ng.name, ng.az_ids) for ng in g.node_groups] for g in after.platform.plan.groups]
    assert groups == [
        [(ng.name, ng.az_ids) for ng in g.node_groups] for g in before.platform.plan.groups
    ]
    assert (
        "gpuPools[1] (gpu-t4-spot): zones: [usw2-az1, usw2-az2, usw2-az3]"
        in capsys.readouterr().out
    )
    assert _without_added_lines(original.decode(), f.read_text()) == original.decode()
    assert main(["--config", str(f), "--pin-zones"]) == 0  # "nothing to pin"
    assert _without_added_lines(original.decode(), f.read_text()) == original.decode()


def test_a_catalog_refresh_adding_an_az_changes_nothing_for_a_pinned_pool(tmp_path):
    data = tmp_path / "catalog"  # the catalog before the refresh: no g4dn.xlarge in usw2-az3
    shutil.copytree(DATA_DIR, data, ignore=shutil.ignore_patterns("gpu-operator", "karpenter"))
    rows = (data / "aws_gpu_instances.csv").read_text(encoding="utf-8").splitlines(True)
    old = [r for r in rows if not (r.startswith("g4dn.xlarge,") and ",usw2-az3," in r)]
    assert len(old) < len(rows)
    (data / "aws_gpu_instances.csv").write_text("".join(old), encoding="utf-8")
    f = tmp_path / "Pulumi.eks-g4dn.yaml"
    shutil.copy(ROOT / "stacks" / "Pulumi.eks-g4dn.yaml", f)
    old_catalog = Catalog(data)
    assert main(["--config", str(f), "--pin-zones"]) == 0  # pinned against today's catalog...
    f.write_text(f.read_text().replace("usw2-az3]", "]").replace(", ]", "]"))  # ...as of before
    names = [
        [(ng.name, ng.az_ids) for ng in g.node_groups]
        for p in (_plan(f, old_catalog), _plan(f))
        for g in (p.platform.plan.groups if p.platform.name == "eks" else ())
    ]
    assert names[:2] == names[2:]  # the refresh renamed and widened nothing
    assert all(azs == ("usw2-az1", "usw2-az2") for g in names for _, azs in g)


def test_pin_zones_with_old_catalog_pins_the_zones_the_stack_was_deployed_with(tmp_path, capsys):
    data = catalog_before_refresh(tmp_path, "aws_gpu_instances.csv", "g4dn.xlarge,", "usw2-az3")
    f = tmp_path / "Pulumi.eks-g4dn.yaml"
    shutil.copy(ROOT / "stacks" / "Pulumi.eks-g4dn.yaml", f)
    assert main(["--config", str(f), "--pin-zones", "--old-catalog", str(data)]) == 0
    assert f.read_text().count("      zones: [usw2-az1, usw2-az2]\n") == 2  # not today's az3
    assert "usw2-az3" not in capsys.readouterr().out


def test_pinning_a_bare_key_utf16_stack_keeps_its_encoding_and_pins_its_pools(tmp_path):
    """A bare ``gpuPools:`` is ``gpu-infra:gpuPools`` (Pulumi's loader) and a UTF-16 file with a
    BOM is read by yaml.v3: the pinned file stays UTF-16 and plans with the zones."""
    text = (ROOT / "stacks" / "Pulumi.eks-g4dn.yaml").read_text().replace("  gpu-infra:", "  ")
    f = tmp_path / "Pulumi.eks-g4dn.yaml"
    f.write_bytes(b"\xff\xfe" + text.encode("utf-16-le"))
    assert main(["--config", str(f), "--pin-zones"]) == 0
    assert f.read_bytes().startswith(b"\xff\xfe")
    assert resolved_zones(_plan(f)) == {}
    assert _without_added_lines(text, f.read_bytes()[2:].decode("utf-16-le")) == text
