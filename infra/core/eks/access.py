"""Who may reach an EKS cluster and its AWS APIs: access entries, IAM trust, the kubeconfig.

Pure code: EKS access entries with their access policies (one per principal, in the region's
partition), managed policy ARNs, the trust policy of a role a service account assumes (IRSA or
Pod Identity), the AWS credentials the stack's provider uses, and a kubeconfig that gets tokens
from ``aws eks get-token`` with those credentials.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from infra.core.config.eks import EksClusterSpec
from infra.core.errors import Issues, join_path
from infra.core.kubeconfig import exec_kubeconfig

# Access policies (https://docs.aws.amazon.com/eks/latest/userguide/access-policy-permissions.html).
_ACCESS_POLICY = {
    "cluster-admin": "AmazonEKSClusterAdminPolicy",
    "admin": "AmazonEKSAdminPolicy",
    "edit": "AmazonEKSEditPolicy",
    "view": "AmazonEKSViewPolicy",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class EksAccessEntryPlan:
    """One EKS access entry with its access-policy association."""

    principal_arn: str
    policy_arn: str
    namespaces: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """The entry's key in pulumi-eks ``accessEntries``, which names its child resources
        (``<cluster>-<key>``, pulumi/pulumi-eks nodejs/eks/cluster/authenticationMode.ts
        createAccessEntries): one per principal (EKS allows one entry per principal), so removing
        or reordering entries leaves every other entry's resources as they are."""
        return access_entry_key(self.principal_arn)


def access_entry_key(principal_arn: str) -> str:
    """``<last ARN segment>-<8 hex of the ARN>``: readable, unique per principal, and free of the
    ``::`` a URN cannot hold (an ARN has one after ``iam``)."""
    tail = re.sub(r"[^A-Za-z0-9_.-]", "-", re.split(r"[:/]", principal_arn)[-1]) or "entry"
    return f"{tail}-{hashlib.sha256(principal_arn.encode()).hexdigest()[:8]}"


def managed_policy_arn(partition: str, name: str) -> str:
    """The ARN of an AWS managed IAM policy in ``partition`` (aws, aws-cn, aws-us-gov)."""
    return f"arn:{partition}:iam::aws:policy/{name}"


def plan_access(
    cluster: EksClusterSpec, partition: str, region: str, issues: Issues
) -> list[EksAccessEntryPlan]:
    access = []
    seen: dict[str, int] = {}
    for j, entry in enumerate(cluster.access_entries):
        if entry.principal_arn in seen:
            # One access entry per principal and cluster: a second CreateAccessEntry fails
            # ResourceInUseException (https://docs.aws.amazon.com/eks/latest/APIReference/
            # API_CreateAccessEntry.html).
            issues.add(
                join_path("cluster.accessEntries", j, "principalArn"),
                f"{entry.principal_arn!r} already has accessEntries[{seen[entry.principal_arn]}]; "
                "EKS allows one access entry per principal",
            )
        seen.setdefault(entry.principal_arn, j)
        if not entry.principal_arn.startswith(f"arn:{partition}:"):
            issues.add(
                join_path("cluster.accessEntries", j, "principalArn"),
                f"{entry.principal_arn!r} is not in partition {partition!r} of region {region}",
            )
        access.append(
            EksAccessEntryPlan(
                principal_arn=entry.principal_arn,
                policy_arn=(
                    f"arn:{partition}:eks::aws:cluster-access-policy/{_ACCESS_POLICY[entry.policy]}"
                ),
                namespaces=tuple(entry.namespaces or ()),
            )
        )
    return access


def workload_trust_policy(
    identity: str, namespace: str, service_account: str, provider_arn: str = "", issuer: str = ""
) -> dict[str, Any]:
    """The trust policy of an IAM role a Kubernetes service account assumes.

    IRSA trusts the cluster's OIDC provider (``provider_arn``, ``issuer`` without https://) for
    exactly this service account
    (https://docs.aws.amazon.com/eks/latest/userguide/associate-service-account-role.html); Pod
    Identity trusts pods.eks.amazonaws.com with sts:AssumeRole + sts:TagSession
    (https://docs.aws.amazon.com/eks/latest/userguide/pod-id-role.html).
    """
    if identity == "pod-identity":
        statement: dict[str, Any] = {
            "Effect": "Allow",
            "Principal": {"Service": "pods.eks.amazonaws.com"},
            "Action": ["sts:AssumeRole", "sts:TagSession"],
        }
    else:
        statement = {
            "Effect": "Allow",
            "Principal": {"Federated": provider_arn},
            "Action": "sts:AssumeRoleWithWebIdentity",
            "Condition": {
                "StringEquals": {
                    f"{issuer}:sub": f"system:serviceaccount:{namespace}:{service_account}",
                    f"{issuer}:aud": "sts.amazonaws.com",
                }
            },
        }
    return {"Version": "2012-10-17", "Statement": [statement]}


@dataclass(frozen=True, slots=True, kw_only=True)
class AwsCredentials:
    """The credentials the stack's AWS provider signs with, as ``aws eks get-token`` takes them.

    Attributes:
        profile: ``aws:profile`` (the CLI's ``--profile``).
        role_arn: the role of ``aws:assumeRoles`` (the CLI's ``--role-arn``).
    """

    profile: str | None = None
    role_arn: str | None = None


