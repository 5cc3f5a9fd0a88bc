"""The EKS observe step: every live read an EKS plan decides over, before planning.

Through pulumi-aws's synchronous invokes, so ``pulumi up`` reads with the stack's provider
configuration (region, credentials, assumed role). What it reads, in order: the cluster of
``cluster.name`` (ListClusters, then DescribeCluster and, for a cluster this stack creates, its
subnets' AZ IDs), the node groups a pool of this stack may own and their sizes, the NAT
gateways of the VPC it creates, for an existing cluster its IAM OIDC provider (IRSA) or Pod
Identity agent, EKS's default version of each add-on without a pin and, on a running cluster it
created, the version each of those runs, and the AZ offering of the
node-group pools' instance types. Not found is an empty answer; any other failure stops the run
(``ObserveError``): what could not be read is unknown, never absent.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import pulumi_aws as aws

from infra.core.config.eks import EksClusterSpec
from infra.core.config.stack import StackConfig
from infra.core.eks import autoscaler
from infra.core.eks.names import OWNER_TAG, owner_value
from infra.core.eks.observed import (
    EksClusterObserved,
    EksObserved,
    node_groups_to_read,
    not_found,
    oidc_lookup_problem,
    owned_by,
)
from infra.core.eks.planner import SYSTEM_GROUP, plan_addons
from infra.core.eks.versions import with_planned_version
from infra.core.observed import ObserveError, failure_reason

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from infra.core.catalog.vendored import Catalog

T = TypeVar("T")
POD_IDENTITY_AGENT = "eks-pod-identity-agent"


def read(path: str, what: str, fn: Callable[[], T]) -> T:
    """``fn()``, or ``ObserveError`` naming the config key, what was read and why it failed."""
    try:
        return fn()
    except Exception as e:  # any provider failure: reported, never swallowed
        raise ObserveError(path, f"could not read {what}: {failure_reason(str(e))}") from e


def observe_eks(config: StackConfig, catalog: Catalog) -> EksObserved:
    """Read the live account for ``config`` (an EKS stack) planned over ``catalog``: the add-on
    versions of the Kubernetes version it is planned at, for the add-ons that catalog leaves
    unpinned."""
    data = catalog.data_dir
    c = with_planned_version(config.cluster, data)
    region = config.region or ""
    names = read("cluster.name", f"the EKS clusters of {region}", lambda: _clusters(region))
    cluster = _cluster(c, region) if c.name in names else None
    (oidc, owner), agent = _identity(c, region, cluster)
    scaling, foreign = _node_groups(config, region) if cluster is not None else ({}, ())
    return EksObserved(
        cluster=cluster,
        node_groups={n: desired for n, (desired, _, _) in scaling.items()},
        node_group_limits={n: (lo, hi) for n, (_, lo, hi) in scaling.items()},
        foreign_node_groups=foreign,
        nat_az_ids=_nat_az_ids(config, region, cluster),
        oidc_provider_arn=oidc,
        oidc_provider_owner=owner,
        pod_identity_agent=agent,
        addon_versions=_addon_versions(c, region, data),
        installed_addons=_installed_addons(c, region, data) if cluster is not None else None,
        offerings=_offerings(config, region),
    )


def _clusters(region: str) -> list[str]:
    return list(aws.eks.get_clusters(region=region).names or [])


def _cluster(c: EksClusterSpec, region: str) -> EksClusterObserved:
    """DescribeCluster, and for a cluster this stack creates its subnets' AZ IDs (EKS keeps the
    AZs a cluster was created with: ``kept_control_plane_azs``). A cluster still CREATING has no
    CA or OIDC issuer yet (DescribeCluster: ``certificateAuthority``, ``identity`` appear once it
    is ACTIVE): they read as empty, and ``live.attached_cluster`` refuses an existing cluster
    that is not ACTIVE."""
    found = read(
        "cluster.name",
        f"EKS cluster {c.name}",
        lambda: aws.eks.get_cluster(name=c.name, region=region),
    )
    vpc = found.vpc_config
    subnets: Sequence[str] = () if c.existing else list(vpc.subnet_ids or [])
    azs = {
        read(
            "cluster.name",
            f"subnet {s} of EKS cluster {c.name}",
            lambda s=s: _az_id(s, region),
        )
        for s in subnets
    }
    cas = found.certificate_authorities or []
    oidcs = [o for i in found.identities or [] for o in i.oidcs or []]
    return EksClusterObserved(
        name=found.name,
        endpoint=found.endpoint or "",
        certificate_authority=(cas[0].data or "") if cas else "",
        oidc_issuer=((oidcs[0].issuer or "") if oidcs else "").removeprefix("https://"),
        security_group_id=vpc.cluster_security_group_id or "",
        vpc_id=vpc.vpc_id or "",
        subnet_az_ids=tuple(sorted(azs)),
        version=found.version or "",
        status=found.status or "",
        # Whose cluster it is (live.created_cluster_problems); an existing one is nobody's here.
        tags={} if c.existing else {str(k): str(v) for k, v in (found.tags or {}).items()},
    )


def _az_id(subnet: str, region: str) -> str:
    """DescribeSubnets ``availabilityZoneId``; a subnet without one is an unread answer."""
    az = aws.ec2.get_subnet(id=subnet, region=region).availability_zone_id
    if not az:
        raise ValueError("DescribeSubnets returned no availabilityZoneId")
    return az


def _node_groups(
    config: StackConfig, region: str
) -> tuple[dict[str, tuple[int, int, int]], tuple[str, ...]]:
    """(desired, min, max) of each live node group a pool of this stack may own and that carries
    its tag (``owned_by``), and the names of those that do not: on a shared cluster another
    stack's group of a same-named pool is never read as this stack's."""
    c: EksClusterSpec = config.cluster
    pools = [p.name for p in config.pools] + ([] if c.existing else [SYSTEM_GROUP])
    live = read(
        "gpuPools",
        f"the node groups of EKS cluster {c.name}",
        lambda: aws.eks.get_node_groups(cluster_name=c.name, region=region).names or [],
    )
    tag = autoscaler.stack_tag(c.name, config.stack)
    owned: dict[str, tuple[int, int, int]] = {}
    foreign: list[str] = []
    for n in node_groups_to_read(live, pools):
        found = read(
            "gpuPools",
            f"node group {n} of EKS cluster {c.name}",
            lambda n=n: _node_group(c, n, region),
        )
        tags, scaling = found
        if owned_by(tags, tag):
            owned[n] = scaling
        else:
            foreign.append(n)
    return owned, tuple(foreign)


def _node_group(
    c: EksClusterSpec, name: str, region: str
) -> tuple[Mapping[str, str], tuple[int, int, int]]:
    """DescribeNodegroup ``tags`` and ``scalingConfig`` (desiredSize, minSize, maxSize); every
    managed node group has a scaling config (CreateNodegroup defaults it), so a group without one
    is an unread answer, never size 0."""
    found = aws.eks.get_node_group(cluster_name=c.name, node_group_name=name, region=region)
    scaling = found.scaling_configs
    if not scaling:
        raise ValueError("DescribeNodegroup returned no scalingConfig")
    s = scaling[0]
    return dict(found.tags or {}), (int(s.desired_size), int(s.min_size), int(s.max_size))


def _nat_az_ids(
    config: StackConfig, region: str, cluster: EksClusterObserved | None
) -> tuple[str, ...]:
    """AZ IDs of the NAT gateways (pending or available) in the VPC this stack creates: the
    running cluster's VPC, or before the cluster exists the VPC tagged as this stack's
    (``names.OWNER_TAG``), never one found by a name another stack's or a hand-made VPC may carry.
    None before the first deploy (aws_vpcs and aws_nat_gateways answer no match with empty
    ``ids``, not an error: terraform-provider-aws internal/service/ec2/vpc_vpcs_data_source.go)."""
    c: EksClusterSpec = config.cluster
    if c.existing or c.vpc.private_subnets is not None:
        return ()
    owner = {OWNER_TAG: owner_value(c.name, config.stack)}

    def reads() -> tuple[str, ...]:
        if cluster is not None and cluster.vpc_id:
            vpcs = [cluster.vpc_id]
        else:
            vpcs = aws.ec2.get_vpcs(tags=owner, region=region).ids
        if len(vpcs) > 1:
            raise ValueError(f"{len(vpcs)} VPCs are tagged {OWNER_TAG}={owner[OWNER_TAG]}")
        if not vpcs:
            return ()
        nats = aws.ec2.get_nat_gateways(
            vpc_id=vpcs[0],
            # DescribeNatGateways "state" filter: a deleted or failed gateway routes nothing.
            filters=[
                aws.ec2.GetNatGatewaysFilterArgs(name="state", values=["pending", "available"])
            ],
            region=region,
        ).ids
        subnets = [aws.ec2.get_nat_gateway(id=n, region=region).subnet_id for n in nats]
        return tuple(sorted(_az_id(s, region) for s in subnets))

    return read("cluster.vpc", f"the NAT gateways of the VPC of {c.name}", reads)


def _identity(
    c: EksClusterSpec, region: str, cluster: EksClusterObserved | None
) -> tuple[tuple[str | None, str], bool | None]:
    """An existing cluster's IAM OIDC provider ARN (IRSA; ``None``: there is none) and its owner
    tag (GetOpenIDConnectProvider ``Tags``), or whether its Pod Identity agent add-on is
    installed; neither is read for a cluster this stack creates."""
    if not c.existing or cluster is None:
        return (None, ""), None
    key = "cluster.autoscaler.identity"
    if c.autoscaler.identity == "irsa":
        try:
            url = f"https://{cluster.oidc_issuer}"
            found = aws.iam.get_open_id_connect_provider(url=url)
        except Exception as e:  # classified: not found, or stop
            if problem := oidc_lookup_problem(str(e).strip(), c.name):
                raise ObserveError(key, problem) from e
            return (None, ""), None
        return (found.arn, (found.tags or {}).get(OWNER_TAG, "")), None
    try:
        aws.eks.get_addon(cluster_name=c.name, addon_name=POD_IDENTITY_AGENT, region=region)
    except Exception as e:  # classified: not found, or stop
        if not not_found(str(e)):
            raise ObserveError(
                key,
                f"could not read the {POD_IDENTITY_AGENT} add-on of {c.name}: "
                f"{failure_reason(str(e))}",
            ) from e
        return (None, ""), False
    return (None, ""), True


def _unpinned_addons(c: EksClusterSpec, region: str, data_dir: Path) -> list[str]:
    """The add-ons the plan installs without a pin for the cluster's Kubernetes version."""
    return [
        a.name
        for a in plan_addons(
            autoscaler.aws_partition(region),
            c.existing,
            c.autoscaler.identity,
            c.planned_version,
            data_dir,
        )
        if not a.version
    ]


