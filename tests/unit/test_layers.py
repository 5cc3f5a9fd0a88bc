"""infra.core's data flows one way: each module imports only from its own layer or the layers below.

From the top: the plan and its views (plan, cost, diff) -> the operator -> the workload integrations
-> the platform planners (gke, eks, kubernetes; none imports another) -> shared helpers (pools,
sharing, system_pool, kubeconfig) -> the config schema -> catalog, field rules, the stack-file
reader -> errors. A rule two platforms share lives in a shared module, never in one platform's
package.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "infra" / "core"
# Lowest first; a module's layer is that of its first name under infra.core.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors",),
    ("catalog", "rules", "stackfile"),
    ("config",),
    ("pools", "sharing", "system_pool", "kubeconfig"),
    ("gke", "eks", "kubernetes"),
    ("integrations",),
    ("operator",),
    ("receivers",),
    ("plan", "platform_cost", "cost", "diff"),
)
PLATFORMS = frozenset(LAYERS[4])


def layer_of(top: str) -> int:
    return next(i for i, names in enumerate(LAYERS) if top in names)


def imports_of(source: str) -> list[str]:
    """First name under infra.core of every infra.core module ``source`` imports."""
    tops: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module:
            parts = node.module.split(".")
            if parts[:2] != ["infra", "core"]:
                continue
            tops += [parts[2]] if len(parts) > 2 else [a.name for a in node.names]
    return tops


def violations(top: str, source: str) -> list[str]:
    """Why a module under ``infra.core.<top>`` with ``source`` breaks the layering, if it does."""
    found = []
    for target in imports_of(source):
        if target == top:
            continue
        if layer_of(target) > layer_of(top):
            found.append(f"{top} imports {target}, a higher layer")
        elif top in PLATFORMS and target in PLATFORMS:
            found.append(f"platform {top} imports platform {target}")
    return found


def core_modules() -> list[tuple[str, Path]]:
    mods = []
    for path in sorted(CORE.rglob("*.py")):
        rel = path.relative_to(CORE)
        if rel.parts == ("__init__.py",):
            continue
        mods.append((rel.parts[0].removesuffix(".py"), path))
    return mods


def test_every_core_module_has_a_layer():
    assert all(any(top in names for names in LAYERS) for top, _ in core_modules())


def test_core_imports_only_flow_down_the_layers_and_never_across_platforms():
    found = [
        f"{p.relative_to(ROOT)}: {v}"
        for top, p in core_modules()
        for v in violations(top, p.read_text())
    ]
    assert found == []


def test_an_upward_or_cross_platform_import_is_reported():
    assert violations("sharing", "from infra.core.gke.rules import x\n") == [
        "sharing imports gke, a higher layer"
    ]
    assert violations("gke", "from infra.core.eks import autoscaler\n") == [
        "platform gke imports platform eks"
    ]
    assert (
        violations("gke", "from infra.core import errors\nfrom infra.core.gke import model\n") == []
    )


def test_every_platform_package_and_concern_package_has_a_docstring():
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
        init = CORE / pkg / "__init__.py"
        assert ast.get_docstring(ast.parse(init.read_text())), pkg


def test_no_module_directly_under_core_carries_a_platform_prefix():
    flat = [p.stem for p in CORE.glob("*.py")]
    assert [m for m in flat if m.startswith(("gke_", "eks_", "config_", "catalog_"))] == []