# The provider's assumed-role keys the CLI cannot take as arguments: get-token has only
# --role-arn (https://docs.aws.amazon.com/cli/latest/reference/eks/get-token.html), while an AWS
# CLI profile can hold each of them (role_arn + source_profile chains, external_id,
# web_identity_token_file: https://docs.aws.amazon.com/cli/latest/userguide/cli-configure-role.html).
_CLI_PROFILE_HINT = (
    "; put the role in an AWS CLI profile (role_arn with source_profile, external_id, "
    "web_identity_token_file in ~/.aws/config) and name it in aws:profile instead"
)


def provider_credentials(provider_config: Mapping[str, Any], issues: Issues) -> AwsCredentials:
    """The AWS provider's credentials of the stack, for the kubeconfig its Kubernetes provider
    uses: the same identity must sign the EKS token that created the cluster or holds its access
    entry (pulumi-aws provider config ``aws:profile``, ``aws:assumeRoles``: a list of roles, the
    last one signing; pulumi-eks ``providerCredentialOpts`` takes ``profileName`` and ``roleArn``,
    nodejs/eks/cluster/cluster.ts generateKubeconfig). Environment variables (AWS_PROFILE, keys)
    reach the kubeconfig's ``aws`` command as they reach the provider: it inherits them."""
    profile = provider_config.get("aws:profile")
    if profile is not None and not isinstance(profile, str):
        issues.add(
            "aws:profile",
            "must be a plain profile name: the kubeconfig passes it to `aws eks get-token "
            "--profile` (a secret would leave the token signed by another identity)",
        )
    roles = provider_config.get("aws:assumeRoles")
    if isinstance(roles, Mapping):
        roles = [roles]
    role_arn = None
    if isinstance(roles, list) and roles:
        if len(roles) > 1:
            issues.add(
                "aws:assumeRoles",
                f"a chain of {len(roles)} roles: the kubeconfig's `aws eks get-token "
                f"--role-arn` assumes one role from the base credentials{_CLI_PROFILE_HINT}",
            )
        last = roles[-1] if isinstance(roles[-1], Mapping) else {}
        if unsupported := sorted(k for k in last if k in _ROLE_KEYS_CLI_LACKS):
            issues.add(
                join_path("aws:assumeRoles", len(roles) - 1, unsupported[0]),
                f"aws eks get-token has no option for {', '.join(unsupported)}: the kubeconfig "
                f"would sign as another identity than the provider{_CLI_PROFILE_HINT}",
            )
        arn = last.get("roleArn")
        role_arn = arn if isinstance(arn, str) and arn else None
        if arn is not None and role_arn is None:
            issues.add(
                join_path("aws:assumeRoles", len(roles) - 1, "roleArn"),
                "must be a plain ARN: the kubeconfig passes it to `aws eks get-token --role-arn`",
            )
    if provider_config.get("aws:assumeRoleWithWebIdentity"):
        issues.add(
            "aws:assumeRoleWithWebIdentity",
            "aws eks get-token cannot assume a role with a web identity token given to the "
            f"provider{_CLI_PROFILE_HINT}",
        )
    return AwsCredentials(
        profile=profile if isinstance(profile, str) and profile else None, role_arn=role_arn
    )


# AssumeRole inputs that change who signs or whether AssumeRole succeeds (pulumi-aws config
# AssumeRoles: externalId, sourceIdentity); session name, duration, policies and tags narrow the
# session only and do not decide its access entry.
_ROLE_KEYS_CLI_LACKS = ("externalId", "sourceIdentity")


def kubeconfig(
    cluster_name: str,
    endpoint: str,
    ca_data: str,
    region: str,
    credentials: AwsCredentials = AwsCredentials(),
) -> str:
    """A kubeconfig (JSON) for an EKS cluster that gets tokens from ``aws eks get-token`` as the
    stack's AWS provider's identity (``--role-arn``, ``--profile``: rather than AWS_PROFILE,
    which ambient credentials override, as pulumi-eks generateKubeconfig notes)."""
    args = ["eks", "get-token", "--cluster-name", cluster_name, "--region", region]
    if credentials.role_arn:
        args += ["--role-arn", credentials.role_arn]
    if credentials.profile:
        args += ["--profile", credentials.profile]
    return exec_kubeconfig(cluster_name, endpoint, ca_data, {"command": "aws", "args": args})


def positional_entry_issues(old: Sequence[str], new: Sequence[str], issues: Issues) -> None:
    """Refuse an access-entry edit made in the same ``pulumi up`` that moves a stack from
    position-keyed entries (``entry<j>``) to principal keys.

    gpu-infra aliases each principal-keyed entry to ``entry<j>`` by its current index
    (``infra/components/eks.py``), so once an entry is removed or inserted, index ``j`` names
    another principal: the engine sees a ``principalArn`` change of ``entry<j>``, which replaces
    the access entry (principal_arn is ForceNew, hashicorp/terraform-provider-aws
    internal/service/eks/access_entry.go), create-first, and EKS refuses a second entry for a
    principal ("ResourceInUseException",
    https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateAccessEntry.html).
    """
    moved = [j for j, (a, b) in enumerate(zip(old, new, strict=False)) if a != b]
    if moved:
        j = moved[0]
        issues.add(
            join_path("cluster.accessEntries", j, "principalArn"),
            f"{new[j]!r} takes index {j}, which was {old[j]!r}, while the stack's entries are "
            "still keyed by position (entry<j>, an older gpu-infra): this update would re-key "
            f"entry{j} onto another principal and EKS refuses the replacement "
            "(ResourceInUseException). Upgrade with accessEntries unchanged first, then edit them "
            "in a second `pulumi up`",
        )
