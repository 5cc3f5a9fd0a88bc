"""The receiver check's view of autonamed resources matches what the program registers."""

from __future__ import annotations

import pytest

from infra.core.config.stack import parse_file
from infra.core.eks import sent as eks_sent
from infra.core.plan import build_plan
from tests.stack.harness import ROOT, sample


@pytest.mark.parametrize("stack", ["eks-g4dn", "eks-existing"])
def test_iam_role_names_the_receiver_check_derives_are_the_roles_the_program_autonames(stack):
    plan = build_plan(parse_file(ROOT / "stacks" / f"Pulumi.{stack}.yaml"))
    assert plan.platform.name == "eks"
    registered = {
        r.name for r in sample(stack).of_type("aws:iam/role:Role") if "name" not in r.inputs
    }
    assert registered == set(eks_sent.iam_role_names(plan.platform.plan))
