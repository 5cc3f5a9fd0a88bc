"""Turn a decided GPU group into a Karpenter pool (pure; called by ``infra.core.eks.planner``)."""

from __future__ import annotations

import dataclasses

from infra.core.catalog.vendored import Catalog
from infra.core.config.stack import StackConfig
from infra.core.eks.groups import EksGroupPlan
from infra.core.eks.karpenter.pools import (
    PoolContext,
    alias_problem,
    ami_family,
    plan_karpenter_pool,
)
from infra.core.errors import Issues, join_path


def as_karpenter_pool(
    i: int, group: EksGroupPlan, config: StackConfig, catalog: Catalog, issues: Issues
) -> EksGroupPlan:
    """``group`` with its EC2NodeClass and NodePool and without node groups or ASG tags."""
    instances = [catalog.aws_instance(t) for t in group.instance_types]
    known = [x for x in instances if x is not None]
    family = catalog.aws_family(known[0].family) if known else None
    ctx = PoolContext(
        cluster_name=config.cluster.name,
        stack=config.stack,
        architecture=family.architecture if family is not None else "x86_64",
        memory_gib=max((x.memory_gib for x in known), default=group.hints.memory_gib),
        vcpus=max((x.vcpus for x in known), default=group.hints.vcpus),
        # A node counts as unneeded after the same time the cluster-autoscaler would wait.
        consolidate_after=config.cluster.autoscaler.scale_down_unneeded_time,
        termination_grace_period=config.cluster.autoscaler.termination_grace_period,
        kubernetes_version=config.cluster.planned_version,
        data_dir=catalog.data_dir,
        # Given subnets, in AZ ID order, are selected by ID (pools.node_class).
        subnet_ids=tuple(s for _, s in sorted((config.cluster.vpc.private_subnets or {}).items())),
    )
    family = ami_family(group.ami_type) or "al2023"
    if (why := alias_problem(family, config.cluster.planned_version, catalog.data_dir)) is not None:
        key = "amiType" if config.pools[i].ami_type is not None else "amiFamily"
        issues.add(join_path("gpuPools", i, key), why)
    pool = plan_karpenter_pool(i, group, ctx, issues)
    return dataclasses.replace(group, node_groups=(), asg_tags={}, karpenter=pool)
