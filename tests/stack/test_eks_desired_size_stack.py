"""A managed node group's desired size on a running stack: the autoscaler's live value, clamped,
never ``ignoreChanges``. With ignoreChanges Pulumi sends the value stored in the state ("Skipping
the refresh step leaves stale values in the state, and Pulumi will continue to send those stale
values", https://www.pulumi.com/docs/iac/concepts/options/ignorechanges/), and the provider sends
desired_size with every scaling_config change (hashicorp/terraform-provider-aws
internal/service/eks/node_group.go expandNodegroupScalingConfig), so raising minNodes would reset
what the autoscaler scaled to the size of the last ``pulumi up``."""

from __future__ import annotations

import pytest

from infra import mockengine
from infra.core.config.stack import load_stack_file, parse
from infra.core.plan import build_plan
from tests.stack.harness import ROOT, run_stack

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"


def _planned_names() -> list[str]:
    name, raw = load_stack_file(ROOT / "stacks" / "Pulumi.eks-g4dn.yaml")
    eks = build_plan(parse(raw, name)).eks
    assert eks is not None
    return [ng.name for g in eks.groups for ng in g.node_groups]


@pytest.mark.parametrize(("live", "sent"), [(9, 9), (35, 20)])  # eks-g4dn: maxNodes 20
def test_live_node_group_gets_the_autoscalers_desired_size_clamped_not_ignore_changes(
    monkeypatch, live, sent
):
    first = _planned_names()[0]
    monkeypatch.setattr(mockengine, "LIVE", mockengine.LiveAws(node_groups={first: live}))
    rec = run_stack("eks-g4dn")
    ng = next(
        r for r in rec.resources if r.type == NODE_GROUP and r.inputs["nodeGroupName"] == first
    )
    assert ng.inputs["scalingConfig"]["desiredSize"] == sent
    assert not [p for p in ng.ignore_changes if "desired" in p.lower()]
