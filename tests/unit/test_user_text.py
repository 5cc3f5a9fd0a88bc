"""User-facing text (README, docs, the plan CLI's help) speaks about the product, never about how
it was built: no tracker numbers, no "the issue's wording"."""

from __future__ import annotations

import re
from pathlib import Path

from infra import plan as plan_cli

ROOT = Path(__file__).resolve().parents[2]
PROCESS_WORDING = re.compile(
    r"\bissue\s+#?\d+\b|\bthe issue('s)?\b|\bhelpers?\s+session|\bsession\s+helper", re.IGNORECASE
)


def test_readme_and_docs_carry_no_process_wording():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    pages += [p for p in (ROOT / "CONTRIBUTING.md",) if p.exists()]
    found = [
        f"{p.name}:{n}: {line.strip()}"
        for p in pages
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1)
        if PROCESS_WORDING.search(line)
    ]
    assert not found, found


def test_plan_cli_help_carries_no_process_wording():
    assert not PROCESS_WORDING.search(plan_cli._parser().format_help())


def test_aws_deploy_permissions_let_eks_create_its_service_linked_roles():
    # "When you create a node group ... Amazon EKS creates the service-linked role for you", with
    # the caller's iam:CreateServiceLinkedRole (using-service-linked-roles-eks-nodegroups.html).
    page = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
    (deploy,) = [p for p in page.split("\n### ") if p.startswith("`pulumi up` / `destroy`")]
    aws = deploy[deploy.index("AWS, IAM actions") :]
    assert "iam:CreateServiceLinkedRole" in aws and "eks-nodegroup.amazonaws.com" in aws
