"""``python -m infra.plan``: what ``pulumi up`` would create, offline, with no cloud credentials.

usage: python -m infra.plan (--stack NAME|PATH [--stack ...] | --config PATH
                             | --all [--stacks-dir DIR]) [--json]
                            [--resources] [--outputs] [--hide-note ID ...]
                            [--helm-values | --export DIR | --integration NAME
                             | --diff OLD [--old-catalog REF|DIR] [--fail-on replace|disruptive|any]
                               [--format markdown]
                             | --pin-zones [--old-catalog REF|DIR]]

Runs the real Pulumi program on Pulumi's mock engine (no cloud, no credentials) and prints what
``pulumi up`` would create: per GPU pool the GPU, zones, capacity, sharing, node range and price,
the system pool, totals, the cost per hour and per month at minimum and maximum scale and the
number of resources (--resources lists them, --outputs prints the stack outputs). Several
--stack flags, or --all (every stack under stacks/), plan a fleet in one process: one table.

examples:
  python -m infra.plan --stack gke-t4                     # the plan table
  python -m infra.plan --stack gke-t4 --json              # cost, resources and outputs as JSON
  python -m infra.plan --stack gke-t4 --diff old.yaml     # changes from a file, old => new
  python -m infra.plan --stack gke-t4 --diff HEAD:stacks/Pulumi.gke-t4.yaml --fail-on disruptive
  python -m infra.plan --stack gke-t4 --diff gke-t4-prod --format markdown   # a PR comment
  python -m infra.plan --stack gke-t4 --export gitops/    # manifests, Helm values, Argo CD, Flux
  python -m infra.plan --stack gke-t4 --helm-values       # GPU Operator Helm values (YAML)
  python -m infra.plan --stack gke-t4 --integration jupyterhub   # a workload integration
  python -m infra.plan --all                              # every stack under ./stacks: one table
  python -m infra.plan --all --stacks-dir ops/stacks      # your stacks only
  python -m infra.plan --stack eks-g4dn --pin-zones       # write resolved zones into the file
  python -m infra.plan --stack eks-g4dn --old-catalog HEAD~1   # what a catalog refresh changes

exit codes: 0 success; 1 any other failure (one line on stderr); 2 invalid config or usage, one
``<key path>: <reason>`` line per problem on stderr; 3 --diff found a change --fail-on refuses.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from infra.cli import doc_parser, export_flags, short_lived, stack_file, stack_path
from infra.core.errors import ConfigErrors, ConfigIssue

if TYPE_CHECKING:  # imported in the functions: under ``short_lived`` and after --help
    from infra.core.catalog.vendored import Catalog
    from infra.core.config.stack import StackConfig
    from infra.core.cost import Cost
    from infra.core.plan import Plan

EXIT_OK, EXIT_FAILURE, EXIT_CONFIG, EXIT_FAIL_ON = 0, 1, 2, 3


def load(args: argparse.Namespace) -> tuple[dict[str, Any], StackConfig, Plan]:
    """Read, parse and plan the stack named by ``--stack`` / ``--config``.

    Raises:
        ConfigErrors: the stack file is missing or invalid.
    """
    stack = args.stack[0] if isinstance(args.stack, list) else args.stack
    return load_path(Path(args.config) if args.config else stack_file(stack))


def load_path(
    path: Path, name: str | None = None, catalog: Catalog | None = None
) -> tuple[dict[str, Any], StackConfig, Plan]:
    """Read, parse and plan one stack file (``name``: the stack name, else the file's) over
    ``catalog`` (default: the vendored one)."""
    from infra.core.catalog.vendored import Catalog
    from infra.core.config.stack import load_stack_file, parse
    from infra.core.plan import build_plan

    file_name, raw = load_stack_file(path)  # stacks/Pulumi.<NAME>.yaml: --stack's NAME
    catalog = catalog or Catalog.load()
    config = parse(raw, name or file_name, catalog.data_dir)
    return raw, config, build_plan(config, catalog)


def _parser() -> argparse.ArgumentParser:
    parser = doc_parser("python -m infra.plan", __doc__, "examples:")
    src = parser.add_mutually_exclusive_group(required=True)
    src.add_argument(
        "--stack",
        action="append",
        help="stack name (reads stacks/Pulumi.<NAME>.yaml) or a stack file's path; "
        "repeat it to plan several stacks in one fleet table",
    )
    src.add_argument("--config", help="path of a stack file")
    src.add_argument(
        "--all",
        action="store_true",
        help="plan every stack file of --stacks-dir (default: stacks/ of the working directory)",
    )
    parser.add_argument(
        "--stacks-dir",
        metavar="DIR",
        help="with --all: the directory of the stack files to plan (Pulumi.<stack>.yaml)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--resources", action="store_true", help="list every resource too")
    parser.add_argument("--outputs", action="store_true", help="print the stack outputs too")
    parser.add_argument(
        "--hide-note",
        action="append",
        default=[],
        metavar="ID",
        help="do not print the note with this id (shown in brackets after it); repeatable; "
        "GPU_INFRA_HIDE_NOTES=ID,ID does the same",
    )
    parser.add_argument(
        "--fail-on",
        choices=("replace", "disruptive", "any"),
        help="with --diff: exit 3 when a change of this kind is found (unknown changes count)",
    )
    parser.add_argument(
        "--old-catalog",
        metavar="REF|DIR",
        help="with --diff (or alone: the stack against itself): plan the old side over the GPU "
        "catalog (infra/core/data/*.csv) of a git REF, or of a directory holding copies, so the "
        "diff shows what a catalog refresh changes; with --pin-zones: pin that catalog's zones",
    )
    parser.add_argument(
        "--beside",
        action="append",
        default=[],
        metavar="FILE[@REF]",
        help="with --diff: plan the new side as if FILE's stack (another stack on the same "
        "cluster, named by its file) were deployed too, by the gpu-infra of catalog REF (a git "
        "ref or a directory, as --old-catalog) when given; repeatable",
    )
    parser.add_argument(
        "--format",
        choices=("text", "markdown"),
        default="text",
        help="with --diff: text (default) or markdown for a pull-request comment",
    )
    _modes(parser)
    export_flags(parser)
    return parser


def _modes(parser: argparse.ArgumentParser) -> None:
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
        metavar="OLD",
        help="plan OLD too (a stack name, a stack file, or REF:path read with git show) and "
        "print what changes from it: create / update / replace (with the property that forces "
        "it) / delete, each property old => new, the counts and the cost change",
    )
    mode.add_argument(
        "--pin-zones",
        action="store_true",
        help="write the zones (GKE) or AZ IDs (EKS) the plan resolved into the stack file as "
        "gpuPools[].zones for every pool that lists none (one line added per pool, the rest of "
        "the file unchanged), so a catalog refresh cannot widen or rename it",
    )
    mode.add_argument(
        "--export",
        metavar="DIR",
        help="write every Kubernetes object as a manifest file, a kustomization.yaml, the Helm "
        "values per release with their reasons, and Argo CD / Flux objects into DIR, which the "
        "export owns (a manifest lists what it wrote)",
    )


def _usage_errors(args: argparse.Namespace) -> list[str]:
    fleet = args.all or (args.stack is not None and len(args.stack) > 1)
    errors = []
    if fleet and (
        args.diff or args.export or args.helm_values or args.integration or args.pin_zones
    ):
        errors.append("--stack (repeated) / --all: a fleet prints its table or --json only")
    if args.old_catalog and (fleet or args.export or args.helm_values or args.integration):
        errors.append("--old-catalog goes with --diff or --pin-zones (or alone, for one stack)")
    if not (args.diff or args.old_catalog) and (
        args.fail_on or args.format != "text" or args.beside
    ):
        errors.append("--fail-on, --beside and --format markdown go with --diff")
    if args.stacks_dir and not args.all:
        errors.append("--stacks-dir goes with --all")
    if args.pin_zones and args.json:
        errors.append("--pin-zones writes the stack file and prints what it pinned: no --json")
    if args.json and args.format != "text":
        errors.append("--format markdown and --json: choose one")
    export_only = ("stack_outputs", "repo_url", "revision", "destination", "flux_kubeconfig_secret",
                   "overwrite")  # fmt: skip
    used = [f"--{k.replace('_', '-')}" for k in export_only if getattr(args, k)]
    if used and not args.export:
        errors.append(f"{', '.join(used)}: only with --export")
    return errors


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; returns the exit code."""
    parser = _parser()
    args = parser.parse_args(argv)
    for e in _usage_errors(args):
        parser.error(e)  # exits 2 with the usage line
    from infra.planview import notes as notes_view

    code = _main(args)
    notes_view.warn_unknown(args.hide_note or ())
    return code


def _main(args: argparse.Namespace) -> int:
    from infra.planview import notes as notes_view

    hidden = notes_view.hidden(args.hide_note)
    if args.all or len(args.stack or ()) > 1:
        from infra.planview.fleet import run_fleet

        stacks_dir = Path(args.stacks_dir) if args.stacks_dir else None
        return _guarded(lambda: run_fleet(args.stack or [], args.json, hidden, stacks_dir))
    if args.diff and _new_file_gone(args):
        return _guarded(lambda: _diff_deleted(args, hidden))
    try:
        raw, config, plan = load(args)
    except ConfigErrors as e:
        print(e, file=sys.stderr)
        return EXIT_CONFIG
    # Every planner's notes and the operator's, on stderr in every mode (--json, --diff, ...).
    notes = list(dict.fromkeys((*plan.notes, *(plan.operator.notes if plan.operator else ()))))
    notes_view.print_notes(notes, hidden)
    if args.integration:
        return _print_integration(plan, args.integration, args.json)
    if args.helm_values:
        return _print_helm_values(plan, as_json=args.json)
    if args.pin_zones:
        return _guarded(lambda: _pin_zones(args, plan))
    return _guarded(lambda: _run(args, raw, config, plan, notes, hidden))


def _new_file_gone(args: argparse.Namespace) -> bool:
    """``--diff`` of a stack whose file the change deletes: ``--stack``/``--config`` names a file
    that does not exist (or ``/dev/null``)."""
    from infra.planview.review import NO_FILE

    given = args.config or args.stack[0]
    return given == NO_FILE or not stack_path(given).exists()


def _diff_deleted(args: argparse.Namespace, hidden: frozenset[str]) -> int:
    """``--diff OLD`` where the new side has no stack file: every resource of OLD is deleted.
    The stack's name is the one ``--stack`` gives (or the old file's)."""
    from infra.planview.review import NO_FILE

    given = args.config or args.stack[0]
    name = Path(given).name.removeprefix("Pulumi.").removesuffix(".yaml")
    return _diff(args, None, None if given == NO_FILE else name, [], hidden)


def _pin_zones(args: argparse.Namespace, plan: Plan) -> int:
    """``--pin-zones``: the zones of this plan, or of the plan over ``--old-catalog``'s catalog
    (the zones a running stack was deployed with before a refresh), written into the file."""
    from infra.planview.pin import pin_zones

    path = Path(args.config) if args.config else stack_file(args.stack[0])
    if not args.old_catalog:
        return pin_zones(path, plan)
    from infra.core.catalog.vendored import Catalog
    from infra.planview.catalogs import old_catalog_dir

    with old_catalog_dir(args.old_catalog) as data:
        return pin_zones(path, load_path(path, None, Catalog(data))[2])


def _guarded(work: Callable[[], int]) -> int:
    """``work()``'s exit code; a failure is one line on stderr and exit 1 (2 for config errors)."""
    try:
        return work()
    except ConfigErrors as e:  # the --diff side's stack file, an --export directory
        print(e, file=sys.stderr)
        return EXIT_CONFIG
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
    notes: list[str],
    hidden: frozenset[str],
) -> int:
    """Everything after a valid config: the mock-engine run(s) and what to print or write."""
    from infra import mockengine
    from infra.planview import notes as notes_view

    if args.diff or args.old_catalog:
        return _diff(args, (raw, config, plan), config.stack, notes, hidden)
    catalog = plan.catalog  # with the stack's declared shapes, as build_plan used it
    recording = mockengine.run(raw, config.stack, catalog)
    notes_view.print_logs(recording.logs, notes, hidden)
    if args.export:
        from infra.planview.export import export, options_from_args
        from infra.planview.placeholders import assumed_names_note

        options = options_from_args(args, config.stack)
        lines = export(plan, recording, Path(args.export), options)
        _write("".join(f"{line}\n" for line in lines))
        deployed = plan.platform.deployed_names(options.stack_outputs)
        if assumed := sorted(a for a, b in deployed.items() if b is None):
            notes_view.print_notes([assumed_names_note(assumed)], hidden)
        return EXIT_OK
    from infra.core.cost import estimate

    cost = estimate(plan)
    if args.json:
        document = plan_document(config, cost, recording, plan)
        _write(json.dumps(document, indent=2, allow_nan=False))
        _write("\n")
    else:
        from infra.planview.table import print_table

        lines: list[str] = []
        print_table(
            plan,
            cost,
            recording,
            lines.append,
            resources=args.resources,
            outputs=args.outputs,
        )
        write_text("\n".join(lines) + "\n")
    return EXIT_OK


