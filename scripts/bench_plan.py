"""Benchmark (not a test): ``python -m infra.plan`` per sample stack against the bare import floor.

Usage: ``.venv/bin/python scripts/bench_plan.py [--runs N]``

The floor is ``python -c "import pulumi, pulumi_gcp, pulumi_aws, pulumi_kubernetes"`` measured in
the same run on the same machine; each stack's time is printed as a ratio to it (target <= 2.0x).
Those top-level imports are lazy: the provider submodules a stack really uses (``pulumi_aws.ec2`` is
~100 ms on its own) load only when touched. So a second, per-stack floor imports exactly the Pulumi
modules that stack's plan loaded (read from ``-X importtime``), and the last column is the plan's
own cost beyond that. Each command runs N times (default 7); the median wall time is reported.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FLOOR = [sys.executable, "-c", "import pulumi, pulumi_gcp, pulumi_aws, pulumi_kubernetes"]


def median_seconds(cmd: list[str], runs: int) -> float:
    """Median wall time of ``cmd`` over ``runs`` runs (one warm-up run first, not counted)."""
    subprocess.run(cmd, cwd=ROOT, capture_output=True, check=True)
    times: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, cwd=ROOT, capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def sdk_modules(stack: str) -> list[str]:
    """Every ``pulumi*`` module the plan of ``stack`` imports (from ``python -X importtime``)."""
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "infra.plan", "--stack", stack],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    mods: list[str] = []
    for line in out.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name.split(".")[0].startswith("pulumi"):
                mods.append(name)
    return mods


def main() -> int:
    """Run the benchmark and print one line per stack."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    floor = median_seconds(FLOOR, args.runs)
    print(f"import floor {floor:.3f} s")
    print(f"{'stack':<24} {'plan':>7} {'/floor':>7} {'sdk floor':>10} {'plan-sdk':>9}")
    stacks = sorted(
        p.name[len("Pulumi.") : -len(".yaml")] for p in (ROOT / "stacks").glob("Pulumi.*.yaml")
    )
    worst = 0.0
    for stack in stacks:
        t = median_seconds([sys.executable, "-m", "infra.plan", "--stack", stack], args.runs)
        code = f"import importlib\nfor m in {sdk_modules(stack)!r}: importlib.import_module(m)"
        sdk = median_seconds([sys.executable, "-c", code], args.runs)
        worst = max(worst, t / floor)
        print(f"{stack:<24} {t:6.3f}s {t / floor:6.2f}x {sdk:9.3f}s {t - sdk:8.3f}s")
    print(f"worst plan/floor ratio {worst:.2f}x (target <= 2.00x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
