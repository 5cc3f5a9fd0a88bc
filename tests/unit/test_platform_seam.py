"""Shared code asks the platform (``infra.core.platform``); it never tests which platform it has.

An AST scan of every module of ``infra/`` and ``quota/`` outside the platforms' own code (their
packages under ``infra/core``, their components under ``infra/components``), the one registry
(``infra/core/platforms.py``) and the config layer (``infra/core/config``, whose schema is the union
of the platforms' blocks by ``platform``): no comparison with a platform's name, no
``plan.gke`` / ``plan.eks`` / ``plan.kubernetes``, no ``.karpenter`` (Karpenter is the EKS
platform's feature), no ``getattr`` into a platform's config schema or ``config.cluster`` field of
one platform, no import of a platform's config schema, and outside ``infra/core`` no import of a
platform package at all.
"""

from __future__ import annotations

import ast
from pathlib import Path

from pydantic import BaseModel

from infra.core.config.base import ClusterBase, PoolBase
from infra.core.config.eks import EksClusterSpec, EksPoolSpec
from infra.core.config.gke import GkeClusterSpec, GkePoolSpec
from infra.core.config.kubernetes import KubernetesClusterSpec, KubernetesPoolSpec
from infra.core.platforms import COMPONENTS, PLANNERS

ROOT = Path(__file__).resolve().parents[2]
PLATFORMS = frozenset(PLANNERS)
# The platforms' own code: their packages, and the components that build them.
OWN = (
    *(f"infra/core/{p}/" for p in PLATFORMS),
    "infra/components/gke.py",
    "infra/components/gke_pools.py",
    "infra/components/eks.py",
    "infra/components/eks_addons.py",
    "infra/components/eks_nodes.py",
    "infra/components/eks_network.py",
    "infra/components/karpenter.py",
    "infra/components/karpenter_pools.py",
    "infra/components/kubernetes_cluster.py",
    "infra/observe/gke.py",  # each platform's observe step (the registry's OBSERVERS)
    "infra/observe/eks.py",
    # The mock engine's fake of each cloud's account (what a deploy leaves running there).
    "infra/mocklive.py",
    "infra/core/platforms.py",  # the one registry
    "infra/core/config/",  # the schema: one cluster and pool model per platform
)
# Not platforms: Pulumi provider packages by their type-token prefix (pulumi_eks, pulumi_kubernetes).
NOT_PLATFORMS = ("infra/sdkschema.py",)
PLAN_FIELDS = PLATFORMS  # Plan.gke / Plan.eks / Plan.kubernetes
# Keys that name a platform only ("kubernetes" is also the plain Kubernetes integration's name).
PLATFORM_KEYS = frozenset(("gke", "eks"))


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


def _names_a_platform(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return node.value in PLATFORMS
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_names_a_platform(e) for e in node.elts)
    return False


def _is_plan(node: ast.expr) -> bool:
    name = node.id if isinstance(node, ast.Name) else getattr(node, "attr", "")
    return name == "p" or name.endswith("plan")


def _import_problems(node: ast.AST, outside_core: bool) -> list[str]:
    modules: list[str] = []
    if isinstance(node, ast.ImportFrom) and node.module:
        modules = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
    elif isinstance(node, ast.Import):
        modules = [a.name for a in node.names]
    found = []
    for m in modules:
        if m in SCHEMA_MODULES:
            found.append(f"imports {m}, a platform's config schema")
        elif outside_core and m.split(".")[:3] in (["infra", "core", p] for p in PLATFORMS):
            found.append(f"imports {m}, inside a platform package")
    return found


def _node_problems(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Compare) and any(
        _names_a_platform(x) for x in (node.left, *node.comparators)
    ):
        return ["tests a platform's name"]
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
    name or schema instead of asking the platform, if it does."""
    outside_core = not path.startswith("infra/core/")
    found = []
    for node in ast.walk(ast.parse(source)):
        problems = _node_problems(node) + _import_problems(node, outside_core)
        found += [f"{path}:{getattr(node, 'lineno', 0)}: {p}" for p in problems]
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
    # Every platform's components module is the platform's own code.
    assert all(m.replace(".", "/") + ".py" in OWN for m, _ in COMPONENTS.values())


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
    }
    for source, why in planted.items():
        (found,) = violations("infra/core/operator/objects.py", source)
        assert why in found, source
    outside = violations("quota/x.py", "from infra.core.eks.karpenter import pools\n")
    assert outside and "inside a platform package" in outside[0]


def test_asking_the_platform_and_base_fields_pass():
    source = (
        "if plan.platform.features.autoscaler is None:\n    pass\n"
        "existing = config.cluster.existing\n"
        'warm = getattr(spec, "warm", 0)\n'
        'resolve(integrations["kubernetes"])\n'
    )
    assert violations("infra/core/operator/objects.py", source) == []


# --- the registry and what each platform answers ---------------------------------------------------

STACKS = sorted((ROOT / "stacks").glob("Pulumi.*.yaml"))


def test_the_registry_has_one_planner_per_platform_the_config_accepts():
    from infra.core.config.base import PLATFORMS as CONFIG_PLATFORMS

    assert set(PLANNERS) == set(CONFIG_PLATFORMS) == set(COMPONENTS)


def test_every_sample_plan_holds_its_platforms_implementation_by_the_protocol():
    from infra.core.config.stack import parse_file
    from infra.core.plan import build_plan

    for path in STACKS:
        plan = build_plan(parse_file(path))
        assert plan.platform.name == plan.config.platform, path.name
        assert plan.pools == plan.platform.pools and plan.catalog is plan.platform.catalog


def test_an_on_prem_plan_imports_no_module_of_another_platform():
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from infra.core.config.stack import parse_file\n"
        "from infra.core.plan import build_plan\n"
        "build_plan(parse_file('stacks/Pulumi.onprem-containerd.yaml'))\n"
        "print(sorted(m for m in sys.modules if m.split('.')[2:3] in (['gke'], ['eks'])"
        " or m in ('infra.core.config.gke', 'infra.core.config.eks')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    # Not even a constant: each platform's presets (and GKE's driver installer) live in its package.
    assert out.stdout.strip() == "[]"


def _cluster(platform: str, **autoscaler: object):
    from tests.unit.operator_fixtures import stack

    return stack(platform, cluster={"autoscaler": autoscaler} if autoscaler else None)


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
