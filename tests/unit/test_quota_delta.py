"""``quota.check --offline --diff``: each quota's demand old -> new, and a new stack's from 0."""

from __future__ import annotations

import io
import json
from pathlib import Path

from quota import check
from quota.delta import deltas
from quota.demand import DemandRow
from quota.keys import QuotaKey

ROOT = Path(__file__).resolve().parents[2]
EKS = ROOT / "stacks" / "Pulumi.eks-g4dn.yaml"


def _row(quota: str, needed: int) -> DemandRow:
    key = QuotaKey("aws", "region", "us-west-2", quota, "vCPUs", "servicequotas")
    return DemandRow(key=key, name=quota, needed=needed)


def test_a_quota_only_one_side_needs_counts_0_on_the_other():
    found = deltas([_row("A", 8), _row("B", 4)], [_row("A", 12), _row("C", 2)])
    assert [(d.key.quota, d.old, d.new, d.change) for d in found] == [
        ("A", 8, 12, 4),
        ("C", 0, 2, 2),
        ("B", 4, 0, -4),
    ]


def test_offline_diff_prints_old_new_and_change_per_quota(tmp_path):
    old = tmp_path / "Pulumi.eks-g4dn.yaml"
    # gpu-t4 (g4dn.xlarge, 4 vCPUs) at maxNodes 10 instead of 20: 40 vCPUs fewer on-demand G
    text = EKS.read_text(encoding="utf-8")
    old.write_text(text.replace("maxNodes: 20", "maxNodes: 10", 1), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    code = check.main(["--config", str(EKS), "--offline", "--diff", str(old), "--json"], out, err)
    assert code == 0, err.getvalue()
    rows = {r["quota"]: r for r in json.loads(out.getvalue())["diff"]["rows"]}
    assert rows["L-DB2E81BA"]["change"] == 40  # Running On-Demand G and VT instances
    assert rows["L-3819A6DF"]["change"] == 0  # the Spot pool is unchanged


def test_offline_diff_of_a_new_stack_starts_every_quota_at_0():
    out, err = io.StringIO(), io.StringIO()
    code = check.main(["--config", str(EKS), "--offline", "--diff", "/dev/null"], out, err)
    assert code == 0, err.getvalue()
    text = out.getvalue()
    assert "Change from /dev/null:" in text
    (line,) = [x for x in text.split("Change from /dev/null:")[1].splitlines() if "L-DB2E81BA" in x]
    _, _, _, old, new, change = line.split()
    assert old == "0" and change == f"+{new}"
