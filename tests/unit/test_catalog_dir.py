"""A plan reads every fact table from the catalog it is built with (``--old-catalog`` plans the old
side of a diff over an earlier one): planned over a copy of the data directory with a table
edited, the plan decides by the edit, and planning over a copy reads no table of the vendored
directory."""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from infra import mockengine
from infra.core.catalog import vendored
from infra.core.catalog.vendored import DATA_DIR, Catalog
from infra.core.cost import estimate
from infra.core.errors import ConfigErrors
from infra.core.plan import Plan
from infra.plan import load_path
from tests.stack.harness import ROOT
from tests.stack.test_day2_cases import _old_catalog

STACKS = ROOT / "stacks"


def _set(where: dict[str, str], **values: str) -> dict[str, Any]:
    return {"where": where, "set": values}


def _drop(**where: str) -> dict[str, Any]:
    return {"where": where, "drop": True}


# Edits a plan still accepts: each changes what one table makes a sample plan decide.
EDITS: dict[str, list[dict[str, Any]]] = {
    "eks_standard_support.csv": [_drop(version="1.35")],
    "eks_addon_versions.csv": [
        _set({"addon": "kube-proxy", "kubernetes_version": "1.34"}, version="v1.34.99-eksbuild.1")
    ],
    "platform_prices.csv": [_set({"item": "eks-cluster-fee"}, price_usd="0.11")],
    "pins.csv": [
        _set({"pin": "nvidia-device-plugin"}, version="0.18.9"),
        _set({"pin": "cluster-autoscaler-image", "key": "1.34"}, version="v1.34.99"),
        _set({"pin": "cluster-autoscaler"}, version="9.52.9"),
        _set({"pin": "karpenter"}, version="1.14.9"),
        _set({"pin": "gpu-operator"}, version="v26.3.3"),
        _set({"pin": "cuda-smoke-test"}, version="12.2.1-base-ubuntu22.04"),
        _set({"pin": "warm-placeholder"}, version="3.9"),
        _set({"pin": "jupyter-notebook", "key": "pytorch"}, version="cuda12-2026-09-01"),
    ],
    # The chart facts are the pinned chart's: they move with its pin.
    "autoscaler_chart_rbac.csv": [_set({"chart_version": "9.52.1"}, chart_version="9.52.9")],
    "karpenter_chart_values.csv": [_set({"chart_version": "1.14.1"}, chart_version="1.14.9")],
    "gke_feature_versions.csv": [
        _set({"feature": "containerd-config-file"}, min_version="1.99.0-gke.0")
    ],
    "gcp_machine_series.csv": [_set({"prefix": "n1-"}, boot_disk_types="pd-standard|pd-ssd")],
    "gcp_memory_per_vcpu.csv": [_set({"class": "standard"}, max_gb_per_vcpu="5")],
    "aws_eni_limits.csv": [_set({"instance_type": "g4dn.xlarge"}, default_max_enis="2")],
    "daemonset_memory.csv": [_set({"receiver": "eks", "memory_mib": "250"}, memory_mib="350")],
    "gpu_runtime_facts.csv": [
        _set(
            {"receiver": "gpu-operator", "version": "v26.7.0", "fact": "runtimeClasses"},
            value="operator.runtimeClass nvidia-legacy nvidia-cdi nvidia-extra",
        )
    ],
    "nvidia_mig_profiles.csv": [_set({"gpu_model": "A100-40GB"}, balanced="1g.5gb:7")],
}
# Edits a plan refuses, each with the rule's words.
REFUSALS: dict[str, tuple[list[dict[str, Any]], str, str]] = {
    "aws_cpu_small_sizes.csv": (
        [_drop(family_regex="t3a?|t4g", size="medium")],
        "eks-small-system",
        "vCPUs of this size are not known",
    ),
    "aws_quota_classes.csv": (
        [_drop(**{"class": "Standard"})],
        "eks-g4dn",
        "matches no EC2 vCPU quota class",
    ),
    "gcp_cpu_quota_metrics.csv": ([_drop(family="e2")], "gke-t4", "has no known vCPU quota"),
    "gke_standard_support.csv": (
        [_set({"version": "1.35"}, end_of_standard_support="2026-01-01")],
        "gke-autocreate",
        "GKE standard support for 1.35 ended 2026-01-01",
    ),
    "ami_alias_minors.csv": (
        [_drop(family="al2023")],
        "eks-karpenter",
        "ships NVIDIA images for no Kubernetes minor on file",
    ),
    "autoscaler_chart_rbac.csv": (
        [_drop(resource="leases")],
        "eks-device-plugin",
        "the autoscaler would never become leader",
    ),
    "karpenter_chart_values.csv": (
        [_drop(path="settings.interruptionQueue")],
        "eks-karpenter",
        "'settings.interruptionQueue' is not a key of chart karpenter",
    ),
    "gce_compact_placement.csv": (
        [_set({"family": "a2"}, compact="no")],
        "gke-a100-compact",
        "does not take a compact placement policy",
    ),
}