def plan_document(
    config: StackConfig, cost: Any, recording: Any, plan: Plan | None = None
) -> dict[str, Any]:
    """The ``--json`` object of one stack: ``observed`` is what ``plan`` was planned over (empty
    offline), ``assumed`` what it took for granted in its place (``Plan.assumed``)."""
    return {
        "project": "gpu-infra",
        "stack": config.stack,
        "observed": plan.observed.to_json() if plan is not None else {},
        "assumed": plan.assumed() if plan is not None else [],
        "cost": cost.to_json(),
        "resources": [r.to_json() for r in recording.resources],
        "outputs": recording.outputs,
    }


@dataclass(frozen=True, slots=True)
class _OldSide:
    """The old side of ``--diff``: its label, plan, resources and cost (plan and cost ``None``:
    no stack file there)."""

    label: str
    plan: Plan | None = None
    recording: Any = None
    cost: Cost | None = None
    resources: tuple[dict[str, Any], ...] = ()
    raw: Mapping[str, Any] = field(default_factory=dict)


def _diff(
    args: argparse.Namespace,
    new: tuple[dict[str, Any], StackConfig, Plan] | None,
    stack: str | None,
    notes: list[str],
    hidden: frozenset[str],
) -> int:
    """``--diff OLD``: plan both, review the changes, print them, apply ``--fail-on``.

    A side without a stack file (``new`` None: the new file is gone; or OLD is
    ``/dev/null`` or a ``REF:path`` missing in REF) is an empty stack: every resource of the
    other side is created (or deleted), with its cost; the exit codes stay those of a diff."""
    from infra.core.cost import estimate
    from infra.core.diff import (
        diff,
        half_applied,
        kept_removals,
        kept_then_created,
        name_collisions,
    )
    from infra.planview import notes as notes_view
    from infra.planview import review as rv

    new_label = args.config or rv.display_path(stack_path(args.stack[0]))
    with ExitStack() as scope:
        old = _old_side(args, scope, stack, new[2] if new else None, new_label)
    new_res: list[dict[str, Any]] = []
    new_cost: Cost | None = None
    ignored: dict[str, Any] = {}
    plan = None
    if new is not None:
        plan, new_rec = _new_side(*new, old, notes, hidden, args.beside)
        new_res = [r.to_json() for r in new_rec.resources]
        new_cost = estimate(plan)
        ignored = {r.urn: r.ignore_changes for r in new_rec.resources if r.ignore_changes}
    else:
        new_label = f"{new_label} {rv.ABSENT}"
    priced = old.cost or new_cost
    if priced is None:
        raise ConfigErrors([ConfigIssue("--diff", "no stack file on either side: nothing to diff")])
    changes = diff(list(old.resources), new_res, ignored=ignored)
    notes_view.print_notes(kept_removals(list(old.resources), new_res), hidden)
    if half := half_applied(changes, list(old.resources), new_res):  # up would stop half-way
        raise ConfigErrors(rv.half_applied_issues(half, old.raw, new[0] if new else {}))
    if kept := kept_then_created(changes, list(old.resources), new_res):  # AlreadyExists on create
        raise ConfigErrors(rv.kept_then_created_issues(kept))
    if same := name_collisions(changes, list(old.resources), new_res):  # ResourceInUseException
        raise ConfigErrors(rv.name_collision_issues(same))
    costs = (old.cost or rv.empty_cost(priced), new_cost or rv.empty_cost(priced))
    absent = "old" if old.plan is None else "new" if plan is None else ""
    rev = rv.review(list(old.resources), new_res, changes, costs, (old.label, new_label), absent)
    if args.json:
        observed = plan.observed.to_json() if plan is not None else {}
        _write(json.dumps({**rv.review_json(rev), "observed": observed}, indent=2) + "\n")
    else:
        lines: list[str] = []
        markdown = args.format == "markdown"
        (rv.print_markdown if markdown else rv.print_review)(rev, lines.append)
        (_write if markdown else write_text)("\n".join(lines) + "\n")
    refused = rv.failures(rev, args.fail_on)
    for line in refused:
        print(f"--fail-on {args.fail_on}: {line}", file=sys.stderr)
    return EXIT_FAIL_ON if refused else EXIT_OK


