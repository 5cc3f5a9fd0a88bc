"""``python -m infra.plan``: what ``pulumi up`` would create, offline, with no cloud credentials.

Usage: ``python -m infra.plan (--stack NAME | --config PATH) [--json] [--helm-values]
[--integration jupyterhub|kubeflow|flyte|kubernetes]``

Runs the real program on Pulumi's mock engine (``infra.mockengine``). Exit 0 on success; 2 on invalid
config, one ``<key path>: <reason>`` line per problem on stderr; 1 on any other failure.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from infra.cli import stack_path
from infra.core.config import StackConfig, load_stack_file, parse
from infra.core.errors import ConfigErrors
from infra.core.integrations import INTEGRATIONS
from infra.core.plan import Plan, build_plan

EXIT_OK, EXIT_FAILURE, EXIT_CONFIG = 0, 1, 2


def load(args: argparse.Namespace) -> tuple[dict[str, Any], StackConfig, Plan]:
    """Read, parse and plan the stack named by ``--stack`` / ``--config``.

    Raises:
        ConfigErrors: the stack file is missing or invalid.
    """
    path = Path(args.config) if args.config else stack_path(args.stack)
    name, raw = load_stack_file(path)
    config = parse(raw, args.stack or name)
    return raw, config, build_plan(config)


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; returns the exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m infra.plan", description=(__doc__ or "").split("\n")[0]
    )
    src = parser.add_mutually_exclusive_group(required=True)
    src.add_argument("--stack", help="stack name: reads stacks/Pulumi.<NAME>.yaml")
    src.add_argument("--config", help="path of a stack file")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--integration",
        choices=INTEGRATIONS,
        help="print one workload integration generated from the pools (YAML; JSON with --json)",
    )
    parser.add_argument(
        "--helm-values",
        action="store_true",
        help="print the rendered GPU Operator Helm values as YAML (GitOps export)",
    )
    args = parser.parse_args(argv)
    try:
        raw, config, plan = load(args)
    except ConfigErrors as e:
        print(e, file=sys.stderr)
        return EXIT_CONFIG
    notes = list(plan.operator.notes if plan.operator is not None else ())
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    if args.integration:
        return _print_integration(plan, args.integration, args.json)
    if args.helm_values:
        return _print_helm_values(plan)
    try:
        from infra import mockengine

        recording = mockengine.run(raw, config.stack)
    except Exception as e:  # noqa: BLE001  # any failure is reported in one line, exit 1
        print(f"plan failed: {type(e).__name__}: {e}".splitlines()[0], file=sys.stderr)
        return EXIT_FAILURE
    for level, message in recording.logs:  # what `pulumi up` would log, each line once
        if level in ("warning", "error") and message not in notes:
            print(f"{level}: {message}", file=sys.stderr)
    if args.json:
        doc = {
            "project": "gpu-infra",
            "stack": config.stack,
            "resources": [r.to_json() for r in recording.resources],
            "outputs": recording.outputs,
        }
        _write(json.dumps(doc, indent=2) + "\n")
    else:
        _print_table(plan, recording)
    return EXIT_OK


def _print_helm_values(plan: Plan) -> int:
    from infra.core.operator import render_helm_values

    _write(render_helm_values(plan))  # says so in a comment when the stack has no operator
    return EXIT_OK


def _print_integration(plan: Plan, name: str, as_json: bool) -> int:
    op = plan.operator
    # A JSON round trip unshares repeated parts (a Job's pod spec is the Pod's), so the YAML has
    # no anchors/aliases that a reader might not expect.
    doc = json.loads(json.dumps(op.integrations.get(name, {}) if op is not None else {}))
    if as_json:
        _write(json.dumps(doc, indent=2) + "\n")
    else:
        import yaml

        _write(f"# {name} integration for stack {plan.config.stack} (python -m infra.plan)\n")
        _write(yaml.safe_dump(doc, sort_keys=False, width=100))
    return EXIT_OK


def _write(text: str) -> None:
    sys.stdout.write(text)


def _print_table(plan: Plan, recording: Any) -> None:
    cfg = plan.config
    where = cfg.zone or cfg.region or "existing cluster"
    print(f"stack {cfg.stack}: platform {cfg.platform}, {where}")
    print()
    rows = [
        (
            p.name,
            p.gpu_model,
            str(p.gpus_per_node),
            f"{p.vcpus}",
            f"{p.min_nodes}-{p.max_nodes}",
            "spot" if p.spot else "on-demand",
            p.driver,
        )
        for p in plan.pools
    ]
    _table(("GPU POOL", "GPU", "GPUS/NODE", "VCPUS", "NODES", "CAPACITY", "DRIVER"), rows)
    if plan.gke is not None:
        for p in plan.gke.pools:
            print(
                f"  {p.name}: {p.machine_type} in {', '.join(p.node_locations)} "
                f"(location policy ANY, totals {p.total_min}-{p.total_max})"
            )
    print()
    res = [(r.type, r.name, (r.parent or "").rsplit("::", 1)[-1]) for r in recording.resources]
    _table(("TYPE", "NAME", "PARENT"), res)
    print(f"\n{len(recording.resources)} resources")
    print("\noutputs:")
    for key, value in recording.outputs.items():
        text = json.dumps(value)
        print(f"  {key}: {text if len(text) <= 100 else text[:97] + '...'}")


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=False)]
    for row in (header, *rows):
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())


if __name__ == "__main__":
    from infra.cli import run

    run(main)