def _text(name: str, edit: Callable[[str], str] | None = None) -> str:
    text = (STACKS / f"Pulumi.{name}.yaml").read_text(encoding="utf-8")
    if edit is None:
        return text
    new = edit(text)
    assert new != text, name
    return new


# Sample stacks edited where no sample has what a table decides.
CRAFTED: dict[str, tuple[str, Callable[[str], str]]] = {
    "eks-unversioned": (
        "eks-g4dn",
        lambda t: "".join(x for x in t.splitlines(True) if "kubernetesVersion" not in x),
    ),
    "eks-small-system": (
        "eks-g4dn",
        lambda t: t.replace(
            "    location: us-west-2\n",
            "    location: us-west-2\n    systemPool: {machineType: t3.medium}\n",
        ),
    ),
    # On 1.34, which the edited calendar below still dates (in standard support on 2026-11-27).
    "eks-134": (
        "eks-device-plugin",
        lambda t: t.replace('kubernetesVersion: "1.35"', 'kubernetesVersion: "1.34"'),
    ),
    # Below the auto-creation gate (on the Extended channel, which still runs 1.32) the cluster
    # gets node auto-provisioning, whose memory limit counts the system pool's.
    "gke-nap": (
        "gke-autocreate",
        lambda t: t.replace('minMasterVersion: "1.35"', 'minMasterVersion: "1.32"').replace(
            "releaseChannel: RAPID", "releaseChannel: EXTENDED"
        ),
    ),
    # A pinned version: an unset one counts as past every gate (each channel is).
    "gke-t4-pinned": (
        "gke-t4",
        lambda t: t.replace(
            "    location: us-central1\n",
            '    location: us-central1\n    minMasterVersion: "1.35"\n',
        ),
    ),
    "gke-a100-compact": (
        "gke-a100-mig",
        lambda t: t.replace(
            "      maxNodes: 4\n", "      maxNodes: 4\n      compactPlacement: true\n"
        ),
    ),
}


def _plan(name: str, catalog: Catalog | None, tmp: Path) -> Plan:
    base, edit = CRAFTED.get(name, (name, None))
    path = tmp / f"Pulumi.{name}.yaml"
    path.write_text(_text(base, edit), encoding="utf-8")
    return load_path(path, None, catalog)[2]