def _old_side(
    args: argparse.Namespace,
    scope: ExitStack,
    stack: str | None,
    plan: Plan | None,
    new_label: str,
) -> _OldSide:
    """Plan ``--diff``'s old side as stack ``stack`` (``None``: the old file's name), over
    ``--old-catalog``'s catalog when given."""
    from infra import mockengine
    from infra.core.cost import estimate
    from infra.planview import review as rv

    old_catalog, old_prices = None, None
    if args.old_catalog:
        from infra.core.catalog.vendored import Catalog
        from infra.planview.catalogs import old_catalog_dir

        data = scope.enter_context(old_catalog_dir(args.old_catalog))
        old_catalog = Catalog(data)
        old_prices = old_catalog.prices
    old_label, old_path = scope.enter_context(rv.old_stack_file(args.diff or new_label))
    if old_path is None:
        return _OldSide(old_label)
    try:
        old_raw, old_config, old_plan = load_path(old_path, stack, old_catalog)
    except ConfigErrors as e:
        raise rv.in_file(old_label, e, old_path if old_label != str(old_path) else None) from e
    if args.old_catalog:
        old_label = f"{old_label} (catalog of {args.old_catalog})"
    if plan is not None:
        _refuse_mixed(old_label, old_config, new_label, plan)
        if old_catalog is not None:  # the resource names an older gpu-infra left in the stack
            from infra.core.errors import Issues
            from infra.core.lifecycle import legacy_formats

            issues = Issues()
            plan.platform.legacy_state_issues(
                old_plan.platform, legacy_formats(old_catalog.data_dir), issues
            )
            issues.raise_if_any()
    old_rec = mockengine.run(old_raw, old_config.stack, old_plan.catalog, old_catalog)
    resources = tuple(r.to_json() for r in old_rec.resources)
    cost = estimate(old_plan, old_prices)
    return _OldSide(old_label, old_plan, old_rec, cost, resources, old_raw)


