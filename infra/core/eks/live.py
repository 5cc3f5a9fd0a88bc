"""Day 2 on EKS: the plan over what the observe step found running.

Pure code. ``apply_observed`` is the last step of ``plan_eks``: every decision that depends on the
live account (the node groups' names and desired sizes and whether to send them, the NAT
gateway's AZ, the control plane's AZs and version, the IAM OIDC provider and whose it is, the
existing cluster's endpoint and state, add-on versions kept or defaulted, instance offerings) is
made here from an ``EksObserved``, so the components only map the plan. ``None`` (an offline plan)
assumes a first deploy into an account holding only what the stack file names, shows the
placeholders of ``infra.core.offline`` for values only the account knows, and lists what it
assumed (``offline_assumptions``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from infra.core import offline
from infra.core.config.stack import StackConfig
from infra.core.eks.ami import kubernetes_minor
from infra.core.eks.lifecycle import desired_size, live_name, predecessor
from infra.core.eks.names import OWNER_TAG, eks_component_name, owner_value, pulumi_eks_name_tag
from infra.core.eks.network import (
    EksNetworkPlan,
    keep_live_nat,
    keep_subnets,
    kept_control_plane_azs,
)
from infra.core.eks.observed import EksClusterObserved, EksObserved
from infra.core.errors import Issues, join_path

if TYPE_CHECKING:
    from infra.core.eks.groups import EksGroupPlan
    from infra.core.eks.planner import EksPlan, EksSystemGroupPlan


def apply_observed(
    config: StackConfig, plan: EksPlan, observed: EksObserved | None, issues: Issues
) -> EksPlan:
    """``plan`` over the live account (``None``: an offline plan); problems go to ``issues``."""
    live = dict(observed.node_groups) if observed is not None else {}
    limits = dict(observed.node_group_limits) if observed is not None else {}
    attached = attached_cluster(plan, observed, issues)
    if observed is not None and observed.offerings is not None:
        offering_issues(config, plan, observed.offerings, issues)
    legacy = created_cluster_problems(plan, observed, issues)
    groups = tuple(live_group(g, live, limits) for g in plan.groups)
    system = live_system(plan.system, live, limits) if plan.system is not None else None
    if observed is not None and observed.foreign_node_groups:
        foreign_group_issues(config, plan, groups, system, observed.foreign_node_groups, issues)
    own_oidc = owns_oidc_provider(plan, observed)
    if attached is not None and (
        problem := control_plane_problem(plan, attached, groups, live_names=live)
    ):
        issues.add(*problem)
    running = observed.cluster if observed is not None and not plan.existing else None
    if running is not None and (
        reason := upgrade_problem(plan.kubernetes_version, running.version)
    ):
        issues.add("cluster.kubernetesVersion", reason)
    network = _network(plan, observed)
    if network is not None and legacy:
        network = replace(network, notes=(*network.notes, legacy))
    return replace(
        plan,
        network=network,
        groups=groups,
        system=system,
        existing_cluster=attached,
        declare_oidc_provider=attached is not None
        and plan.identity == "irsa"
        and (_oidc_arn(attached, observed) is None or own_oidc),
        oidc_provider_arn=(_oidc_arn(attached, observed) or "") if attached is not None else "",
        oidc_provider_import=(_oidc_arn(attached, observed) or "") if own_oidc else "",
        addons=tuple(
            replace(
                a,
                version=a.version
                or addon_version_kept(a.name, plan, observed)
                or addon_default(a.name, plan, observed, issues),
            )
            for a in plan.addons
        ),
    )


def created_cluster_problems(
    plan: EksPlan, observed: EksObserved | None, issues: Issues
) -> str | None:
    """A running cluster of ``cluster.name`` for a stack that creates its cluster must be this
    stack's: tagged ``gpu-infra/stack=<cluster>/<stack>`` (``names.OWNER_TAG``). One tagged for
    another stack, or made by anything but gpu-infra, is a ``cluster.name`` error, never planned
    over (its AZs, node groups and NAT gateways are not this stack's; the deploy would fail at
    CreateCluster, "ResourceInUseException: Cluster already exists"). An untagged one that
    pulumi-eks named for this program's cluster component was made by a gpu-infra stack before
    the tag existed: kept, with the note returned, and tagged by this deploy."""
    cluster = observed.cluster if observed is not None else None
    if plan.existing or cluster is None:
        return None
    mine = owner_value(plan.cluster_name, plan.stack)
    found = cluster.tags.get(OWNER_TAG)
    if found == mine:
        return None
    if found is None and cluster.tags.get("Name") == pulumi_eks_name_tag(
        eks_component_name(plan.cluster_name)
    ):
        return (
            f"EKS: cluster {plan.cluster_name} carries no {OWNER_TAG} tag (made before gpu-infra "
            f"tagged its clusters): taken as this stack's, and tagged {OWNER_TAG}={mine} by this "
            "deploy; if another stack made it, stop and give this stack another cluster.name"
        )
    whose = f"it is tagged {OWNER_TAG}={found}" if found else f"it has no {OWNER_TAG} tag"
    issues.add(
        "cluster.name",
        f"{plan.cluster_name!r}: an EKS cluster of that name already runs in {plan.region} and "
        f"is not this stack's ({whose}, not {mine}); give this stack another cluster.name, or set "
        "cluster.existing: true to add GPU pools to it",
    )
    return None


def foreign_group_issues(
    config: StackConfig,
    plan: EksPlan,
    groups: tuple[EksGroupPlan, ...],
    system: EksSystemGroupPlan | None,
    foreign: tuple[str, ...],
    issues: Issues,
) -> None:
    """A planned node group whose name a live group without this stack's tag holds: the deploy
    would fail ("ResourceInUseException: NodeGroup already exists", CreateNodegroup) or, worse,
    a later run would read and resize another stack's group; the pool must be renamed."""
    index = {p.name: i for i, p in enumerate(config.pools)}
    taken = set(foreign)
    for g in groups:
        for ng in g.node_groups:
            if ng.name in taken:
                issues.add(
                    join_path("gpuPools", index.get(g.name), "name"),
                    f"{g.name!r}: cluster {plan.cluster_name} already has a node group "
                    f"{ng.name} that is not this stack's (it lacks the tag {plan.stack_tag}="
                    "owned): another stack or a person made it; give this pool another name",
                )
    if system is not None and system.node_group_name in taken:
        issues.add(
            "cluster.name",
            f"{plan.cluster_name!r}: the cluster already has a node group "
            f"{system.node_group_name} that is not this stack's (it lacks the tag "
            f"{plan.stack_tag}=owned)",
        )


