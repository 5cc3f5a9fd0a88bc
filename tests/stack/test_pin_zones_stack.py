"""A stack file pinned by ``--pin-zones`` registers exactly the resources it did unpinned."""

from __future__ import annotations

import json
import shutil

from infra.plan import main
from tests.stack.harness import ROOT, run_stack, sample


def _by_urn(recording) -> dict[str, str]:
    return {r.urn: json.dumps(r.to_json(), sort_keys=True) for r in recording.resources}


def test_a_pinned_stack_file_plans_the_same_resources(tmp_path):
    f = tmp_path / "Pulumi.eks-g4dn.yaml"  # same file name: same stack, same URNs
    shutil.copy(ROOT / "stacks" / "Pulumi.eks-g4dn.yaml", f)
    assert main(["--config", str(f), "--pin-zones"]) == 0
    assert "zones: [usw2-az1, usw2-az2, usw2-az3]" in f.read_text()
    pinned, unpinned = run_stack(f), sample("eks-g4dn")
    assert _by_urn(pinned) == _by_urn(unpinned)
    assert pinned.outputs == unpinned.outputs
