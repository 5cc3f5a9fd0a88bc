"""Who may reach an EKS cluster and its AWS APIs: access entries, IAM trust, the kubeconfig.

Pure code: EKS access entries with their access policies (one per principal, in the region's
partition), managed policy ARNs, the trust policy of a role a service account assumes (IRSA or
Pod Identity), and a kubeconfig that gets tokens from ``aws eks get-token``.
"""

from __future__ import annotations

import hashlib
import re
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


def kubeconfig(cluster_name: str, endpoint: str, ca_data: str, region: str) -> str:
    """A kubeconfig (JSON) for an EKS cluster that gets tokens from ``aws eks get-token``."""
    return exec_kubeconfig(
        cluster_name,
        endpoint,
        ca_data,
        {
            "command": "aws",
            "args": ["eks", "get-token", "--cluster-name", cluster_name, "--region", region],
        },
    )