def live_desired_size(
    name: str, live: Mapping[str, int], min_size: int, max_size: int, *, seed: bool = True
) -> int:
    """The desired size to send: the group's live value clamped into [min, max] (``desired_size``);
    for a replacement, its predecessor's (``predecessor``) unless ``seed`` is off; else min."""
    source = name if name in live else predecessor(name, list(live)) if seed else None
    return desired_size(live.get(source) if source is not None else None, min_size, max_size)


def sends_desired_size(
    name: str, limits: Mapping[str, tuple[int, int]], min_size: int, max_size: int
) -> bool:
    """Whether the plan sends a node group's desired size: unless it runs with these min and max.

    The autoscaler owns a running group's desired size; a value read at observe time and sent
    minutes later would undo what it did since, and every preview after it acted would show
    ``~scalingConfig.desiredSize``. Hence ``ignoreChanges`` on it (as terraform-provider-aws
    documents for aws_eks_node_group: ``lifecycle { ignore_changes =
    [scaling_config[0].desired_size] }``). Once min or max change it is sent, clamped
    (``desired_size``): the provider sends desired_size with every scaling_config change
    (internal/service/eks/node_group.go resourceNodeGroupUpdate, expandNodegroupScalingConfig),
    and with ignoreChanges that would be the state's value, which EKS refuses outside the new
    bounds. A group that does not run yet, or whose limits were not read, is sent."""
    return limits.get(name) != (min_size, max_size)