def _addon_versions(c: EksClusterSpec, region: str, data_dir: Path) -> dict[str, str]:
    """EKS's default version (DescribeAddonVersions ``defaultVersion``: ``most_recent`` false) of
    each add-on the plan installs without a pin for the cluster's Kubernetes version."""
    return {
        name: read(
            "cluster.kubernetesVersion",
            f"EKS's default {name} add-on version for Kubernetes {c.planned_version}",
            lambda name=name: (
                aws.eks.get_addon_version(
                    addon_name=name,
                    kubernetes_version=c.planned_version,
                    most_recent=False,
                    region=region,
                ).version
            ),
        )
        for name in _unpinned_addons(c, region, data_dir)
    }


def _installed_addons(c: EksClusterSpec, region: str, data_dir: Path) -> dict[str, str] | None:
    """The version each unpinned add-on of a cluster this stack created runs (DescribeAddon
    ``addonVersion``), which the plan keeps until ``kubernetesVersion`` changes
    (``live.addon_version_kept``); one not installed (not found) has no entry."""
    if c.existing:
        return None
    out: dict[str, str] = {}
    for name in _unpinned_addons(c, region, data_dir):
        try:
            found = aws.eks.get_addon(cluster_name=c.name, addon_name=name, region=region)
        except Exception as e:  # classified: not found, or stop
            if not not_found(str(e)):
                raise ObserveError(
                    "cluster.kubernetesVersion",
                    f"could not read the {name} add-on of {c.name}: {failure_reason(str(e))}",
                ) from e
            continue
        if found.addon_version:
            out[name] = found.addon_version
    return out


