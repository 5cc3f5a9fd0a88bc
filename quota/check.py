"""``python -m quota.check``: region-correct GPU and vCPU quota preflight for a stack.

Usage (CONTRACT.md)::

    python -m quota.check (--stack NAME | --config PATH) [--json] [--offline]
                          [--request [--justification TEXT] [--email ADDR]
                           [--preemptible-quota] [--force] [--no-surge]]
                          [--where [--regions R1,R2|all]] [--diff OLD_STACK_FILE]

Exit codes: 0 all ok; 1 something short (requests filed or pending included); 2 invalid config or
usage; 3 some quota could not be determined. Heavy imports (pydantic config, cloud SDKs) happen
after argument parsing, so ``--help`` starts fast.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

from infra.cli import stack_file  # stdlib only: --help stays fast

EXIT_USAGE = 2
EXIT_UNKNOWN = 3


_EPILOG = """examples:
  python -m quota.check --stack gke-t4 --offline      # the demand only, no cloud calls
  python -m quota.check --stack gke-t4 --offline --diff origin/main:stacks/Pulumi.gke-t4.yaml
  python -m quota.check --stack gke-t4                # ok / short / unknown per quota
  python -m quota.check --stack gke-t4 --request --email me@example.com --justification "ML"

exit codes: 0 all ok; 1 something short (requests filed or pending included); 2 invalid config or
usage; 3 some quota could not be determined (never treated as ok).
"""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m quota.check",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Compute a stack's GPU and vCPU quota demand in its cluster's region, compare it with "
            "limit minus usage, and optionally request increases for short quotas."
        ),
    )
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--stack", metavar="NAME", help="stack name: reads stacks/Pulumi.NAME.yaml")
    src.add_argument("--config", metavar="PATH", help="path of a stack file")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.add_argument("--offline", action="store_true", help="print the demand only; no cloud calls")
    p.add_argument(
        "--request",
        action="store_true",
        help="file increases for short quotas (dry run without it)",
    )
    p.add_argument("--justification", metavar="TEXT", help="why the quota is needed (GCP requests)")
    p.add_argument("--email", metavar="ADDR", help="contact email; required by GCP for --request")
    p.add_argument(
        "--preemptible-quota",
        action="store_true",
        help="GCP: count Spot pools against preemptible quota even where none is granted, and "
        "request that (default: Spot uses standard quota until preemptible quota is granted)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="file a request even though one for this value was denied or granted short before",
    )
    p.add_argument(
        "--no-surge",
        action="store_true",
        help="with --request: ask for what the pools need at their maximum, without the nodes "
        "an upgrade surges (each row's 'surge'); the check itself still counts them",
    )
    p.add_argument(
        "--diff",
        metavar="OLD_STACK_FILE",
        help="the stack file deployed now: a stack name, a file, REF:path (git show), or "
        "/dev/null (a new stack); with --offline, print each quota's demand old -> new; on EKS, "
        "node groups this change replaces (created before the old ones are deleted) add what "
        "they may grow to beyond their running nodes",
    )
    p.add_argument(
        "--where",
        action="store_true",
        help="list the regions offering each GPU pool's shape, with quota headroom and price",
    )
    p.add_argument(
        "--regions",
        metavar="R1,R2|all",
        help="with --where: the regions to consider (default: all offering the shape)",
    )
    return p


def main(
    argv: list[str] | None = None, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Run the CLI; returns the exit code."""
    out_: TextIO = out or sys.stdout
    err_: TextIO = err or sys.stderr
    return _main(_parser().parse_args(argv), out_, err_)


