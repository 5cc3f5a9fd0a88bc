"""What an EKS plan sends AWS and Helm, checked as its receivers check it (``infra.core.sent``), and
the EKS names and releases it creates (owned once, ``infra.core.receivers``)."""

from __future__ import annotations

from collections.abc import Iterator

from infra.core.config.stack import StackConfig
from infra.core.eks.planner import EksPlan
from infra.core.errors import ConfigIssue, join_path
from infra.core.rules.limits import limit
from infra.core.sent import (
    Claim,
    aws_tag_issues,
    helm_release_issues,
    labels_issues,
    length_issues,
    pool_key,
    taint_issues,
)


def receiver_issues(config: StackConfig, eks: EksPlan) -> Iterator[ConfigIssue]:
    """The cluster's name and tag, the autoscaler's release and flags, every group's name, labels,
    taints and tags."""
    yield from length_issues(
        "cluster.name", eks.cluster_name, "eks.cluster_name", "EKS cluster name"
    )
    if eks.stack_tag:
        yield from aws_tag_issues("cluster.name", {eks.stack_tag: "owned"})
    for name in iam_role_names(eks):
        if len(name) + limit("pulumi.autoname_suffix") > (most := limit("aws.iam_role_name")):
            yield ConfigIssue(
                "cluster.name",
                f"IAM role {name!r} gets a '-' and 7 random characters from Pulumi: "
                f"{len(name) + limit('pulumi.autoname_suffix')} characters, IAM takes at most "
                f"{most} (a shorter cluster name fits)",
            )
    if eks.autoscaler is not None:
        # scaleDownUnneededTime is checked as the flag's Go duration by the schema
        # (EksAutoscalerSpec._duration_of_its_receiver). On an existing cluster the release is named after the stack (autoscaler.stack_release_name).
        yield from helm_release_issues(
            "cluster.existing" if eks.existing else "cluster.autoscaler", eks.autoscaler.release
        )
    for g in eks.groups:
        key = pool_key(config, g.name)
        for ng in g.node_groups:
            yield from length_issues(
                join_path(key, "name"), ng.name, "eks.nodegroup_name", "EKS node group name"
            )
        yield from labels_issues(key, g.labels, config)
        yield from taint_issues(
            join_path(key, "taints"), [(t.key, t.value, t.effect) for t in g.taints]
        )
        if len(g.taints) > (most := limit("eks.taints_per_nodegroup")):
            yield ConfigIssue(
                join_path(key, "taints"), f"{len(g.taints)} taints; EKS takes at most {most}"
            )
        # The stack tag is checked once above; it still counts towards each group's tags.
        yield from aws_tag_issues(
            key, {**g.asg_tags, "Name": g.name}, also=int(bool(eks.stack_tag))
        )


def iam_role_names(eks: EksPlan) -> list[str]:
    """Logical names of the IAM roles ``infra/components/eks.py`` registers without a ``name``
    (Pulumi autonames them): the nodes', each add-on's with a service account, the autoscaler's.
    tests/stack/test_receivers_stack.py keeps this list equal to what the program registers."""
    return list(eks.iam_role_names)  # fitted to IAM's 64 by the planner (eks.names)


def namespace_claims(eks: EksPlan) -> Iterator[Claim]:
    """The cluster-autoscaler's own namespace on an existing cluster."""
    ca = eks.autoscaler
    if ca is not None and ca.create_namespace:
        yield Claim("Namespace", ca.namespace, "cluster.existing")


def claims(config: StackConfig, eks: EksPlan) -> Iterator[Claim]:
    """Every node group's name, the system group's, and the autoscaler's or Karpenter's releases."""
    for g in eks.groups:
        for ng in g.node_groups:
            yield Claim("EKS node group", ng.name, pool_key(config, g.name, "name"))
    if eks.system is not None:
        yield Claim("EKS node group", eks.system.node_group_name, "cluster.systemPool")
    if eks.autoscaler is not None:
        scope = f"Helm release in {eks.autoscaler.namespace}"
        yield Claim(scope, eks.autoscaler.release, "cluster.autoscaler")
    if eks.karpenter is not None:
        k = eks.karpenter
        yield Claim(f"Helm release in {k.namespace}", k.release, "cluster.autoscaler.kind")
        yield Claim(f"Helm release in {k.namespace}", k.crd_release, "cluster.autoscaler.kind")
