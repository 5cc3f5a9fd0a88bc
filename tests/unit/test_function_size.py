"""Functions a person reads in one sitting: none in infra/ or quota/ is over 80 lines."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "long_functions.py"
_spec = importlib.util.spec_from_file_location("long_functions", SCRIPT)
assert _spec is not None and _spec.loader is not None
long_functions = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(long_functions)


def _function(name: str, lines: int, indent: str = "") -> str:
    body = "".join(f"{indent}    x{i} = {i}\n" for i in range(lines - 1))
    return f"{indent}def {name}():\n{body}"


def test_no_function_in_infra_or_quota_is_over_80_lines():
    out = subprocess.run(
        [sys.executable, str(SCRIPT)], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert out.returncode == 0, out.stdout
    assert out.stdout.strip() == "no function over 80 lines"


def test_a_function_of_81_lines_is_listed_and_one_of_80_is_not():
    source = _function("long", 81) + _function("fits", 80)
    assert list(long_functions.long_functions(source)) == [("long", 1, 81)]


def test_methods_and_nested_functions_are_listed_with_their_qualified_names():
    source = "class C:\n" + _function("method", 90, "    ")
    assert list(long_functions.long_functions(source)) == [("C.method", 2, 90)]
