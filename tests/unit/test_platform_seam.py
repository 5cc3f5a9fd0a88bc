"""Shared code asks the platform (``infra.core.platform``); it never tests which platform it has.

An AST scan of every module of ``infra/`` and ``quota/`` outside the platforms' own code (their
packages under ``infra/core``, their config schemas, components, observe steps and parts of the
mock engine's fake account) and the one registry (``infra/core/platforms.py``): no comparison with a platform's name (``==``, ``in``,
``match``/``case``, ``.startswith``), nor with a name that stands for one (an operator preset, a
cloud), no lookup by a platform's name (``[...]``, ``.get(...)``, a dict key, ``dict(gke=...)``), no
``isinstance`` against a platform's classes, no ``plan.gke`` / ``plan.eks`` / ``plan.kubernetes``,
no ``.karpenter`` (Karpenter is the EKS platform's feature), no ``getattr`` into a platform's config
schema or ``config.cluster`` field of one platform, no import of a platform's config schema, and no
import of a platform package at all (only the registry and the platforms' components import them).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import get_args

import pytest
from pydantic import BaseModel

from infra.core.config.base import ClusterBase, PoolBase
from infra.core.config.eks import EksClusterSpec, EksPoolSpec
from infra.core.config.gke import GkeClusterSpec, GkePoolSpec
from infra.core.config.kubernetes import KubernetesClusterSpec, KubernetesPoolSpec
from infra.core.config.operator import Preset
from infra.core.errors import ConfigErrors
from infra.core.platform import Cloud
from infra.core.platforms import ENTRIES
from tests.conftest import python_c

ROOT = Path(__file__).resolve().parents[2]
PLATFORMS = frozenset(ENTRIES)
# The platforms' own code: their packages, config schemas, and what builds, observes and fakes
# them.
OWN = (
    *(f"infra/core/{p}/" for p in PLATFORMS),
    # Each platform's stack-config schema and its config entry (the registry's ``config``).
    *(f"infra/core/config/{p}.py" for p in PLATFORMS),
    "infra/components/gke.py",
    "infra/components/gke_pools.py",
    "infra/components/eks.py",
    "infra/components/eks_addons.py",
    "infra/components/eks_nodes.py",
    "infra/components/eks_network.py",
    "infra/components/karpenter.py",
    "infra/components/karpenter_pools.py",
    "infra/components/kubernetes_cluster.py",
    "infra/observe/gke.py",  # each platform's observe step (the registry's ``observer``)
    "infra/observe/eks.py",
    # Each platform's part of the mock engine's fake account (the registry's ``account``).
    "infra/mocklive/gke.py",
    "infra/mocklive/eks.py",
    "infra/core/platforms.py",  # the one registry
)
# Not platforms: Pulumi provider packages by their type-token prefix (pulumi_eks, pulumi_kubernetes).
NOT_PLATFORMS = ("infra/sdkschema.py",)
PLAN_FIELDS = PLATFORMS  # Plan.gke / Plan.eks / Plan.kubernetes
# Keys that name a platform only ("kubernetes" is also the plain Kubernetes integration's name).
PLATFORM_KEYS = frozenset(("gke", "eks"))
# Names that stand for a platform: its operator presets, its cloud, and the prefixes they share.
STAND_INS = frozenset(get_args(Preset)) | frozenset(get_args(Cloud))
PREFIXES = tuple(f"{p}-" for p in PLATFORM_KEYS)
# Where a cloud's name is the key of the data itself: the catalog (one table per cloud) and the
# scripts that refresh and verify it.
CLOUD_KEYED = ("infra/core/catalog/", "infra/catalog_refresh.py", "infra/price_verify.py")
# Cloud dispatch by name still left, per module, until it asks a per-cloud entry instead (the
# quota preflight; the cost estimate's price lookup): the scan fails when a module does it more
# often, or another module starts.
CLOUD_TESTS_LEFT: dict[str, int] = {
    "infra/core/cost.py": 2,
    "quota/check.py": 4,
    "quota/demand.py": 1,
    "quota/keys.py": 1,
    "quota/limits.py": 1,
    "quota/report.py": 2,
    "quota/requests.py": 1,
    "quota/where.py": 4,
}


def _platform_classes() -> frozenset[str]:
    """Every class a platform package defines (its Platform, its plan types, its presets)."""
    names: set[str] = set()
    for p in PLATFORMS:
        for path in (ROOT / "infra" / "core" / p).rglob("*.py"):
            tree = ast.parse(path.read_text())
            names.update(n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef))
    return frozenset(names)


PLATFORM_CLASSES = _platform_classes()


def _own_fields(*models: type[BaseModel]) -> frozenset[str]:
    return frozenset(f for m in models for f in m.model_fields)


# Fields one platform's cluster or pool block has and the shared base has not.
CLUSTER_FIELDS = _own_fields(GkeClusterSpec, EksClusterSpec, KubernetesClusterSpec) - _own_fields(
    ClusterBase
)
SCHEMA_FIELDS = CLUSTER_FIELDS | (
    _own_fields(GkePoolSpec, EksPoolSpec, KubernetesPoolSpec) - _own_fields(PoolBase)
)
SCHEMA_MODULES = frozenset(f"infra.core.config.{p}" for p in PLATFORMS)


def _names_a_platform(node: ast.expr | None) -> bool:
    if isinstance(node, ast.Constant):
        v = node.value
        return isinstance(v, str) and (v in PLATFORMS or v in STAND_INS or v.startswith(PREFIXES))
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_names_a_platform(e) for e in node.elts)
    return False


def _cloud_test(node: ast.AST) -> bool:
    """A comparison whose constant side is a cloud's name only (counted, not yet refused, in the
    quota preflight: ``CLOUD_TESTS_LEFT``)."""
    if not isinstance(node, ast.Compare):
        return False
    sides = [node.left, *node.comparators]
    consts = [c for x in sides for c in _constants(x)]
    return bool(consts) and all(c in get_args(Cloud) for c in consts)


def _constants(node: ast.expr) -> list[object]:
    if isinstance(node, ast.Constant):
        return [node.value]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [c for e in node.elts for c in _constants(e)]
    return []


def _classes_named(node: ast.expr) -> bool:
    if isinstance(node, ast.Name):
        return node.id in PLATFORM_CLASSES
    if isinstance(node, ast.Attribute):
        return node.attr in PLATFORM_CLASSES
    if isinstance(node, ast.Tuple):
        return any(_classes_named(e) for e in node.elts)
    return False


def _call_problems(node: ast.Call) -> list[str]:
    func = node.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
    if (
        name in ("isinstance", "issubclass")
        and len(node.args) == 2
        and _classes_named(node.args[1])
    ):
        return ["tests for a platform's class"]
    if name in ("startswith", "endswith", "removeprefix") and any(
        _names_a_platform(a) for a in node.args
    ):
        return ["tests a platform's name"]
    if name in ("get", "pop", "setdefault") and node.args and _names_a_platform(node.args[0]):
        return ["looks a platform's name up"]
    if any(k.arg in PLATFORM_KEYS for k in node.keywords):
        return ["looks a platform's name up"]
    return []


def _is_plan(node: ast.expr) -> bool:
    name = node.id if isinstance(node, ast.Name) else getattr(node, "attr", "")
    return name == "p" or name.endswith("plan")


def _import_problems(node: ast.AST) -> list[str]:
    modules: list[str] = []
    if isinstance(node, ast.ImportFrom) and node.module:
        modules = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
    elif isinstance(node, ast.Import):
        modules = [a.name for a in node.names]
    found = []
    for m in modules:
        if m in SCHEMA_MODULES:
            found.append(f"imports {m}, a platform's config schema")
        elif m.split(".")[:3] in (["infra", "core", p] for p in PLATFORMS):
            found.append(f"imports {m}, inside a platform package")
    return found[:1]


def _node_problems(node: ast.AST) -> list[str]:
    if _cloud_test(node):
        return ["tests a cloud's name"]
    if isinstance(node, ast.Compare) and any(
        _names_a_platform(x) for x in (node.left, *node.comparators)
    ):
        return ["tests a platform's name"]
    if isinstance(node, ast.MatchValue) and _names_a_platform(node.value):
        return ["tests a platform's name"]
    if isinstance(node, ast.MatchClass) and _classes_named(node.cls):
        return ["tests for a platform's class"]
    if isinstance(node, ast.Call) and (problems := _call_problems(node)):
        return problems
    keys = node.keys if isinstance(node, ast.Dict) else []
    if isinstance(node, ast.Subscript):
        keys = [node.slice]
    if any(isinstance(k, ast.Constant) and k.value in PLATFORM_KEYS for k in keys):
        return ["looks a platform's name up"]
    if isinstance(node, ast.Attribute):
        if node.attr in PLAN_FIELDS and _is_plan(node.value):
            return [f"reads plan.{node.attr}"]
        if node.attr == "karpenter":
            return ["tests Karpenter, a feature of the EKS platform"]
        if node.attr in CLUSTER_FIELDS and getattr(node.value, "attr", "") == "cluster":
            return [f"reads cluster.{node.attr}, a field of one platform's schema"]
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "getattr"
        and len(node.args) >= 2
    ):
        target, field = node.args[0], node.args[1]
        if isinstance(field, ast.Constant) and field.value in SCHEMA_FIELDS:
            return [f"getattr(..., {field.value!r}) reaches into a platform's schema"]
        if "cluster" in ast.unparse(target):
            return ["getattr reaches into config.cluster"]
    return []


def violations(path: str, source: str) -> list[str]:
    """Why ``source`` (the module at ``path``, relative to the repository) asks for a platform by
    name or schema instead of asking the platform, if it does (cloud tests beyond the module's
    ``CLOUD_TESTS_LEFT``)."""
    found, clouds = [], []
    for node in ast.walk(ast.parse(source)):
        problems = _node_problems(node) + _import_problems(node)
        where = f"{path}:{getattr(node, 'lineno', 0)}: "
        if problems == ["tests a cloud's name"]:
            clouds.append(where + problems[0])
        else:
            found += [where + p for p in problems]
    if not path.startswith(CLOUD_KEYED) and len(clouds) > CLOUD_TESTS_LEFT.get(path, 0):
        found += clouds
    return found


def shared_modules() -> list[str]:
    """Every module of infra/ and quota/ that is not a platform's own code."""
    paths = [
        p.relative_to(ROOT).as_posix() for d in ("infra", "quota") for p in (ROOT / d).rglob("*.py")
    ]
    return sorted(p for p in paths if not p.startswith(OWN) and p not in NOT_PLATFORMS)


