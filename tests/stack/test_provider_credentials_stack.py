"""The kubeconfig of an EKS stack signs its tokens as the stack's AWS provider does.

Expected arguments come from the receivers: ``aws eks get-token`` takes ``--role-arn`` and the
global ``--profile`` (https://docs.aws.amazon.com/cli/latest/reference/eks/get-token.html);
pulumi-aws reads ``aws:profile`` and ``aws:assumeRoles`` (a list, the last role signing).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from infra import mockengine
from infra.core.config.stack import parse
from infra.core.eks.access import kubeconfig
from infra.core.eks.platform import eks_plan
from infra.core.errors import ConfigErrors
from infra.core.plan import build_plan
from infra.mocklive import before
from tests.stack.harness import run_stack, stack_source

ROLE = "arn:aws:iam::111122223333:role/deployer"


def existing(**provider: Any) -> dict[str, Any]:
    _, raw = stack_source("eks-existing")
    return {**copy.deepcopy(raw), **provider}


def token_args(raw: dict[str, Any]) -> list[str]:
    """The get-token arguments of the existing cluster's kubeconfig, planned over the account."""
    config = parse(raw, "eks-existing")
    observed = mockengine.observe(raw, config.stack, before(config))
    plan = eks_plan(build_plan(config, None, observed).platform)
    assert plan is not None and plan.existing_cluster is not None
    c = plan.existing_cluster
    doc = json.loads(
        kubeconfig(c.name, c.endpoint, c.certificate_authority, plan.region, plan.credentials)
    )
    return doc["users"][0]["user"]["exec"]["args"]


def test_the_existing_clusters_kubeconfig_signs_with_the_providers_profile_and_role():
    args = token_args(existing(**{"aws:profile": "ml", "aws:assumeRoles": [{"roleArn": ROLE}]}))
    assert args[args.index("--role-arn") + 1] == ROLE
    assert args[args.index("--profile") + 1] == "ml"


def test_without_provider_credentials_the_kubeconfig_uses_the_ambient_chain():
    assert "--profile" not in token_args(existing())
    assert "--role-arn" not in token_args(existing())


def errors(raw: dict[str, Any]) -> dict[str, str]:
    with pytest.raises(ConfigErrors) as e:
        build_plan(parse(raw, "eks-existing"))
    return {i.path: i.reason for i in e.value.issues}


def test_a_chain_of_assumed_roles_is_refused_since_get_token_assumes_one():
    raw = existing(**{"aws:assumeRoles": [{"roleArn": ROLE}, {"roleArn": ROLE + "2"}]})
    assert "a chain of 2 roles" in errors(raw)["aws:assumeRoles"]


def test_an_external_id_is_refused_since_get_token_cannot_send_one():
    raw = existing(**{"aws:assumeRoles": [{"roleArn": ROLE, "externalId": "x"}]})
    assert "externalId" in errors(raw)["aws:assumeRoles[0].externalId"]


def test_a_web_identity_role_is_refused_since_get_token_cannot_assume_it():
    raw = existing(**{"aws:assumeRoleWithWebIdentity": {"roleArn": ROLE}})
    assert "web identity" in errors(raw)["aws:assumeRoleWithWebIdentity"]


def test_a_created_clusters_kubeconfig_gets_the_providers_profile_and_role_from_pulumi_eks():
    # pulumi-eks reads aws:profile itself but never aws:assumeRoles (nodejs/eks/cluster/
    # cluster.ts createCluster): both go in providerCredentialOpts.
    _, raw = stack_source("eks-g4dn")
    raw = {**raw, "aws:profile": "ml", "aws:assumeRoles": [{"roleArn": ROLE}]}
    rec = run_stack(raw, "eks-g4dn")
    assert rec.one("eks:index:Cluster").inputs["providerCredentialOpts"] == {
        "profileName": "ml",
        "roleArn": ROLE,
    }


def test_a_secret_profile_is_refused_since_get_token_needs_the_name():
    raw = existing(**{"aws:profile": {"secure": "AAABAF"}})
    assert "plain profile name" in errors(raw)["aws:profile"]
