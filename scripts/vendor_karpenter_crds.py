"""Vendor the openAPIV3Schema of Karpenter's NodePool and EC2NodeClass CRDs (version v1).

Reads the two CRD files of aws/karpenter-provider-aws at a release tag from a clone (or its bare
git directory) and writes ``infra/core/data/karpenter/<plural>.schema.json`` with the source, the
tag and the commit; descriptions are dropped (facts only).

    .venv/bin/python scripts/vendor_karpenter_crds.py <clone or git dir> [--tag vX.Y.Z]

The tag defaults to the karpenter pin (``infra/core/data/pins.csv``); the files must match that
pin's version and commit (tests/unit/test_pins.py), so move the pin first.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from infra.core.catalog.pins import pin  # noqa: E402
from infra.core.catalog.vendored import DATA_DIR  # noqa: E402

OUT = ROOT / "infra" / "core" / "data" / "karpenter"
CRDS = {
    "nodepools": "pkg/apis/crds/karpenter.sh_nodepools.yaml",
    "ec2nodeclasses": "pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml",
}


def _strip(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip(v) for k, v in node.items() if k != "description"}
    if isinstance(node, list):
        return [_strip(v) for v in node]
    return node


def _git(repo: str, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", repo, *args], check=True, capture_output=True, text=True
    ).stdout


def main() -> None:
    ap = argparse.ArgumentParser(description="Vendor the Karpenter NodePool/EC2NodeClass schemas")
    ap.add_argument("repo", help="a clone (or bare git dir) of aws/karpenter-provider-aws")
    ap.add_argument("--tag", default="v" + pin("karpenter", DATA_DIR).version)
    a = ap.parse_args()
    commit = _git(a.repo, "rev-parse", f"{a.tag}^{{commit}}").strip()
    OUT.mkdir(parents=True, exist_ok=True)
    for plural, path in CRDS.items():
        crd = yaml.safe_load(_git(a.repo, "show", f"{a.tag}:{path}"))
        (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
        doc = {
            "source": f"https://github.com/aws/karpenter-provider-aws/blob/{a.tag}/{path}",
            "version": a.tag,
            "commit": commit,
            "crd": crd["metadata"]["name"],
            "openAPIV3Schema": _strip(version["schema"]["openAPIV3Schema"]),
        }
        (OUT / f"{plural}.schema.json").write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