def test_no_shared_module_tests_a_platform_or_reaches_into_its_schema():
    found = [v for p in shared_modules() for v in violations(p, (ROOT / p).read_text())]
    assert found == []


def test_the_scan_covers_the_shared_code_and_leaves_the_platforms_own():
    scanned = set(shared_modules())
    assert {
        "infra/core/operator/objects.py",
        "quota/sizing.py",
        "infra/planview/table.py",
    } <= scanned
    assert "infra/core/eks/platform.py" not in scanned and "infra/components/eks.py" not in scanned
    # The shared parts of the config layer and of the fake account are scanned.
    assert {
        "infra/core/config/stack.py",
        "infra/core/config/location.py",
        "infra/core/config/inert.py",
        "infra/mocklive/__init__.py",
    } <= scanned
    # Every module the registry names is its platform's own code.
    named = [
        ref.partition(":")[0].replace(".", "/") + ".py"
        for e in ENTRIES.values()
        for ref in (e.config, e.planner, e.observation, e.observer, e.components, e.account)
        if ref is not None
    ]
    assert [m for m in named if m in scanned] == []


def test_each_planted_violation_is_reported():
    planted = {
        'if config.platform == "gke":\n    pass\n': "tests a platform's name",
        'ok = platform in ("gke", "eks")\n': "tests a platform's name",
        "if plan.gke is not None:\n    pass\n": "reads plan.gke",
        "groups = old_plan.eks.groups\n": "reads plan.eks",
        "if g.karpenter is not None:\n    pass\n": "tests Karpenter",
        'a = getattr(config.cluster, "existing", None)\n': "getattr reaches into config.cluster",
        'nodes = getattr(spec, "nodes", ())\n': "getattr(..., 'nodes') reaches",
        "on = config.cluster.autoscaler.enabled\n": "reads cluster.autoscaler",
        "from infra.core.config.gke import GkePoolSpec\n": "a platform's config schema",
        # The forms a first scan missed.
        'match config.platform:\n    case "gke":\n        pass\n': "tests a platform's name",
        'x = table.get("gke")\n': "looks a platform's name up",
        'x = {"eks": 1}[p]\n': "looks a platform's name up",
        "x = dict(gke=1, eks=2)[p]\n": "looks a platform's name up",
        "ok = isinstance(plan.platform, GkePlatform)\n": "tests for a platform's class",
        "match plan.platform:\n    case EksPlatform():\n        pass\n": "a platform's class",
        "from infra.core.gke.platform import GkePlatform\n": "inside a platform package",
        "from infra.core.gke import model\n": "inside a platform package",
        'if preset.startswith("gke-"):\n    pass\n': "tests a platform's name",
        'if preset == "eks-bottlerocket":\n    pass\n': "tests a platform's name",
        'on = preset in ("k3s", "rke2")\n': "tests a platform's name",
        'if features.cloud == "gcp":\n    pass\n': "tests a cloud's name",
    }
    for source, why in planted.items():
        (found,) = violations("infra/core/operator/objects.py", source)
        assert why in found, source
    outside = violations("quota/x.py", "from infra.core.eks.karpenter import pools\n")
    assert outside and "inside a platform package" in outside[0]


