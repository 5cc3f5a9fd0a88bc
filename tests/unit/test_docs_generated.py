"""The docs a person reads: a short README indexing docs/, links that resolve, and generated parts
(config reference, code layout, lifecycle table) that equal what their generators make now."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import BaseModel

from infra.core.config import base, eks, gke, kubernetes, operator, stack
from infra.docsgen import blocks, config_ref, layout, pages

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [ROOT / "README.md", *DOCS]


@pytest.fixture(scope="module")
def made() -> dict[str, str]:
    return pages.schema_blocks()


def test_the_schema_blocks_are_named_once():
    assert tuple(pages.schema_blocks()) == pages.SCHEMA_BLOCKS


@pytest.mark.parametrize("block", pages.SCHEMA_BLOCKS)
def test_generated_block_in_the_docs_is_what_its_generator_makes(block: str, made):
    assert pages.committed(block) == made[block], (
        f"{pages.page_of(block)}: block {block} is stale: run python -m infra.docsgen --write"
    )


def _models() -> list[type[BaseModel]]:
    return [
        cls
        for module in (base, gke, eks, kubernetes, operator)
        for cls in vars(module).values()
        if isinstance(cls, type)
        and issubclass(cls, BaseModel)
        and cls.__module__ == module.__name__
        and cls is not base.Model
    ]


def test_every_field_of_every_config_model_says_what_it_does():
    for cls in _models():
        cls.model_rebuild()
    missing = [
        f"{cls.__name__}.{name}"
        for cls in _models()
        for name, info in cls.model_fields.items()
        if not (info.description or "").strip()
    ]
    assert missing == []


def test_a_field_without_a_description_is_refused_by_the_reference():
    class Bare(base.Model):
        size: int = 3

    with pytest.raises(ValueError, match=r"x\.size: the schema field has no description"):
        [config_ref.entry_text(*e) for e in config_ref.entries(Bare, "x")]


def test_the_reference_lists_exactly_the_top_level_keys_the_parser_reads():
    listed = {key for key, _, _ in config_ref.TOP_LEVEL}
    read = {f"{stack.PROJECT}:{k}" for k in stack._PROJECT_KEYS} | set(stack._PROVIDER_KEYS)
    assert listed == read


def test_the_reference_shows_type_bounds_default_and_rule_from_the_schema():
    text = config_ref.render()
    assert "- `gpuOperator.timeout` (integer, >= 60, <= 3600, default `900`)" in text
    assert "`cluster.vpc.natGateways` (`single` | `perAz`, default `single`)" in text
    # the rule is the check function's own docstring (infra.core.rules.check_pool_name)
    assert "Rule: A GPU pool name: GKE's node-pool rule" in text


def test_a_module_without_a_docstring_is_refused_by_the_code_layout(tmp_path, monkeypatch):
    monkeypatch.setattr(layout, "ROOT", tmp_path)
    (tmp_path / "bare.py").write_text("x = 1\n")
    with pytest.raises(ValueError, match=r"bare\.py: no module docstring"):
        layout.summary(tmp_path / "bare.py")


def test_a_block_is_replaced_by_name_and_the_text_around_it_kept():
    text = f"intro\n{blocks.begin_marker('a')}\nold\n{blocks.end_marker('a')}\noutro\n"
    new = blocks.replaced(text, {"a": "new"})
    assert new == f"intro\n{blocks.begin_marker('a')}\nnew\n{blocks.end_marker('a')}\noutro\n"
    assert blocks.blocks(new) == {"a": "new\n"}
    with pytest.raises(ValueError, match="no generated block named b"):
        blocks.replaced(text, {"b": "x"})


def test_every_generated_block_sits_on_the_page_the_registry_names():
    found = {n: p.relative_to(ROOT).as_posix() for p in PAGES for n in blocks.blocks(p.read_text())}
    assert found == {n: page for page, names in pages.PAGES.items() for n in names}


def test_the_readme_is_short_and_indexes_every_page_of_docs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    assert [p.name for p in DOCS if f"(docs/{p.name})" not in readme] == []


def test_the_readme_still_holds_the_test_command_ci_runs():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert ".venv/bin/python -m pytest" in ci
    assert "./scripts/setup && .venv/bin/python -m pytest\n" in (ROOT / "README.md").read_text()


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lowercase, punctuation dropped, spaces as ``-``."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
    return {slug(m) for m in re.findall(r"^#+ (.+)$", text, re.MULTILINE)}


def test_every_relative_link_of_the_docs_reaches_a_page_and_heading():
    broken: list[str] = []
    for page in PAGES:
        text = re.sub(r"`[^`\n]*`", "", page.read_text(encoding="utf-8"))  # code is no link
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+://", target):
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists() or (anchor and anchor not in _anchors(dest)):
                broken.append(f"{page.name}: {target}")
    assert broken == []


def test_a_link_to_a_missing_heading_is_broken():
    assert slug("`--diff OLD`: a change review for CI") == "--diff-old-a-change-review-for-ci"
    assert "no-such-heading" not in _anchors(ROOT / "docs" / "review.md")


def _outside_blocks(text: str) -> str:
    return re.sub(r"<!-- generated: .*?<!-- end generated: [a-z0-9-]+ -->", "", text, flags=re.S)


def test_no_table_row_of_the_docs_is_a_wall_of_text():
    long = [
        f"{p.name}: {ln[:60]}..."
        for p in PAGES
        for ln in p.read_text(encoding="utf-8").splitlines()
        if ln.startswith("|") and len(ln) > 300
    ]
    assert long == []


def test_no_page_counts_the_sample_stacks_by_hand():
    # How many samples there are is the fleet table's to say (generated), never a hand-written
    # number that goes stale when a sample is added.
    words = r"(\d+|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
    pattern = re.compile(rf"\b{words} sample stacks\b", re.IGNORECASE)
    found = [p.name for p in PAGES if pattern.search(_outside_blocks(p.read_text()))]
    assert found == []