def _new_side(
    raw: dict[str, Any],
    config: StackConfig,
    plan: Plan,
    old: _OldSide,
    notes: list[str],
    hidden: frozenset[str],
    beside: Sequence[str] = (),
) -> tuple[Plan, Any]:
    """The new side planned over what its observe step would read once the old side is
    deployed, as `pulumi up` over the running old stack is: live names kept, live desired sizes
    clamped, the NAT gateway and control-plane AZs where they run (a new stack: over the
    account as it is before any deploy); with ``beside`` (``--beside``) those stacks run too."""
    from infra import mockengine
    from infra.core.plan import build_plan
    from infra.mocklive import after, before
    from infra.planview import notes as notes_view
    from infra.planview.beside import beside_account, check_beside, neighbours
    from infra.planview.catalogs import widened_zones

    live = before(config) if old.plan is None else after(old.plan, old.recording, config)
    found = neighbours(beside, config, old.plan.config if old.plan is not None else None)
    live = beside_account(live, found)
    observed = mockengine.observe(raw, config.stack, live, plan.catalog)
    plan = build_plan(config, None, observed)
    new_rec = mockengine.run(raw, config.stack, plan.catalog, observed=observed)
    check_beside(found, config, new_rec)
    widened = widened_zones(old.plan, plan) if old.plan is not None else []
    notes_view.print_notes(widened, hidden)
    notes_view.print_logs(new_rec.logs, [*notes, *widened], hidden)
    return plan, new_rec


