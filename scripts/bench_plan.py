"""Benchmark (not a test): ``python -m infra.plan`` per sample stack against its SDK-import floor.

Usage: ``.venv/bin/python scripts/bench_plan.py [--runs N] [--groups N] [--fleet-only]``

Per stack, the sdk floor is a ``python -c`` that imports exactly the Pulumi SDK modules that
stack's plan loads (read from ``-X importtime``) in a default interpreter, which also pays the
collector's sweeps and the interpreter teardown that the plan avoids; measured in the same rounds
on the same machine. The target is plan <= 1.0x that floor, printed as the ratio of the least
times and as the median of the per-round ratios. The bare floor imports the same modules with the
collector off and leaves without teardown, as the plan does: plan / bare floor is what the plan's
own work (config, planners, the SDK registering each resource, the table) adds to the imports.
The top-level ``import pulumi, pulumi_gcp, pulumi_aws, pulumi_kubernetes`` floor is printed for
reference (those packages are lazy, so it loads almost none of the modules a plan uses). Then EKS
scaling: generated stacks with 1, half of ``--groups`` and ``--groups`` GPU node groups (target:
``--groups`` <= 2.0x one; the cost per added group the same in both halves, i.e. linear in pools).
Then the fleet: ``python -m infra.plan --all`` (every sample stack in one process) against the
slowest single-stack plan, measured in the same rounds (target: <= 2.0x; printed as a ratio).
Each command runs N rounds (default 9, a multiple of the three commands a stack rotates through)
after one warm-up; the least CPU time (user + system) is reported, the least noisy measure on a
shared machine (``--wall`` for wall time).
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FLOOR = [sys.executable, "-c", "import pulumi, pulumi_gcp, pulumi_aws, pulumi_kubernetes"]
WALL = "--wall" in sys.argv  # read before argparse: rounds() is used by every measurement


def rounds(cmds: list[list[str]], runs: int) -> list[list[float]]:
    """CPU time (user + system) of each command in each of ``runs`` rounds, after one warm-up.

    The commands take turns within a round, in an order rotated from round to round, so a ratio
    between them compares runs made in the same seconds: a neighbour's burst slows both sides,
    not one (measured one after the other, a 0.4 s floor moved by 10 % between two runs of this
    script). CPU time, not wall time: on a shared machine other work stretches wall time by
    whatever else runs (a 2-core box with six busy neighbours doubled it between runs), while a
    process's own CPU seconds barely move. ``--wall`` measures wall time instead.
    Returns ``times[round][command]``.
    """
    for cmd in cmds:
        subprocess.run(cmd, cwd=ROOT, capture_output=True, check=True)
    times: list[list[float]] = []
    for r in range(runs):
        got = [0.0] * len(cmds)
        order = list(range(len(cmds)))
        order = order[r % len(cmds) :] + order[: r % len(cmds)]
        for k in order:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run(cmds[k], cwd=ROOT, capture_output=True, check=True)
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            got[k] = wall if WALL else cpu
        times.append(got)
    return times


def least(times: list[list[float]]) -> list[float]:
    """Per command, its least time over the rounds: the least noisy estimate of its own cost."""
    return [min(col) for col in zip(*times, strict=True)]


def median_ratio(times: list[list[float]], a: int, b: int) -> float:
    """The median over rounds of command ``a``'s time over command ``b``'s in the same round."""
    return statistics.median(t[a] / t[b] for t in times)


def sdk_modules(stack: str) -> list[str]:
    """Every ``pulumi*`` module the plan of ``stack`` imports (from ``python -X importtime``)."""
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "infra.plan", "--stack", stack, "--json"],
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


def eks_stack(groups: int) -> str:
    """An EKS stack file with ``groups`` on-demand g4dn.xlarge GPU node groups."""
    pools = "".join(
        f"    - {{name: gpu-{i:03d}, machineType: g4dn.xlarge, minNodes: 0, maxNodes: 4}}\n"
        for i in range(groups)
    )
    return (
        "config:\n  aws:region: us-west-2\n  gpu-infra:platform: eks\n"
        "  gpu-infra:cluster: {name: ml, location: us-west-2, kubernetesVersion: '1.33'}\n"
        f"  gpu-infra:gpuPools:\n{pools}  gpu-infra:gpuOperator: {{enabled: true}}\n"
    )


def fleet(stacks: list[str], runs: int) -> float:
    """``--all`` in one process against each stack alone; prints and returns the ratio of the
    fleet's least time to the slowest single stack's."""
    single = [[sys.executable, "-m", "infra.plan", "--stack", s] for s in stacks]
    times = rounds([[sys.executable, "-m", "infra.plan", "--all"], *single], runs)
    best = least(times)
    slowest = max(range(len(stacks)), key=lambda i: best[i + 1])
    ratio = best[0] / best[slowest + 1]
    print(
        f"fleet: --all ({len(stacks)} stacks, one process) {best[0]:.3f}s; slowest single stack "
        f"{stacks[slowest]} {best[slowest + 1]:.3f}s; sum of singles {sum(best[1:]):.3f}s"
    )
    print(
        f"fleet ratio {ratio:.2f}x the slowest single stack (median of rounds "
        f"{median_ratio(times, 0, slowest + 1):.2f}x; target <= 2.00x)"
    )
    return ratio


def main() -> int:
    """Run the benchmark and print one line per stack, the EKS scaling ratio and the fleet's."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--groups", type=int, default=100)
    parser.add_argument("--wall", action="store_true", help="wall time instead of CPU time")
    parser.add_argument("--fleet-only", action="store_true", help="only the fleet measurement")
    args = parser.parse_args()
    # The project's bytecode, as scripts/setup compiles it: the SDK floor loads its installed .pyc
    # files, so without ours (PYTHONDONTWRITEBYTECODE, a fresh clone) every plan run would also
    # pay for compiling the project's sources and the ratios would compare unlike things.
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", "infra", "quota"], cwd=ROOT, check=True
    )
    stacks = sorted(
        p.name[len("Pulumi.") : -len(".yaml")] for p in (ROOT / "stacks").glob("Pulumi.*.yaml")
    )
    if args.fleet_only:
        fleet(stacks, args.runs)
        return 0
    (floor,) = least(rounds([FLOOR], args.runs))
    print(f"top-level import floor {floor:.3f} s (reference)")
    print(
        f"{'stack':<24} {'plan':>7} {'sdk floor':>10} {'plan/sdk':>9} {'median':>7} "
        f"{'bare floor':>11} {'plan/bare':>10}"
    )
    worst = 0.0
    for stack in stacks:
        code = f"import importlib\nfor m in {sdk_modules(stack)!r}: importlib.import_module(m)\n"
        # The bare floor: the same imports with no collector and no interpreter teardown, as the
        # plan runs them (infra.cli: short_lived, fast_exit): the cost of the imports alone.
        bare = f"import gc, os\ngc.disable()\n{code}os._exit(0)\n"
        times = rounds(
            [
                [sys.executable, "-m", "infra.plan", "--stack", stack],
                [sys.executable, "-c", code],
                [sys.executable, "-c", bare],
            ],
            args.runs,
        )
        t, sdk, nogc = least(times)
        worst = max(worst, t / sdk)
        print(
            f"{stack:<24} {t:6.3f}s {sdk:9.3f}s {t / sdk:8.2f}x {median_ratio(times, 0, 1):6.2f}x "
            f"{nogc:10.3f}s {t / nogc:9.2f}x"
        )
    print(f"worst plan/sdk-floor ratio {worst:.2f}x (target <= 1.00x)")
    with tempfile.TemporaryDirectory() as tmp:
        sizes = (1, args.groups // 2, args.groups)
        files = []
        for n in sizes:
            f = Path(tmp) / f"Pulumi.eks-{n}.yaml"
            f.write_text(eks_stack(n))
            files.append(f)
        times = rounds(
            [[sys.executable, "-m", "infra.plan", "--config", str(f)] for f in files], args.runs
        )
        one, half, many = least(times)
        print(
            f"eks 1 group {one:.3f}s, {sizes[1]} groups {half:.3f}s, {sizes[2]} groups "
            f"{many:.3f}s: {many / one:.2f}x (median of rounds {median_ratio(times, 2, 0):.2f}x; "
            "target <= 2.00x)"
        )
        print(
            f"per added group: {(half - one) / (sizes[1] - 1) * 1000:.1f} ms up to {sizes[1]}, "
            f"{(many - half) / (sizes[2] - sizes[1]) * 1000:.1f} ms from {sizes[1]} to {sizes[2]}"
        )
    fleet(stacks, args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
