"""Which generated block lives on which page, and how the pages are checked and rewritten."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from infra.docsgen import blocks

ROOT = Path(__file__).resolve().parents[2]

# page (relative to the repository) -> the blocks it holds
PAGES: Mapping[str, tuple[str, ...]] = {
    "README.md": ("sample-fleet",),
    "docs/config-reference.md": ("config-reference",),
    "docs/architecture.md": ("code-layout",),
    "docs/lifecycle.md": ("lifecycle-table",),
    "docs/day2.md": ("disruption-table",),
    "docs/quota.md": ("quota-samples",),
    "docs/gpu-operator.md": ("operator-quota", "isolation-table"),
    "docs/workloads.md": ("pool-slots",),
    "docs/eks.md": ("node-templates",),
    "docs/review.md": ("plan-output", "platform-prices", "diff-example"),
}


def page_of(name: str) -> str:
    (page,) = [p for p, names in PAGES.items() if name in names]
    return page


# The blocks made from the code and its data alone, without planning.
SCHEMA_BLOCKS = (
    "config-reference",
    "code-layout",
    "lifecycle-table",
    "disruption-table",
    "platform-prices",
    "isolation-table",
)


def schema_blocks() -> dict[str, str]:
    """The blocks made without planning: schema, docstrings, lifecycle model, price table."""
    from infra.core import disruption, lifecycle
    from infra.core.operator import isolation_table
    from infra.docsgen import config_ref, layout, prices

    return {
        "config-reference": config_ref.render(),
        "code-layout": layout.render(),
        "lifecycle-table": lifecycle.markdown_table(),
        "disruption-table": disruption.markdown_table(),
        "platform-prices": prices.render(),
        "isolation-table": isolation_table.markdown_table(),
    }


def committed(name: str) -> str:
    """The body of block ``name`` as its page holds it now."""
    found = blocks.blocks((ROOT / page_of(name)).read_text(encoding="utf-8"))
    if name not in found:
        raise ValueError(f"{page_of(name)} has no generated block {name!r}")
    return found[name]


def stale(bodies: Mapping[str, str]) -> list[str]:
    """``page: block`` of every block whose committed body differs from ``bodies``."""
    return [f"{page_of(n)}: {n}" for n, body in bodies.items() if committed(n) != body]


def write(bodies: Mapping[str, str]) -> list[str]:
    """Rewrite the blocks of ``bodies`` in their pages; the pages that changed."""
    changed: list[str] = []
    for page in PAGES:
        mine = {n: b for n, b in bodies.items() if page_of(n) == page}
        if not mine:
            continue
        path = ROOT / page
        text = path.read_text(encoding="utf-8")
        new = blocks.replaced(text, mine)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(page)
    return changed
