"""Every upstream version lives in pins.csv, and every artefact vendored from a pin is that pin's."""

from __future__ import annotations

import ast
import hashlib
from pathlib import Path

import pytest

from infra.core.catalog import pins as pins_mod
from infra.core.catalog.pins import Pin, all_pins, pin, pins
from infra.core.catalog.vendored import DATA_DIR, read_header, read_rows
from infra.core.eks import autoscaler as ca
from infra.core.eks.karpenter import controller as ctl
from infra.core.eks.karpenter import crds

ROOT = Path(__file__).resolve().parents[2]


def test_every_pin_row_names_its_source_and_day_and_loads_once():
    rows = all_pins(DATA_DIR)
    assert rows and all(p.source and p.as_of for p in rows)
    assert all_pins(DATA_DIR) is rows


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"kind": "helm"}, "kind 'helm'"),
        ({"as_of": "last week"}, "as_of day"),
        ({"digest": "sha256:abc"}, "not sha256:<64 hex>"),
        ({"kind": "chart", "name": ""}, "a chart needs"),
        ({"kind": "image", "version": "", "digest": ""}, "an image needs"),
        ({"kind": "manifest", "commit": ""}, "a manifest pin needs"),
    ],
)
def test_a_malformed_pin_row_is_refused_with_its_reason(change, reason):
    good = pin("cluster-autoscaler", DATA_DIR)
    bad = Pin(**{**{f: getattr(good, f) for f in Pin.__dataclass_fields__}, **change})
    assert reason in (pins_mod._problem(bad) or "")
    assert pins_mod._problem(good) is None


def test_image_and_chart_references_follow_the_receivers_forms():
    assert pin("gke-pause", DATA_DIR).image == (
        "gke.gcr.io/pause:3.8@sha256:880e63f94b145e46f1b1082bb71b85e21f16b99b180b9996407d61240ceb9830"
    )
    assert pin("gke-partition-gpus", DATA_DIR).image.startswith(
        "gcr.io/gke-release/nvidia-partition-gpu@"
    )
    # Helm pulls an OCI chart by its full reference, with no repository URL (helm.sh/docs/topics/
    # registries); an https repository takes the bare chart name.
    assert (ctl.CHART, ctl.PIN.repo) == ("oci://public.ecr.aws/karpenter/karpenter", "")
    assert (ca.CHART_NAME, ca.chart(DATA_DIR).repo) == (
        "cluster-autoscaler",
        "https://kubernetes.github.io/autoscaler",
    )
    with pytest.raises(KeyError, match="no pin 'nope'"):
        pin("nope", DATA_DIR)


def test_karpenter_chart_crd_chart_and_vendored_crds_are_one_pin():
    karpenter = pin("karpenter", DATA_DIR)
    assert karpenter.version == ctl.PIN.version
    assert f"{karpenter.repository}/karpenter-crd" == ctl.CRD_CHART
    assert f"v{karpenter.version}" == crds.KARPENTER_VERSION
    for kind in ("NodePool", "EC2NodeClass"):
        vendored = crds.vendored(kind)
        # scripts/vendor_karpenter_crds.py records the tag and the commit it resolved to
        assert vendored["version"] == f"v{karpenter.version}", kind
        assert vendored["commit"] == karpenter.commit, kind
        assert f"/blob/v{karpenter.version}/" in vendored["source"], kind


def test_chart_facts_files_are_of_the_pinned_chart_versions():
    karpenter, autoscaler = pin("karpenter", DATA_DIR), pin("cluster-autoscaler", DATA_DIR)
    assert {r["chart_version"] for r in read_rows(ctl.CHART_VALUES_FILE, DATA_DIR)} == {
        karpenter.version
    }
    assert {r["chart_version"] for r in read_rows(ca.CHART_RBAC_FILE, DATA_DIR)} == {
        autoscaler.version
    }
    rbac = " ".join(read_header(ca.CHART_RBAC_FILE, DATA_DIR))
    assert f"cluster-autoscaler-chart-{autoscaler.version}" in rbac and autoscaler.commit in rbac
    assert f"karpenter {karpenter.version}" in " ".join(
        read_header(ctl.CHART_VALUES_FILE, DATA_DIR)
    )


def test_every_vendored_gpu_operator_values_file_is_its_pin_byte_for_byte():
    rows = pins("gpu-operator-values", DATA_DIR)
    files = {p.name: p for p in (DATA_DIR / "gpu-operator").glob("values-*.yaml")}
    assert {r.name.removeprefix("gpu-operator/") for r in rows.values()} == set(files)
    for tag, row in rows.items():
        assert row.version == tag and row.name == f"gpu-operator/values-{tag}.yaml"
        digest = hashlib.sha256((DATA_DIR / row.name).read_bytes()).hexdigest()
        assert row.digest == f"sha256:{digest}", f"{row.name} differs from its pin"
    assert pin("gpu-operator", DATA_DIR).version in rows  # the default chart's values are vendored


def test_cluster_autoscaler_images_are_one_repository_tagged_per_minor():
    images = pins("cluster-autoscaler-image", DATA_DIR)
    assert {p.repository for p in images.values()} == {ca.image_repository(DATA_DIR)}
    assert all(p.version.startswith(f"v{minor}.") for minor, p in images.items())


def _literals(path: Path) -> set[str]:
    """The string constants of a module, docstrings left out (those cite upstream releases)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    return {
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs
    }


def test_no_module_spells_a_pinned_version_itself():
    spelled = {p.image for p in all_pins(DATA_DIR) if p.kind == "image"}
    spelled |= {p.version for p in all_pins(DATA_DIR) if p.kind in ("chart", "alias") and p.version}
    spelled |= {p.digest for p in all_pins(DATA_DIR) if p.digest}
    spelled |= {p.commit for p in all_pins(DATA_DIR) if p.commit}
    found = [
        f"{path.relative_to(ROOT)}: {text!r}"
        for top in ("infra", "quota")
        for path in sorted((ROOT / top).rglob("*.py"))
        for text in _literals(path)
        if any(s in text for s in spelled)
    ]
    assert found == []


def test_an_old_catalog_directory_brings_its_own_pins_or_todays(tmp_path):
    # --old-catalog REF plans the old side with REF's pins.csv (a moved AMI alias shows in
    # --diff); a directory without the file is planned with today's, as its other files are.
    assert all_pins(tmp_path) == all_pins(DATA_DIR)
    text = (DATA_DIR / "pins.csv").read_text(encoding="utf-8")
    (tmp_path / "pins.csv").write_text(text.replace(",v20260714,", ",v20260601,"), "utf-8")
    assert pins("karpenter-ami-alias", tmp_path)["al2023"].version == "v20260601"
