"""Write ``infra/core/data/aws_eni_limits.csv``: per GPU instance type of the catalog, the ENIs of its
default network card and the IPv4 addresses per ENI, as nodeadm's embedded table has them.

nodeadm (awslabs/amazon-eks-ami nodeadm/internal/kubelet/instance-info.jsonl) sizes max pods and
kube-reserved memory from these two numbers, and Karpenter computes the same ENI-limited pods from
the EC2 API (aws/karpenter-provider-aws pkg/providers/instancetype/types.go ENILimitedPods).

    .venv/bin/python scripts/refresh_eni_limits.py --eks-ami DIR [--date YYYY-MM-DD]

DIR is a clone or a bare git directory of awslabs/amazon-eks-ami. A catalog type the table lacks is
an error, not a guess.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import io
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from infra.core.catalog.vendored import DATA_DIR, read_rows  # noqa: E402

SOURCE = "nodeadm/internal/kubelet/instance-info.jsonl"


def _git(repo: str, *args: str) -> str:
    return subprocess.run(
        ["git", f"--git-dir={repo}", *args], check=True, capture_output=True, text=True
    ).stdout


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--eks-ami", required=True, help="awslabs/amazon-eks-ami git directory")
    ap.add_argument("--date", default=datetime.date.today().isoformat())
    args = ap.parse_args(argv)
    commit = _git(args.eks_ami, "rev-parse", "HEAD").strip()
    info = {}
    for line in _git(args.eks_ami, "show", f"HEAD:{SOURCE}").splitlines():
        row = json.loads(line)
        info[row["instanceType"]] = row
    types = sorted({r["instance_type"] for r in read_rows("aws_gpu_instances.csv")})
    missing = [t for t in types if t not in info]
    if missing:
        print(f"{SOURCE}: no row for {', '.join(missing)}", file=sys.stderr)
        return 2
    out = io.StringIO()
    out.write(
        "# ENIs of the default network card and IPv4 addresses per ENI of each GPU instance type.\n"
        f"# source: awslabs/amazon-eks-ami {SOURCE} @ {commit[:8]}; read {args.date} by "
        "scripts/refresh_eni_limits.py (facts only)\n"
    )
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["instance_type", "default_max_enis", "ipv4_per_interface"])
    for t in types:
        w.writerow([t, info[t]["defaultMaxENIs"], info[t]["ipv4AddressesPerInterface"]])
    (DATA_DIR / "aws_eni_limits.csv").write_text(out.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