def live_group(
    group: EksGroupPlan, live: Mapping[str, int], limits: Mapping[str, tuple[int, int]]
) -> EksGroupPlan:
    """A GPU pool's node groups under their live names and AZs (``live_name``) with their desired
    sizes (sent only on a resize: ``sends_desired_size``), and a note for each group the catalog
    would now widen."""
    names = list(live)
    node_groups, notes = [], []
    for ng in group.node_groups:
        if ng.legacy_name is not None and ng.legacy_name in live and ng.name not in live:
            # This stack's running group, named before the stack entered the hash: kept.
            name, azs = ng.legacy_name, ng.az_ids
        else:
            name, azs = live_name(ng.name, ng.az_ids, ng.frozen, names)
        if more := [az for az in ng.az_ids if az not in azs]:
            them = "them" if len(more) > 1 else "it"
            notes.append(
                f"EKS: gpuPools {group.name}: node group {name} keeps the AZs it runs in "
                f"({', '.join(azs)}); the catalog now also offers {', '.join(more)}: add {them} "
                f"to gpuPools[].zones to use {them} (a new group is created before this one "
                f"goes), or write zones: [{', '.join(azs)}] to keep it where it is"
            )
        size = live_desired_size(
            name, live, ng.min_size, ng.max_size, seed=group.seeds_from_predecessor
        )
        send = name not in live or sends_desired_size(name, limits, ng.min_size, ng.max_size)
        node_groups.append(replace(ng, name=name, az_ids=azs, desired_size=size, send_desired=send))
    return replace(group, node_groups=tuple(node_groups), notes=(*group.notes, *notes))


def live_system(
    system: EksSystemGroupPlan, live: Mapping[str, int], limits: Mapping[str, tuple[int, int]]
) -> EksSystemGroupPlan:
    """The system group under its live name and AZs, with its desired size (``live_group``)."""
    name, azs = live_name(system.node_group_name, system.az_ids, system.frozen, list(live))
    size = live_desired_size(name, live, system.min_size, system.max_size)
    send = name not in live or sends_desired_size(name, limits, system.min_size, system.max_size)
    return replace(system, node_group_name=name, az_ids=azs, desired_size=size, send_desired=send)


def _network(plan: EksPlan, observed: EksObserved | None) -> EksNetworkPlan | None:
    """The network with the running NAT gateway's AZ kept (``keep_live_nat``) and the cluster's
    subnets in the AZs the running control plane has (``kept_control_plane_azs``)."""
    net = plan.network
    if net is None:
        return None
    notes: list[str] = []
    if net.create:
        net, moved = keep_live_nat(net, observed.nat_az_ids if observed is not None else ())
        notes += [moved] if moved else []
    cluster = observed.cluster if observed is not None else None
    if net.create and cluster is not None and not plan.existing:
        kept, added, unplanned = kept_control_plane_azs(
            net.control_plane_az_ids, cluster.subnet_az_ids
        )
        net = keep_subnets(net, unplanned)
        if added:
            notes.append(
                f"EKS: the control plane of {plan.cluster_name} keeps the AZs it was created "
                f"with ({', '.join(kept)}); EKS cannot add {', '.join(added)}, which the "
                "catalog now offers, to a running cluster (its nodes may still run there)"
            )
        if unplanned:
            notes.append(
                f"EKS: the control plane of {plan.cluster_name} keeps the AZs it was created "
                f"with ({', '.join(kept)}), and their subnets: EKS cannot drop "
                f"{', '.join(unplanned)}, which the plan no longer lists, from a running cluster"
            )
    else:
        kept = net.control_plane_az_ids
    return replace(net, cluster_az_ids=kept, notes=(*net.notes, *notes))


