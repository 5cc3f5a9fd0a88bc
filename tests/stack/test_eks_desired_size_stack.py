"""A managed node group's desired size on a running stack when it is sent: the autoscaler's live
value, clamped. It is sent only on a resize (or when the live limits were not read:
``live.sends_desired_size``; the unchanged case is ``test_eks_observed_stack``): with
ignoreChanges Pulumi sends the value stored in the state ("Skipping the refresh step leaves stale
values in the state, and Pulumi will continue to send those stale values",
https://www.pulumi.com/docs/iac/concepts/options/ignorechanges/), and the provider sends
desired_size with every scaling_config change (hashicorp/terraform-provider-aws
internal/service/eks/node_group.go expandNodegroupScalingConfig), so raising minNodes would reset
what the autoscaler scaled to the size of the last ``pulumi up``."""

from __future__ import annotations

import json
import shutil

import pytest

from infra import mockengine
from infra import plan as plan_cli
from infra.core.catalog.vendored import DATA_DIR, Catalog
from infra.core.config.stack import load_stack_file, parse
from infra.core.diff import diff
from infra.core.eks.observed import EksObserved
from infra.core.observed import Observed
from infra.core.plan import build_plan
from infra.mocklive import after
from tests.stack.harness import ROOT, run_stack

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"


def _planned_names() -> list[str]:
    name, raw = load_stack_file(ROOT / "stacks" / "Pulumi.eks-g4dn.yaml")
    eks = build_plan(parse(raw, name)).platform.plan
    assert eks is not None
    return [ng.name for g in eks.groups for ng in g.node_groups]


@pytest.mark.parametrize(("live", "sent"), [(9, 9), (35, 20)])  # eks-g4dn: maxNodes 20
def test_a_live_group_of_unread_limits_gets_the_autoscalers_desired_size_clamped(live, sent):
    first = _planned_names()[0]
    rec = run_stack("eks-g4dn", observed=Observed("eks", EksObserved(node_groups={first: live})))
    ng = next(
        r for r in rec.resources if r.type == NODE_GROUP and r.inputs["nodeGroupName"] == first
    )
    assert ng.inputs["scalingConfig"]["desiredSize"] == sent
    assert not [p for p in ng.ignore_changes if "desired" in p.lower()]


def _g4dn_with(tmp_path, old: str, new: str):
    text = (ROOT / "stacks" / "Pulumi.eks-g4dn.yaml").read_text()
    assert text.count(old) >= 1
    path = tmp_path / "Pulumi.eks-g4dn.yaml"
    path.write_text(text.replace(old, new))
    return path


def test_diff_lowering_min_nodes_keeps_the_live_desired_size_as_pulumi_up_would(tmp_path, capsys):
    # --diff plans the new side over the old side's node groups, as a deploy finds them: the
    # group's live desired size (3, the old minimum) stays inside the new [1, 20], so no change.
    before = tmp_path / "old"
    before.mkdir()
    old = _g4dn_with(
        before,
        "      minNodes: 0\n      maxNodes: 20\n      spot: false",
        "      minNodes: 3\n      maxNodes: 20\n      spot: false",
    )
    new = _g4dn_with(
        tmp_path,
        "      minNodes: 0\n      maxNodes: 20\n      spot: false",
        "      minNodes: 1\n      maxNodes: 20\n      spot: false",
    )
    assert plan_cli.main(["--stack", str(new), "--diff", str(old), "--json"]) == 0
    changes = json.loads(capsys.readouterr().out)["changes"]
    (ng,) = [c for c in changes if NODE_GROUP in c["urn"]]
    assert ng["urn"].endswith("::ml-gpu-t4-ng")
    assert (ng["old"], ng["new"]) == ({"scalingConfig.minSize": 3}, {"scalingConfig.minSize": 1})


def test_a_catalog_row_for_a_new_az_changes_no_node_group_in_a_diff_over_the_live_stack(
    tmp_path, monkeypatch
):
    data = tmp_path / "catalog"
    shutil.copytree(DATA_DIR, data)
    f = data / "aws_gpu_instances.csv"
    lines = f.read_text(encoding="utf-8").splitlines(keepends=True)
    f.write_text(
        "".join(ln for ln in lines if not (ln.startswith("g4dn.xlarge,") and "usw2-az3" in ln))
    )
    name, raw = load_stack_file(ROOT / "stacks" / "Pulumi.eks-g4dn.yaml")
    with monkeypatch.context() as m:  # the stack deployed before the refresh
        m.setattr(Catalog, "load", classmethod(lambda cls: Catalog(data)))
        old_rec = mockengine.run(raw, name, Catalog(data))
        old_plan = build_plan(parse(raw, name))
    # What the new side's observe step finds once the old side is deployed.
    observed = mockengine.observe(raw, name, after(old_plan, old_rec))
    new_rec = mockengine.run(raw, name, Catalog.load(), observed=observed)
    planned = build_plan(parse(raw, name)).platform.plan
    assert planned is not None  # planned alone, the refreshed catalog's AZ would rename it
    assert {ng.name for g in planned.groups for ng in g.node_groups} != {
        r.inputs["nodeGroupName"] for r in old_rec.resources if r.type == NODE_GROUP
    }
    changes = diff(
        [r.to_json() for r in old_rec.resources], [r.to_json() for r in new_rec.resources]
    )
    assert not [c for c in changes if NODE_GROUP in c.urn], changes