def _main(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from infra.core.catalog.vendored import Catalog  # after --help: pydantic is slow
    from infra.core.config.stack import parse_file
    from infra.core.errors import ConfigErrors
    from infra.core.plan import build_plan
    from quota.demand import stack_contributions

    if args.regions and not args.where:
        print("--regions: only with --where", file=err)
        return EXIT_USAGE
    if args.diff and args.where:
        # --where judges the planned stack region by region; replacements are a live update's
        print("--diff: not with --where", file=err)
        return EXIT_USAGE
    if args.no_surge and not args.request:
        print("--no-surge: only with --request", file=err)
        return EXIT_USAGE
    if args.request and (args.where or args.offline):
        # --where and --offline only look: a request is filed for a short row of a live check
        print(f"--request: not with {'--where' if args.where else '--offline'}", file=err)
        return EXIT_USAGE
    try:
        path = Path(args.config) if args.config else stack_file(args.stack)
        config = parse_file(path)
        catalog = Catalog.load()
        plan = build_plan(config, catalog)
        demand = stack_contributions(config, catalog, plan, args.preemptible_quota)
        old = _old_stack(args.diff, config.stack) if args.diff else None
        if old is not None and old[1] is not None:
            demand = _with_replacements(old[1], path, demand, catalog, plan, err)
    except ConfigErrors as e:
        print(str(e), file=err)
        return EXIT_USAGE
    cloud = demand.cloud
    if args.request and cloud == "gcp" and not args.email and not args.offline:
        print(
            "--email: required with --request on GKE stacks (Cloud Quotas needs a contact)",
            file=err,
        )
        return EXIT_USAGE
    try:
        if args.where:
            from quota import where

            unknown = where.unknown_regions(cloud, catalog, args.regions)
            if unknown:
                print(
                    f"--regions: {', '.join(unknown)}: not a {cloud.upper()} region "
                    "this project's catalog knows (a typo?)",
                    file=err,
                )
                return EXIT_USAGE
            return where.run(args, config, catalog, plan, out, err)
        return _run(args, config, demand, catalog, out, err, plan, old)
    except BrokenPipeError:
        raise  # the reader went away (`| head`): handled by the entry point, not a quota error
    except Exception as e:  # one line, not a traceback: nothing was judged ok
        if os.environ.get("QUOTA_DEBUG"):
            raise
        print(f"error: could not check quotas: {type(e).__name__}: {e}", file=err)
        return EXIT_UNKNOWN


def _old_stack(spec: str, stack: str) -> tuple[str, tuple[Any, Any, Any] | None]:
    """``--diff SPEC``'s label and its (raw, config, plan) as stack ``stack``: a stack name, a
    file, ``REF:path`` (git), or nothing (``/dev/null``, or a path missing in REF: a new stack),
    read as ``python -m infra.plan --diff`` reads it.

    Raises:
        ConfigErrors: no such stack or file, a bad ref, or an invalid old file (named).
    """
    from infra.core.errors import ConfigErrors
    from infra.plan import load_path
    from infra.planview.review import in_file, old_stack_file

    with old_stack_file(spec) as (label, path):
        if path is None:
            return label, None
        try:
            return label, load_path(path, stack)
        except ConfigErrors as e:
            raise in_file(label, e, path if label != str(path) else None) from e


def _demand_rows(demand: Any, plan: Any, region: str) -> list[Any]:
    """Every demand row the offline check prints: quotas, then service limits."""
    from quota import limits

    sizings = list(dict.fromkeys(c.pool for c in demand.contributions))
    return [*demand.rows(), *limits.stack_limits(demand.cloud, plan, region, sizings).rows]


def _run(
    args: Any,
    config: Any,
    demand: Any,
    catalog: Any,
    out: TextIO,
    err: TextIO,
    plan: Any,
    old: tuple[str, tuple[Any, Any, Any] | None] | None = None,
) -> int:
    from quota import limits, report
    from quota.demand import reading_of, reading_pick, reserved_nodes

    stack, cloud = config.stack, demand.cloud
    sizings = list(dict.fromkeys(c.pool for c in demand.contributions))
    service_limits = limits.stack_limits(cloud, plan, config.region, sizings)
    if args.offline:
        new_rows = [*demand.rows(), *service_limits.rows]
        checks = report.offline_checks(new_rows)
        checks += _role_checks(cloud, None, plan)
        _emit(args, stack, cloud, checks, [], out, offline=True, delta=_delta(args, old, new_rows))
        return report.exit_code(checks, offline=True)

    keys = demand.keys_to_read()
    with _progress(args, err, f"Reading {len(keys)} quotas in {config.region} ({cloud})"):
        service = _service(cloud, config, catalog)
        readings, limit_checks, role_checks = _read_all(
            cloud, service, keys, demand, service_limits, plan, args.request
        )
        reserved = reserved_nodes(sizings, getattr(service, "reservations", {}))
        rows = demand.rows(reading_pick(readings), reserved, service.own)
        checks = [report.Check.judged(r, reading_of(readings, r.key)) for r in rows]
        checks += limit_checks
        checks += report.api_checks(cloud, getattr(service, "api_problems", []))
        checks += role_checks
        notes = report.collapse_connection_failures(checks)
        if args.request:
            notes += _file_requests(args, config, cloud, service, checks, readings)
    _emit(args, stack, cloud, checks, notes, out, offline=False)
    return report.exit_code(checks)


def _read_all(
    cloud: str,
    service: Any,
    keys: Any,
    demand: Any,
    service_limits: Any,
    plan: Any,
    requesting: bool,
) -> tuple[Any, list[Any], list[Any]]:
    """Quotas with usage and the stack's own nodes, service limits and required roles, all read
    at once: one round trip (``scripts/bench_quota.py`` measures it)."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=3) as pool:
        read_f = pool.submit(service.read, keys, demand, requesting)
        limits_f = pool.submit(_limit_checks, cloud, service, service_limits)
        roles_f = pool.submit(_role_checks, cloud, service, plan)
        readings, _ = read_f.result()
        return readings, limits_f.result(), roles_f.result()


def _delta(
    args: Any, old: tuple[str, tuple[Any, Any, Any] | None] | None, new_rows: list[Any]
) -> tuple[str, list[Any]] | None:
    """``--offline --diff``: the old side's label and its demand's change per quota."""
    from quota.delta import deltas
    from quota.demand import stack_contributions

    if old is None:
        return None
    label, loaded = old
    old_rows: list[Any] = []
    if loaded is not None:
        _, old_config, old_plan = loaded
        old_demand = stack_contributions(
            old_config, old_plan.catalog, old_plan, args.preemptible_quota
        )
        old_rows = _demand_rows(old_demand, old_plan, old_config.region)
    return label, deltas(old_rows, new_rows)


def _with_replacements(
    old: tuple[Any, Any, Any], new_path: Path, demand: Any, catalog: Any, plan: Any, err: TextIO
) -> Any:
    """``demand`` with the deployed ``old`` stack's node groups that one ``pulumi up`` replaces or
    deletes, running beside the new ones (``sizing.replacements``)."""
    from infra import mockengine
    from infra.core.diff import diff
    from infra.core.tokens import EKS_NODE_GROUP
    from infra.plan import load_path
    from quota.demand import aws_contributions, stack_sizings
    from quota.sizing import replaced_marks, replacements, with_replacements

    new_raw, new_config, _ = load_path(new_path)
    old_raw, old_config, old_plan = old
    if not (
        plan.platform.features.managed_node_groups
        and old_plan.platform.features.managed_node_groups
    ):
        print("--diff: node group replacement is counted for EKS stacks only", file=err)
        return demand
    # The same engine as `infra.plan --diff`: both programs on the mock engine, then the diff.
    new_rec = mockengine.run(new_raw, new_config.stack, catalog)
    old_rec = mockengine.run(old_raw, new_config.stack, old_plan.catalog)
    old_res = [r.to_json() for r in old_rec.resources]
    changes = diff(
        old_res,
        [r.to_json() for r in new_rec.resources],
        ignored={r.urn: r.ignore_changes for r in new_rec.resources if r.ignore_changes},
    )
    old_by = {r["urn"]: r.get("inputs") or {} for r in old_res}
    gone = [
        (str(i.get("nodeGroupName", "")), int((i.get("scalingConfig") or {}).get("maxSize", 0)))
        for c in changes
        if c.type == EKS_NODE_GROUP and c.op in ("replace", "delete")
        for i in [old_by[c.urn]]
    ]
    replaced = replacements(old_plan, gone)
    new = list(dict.fromkeys(c.pool for c in demand.contributions))
    _, old_sizings = stack_sizings(old_config, catalog, old_plan)
    out = aws_contributions(demand.region, with_replacements(new, old_sizings, replaced))
    # Replaced groups first: a name both sides plan is the old group's while it runs.
    marks = (*replaced_marks(old_plan.platform.node_marks(), replaced), *demand.marks)
    return replace(out, marks=marks)


def _role_checks(cloud: str, service: Any, plan: Any) -> list[Any]:
    """Roles the platform needs but does not create (the EC2 Spot service-linked role of Karpenter
    spot pools: creating it fails where it exists, "Service role name AWSServiceRoleForEC2Spot has
    been taken in this account"), so a missing one is ``short`` with the command that makes it.
    ``service`` None (``--offline``): the row is ``unknown``, not read, with that command."""
    from quota import report

    out = []
    for role in plan.platform.service_roles():
        if role.cloud != cloud:
            continue
        if service is None:
            status, reason = "unknown", "offline: demand only, no cloud calls"
        else:
            status, reason = service.role_exists(role.name)
        if status == "short" or service is None:
            reason += f"; {role.fix}"
        out.append(report.role_check(role.cloud, role.name, role.why, (status, reason)))
    return out


def _limit_checks(cloud: str, service: Any, demand: Any) -> list[Any]:
    """Rows of the service limits: EKS ones read from Service Quotas, GKE ones documented."""
    from quota import limits, report

    notes_of = dict(demand.notes)
    if cloud == "aws":
        codes = [r.key.quota for r in demand.rows]
        existing = demand.cluster if demand.existing_cluster else None
        values, others = service.read_service_limits(codes, existing, demand.own_groups)
        readings = limits.limit_readings(demand, values, others)
        for code, v in values.items():
            if v is None:
                notes_of[code] = limits.DOCUMENTED_DEFAULT_NOTE
    else:
        readings = limits.limit_readings(demand)
    checks = [report.Check.judged(r, readings[r.key]) for r in demand.rows]
    for c in checks:
        if c.demand.key.quota in notes_of:
            c.reason = f"{c.reason}; {notes_of[c.demand.key.quota]}"
    return checks


def _file_requests(
    args: Any, config: Any, cloud: str, service: Any, checks: list[Any], readings: dict[Any, Any]
) -> list[str]:
    """File increases for short rows, concurrently (``quota.requests``); returns notes."""
    from quota import requests

    todo = requests.to_file(
        checks,
        readings,
        preemptible_quota=args.preemptible_quota,
        no_surge=args.no_surge,
        limit_advice=lambda key: _limit_advice(key, config),
    )
    cluster = config.cluster.name

    def file(c: Any, want: int) -> dict[str, Any]:
        if cloud == "gcp":
            why = args.justification or requests.justification(
                config.stack, cluster, config.region, c, want, args.no_surge
            )
            usage = readings[c.demand.key].usage or 0.0
            return service.request(c.demand, want, args.email, why, args.force, config.stack, usage)
        return service.request(
            c.demand, want, readings[c.demand.key].limit or 0.0, force=args.force
        )

    requests.file_all(todo, file, args.no_surge)
    if cloud == "aws" and args.justification:
        return ["AWS quota requests carry no justification; answer AWS Support if it asks."]
    return []


def _limit_advice(key: Any, config: Any) -> str:
    """What to do about a short service limit (never filed by this tool)."""
    from quota.clouds import QUOTA_CLOUDS

    return QUOTA_CLOUDS[key.cloud].limit_advice(key, config.region)


def _service(cloud: Any, config: Any, catalog: Any) -> Any:
    from quota.clouds import QUOTA_CLOUDS

    return QUOTA_CLOUDS[cloud].service(config, catalog)


class _NoProgress:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _progress(args: Any, err: TextIO, text: str) -> Any:
    """A spinner on a terminal for the (possibly slow, retried) cloud reads."""
    if args.json or not err.isatty():
        return _NoProgress()
    from rich.console import Console

    return Console(file=err).status(text)


def _emit(
    args: Any,
    stack: str,
    cloud: Any,
    checks: list[Any],
    notes: list[str],
    out: TextIO,
    *,
    offline: bool,
    delta: tuple[str, list[Any]] | None = None,
) -> None:
    from quota import delta as dl
    from quota import report

    if args.json:
        doc = report.document(stack, cloud, checks, notes)
        if delta is not None:
            doc["diff"] = dl.to_json(delta[1], delta[0])
        json.dump(doc, out, indent=2)
        out.write("\n")
    else:
        report.render(stack, cloud, checks, out, offline=offline, notes=notes)
        if delta is not None:
            dl.render(delta[1], delta[0], out)
        for c in checks:
            if c.request and c.request.get("follow"):
                print(
                    f"{c.demand.key.quota}: {c.request['action']}; follow: {c.request['follow']}",
                    file=out,
                )


if __name__ == "__main__":
    from infra.cli import run, short_lived

    with short_lived():  # no collector sweeps, no plugin scan (infra.cli.short_lived)
        run(main)