def attached_cluster(
    plan: EksPlan, observed: EksObserved | None, issues: Issues
) -> EksClusterObserved | None:
    """An existing cluster as read (offline: placeholders); a missing one, or Pod Identity without
    its agent add-on, is a problem: the stack attaches to what is there and owns none of it."""
    if not plan.existing:
        return None
    if observed is None:
        return EksClusterObserved(
            name=plan.cluster_name,
            endpoint=f"https://{offline.ENDPOINT}",
            certificate_authority=offline.CERTIFICATE_AUTHORITY,
            oidc_issuer=offline.eks_oidc_issuer(plan.region),
            security_group_id=offline.SECURITY_GROUP_ID,
            vpc_id=offline.VPC_ID,
        )
    if observed.cluster is None:
        issues.add(
            "cluster.name",
            f"{plan.cluster_name!r}: no EKS cluster of that name in {plan.region} "
            "(cluster.existing: true attaches to a running cluster); create it first, or set "
            "existing: false",
        )
        return None
    if plan.identity == "pod-identity" and observed.pod_identity_agent is False:
        issues.add(
            "cluster.autoscaler.identity",
            f"pod-identity, but cluster {plan.cluster_name} has no eks-pod-identity-agent "
            "add-on; install it or use irsa",
        )
    return observed.cluster


def control_plane_problem(
    plan: EksPlan,
    cluster: EksClusterObserved,
    groups: tuple[EksGroupPlan, ...],
    *,
    live_names: Mapping[str, int],
) -> tuple[str, str] | None:
    """Why the stack's node groups cannot attach to a running existing cluster, or ``None``.

    Its control plane must be ACTIVE (a CREATING cluster has no CA or OIDC issuer yet, and EKS
    refuses node groups on it). A node group follows ``cluster.kubernetesVersion``, but "You can
    only create a node group for your cluster that is equal to the current Kubernetes version for
    the cluster" (EKS API CreateNodegroup), and UpdateNodegroupVersion updates at most to the
    cluster's version: a version ahead of the control plane fails every group; one behind it
    fails each group the plan would create.
    """
    where = "cluster.kubernetesVersion"
    if cluster.status and cluster.status != "ACTIVE":
        return (
            "cluster.name",
            f"{plan.cluster_name!r} is {cluster.status} (DescribeCluster status): node groups "
            "attach to an ACTIVE cluster only; run again once it is ACTIVE",
        )
    live, planned = cluster.version, plan.kubernetes_version
    if not live or live == planned:
        return None
    if kubernetes_minor(planned) > kubernetes_minor(live):
        return (
            where,
            f"{planned!r} is ahead of cluster {plan.cluster_name}'s control plane ({live}): EKS "
            "creates and updates node groups only up to the cluster's version; upgrade the "
            f"control plane first, or set {live}",
        )
    new = [ng.name for g in groups for ng in g.node_groups if ng.name not in live_names]
    if new:
        return (
            where,
            f"{planned!r} is behind cluster {plan.cluster_name}'s control plane ({live}): EKS "
            f"creates a node group only at the cluster's version ({', '.join(new)} would be "
            f"new); set {live}",
        )
    return None


def owns_oidc_provider(plan: EksPlan, observed: EksObserved | None) -> bool:
    """Whether the IAM OIDC provider found is the one this stack created (its owner tag): it
    stays declared (imported by ARN, a no-op while in the state: pulumi/pulumi
    docs/architecture/deployment-execution/import.md "importing a resource that already exists in
    state is a no-op"), so a second run does not drop it from the state; anyone else's is only
    referenced by ARN."""
    return (
        observed is not None
        and observed.oidc_provider_arn is not None
        and plan.identity == "irsa"
        and observed.oidc_provider_owner == owner_value(plan.cluster_name, plan.stack)
    )


def upgrade_problem(planned: str, live: str) -> str | None:
    """Why the running control plane of a cluster this stack created cannot move to ``planned``:
    "Once you upgrade a cluster, you can't downgrade to a previous version" (EKS user guide,
    update-cluster.html), and a control plane moves one minor at a time ("Upgrades of more than
    one Kubernetes version are not supported", eksctl cluster-upgrade)."""
    if not live or live == planned:
        return None
    to, at = kubernetes_minor(planned), kubernetes_minor(live)
    if to < at:
        return f"{planned!r}: the control plane runs {live}, and EKS cannot downgrade a cluster"
    if to > at + 1:
        return (
            f"{planned!r}: the control plane runs {live}, and EKS upgrades one minor version at "
            f"a time; deploy 1.{at + 1} first"
        )
    return None