@pytest.fixture(scope="module")
def edited(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    return Catalog(_old_catalog(EDITS, tmp_path_factory.mktemp("edited")))


def _eks(plan: Plan) -> Any:
    return plan.platform.plan  # type: ignore[attr-defined]


def _pool_nodes_memory(plan: Plan) -> int:
    return plan.platform.node_memory_mib(plan.pools[0])


def _release(plan: Plan) -> Any:
    assert plan.operator is not None and plan.operator.release is not None
    return plan.operator.release


def _control_plane_fee(plan: Plan) -> float | None:
    (line,) = [x for x in estimate(plan).lines if x.item.startswith("control plane")]
    return line.at_min


def _nap_memory(plan: Plan) -> int:
    limits = plan.platform.plan.cluster.auto_provisioning_limits  # type: ignore[attr-defined]
    return next(lim.maximum for lim in limits if lim.resource_type == "memory")


def _smoke_images(plan: Plan) -> set[str]:
    assert plan.operator is not None
    return {
        c["image"]
        for m in plan.operator.after_release
        if m.get("kind") == "Job"
        for c in m["spec"]["template"]["spec"]["containers"]
    }


def _notebook_images(plan: Plan) -> set[str]:
    assert plan.operator is not None
    profile = next(iter(plan.operator.jupyterhub_profiles.values()))
    choices = profile["profile_options"]["image"]["choices"]
    return {c["kubespawner_override"]["image"] for c in choices.values()}


def _warm_image(plan: Plan) -> str:
    assert plan.warm is not None
    spec = plan.warm.targets[0].deployment["spec"]["template"]["spec"]
    return spec["containers"][0]["image"]


# Table -> (sample, what the plan decides from it, that value over today's catalog and over the
# edited one): each expected value is the edit itself, or today's value moved by the edit.
SEES: dict[str, tuple[str, Callable[[Plan], Any], Any, Any]] = {
    "eks_standard_support.csv": (
        "eks-unversioned",
        lambda p: _eks(p).kubernetes_version,
        "1.35",
        "1.34",  # the newest in standard support on 2026-11-27 without the 1.35 row
    ),
    "eks_addon_versions.csv": (
        "eks-134",
        lambda p: {a.name: a.version for a in _eks(p).addons}["kube-proxy"],
        "v1.34.6-eksbuild.13",
        "v1.34.99-eksbuild.1",
    ),
    "platform_prices.csv": ("eks-134", _control_plane_fee, 0.10, 0.11),
    "pins.csv": (
        "eks-134",
        lambda p: (_eks(p).device_plugin.version, _eks(p).autoscaler.values["image"]["tag"]),
        ("0.18.2", "v1.34.5"),
        ("0.18.9", "v1.34.99"),
    ),
    "autoscaler_chart_rbac.csv": (
        "eks-134",
        lambda p: _eks(p).autoscaler.version,
        "9.52.1",
        "9.52.9",  # planned, so its lease is granted by the rows of 9.52.9
    ),
    "karpenter_chart_values.csv": (
        "eks-karpenter",
        lambda p: _eks(p).karpenter.version,
        "1.14.1",
        "1.14.9",  # planned, so its values are the keys of the rows of 1.14.9
    ),
    "gke_feature_versions.csv": (
        "gke-t4-pinned",
        lambda p: "toolkit.env[RUNTIME_CONFIG_SOURCE]" in _release(p).reasons,
        True,
        False,  # the gate moved above every GKE version
    ),
    "gcp_machine_series.csv": (
        "gke-t4",
        lambda p: p.platform.plan.pools[0].disk_type,  # type: ignore[attr-defined]
        "pd-balanced",
        "pd-standard",
    ),
    "aws_eni_limits.csv": (
        "eks-g4dn",
        _pool_nodes_memory,
        None,  # compared below: one ENI fewer is 9 pods fewer at 11 MiB each
        None,
    ),
    "daemonset_memory.csv": (
        "eks-g4dn",
        lambda p: p.platform.system_daemonset_mib,
        280,
        380,
    ),
    "gpu_runtime_facts.csv": (
        "onprem-containerd",
        lambda p: "nvidia-extra" in (p.operator.isolation[0].runtime_classes.value or ()),  # type: ignore[union-attr]
        False,
        True,
    ),
    "nvidia_mig_profiles.csv": (
        "gke-a100-mig",
        lambda p: p.pools[0].mig.balanced_counts,  # type: ignore[union-attr]
        (2, 1, 1),
        (7,),
    ),
    "gcp_memory_per_vcpu.csv": ("gke-nap", _nap_memory, None, None),  # compared below
}
PIN_SEES: dict[str, tuple[str, Callable[[Plan], Any], Any, Any]] = {
    "gpu-operator": ("gke-t4", lambda p: _release(p).version, "v26.7.0", "v26.3.3"),
    "cuda-smoke-test": (
        "onprem-containerd",
        _smoke_images,
        {"nvcr.io/nvidia/cuda:12.2.2-base-ubuntu22.04"},
        {"nvcr.io/nvidia/cuda:12.2.1-base-ubuntu22.04"},
    ),
    "warm-placeholder": (
        "gke-l4-spot",
        _warm_image,
        "registry.k8s.io/pause:3.10",
        "registry.k8s.io/pause:3.9",
    ),
    "jupyter-notebook": (
        "gke-t4",
        lambda p: "quay.io/jupyter/pytorch-notebook:cuda12-2026-09-01" in _notebook_images(p),
        False,
        True,
    ),
    "karpenter": ("eks-karpenter", lambda p: _eks(p).karpenter.version, "1.14.1", "1.14.9"),
}


@pytest.mark.parametrize("table", sorted(SEES))
def test_a_plan_decides_by_the_table_of_the_catalog_it_is_built_with(table, edited, tmp_path):
    stack, decided, today, after = SEES[table]
    before, seen = decided(_plan(stack, None, tmp_path)), decided(_plan(stack, edited, tmp_path))
    if table == "aws_eni_limits.csv":  # nodeadm: kube-reserved 11 MiB per ENI-limited pod
        assert seen - before == 11 * (3 * (10 - 1) + 2 - (2 * (10 - 1) + 2))
    elif table == "gcp_memory_per_vcpu.csv":  # the system pool's e2-standard-4: 4 vCPUs, +1 GB
        system_max = _plan(stack, None, tmp_path).platform.plan.cluster.system_max  # type: ignore[attr-defined]
        assert seen - before == 4 * system_max
    else:
        assert (before, seen) == (today, after)


@pytest.mark.parametrize("name", sorted(PIN_SEES))
def test_a_plan_takes_its_pins_from_the_catalog_it_is_built_with(name, edited, tmp_path):
    stack, decided, today, after = PIN_SEES[name]
    assert decided(_plan(stack, None, tmp_path)) == today
    assert decided(_plan(stack, edited, tmp_path)) == after


@pytest.mark.parametrize("table", sorted(REFUSALS))
def test_a_plan_refuses_by_the_table_of_the_catalog_it_is_built_with(table, tmp_path):
    edits, stack, words = REFUSALS[table]
    _plan(stack, None, tmp_path)  # today's catalog accepts it
    catalog = Catalog(_old_catalog({table: edits}, tmp_path))
    with pytest.raises(ConfigErrors) as e:
        _plan(stack, catalog, tmp_path)
    assert any(words in i.reason for i in e.value.issues), str(e.value)


def _forget_cached_readers() -> None:
    """Empty every functools cache of infra and quota, so a reader that caches a table without
    its directory reads it again below."""
    for module in list(sys.modules.values()):
        if not getattr(module, "__name__", "").startswith(("infra.", "quota.")):
            continue
        for value in list(vars(module).values()):
            for obj in (value, *(vars(value).values() if isinstance(value, type) else ())):
                clear = getattr(getattr(obj, "__func__", obj), "cache_clear", None)
                if callable(clear):
                    clear()


# What a plan over another catalog still reads from the vendored directory: the engine's and
# providers' rules the components register by and the review judges both sides by.
READ_FROM_TODAY = frozenset({"lifecycle.csv"})


def test_planning_over_another_catalog_reads_no_table_of_the_vendored_one(tmp_path, monkeypatch):
    copy = Catalog(_old_catalog({}, tmp_path))
    read: set[Path] = set()
    identity = vendored._identity

    def recorded(path: Path) -> Any:
        read.add(path)
        return identity(path)

    _forget_cached_readers()
    monkeypatch.setattr(vendored, "_identity", recorded)
    for f in sorted(STACKS.glob("Pulumi.*.yaml")):
        raw, config, plan = load_path(f, None, copy)
        estimate(plan)
    raw, config, plan = load_path(STACKS / "Pulumi.eks-karpenter.yaml", None, copy)
    mockengine.run(raw, config.stack, plan.catalog, copy)
    assert {p.name for p in read if p.parent == copy.data_dir} >= {
        "pins.csv",
        "gcp_accelerators.csv",
    }
    assert {p.name for p in read if p.parent == DATA_DIR} <= READ_FROM_TODAY


# Every module that names the vendored data directory (DATA_DIR, or a path into infra/core/data),
# and why a plan's catalog cannot serve it there; a new one fails here until its reason is given.
VENDORED_ON_PURPOSE = {
    "infra/core/catalog/vendored.py": "defines it; Catalog() and Catalog.load() are that catalog",
    "infra/core/catalog/pins.py": "a catalog directory without pins.csv is planned with today's",
    "infra/core/catalog/pricing.py": "Prices() and Prices.load() price the vendored catalog",
    "infra/core/config/stack.py": "parse() of a stack with no plan checks it against the vendored",
    "infra/planview/catalogs.py": "--old-catalog REF reads REF's files against today's directory",
    "infra/core/diff.py": "the review's replace rules judge both sides as the providers act today",
    "infra/core/disruption.py": "the review's disruption rules, likewise",
    "infra/core/lifecycle.py": "the engine's lifecycle rules the components register by, likewise",
    "infra/core/operator/isolation_table.py": "the docs' table of the vendored catalog",
    "infra/docsgen/__main__.py": "the docs are generated from the vendored catalog",
    "infra/catalog_refresh.py": "the refresh rewrites the vendored directory",
    "quota/rules.py": "quota.check plans over the vendored catalog only (Catalog.load())",
    "quota/limits.py": "quota's own directory (quota/data), not the catalog",
    # Names a pinned artefact is known by in code, and files vendored with the code (data
    # subdirectories, which --old-catalog does not copy): the versions a plan installs are its own
    # catalog's.
    "infra/core/eks/autoscaler.py": "the chart's name, which names its release",
    "infra/core/eks/device_plugin.py": "the charts' names, which name their releases",
    "infra/core/eks/karpenter/controller.py": "the chart's name and its vendored row (defaults)",
    "infra/core/eks/karpenter/crds.py": "the CRDs vendored under data/karpenter/",
    "infra/core/rules/durations.py": "the NodePool CRD vendored under data/karpenter/",
    "infra/core/operator/model.py": "the chart name a review recognises the operator's release by",
    "infra/core/operator/helm_values.py": "the chart values files vendored under data/gpu-operator/",
    "infra/core/gke/driver_installer.py": "the manifest its DaemonSet is written from, at its commit",
    "infra/core/rules/limits.py": "receivers' limits, compiled into the config schema at import",
}
_NAMES_DATA = re.compile(r'\bDATA_DIR\b|/ "data"')


def test_only_the_modules_listed_with_a_reason_read_the_vendored_data_directory():
    named = {
        str(p.relative_to(ROOT))
        for top in ("infra", "quota")
        for p in (ROOT / top).rglob("*.py")
        if _NAMES_DATA.search(p.read_text(encoding="utf-8"))
    }
    assert named == set(VENDORED_ON_PURPOSE)


def test_no_table_reader_defaults_its_directory_to_the_vendored_one():
    # A reader that defaulted to DATA_DIR would serve the vendored table to every caller that
    # forgot the plan's catalog; only these entry points and the review's rules may.
    allowed = {
        ("infra/core/catalog/vendored.py", "__init__"),
        ("infra/core/catalog/pricing.py", "__init__"),
        ("infra/core/config/stack.py", "parse"),
        ("infra/planview/catalogs.py", "old_catalog_dir"),
        ("infra/core/diff.py", "forcing_rules"),
        ("infra/core/disruption.py", "disruption_rules"),
        ("infra/core/lifecycle.py", "table"),
    }
    found = set()
    for top in ("infra", "quota"):
        for path in (ROOT / top).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    defaults = [*node.args.defaults, *node.args.kw_defaults]
                    if any(isinstance(d, ast.Name) and d.id == "DATA_DIR" for d in defaults):
                        found.add((str(path.relative_to(ROOT)), node.name))
    assert found == allowed
