"""``python -m infra.plan``: what ``pulumi up`` would create, offline, with no cloud credentials.

usage: python -m infra.plan (--stack NAME|PATH | --config PATH) [--json] [--helm-values]
                            [--diff OLD_STACK_FILE] [--export DIR]
                            [--integration jupyterhub|kubeflow|flyte|kubernetes]

Runs the real Pulumi program on Pulumi's mock engine (no cloud, no credentials) and prints what
``pulumi up`` would create: per GPU pool the GPU, zones, capacity, sharing, node range and price,
the system pool, totals and the cost per hour at minimum and maximum scale.

examples:
  python -m infra.plan --stack gke-t4                     # the plan table
  python -m infra.plan --stack gke-t4 --json              # cost, resources and outputs as JSON
  python -m infra.plan --stack gke-t4 --diff old.yaml     # create/update/replace/delete vs old.yaml
  python -m infra.plan --stack gke-t4 --export gitops/    # manifests, Helm values, Argo CD, Flux
  python -m infra.plan --stack gke-t4 --helm-values       # GPU Operator Helm values (YAML)
  python -m infra.plan --stack gke-t4 --integration jupyterhub   # a workload integration

exit codes: 0 success; 1 any other failure (one line on stderr); 2 invalid config or usage, one
``<key path>: <reason>`` line per problem on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from infra.cli import short_lived, stack_file
from infra.core.errors import ConfigErrors

if TYPE_CHECKING:  # imported in the functions: under ``short_lived`` and after --help
    from infra.core.config.stack import StackConfig
    from infra.core.plan import Plan

EXIT_OK, EXIT_FAILURE, EXIT_CONFIG = 0, 1, 2


def load(args: argparse.Namespace) -> tuple[dict[str, Any], StackConfig, Plan]:
    """Read, parse and plan the stack named by ``--stack`` / ``--config``.

    Raises:
        ConfigErrors: the stack file is missing or invalid.
    """
    from infra.core.config.stack import load_stack_file, parse
    from infra.core.plan import build_plan

    path = Path(args.config) if args.config else stack_file(args.stack)
    name, raw = load_stack_file(path)  # the name of stacks/Pulumi.<NAME>.yaml is --stack's NAME
    config = parse(raw, name)
    return raw, config, build_plan(config)


def _parser() -> argparse.ArgumentParser:
    doc = __doc__ or ""
    parser = argparse.ArgumentParser(
        prog="python -m infra.plan",
        description=doc.split("\n\n", 2)[2].split("\n\nexamples:")[0],
        epilog="examples:" + doc.split("examples:", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    src = parser.add_mutually_exclusive_group(required=True)
    src.add_argument(
        "--stack", help="stack name (reads stacks/Pulumi.<NAME>.yaml) or a stack file's path"
    )
    src.add_argument("--config", help="path of a stack file")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    from infra.core.integrations import INTEGRATIONS

    # One output mode at a time: argparse exits 2 with a usage line naming both flags.
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--integration",
        choices=INTEGRATIONS,
        help="print one workload integration generated from the pools (YAML; JSON with --json)",
    )
    mode.add_argument(
        "--helm-values",
        action="store_true",
        help="print the rendered GPU Operator Helm values (YAML; JSON with --json)",
    )
    mode.add_argument(
        "--diff",
        metavar="OLD_STACK_FILE",
        help="plan OLD_STACK_FILE too and print what changes from it: create / update / "
        "replace (with the property that forces it) / delete",
    )
    mode.add_argument(
        "--export",
        metavar="DIR",
        help="write every Kubernetes object as a manifest file, the Helm values per release "
        "with their reasons, and an Argo CD Application and a Flux HelmRelease per chart",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; returns the exit code."""
    args = _parser().parse_args(argv)
    try:
        raw, config, plan = load(args)
        old_raw = None
        if args.diff:
            from infra.core.config.stack import load_stack_file, parse
            from infra.core.plan import build_plan

            _, old_raw = load_stack_file(args.diff)
            build_plan(parse(old_raw, config.stack))  # an invalid old file is a config error too
    except ConfigErrors as e:
        print(e, file=sys.stderr)
        return EXIT_CONFIG
    notes = list(plan.operator.notes if plan.operator is not None else ())
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    if args.integration:
        return _print_integration(plan, args.integration, args.json)
    if args.helm_values:
        return _print_helm_values(plan, as_json=args.json)
    try:
        return _run(args, raw, config, plan, old_raw, notes)
    except BrokenPipeError:
        raise  # the reader left (| head): infra.cli.run exits 0 quietly
    except OSError as e:  # --export into a directory that cannot be written, say
        print(f"plan failed: {e}", file=sys.stderr)
        return EXIT_FAILURE
    except Exception as e:  # noqa: BLE001  # any failure is reported in one line, exit 1
        print(f"plan failed: {type(e).__name__}: {e}".splitlines()[0], file=sys.stderr)
        return EXIT_FAILURE