def _offerings(config: StackConfig, region: str) -> dict[str, tuple[str, ...]] | None:
    """One DescribeInstanceTypeOfferings by AZ ID for every node-group pool's instance types.

    One call, not one per pool: each pool checks its own (type, AZ ID) pairs in the answer, and a
    stack of many pools stays within EC2's request-rate limits
    (https://docs.aws.amazon.com/ec2/latest/devguide/ec2-api-throttling.html). The provider reads
    every page of the answer (terraform-provider-aws internal/service/ec2/find.go,
    findInstanceTypeOfferings). Karpenter pools have no node group (Karpenter picks offerings).
    """
    c: EksClusterSpec = config.cluster
    if c.autoscaler.kind == "karpenter":
        return None
    types = sorted({t for p in config.pools for t in _types(p.machine_type)})
    if not types:
        return None

    def offerings() -> Any:
        return aws.ec2.get_instance_type_offerings(
            location_type="availability-zone-id",
            filters=[
                aws.ec2.GetInstanceTypeOfferingsFilterArgs(name="instance-type", values=types)
            ],
            region=region,
        )

    found = read("gpuPools", f"the AZ offerings of {', '.join(types)} in {region}", offerings)
    by_type: dict[str, set[str]] = {t: set() for t in types}
    for t, az in zip(found.instance_types, found.locations, strict=True):
        by_type.setdefault(t, set()).add(az)
    return {t: tuple(sorted(azs)) for t, azs in by_type.items()}


def _types(machine_type: str | list[str]) -> list[str]:
    return [machine_type] if isinstance(machine_type, str) else list(machine_type)