def _oidc_arn(cluster: EksClusterObserved | None, observed: EksObserved | None) -> str | None:
    """The IAM OIDC provider an existing cluster's IRSA roles trust: the one read, ``None`` for
    none (then the stack declares it); offline one is assumed."""
    if cluster is None:
        return None
    if observed is None:
        return offline.oidc_provider_arn(cluster.oidc_issuer)
    return observed.oidc_provider_arn


def addon_version_kept(name: str, plan: EksPlan, observed: EksObserved | None) -> str:
    """The version a running add-on without a pin keeps, or ``""`` (then EKS's default).

    EKS's default version for a Kubernetes minor (DescribeAddonVersions ``defaultVersion``)
    moves when AWS publishes a build; following it would update the add-on on a ``pulumi up``
    nobody asked for. So an installed add-on keeps its version while the control plane runs the
    planned ``kubernetesVersion``; a version change takes EKS's default for the new one."""
    if observed is None or observed.installed_addons is None or observed.cluster is None:
        return ""
    if observed.cluster.version != plan.kubernetes_version:
        return ""
    return observed.installed_addons.get(name, "")


def addon_default(name: str, plan: EksPlan, observed: EksObserved | None, issues: Issues) -> str:
    """EKS's default version of an add-on without a pin, as read (DescribeAddonVersions
    ``defaultVersion``); offline a placeholder saying so."""
    if observed is None or observed.addon_versions is None:
        return offline.eks_addon_default(plan.kubernetes_version)
    found = observed.addon_versions.get(name)
    if found is None:
        issues.add(
            "cluster.kubernetesVersion",
            f"{plan.kubernetes_version!r}: EKS lists no default version of the {name} add-on "
            "for it (DescribeAddonVersions)",
        )
        return ""
    return found


def offering_issues(
    config: StackConfig,
    plan: EksPlan,
    offerings: Mapping[str, tuple[str, ...]],
    issues: Issues,
) -> None:
    """A node-group pool whose planned AZs no longer all offer its instance types fails, rather
    than narrowing: subnet_ids force a new node group under the same hashed name
    (terraform-provider-aws internal/service/eks/node_group.go: ForceNew), which EKS rejects as
    "already exists"."""
    index = {p.name: i for i, p in enumerate(config.pools)}
    for g in plan.groups:
        if g.karpenter is not None or not g.node_groups:
            continue
        lost = [
            az for az in g.az_ids if not all(az in offerings.get(t, ()) for t in g.instance_types)
        ]
        if lost:
            issues.add(
                join_path("gpuPools", index.get(g.name), "zones"),
                f"{', '.join(lost)} of {plan.region} no longer offers "
                f"{', '.join(g.instance_types)} (AWS DescribeInstanceTypeOfferings); list the AZs "
                "that still do in gpuPools[].zones",
            )


def offline_assumptions(plan: EksPlan) -> tuple[str, ...]:
    """What an offline EKS plan assumes where the observe step would read (``apply_observed``
    over ``None``), in the order the step reads."""
    c = plan.cluster_name
    out: list[str] = []
    if plan.existing:
        out.append(
            f"EKS cluster {c} exists, ACTIVE at Kubernetes {plan.kubernetes_version}; its "
            "endpoint, CA, OIDC issuer, security group and VPC are placeholders"
        )
        out.append(
            "its IAM OIDC provider exists and is not this stack's (used by ARN)"
            if plan.identity == "irsa"
            else "its eks-pod-identity-agent add-on is installed"
        )
    else:
        out.append(
            f"no EKS cluster {c} runs yet (a first deploy): no node groups, NAT gateways or "
            "control-plane AZs to keep"
        )
    if any(a.version == offline.eks_addon_default(plan.kubernetes_version) for a in plan.addons):
        out.append("add-ons without a pin get EKS's default version, known only at deploy time")
    if any(g.node_groups for g in plan.groups):
        out.append("every AZ the catalog lists still offers the node groups' instance types")
    return tuple(out)
