"""Benchmark (not a test): ``python -m infra.plan`` per sample stack against the bare import floor.

Usage: ``.venv/bin/python scripts/bench_plan.py [--runs N]``

The floor is ``python -c "import pulumi, pulumi_gcp, pulumi_aws, pulumi_kubernetes"`` measured in
the same run on the same machine; each stack's time is printed as a ratio to it (target <= 2.0x).
Each command runs N times (default 7) and the median wall time is reported.
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


def main() -> int:
    """Run the benchmark and print one line per stack."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    floor = median_seconds(FLOOR, args.runs)
    print(f"{'import floor':<28} {floor:6.3f} s   1.00x")
    stacks = sorted(p.name[len("Pulumi."):-len(".yaml")] for p in (ROOT / "stacks").glob("Pulumi.*.yaml"))
    worst = 0.0
    for stack in stacks:
        t = median_seconds([sys.executable, "-m", "infra.plan", "--stack", stack], args.runs)
        worst = max(worst, t / floor)
        print(f"{'plan ' + stack:<28} {t:6.3f} s   {t / floor:4.2f}x")
    print(f"worst ratio {worst:.2f}x (target <= 2.00x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
