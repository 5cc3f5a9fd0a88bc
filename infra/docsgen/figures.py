"""Every figure the docs quote from the sample stacks, generated from their plans.

Costs, node and GPU counts, resource counts and quota numbers come from what
``python -m infra.plan --stack S`` (its ``--json`` document and cost), ``--all`` and
``python -m quota.check --stack S --offline --json`` produce for the stacks in ``stacks/``, so a
change to a sample or to the planner shows up as a stale block, never as a stale number.
"""

from __future__ import annotations

import io
import json
import os
import re
import tempfile
import textwrap
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infra.core.labels import POOL_LABEL
from infra.core.tokens import EKS_NODE_GROUP
from infra.planview.fleet import FleetRow

ROOT = Path(__file__).resolve().parents[2]

# The stacks whose quota rows docs/quota.md lists: one per way of counting (GKE on-demand and
# Spot, EKS node groups with surge, fixed-capacity EKS groups, Karpenter's role row).
QUOTA_STACKS = ("gke-t4", "gke-l4-spot", "eks-g4dn", "eks-hpc", "eks-karpenter")
# The node groups whose cluster-autoscaler node-template tags docs/eks.md shows.
TEMPLATE_GROUPS = (("eks-g4dn", "gpu-t4"), ("eks-hpc", "h100-efa"))


@dataclass(frozen=True, slots=True)
class Sample:
    """One sample stack as the docs quote it: its plan, its fleet row, its offline quota demand."""

    plan: Any  # infra.core.plan.Plan
    recording: Any  # what the mock engine recorded for it
    row: FleetRow  # --json document, cost, resource count
    quota: Mapping[str, Any] | None  # quota.check --offline --json (None: own hardware)


# A sample stack planned and run: (StackConfig, Plan, the mock engine's recording).
Planned = tuple[Any, Any, Any]


def planned(stack: str) -> Planned:
    """``stack`` planned and run on the mock engine, as ``python -m infra.plan`` does."""
    from infra import mockengine
    from infra.cli import stack_file
    from infra.plan import load_path

    raw, config, plan = load_path(stack_file(stack))
    return config, plan, mockengine.run(raw, config.stack, plan.catalog)


def stacks() -> list[str]:
    """The sample stacks, by name."""
    return sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in (ROOT / "stacks").glob("*.yaml"))


@contextmanager
def _plain() -> Iterator[None]:
    """No colour in captured CLI output, whatever the environment asks."""
    saved = {k: os.environ.pop(k, None) for k in ("FORCE_COLOR", "NO_COLOR")}
    os.environ["NO_COLOR"] = "1"
    try:
        yield
    finally:
        os.environ.pop("NO_COLOR")
        os.environ.update({k: v for k, v in saved.items() if v is not None})


def offline_quota(stack: str) -> Mapping[str, Any]:
    """``python -m quota.check --stack STACK --offline --json``, in-process."""
    from quota import check

    out, err = io.StringIO(), io.StringIO()
    code = check.main(["--stack", stack, "--offline", "--json"], out=out, err=err)
    if code == 2:
        raise ValueError(f"{stack}: quota.check --offline: {err.getvalue().strip()}")
    return json.loads(out.getvalue())


def load(planned_of: Callable[[str], Planned] = planned) -> dict[str, Sample]:
    """Every sample stack, planned by ``planned_of`` (``planned``, or a test's shared
    recordings), with its offline quota demand where a cloud bills it."""
    from infra.planview.fleet import fleet_row

    out: dict[str, Sample] = {}
    for stack in stacks():
        config, plan, recording = planned_of(stack)
        row = fleet_row(config, plan, recording)
        quota = None if row.cost.own_hardware else offline_quota(stack)
        out[stack] = Sample(plan, recording, row, quota)
    return out


def fleet(samples: Mapping[str, Sample]) -> str:
    """What ``python -m infra.plan --all`` prints for the sample stacks (notes aside), and the day
    and prices it is for: run later, the support calendars judge on a later day."""
    from infra.core.catalog.eks_versions import today_or_override
    from infra.planview.fleet import print_fleet

    lines: list[str] = []
    print_fleet([s.row for s in samples.values()], lines.append)
    text = "\n".join(lines)
    priced = {s.row.cost.prices_as_of for s in samples.values() if not s.row.cost.own_hardware}
    when = (
        f"Figures as of {today_or_override()} (the generator plans on the EKS support calendar's "
        f"date), node prices as of {' and '.join(sorted(priced))} (the price catalog's date); "
        "`--all` run later can differ: a Kubernetes version leaves standard support, prices are "
        "refreshed."
    )
    return f"```text\n$ python -m infra.plan --all\n{text}\n```\n\n{textwrap.fill(when, 100)}\n"


def _unparenthesised(text: str) -> str:
    """``text`` without its `` (...)`` asides, nested ones included."""
    while (shorter := re.sub(r" \([^()]*\)", "", text)) != text:
        text = shorter
    return text


def _pools(entries: list[str]) -> str:
    """A quota row's ``pools`` lines without their explanations: asides in parentheses and what
    follows a closing one (``max(3, 24): it is deleted ...``)."""
    short = [_unparenthesised(e) for e in entries]
    return "; ".join(e.split("): ")[0] + ")" if "): " in e else e for e in short)


