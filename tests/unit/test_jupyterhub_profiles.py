"""JupyterHub profiles of every sample stack: what the spawner form shows and what it requests."""

from __future__ import annotations

import ast
import functools
from pathlib import Path
from typing import Any

from infra.core.config.stack import parse_file
from infra.core.plan import build_plan

ROOT = Path(__file__).resolve().parents[2]
STACKS = sorted((ROOT / "stacks").glob("Pulumi.*.yaml"))
IDS = [p.stem.removeprefix("Pulumi.") for p in STACKS]


@functools.cache
def profiles(path: Path) -> dict[str, dict[str, Any]]:
    op = build_plan(parse_file(path)).operator
    assert op is not None
    return {k: dict(v) for k, v in op.jupyterhub_profiles.items()}


def test_the_gpu_request_rule_has_one_home_used_by_jupyterhub_and_warm():
    # One home per concern: the slot rule is defined once, and both consumers import it.
    core = ROOT / "infra" / "core"
    homes = [
        p.relative_to(ROOT).as_posix()
        for p in core.rglob("*.py")
        for node in ast.walk(ast.parse(p.read_text()))
        if isinstance(node, ast.FunctionDef) and node.name in ("gpu_request", "shares_gpu")
    ]
    assert homes == ["infra/core/integrations/scheduling.py"] * 2
    for user in ("integrations/jupyterhub.py", "warm.py"):
        assert "from infra.core.integrations.scheduling import gpu_request" in (
            (core / user).read_text()
        )