def test_cloud_tests_are_refused_beyond_what_a_module_has_left():
    one = 'ok = cloud == "aws"\n'
    assert violations("quota/keys.py", one) == []  # its one left
    assert len(violations("quota/keys.py", one * 2)) == 2
    assert violations("infra/core/catalog/vendored.py", one * 3) == []  # cloud-keyed data


def test_every_cloud_test_left_is_still_there():
    # A module that stopped testing a cloud's name drops its entry (the budget only shrinks).
    for path, left in CLOUD_TESTS_LEFT.items():
        tree = ast.parse((ROOT / path).read_text())
        assert sum(_cloud_test(n) for n in ast.walk(tree)) == left, path


def test_asking_the_platform_and_base_fields_pass():
    source = (
        "if plan.platform.features.autoscaler is None:\n    pass\n"
        "existing = config.cluster.existing\n"
        'warm = getattr(spec, "warm", 0)\n'
        'resolve(integrations["kubernetes"])\n'
        "preset = platform.presets()[name]\n"
        'ok = isinstance(plan.platform, Platform) and name.startswith("nvidia.com/")\n'
    )
    assert violations("infra/core/operator/objects.py", source) == []


# --- the registry and what each platform answers ---------------------------------------------------

STACKS = sorted((ROOT / "stacks").glob("Pulumi.*.yaml"))