def _run(
    args: argparse.Namespace,
    raw: dict[str, Any],
    config: StackConfig,
    plan: Plan,
    old_raw: dict[str, Any] | None,
    notes: list[str],
) -> int:
    """Everything after a valid config: the mock-engine run(s) and what to print or write."""
    from infra import mockengine

    catalog = plan.catalog  # with the stack's declared shapes, as build_plan used it
    recording = mockengine.run(raw, config.stack, catalog)
    for level, message in recording.logs:  # what `pulumi up` would log, each line once
        if level in ("warning", "error") and message not in notes:
            print(f"{level}: {message}", file=sys.stderr)
    if old_raw is not None:
        old = mockengine.run(old_raw, config.stack, catalog)
        return _print_diff(old, recording, as_json=args.json)
    if args.export:
        from infra.planview.export import export

        _write("".join(f"{line}\n" for line in export(plan, recording, Path(args.export))))
        return EXIT_OK
    from infra.core.cost import estimate

    cost = estimate(plan)
    if args.json:
        doc = {
            "project": "gpu-infra",
            "stack": config.stack,
            "cost": cost.to_json(),
            "resources": [r.to_json() for r in recording.resources],
            "outputs": recording.outputs,
        }
        _write(json.dumps(doc, indent=2, allow_nan=False) + "\n")
    else:
        from infra.planview.table import print_table

        lines: list[str] = []
        print_table(plan, cost, recording, lines.append)
        _write("\n".join(lines) + "\n")
    return EXIT_OK


def _print_helm_values(plan: Plan, as_json: bool) -> int:
    from infra.core.operator import render_helm_values

    if as_json:
        release = plan.operator.release if plan.operator is not None else None
        values = dict(release.values) if release is not None else {}
        _write(json.dumps(values, indent=2, sort_keys=True, allow_nan=False) + "\n")
        return EXIT_OK
    _write(render_helm_values(plan))  # says so in a comment when the stack has no operator
    return EXIT_OK


def _print_diff(old: Any, new: Any, as_json: bool) -> int:
    from infra.core.diff import diff

    changes = diff(
        [r.to_json() for r in old.resources],
        [r.to_json() for r in new.resources],
        ignored={r.urn: r.ignore_changes for r in new.resources if r.ignore_changes},
    )
    if as_json:
        _write(
            json.dumps({"changes": [c.to_json() for c in changes]}, indent=2, allow_nan=False)
            + "\n"
        )
        return EXIT_OK
    from infra.planview.table import print_changes

    lines: list[str] = []
    print_changes(changes, lines.append)
    _write("\n".join(lines) + "\n")
    return EXIT_OK


def _print_integration(plan: Plan, name: str, as_json: bool) -> int:
    op = plan.operator
    # A JSON round trip unshares repeated parts (a Job's pod spec is the Pod's), so the YAML has
    # no anchors/aliases that a reader might not expect.
    doc = json.loads(json.dumps(op.integrations.get(name, {}) if op is not None else {}))
    if as_json:
        _write(json.dumps(doc, indent=2, allow_nan=False) + "\n")
    else:
        import yaml

        _write(f"# {name} integration for stack {plan.config.stack} (python -m infra.plan)\n")
        _write(yaml.safe_dump(doc, sort_keys=False, width=100))
    return EXIT_OK


def _write(text: str) -> None:
    sys.stdout.write(text)


if __name__ == "__main__":
    from infra.cli import run

    with short_lived():
        run(main, fast_exit=True)