def quota_rows(samples: Mapping[str, Sample]) -> str:
    """docs/quota.md's table of every offline quota row of ``QUOTA_STACKS``."""
    lines = [
        "| stack | quota | unit | needed | at minimum | counted from |",
        "|---|---|---|---|---|---|",
    ]
    for stack in QUOTA_STACKS:
        doc = samples[stack].quota or {"checks": []}
        for c in doc["checks"]:
            quota = f"`{c['quota']}`" + (f" {c['name']}" if c["quota"].startswith("L-") else "")
            where = c["region"] or "global"
            lines.append(
                f"| {stack} ({where}) | {quota} | {c['unit']} | {c['needed']} | "
                f"{c.get('neededAtMinimum', '')} | {_pools(c.get('pools') or [])} |"
            )
    return "\n".join(lines) + "\n"


def _resources(sample: Sample, type_: str) -> list[dict[str, Any]]:
    return [r for r in sample.row.document["resources"] if r["type"] == type_]


def operator_quota(samples: Mapping[str, Sample]) -> str:
    """docs/gpu-operator.md's table: each GKE sample's critical-pod quota and its sizing."""
    lines = ["| stack | pods | sizing (`gpu-infra/sizing`) |", "|---|---|---|"]
    for stack, sample in samples.items():
        for q in _resources(sample, "kubernetes:core/v1:ResourceQuota"):
            sizing = q["inputs"]["metadata"].get("annotations", {}).get("gpu-infra/sizing")
            if sizing:
                lines.append(f"| {stack} | {q['inputs']['spec']['hard']['pods']} | {sizing} |")
    return "\n".join(lines) + "\n"


def pool_slots(samples: Mapping[str, Sample]) -> str:
    """docs/workloads.md's table: per sample pool what its ``gpuPools`` output promises."""
    lines = [
        "| stack | pool | GPU | nodes | `gpusPerNode` | `slotsPerNode` | `resourceNames` |",
        "|---|---|---|---|---|---|---|",
    ]
    for stack, sample in samples.items():
        for name, p in sorted(sample.row.document["outputs"].get("gpuPools", {}).items()):
            names = ", ".join(f"`{n}`" for n in p.get("resourceNames") or [p["resourceName"]])
            lines.append(
                f"| {stack} | {name} | {p.get('gpuModel')} | {p['minNodes']}-{p['maxNodes']} | "
                f"{p['gpusPerNode']} | {p['slotsPerNode']} | {names} |"
            )
    return "\n".join(lines) + "\n"


def node_templates(samples: Mapping[str, Sample]) -> str:
    """docs/eks.md's example: the ASG tags the cluster-autoscaler builds a group's node from."""
    out: list[str] = []
    for stack, pool in TEMPLATE_GROUPS:
        sample = samples[stack]
        (group,) = [
            g
            for g in _resources(sample, EKS_NODE_GROUP)
            if g["inputs"]["labels"].get(POOL_LABEL) == pool
        ]
        tags = sorted(
            (t["inputs"]["tag"]["key"], t["inputs"]["tag"]["value"])
            for t in _resources(sample, "aws:autoscaling/tag:Tag")
            if group["urn"] in t["dependsOn"]
        )
        out.append(f"# {stack}, node group {group['inputs']['nodeGroupName']}")
        out += [f"{k}={v}" for k, v in tags]
    return "```text\n" + "\n".join(out) + "\n```\n"


def plan_output(samples: Mapping[str, Sample], stack: str = "gke-l4-spot") -> str:
    """docs/review.md's example: what ``python -m infra.plan --stack STACK`` prints (notes aside)."""
    from infra.planview.table import print_table

    sample = samples[stack]
    lines: list[str] = []
    print_table(
        sample.plan, sample.row.cost, sample.recording, lines.append, resources=False, outputs=False
    )
    text = "\n".join(lines).rstrip()
    return f"```text\n$ python -m infra.plan --stack {stack}\n{text}\n```\n"


def diff_example() -> str:
    """docs/review.md's example: ``--diff`` of gke-t4 after raising its ``maxNodes`` 20 -> 40."""
    from infra import plan as plan_cli

    old = ROOT / "stacks" / "Pulumi.gke-t4.yaml"
    text = old.read_text(encoding="utf-8")
    if "maxNodes: 20" not in text:
        raise ValueError("stacks/Pulumi.gke-t4.yaml no longer sets maxNodes: 20")
    with tempfile.TemporaryDirectory() as tmp:
        new = Path(tmp) / old.name
        new.write_text(text.replace("maxNodes: 20", "maxNodes: 40"), encoding="utf-8")
        out = io.StringIO()
        with _plain(), redirect_stdout(out), redirect_stderr(io.StringIO()):
            code = plan_cli.main(["--stack", str(new), "--diff", str(old)])
    if code != 0:
        raise ValueError(f"the diff example exited {code}")
    body = out.getvalue().split("\n", 1)[1]  # the header names temporary paths
    header = "diff: HEAD:stacks/Pulumi.gke-t4.yaml => stacks/Pulumi.gke-t4.yaml"
    return f"```text\n{header}\n{body.rstrip()}\n```\n"


# Block name -> what renders it from the samples (docs/review.md's diff example plans a variant).
FROM_SAMPLES: Mapping[str, Callable[[Mapping[str, Sample]], str]] = {
    "sample-fleet": fleet,
    "quota-samples": quota_rows,
    "operator-quota": operator_quota,
    "pool-slots": pool_slots,
    "node-templates": node_templates,
    "plan-output": plan_output,
}


def render(samples: Mapping[str, Sample]) -> dict[str, str]:
    """Block name -> body of every figure block."""
    return {name: make(samples) for name, make in FROM_SAMPLES.items()} | {
        "diff-example": diff_example()
    }