def test_the_config_accepts_each_platform_the_registry_has_a_config_part_of():
    from infra.core.config.entry import PlatformConfig, platform_config
    from infra.core.config.stack import parse

    for name in PLATFORMS:
        part = platform_config(name)
        assert isinstance(part, PlatformConfig) and part.cluster.model_fields, name
    raw = {"gpu-infra:platform": "nowhere", "gpu-infra:cluster": {}}
    with pytest.raises(ConfigErrors, match="is not one of: gke, eks, kubernetes"):
        parse(raw, "t")


def test_every_sample_plan_holds_its_platforms_implementation_by_the_protocol():
    from infra.core.config.stack import parse_file
    from infra.core.plan import build_plan

    for path in STACKS:
        plan = build_plan(parse_file(path))
        assert plan.platform.name == plan.config.platform, path.name
        assert plan.pools == plan.platform.pools and plan.catalog is plan.platform.catalog


def test_an_on_prem_plan_imports_no_module_of_another_platform():
    code = (
        "import sys\n"
        "from infra.core.config.stack import parse_file\n"
        "from infra.core.plan import build_plan\n"
        "build_plan(parse_file('stacks/Pulumi.onprem-containerd.yaml'))\n"
        "print(sorted(m for m in sys.modules if m.split('.')[2:3] in (['gke'], ['eks'])"
        " or m in ('infra.core.config.gke', 'infra.core.config.eks')))\n"
    )
    out = python_c(code)
    assert out.returncode == 0, out.stderr
    # Not even a constant: each platform's presets (and GKE's driver installer) live in its package.
    assert out.stdout.strip() == "[]"


def _cluster(platform: str, **autoscaler: object):
    from tests.unit.operator_fixtures import stack

    return stack(platform, cluster={"autoscaler": autoscaler} if autoscaler else None)


def test_only_cluster_autoscaler_on_eks_reads_its_gpu_label():
    # cluster-autoscaler's AWS provider (GPULabel, aws_cloud_provider.go) treats a node with the
    # label and 0 nvidia.com/gpu as unready; Karpenter has no such rule, and no autoscaler none.
    from infra.core.eks.nodes import AWS_GPU_LABEL
    from infra.core.eks.platform import eks_features

    cases = {(): AWS_GPU_LABEL, (("kind", "karpenter"),): None, (("enabled", False),): None}
    for given, label in cases.items():
        assert eks_features(_cluster("eks", **dict(given)).cluster).autoscaler_gpu_label == label


def test_who_scales_the_gpu_pools_is_gke_the_eks_autoscaler_kind_or_nobody():
    from infra.core.eks.platform import eks_features
    from infra.core.gke.platform import FEATURES as GKE
    from infra.core.kubernetes.platform import FEATURES as KUBERNETES

    assert GKE.autoscaler == "gke" and KUBERNETES.autoscaler is None
    cases = {
        (): "cluster-autoscaler",  # cluster.autoscaler defaults: kind cluster-autoscaler, enabled
        (("kind", "karpenter"),): "karpenter",
        (("enabled", False),): None,
    }
    for given, scaler in cases.items():
        assert eks_features(_cluster("eks", **dict(given)).cluster).autoscaler == scaler, given