def _refuse_mixed(old_label: str, old: StackConfig, new_label: str, plan: Plan) -> None:
    """A diff across platforms, or a change ``pulumi up`` would not make as written (exit 2)."""
    new = plan.config
    if old.platform != new.platform:
        raise ConfigErrors(
            [
                ConfigIssue(
                    "--diff",
                    f"{old_label} is platform {old.platform}, {new_label} is platform "
                    f"{new.platform}: a change across platforms is a new stack, not a diff",
                )
            ]
        )
    # Changes to a running stack that `pulumi up` would not make as written (exit 2).
    from infra.core.errors import Issues

    issues = Issues()
    plan.platform.transition_issues(old, issues)
    issues.raise_if_any()


def _print_helm_values(plan: Plan, as_json: bool) -> int:
    from infra.core.operator import render_helm_values

    if as_json:
        release = plan.operator.release if plan.operator is not None else None
        values = dict(release.values) if release is not None else {}
        _write(json.dumps(values, indent=2, sort_keys=True, allow_nan=False) + "\n")
        return EXIT_OK
    _write(render_helm_values(plan))  # says so in a comment when the stack has no operator
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


def write_text(text: str) -> None:
    """Human-readable text: coloured on a terminal, plain in pipes and files."""
    from infra.planview.style import colour_enabled, colour_text

    sys.stdout.write(colour_text(text) if colour_enabled(sys.stdout) else text)


if __name__ == "__main__":
    from infra.cli import run

    with short_lived():
        run(main, fast_exit=True)
