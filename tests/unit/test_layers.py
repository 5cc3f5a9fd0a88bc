"""infra.core's data flows one way: each module imports only from the layers below its own.

From the top: the plan's views (cost, diff) -> the plan -> the scheduling proof -> the receiver
check -> the decided ``Plan`` (planned) -> warm -> the operator -> the workload integrations -> the
platform packages (gke, eks, kubernetes; none imports another) -> the platform seam (platform: the
protocol and its features) -> the neutral values a platform answers with (nodes, sizing,
platform_cost, sent) -> shared helpers (sharing, system_pool, kubeconfig, offline, observed: the
container of what a platform read; neighbours: the per-stack node label; pinned_defaults: the
config defaults the catalog's pins decide) -> platform-neutral pool
facts (pools) -> node labels (labels) -> the config schema -> catalog, field rules, the stack-file
reader -> errors and the Pulumi type tokens (tokens) -> the registry of platforms (platforms).
Two modules of one layer never import each other (so there are no cycles), and a rule two
platforms share lives in a shared module, never in one platform's package. No module outside a
platform package imports it: the registry names each platform's parts by module (it imports
nothing, so every layer may ask it), and every other layer asks the ``Platform`` it is handed.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "infra" / "core"
# Lowest first; a module's layer is that of its first name under infra.core.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("platforms",),
    ("errors", "tokens"),
    ("catalog", "rules", "stackfile"),
    ("config",),
    ("labels",),
    ("pools",),
    (
        "sharing",
        "system_pool",
        "kubeconfig",
        "offline",
        "observed",
        "neighbours",
        "pinned_defaults",
    ),
    ("nodes", "sizing", "platform_cost", "sent"),
    ("platform",),
    ("platform_defaults",),
    ("gke", "eks", "kubernetes"),
    ("integrations",),
    ("operator",),
    ("warm",),
    ("planned",),
    ("receivers",),
    ("scheduling",),
    ("plan",),
    ("lifecycle", "inputs"),
    ("disruption",),
    ("cost", "diff"),
)
PLATFORMS = frozenset(("gke", "eks", "kubernetes"))


def layer_of(top: str) -> int | None:
    return next((i for i, names in enumerate(LAYERS) if top in names), None)


def imported(source: str, module: str) -> list[list[str]]:
    """Every infra.core module path (names after ``infra.core``) that ``source`` of ``module``
    imports, in all three forms: ``from infra.core.x import y``, ``import infra.core.x`` and
    relative imports."""
    package = module.split(".")[:-1]
    found: list[list[str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [a.name.split(".") for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module.split(".") if node.module else []
            if node.level:
                base = package[: len(package) - node.level + 1] + base
            found += [[*base, a.name] for a in node.names]
    return [path[2:] for path in found if path[:2] == ["infra", "core"] and len(path) > 2]


def violations(module: str, source: str) -> list[str]:
    """Why ``module`` (dotted, under infra.core) with ``source`` breaks the layering, if it does."""
    top = module.split(".")[2]
    found = []
    for path in imported(source, module):
        target = path[0]
        if target == top:
            continue
        mine, theirs = layer_of(top), layer_of(target)
        if mine is None or theirs is None:
            found.append(f"{top} imports {target}: not in the layer table")
        elif theirs >= mine:
            found.append(f"{top} imports {target}, a layer not below its own")
        elif target in PLATFORMS:
            found.append(f"{top} imports {'.'.join(path[:2])}, a platform package")
    return found


def core_modules() -> list[tuple[str, Path]]:
    mods = []
    for path in sorted(CORE.rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        name = ".".join(rel.parts).removesuffix(".__init__")
        if name != "infra.core":
            mods.append((name, path))
    return mods


def test_every_core_module_has_a_layer():
    assert [m for m, _ in core_modules() if layer_of(m.split(".")[2]) is None] == []


def test_core_imports_only_flow_down_the_layers_and_never_across_platforms():
    found = [f"{m}: {v}" for m, p in core_modules() for v in violations(m, p.read_text())]
    assert found == []


@pytest.mark.parametrize(
    ("module", "source", "reported"),
    [
        (
            "infra.core.sharing",
            "from infra.core.gke.rules import x\n",
            "sharing imports gke, a layer not below its own",
        ),
        (
            "infra.core.sharing",
            "import infra.core.gke.model\n",
            "sharing imports gke, a layer not below its own",
        ),
        (
            "infra.core.gke.pools",
            "from ..eks import autoscaler\n",
            "gke imports eks, a layer not below its own",
        ),
        (
            "infra.core.catalog.vendored",
            "from infra.core.rules import aws\n",
            "catalog imports rules, a layer not below its own",
        ),
        (
            "infra.core.integrations.flyte",
            "from infra.core.eks import groups\n",
            "integrations imports eks.groups, a platform package",
        ),
        # Not even a platform's plan types or constants: shared layers ask the Platform.
        (
            "infra.core.operator.objects",
            "from infra.core.gke.model import X\n",
            "operator imports gke.model, a platform package",
        ),
        (
            "infra.core.plan",
            "from infra.core.eks.planner import EksPlan\n",
            "plan imports eks.planner, a platform package",
        ),
        (
            "infra.core.pools",
            "from infra.core import nowhere\n",
            "pools imports nowhere: not in the layer table",
        ),
    ],
)
def test_upward_same_layer_cross_platform_and_inside_platform_imports_are_reported(
    module, source, reported
):
    assert violations(module, source) == [reported]


def test_imports_down_the_layers_and_within_a_package_pass():
    source = (
        "from infra.core import errors\nfrom infra.core.gke import model\nfrom . import rules\n"
    )
    assert violations("infra.core.gke.pools", source) == []


def test_the_registry_imports_no_platform_package_it_names_them():
    assert violations("infra.core.platforms", "from infra.core.eks.platform import plan\n") == [
        "platforms imports eks, a layer not below its own"
    ]
    assert violations("infra.core.config.stack", "from infra.core.platforms import load\n") == []


def _registry_refs() -> list[tuple[str, str]]:
    """(platform, ``module:attribute``) of every part the registry names."""
    from infra.core.platforms import ENTRIES

    return [
        (name, ref)
        for name, e in ENTRIES.items()
        for ref in (e.config, e.planner, e.observation, e.observer, e.components, e.account)
        if ref is not None
    ]


def test_each_registry_entry_names_its_own_platforms_modules_only():
    # A module of a platform carries its name: infra.core.<p>.*, infra.core.config.<p>,
    # infra.components.<p>[_*], infra.observe.<p>, infra.mocklive.<p>.
    refs = _registry_refs()
    assert {name for name, _ in refs} == PLATFORMS
    for name, ref in refs:
        parts = ref.partition(":")[0].split(".")
        assert any(p == name or p.startswith(f"{name}_") for p in parts[1:]), ref
        assert not any(p in PLATFORMS - {name} for p in parts), ref


def test_every_part_the_registry_names_resolves_to_what_its_entry_says():
    from infra.core.config.entry import PlatformConfig
    from infra.core.platforms import ENTRIES, load
    from infra.mocklive.account import AccountPart

    for e in ENTRIES.values():
        assert isinstance(load(e.config), PlatformConfig), e.config
        assert all(callable(load(r)) for r in (e.planner, e.components) if r), e
        assert e.observer is None or callable(load(e.observer)), e.observer
        assert e.observation is None or callable(load(e.observation).from_json), e.observation
        assert e.account is None or isinstance(load(e.account), AccountPart), e.account


def test_every_package_says_what_it_decides_and_may_import():
    for pkg in (
        "gke",
        "eks",
        "kubernetes",
        "config",
        "catalog",
        "operator",
        "integrations",
        "rules",
    ):
        doc = ast.get_docstring(ast.parse((CORE / pkg / "__init__.py").read_text())) or ""
        assert "May import" in doc, pkg


def test_no_module_directly_under_core_carries_a_platform_prefix():
    flat = [p.stem for p in CORE.glob("*.py")]
    assert [m for m in flat if m.startswith(("gke_", "eks_", "config_", "catalog_"))] == []
