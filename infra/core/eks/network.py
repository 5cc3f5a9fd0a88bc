"""EKS network planning: a new VPC (subnets per AZ ID, NAT, S3 endpoint) or the given subnets.

Pure code; ``infra.components.eks.EksNetwork`` maps ``EksNetworkPlan`` onto resources.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from infra.core.config.eks import EksClusterSpec
from infra.core.errors import Issues, join_path

# EKS cannot place control-plane ENIs in these AZ IDs (EKS user guide "Cluster VPC and subnet
# requirements"; eksctl pkg/az/az.go zoneIDsToAvoid). Node groups may still use them.
CONTROL_PLANE_AVOID_AZ_IDS = frozenset({"use1-az3", "usw1-az2", "cac1-az3"})

# An Application Load Balancer needs subnets in at least two AZs ("You must specify subnets from at
# least two Availability Zones", https://docs.aws.amazon.com/elasticloadbalancing/latest/
# application/application-load-balancers.html#subnets-load-balancer).
MIN_PUBLIC_SUBNETS = 2

_AZ_ID = re.compile(r"^([a-z]+[0-9]+)-az[0-9]+$")


@dataclass(frozen=True, slots=True, kw_only=True)
class EksNetworkPlan:
    """Where nodes live.

    Attributes:
        region: the region (the S3 endpoint's service name).
        create: build a VPC (private and public subnet per AZ ID, NAT, S3 gateway endpoint).
        cidr: the new VPC's CIDR (``create`` only).
        vpc_id: the given VPC (not ``create``).
        az_ids: AZ IDs with a private subnet, sorted.
        private_subnets: AZ ID -> subnet ID (given subnets only).
        subnet_cidrs: AZ ID -> private subnet CIDR (``create`` only).
        public_cidrs: AZ ID -> public subnet CIDR (``create`` only; one per AZ, so >= 2).
        nat_az_ids: AZ IDs whose public subnet holds a NAT gateway (``natGateways``: the first
            AZ only, or every AZ); a private subnet routes to its own AZ's NAT if it has one.
        s3_gateway_endpoint: an S3 gateway endpoint on the private route tables, so image layers
            from S3-backed registries (ECR stores layers in S3) skip NAT data charges.
        control_plane_az_ids: AZ IDs whose subnets the control plane may use.
        nat_zone_pinned: ``natZone`` chose the single NAT gateway's AZ (a deploy keeps it there,
            not where a live one runs).
        cluster_az_ids: AZ IDs whose subnets the cluster gets: the control-plane ones, or those a
            running cluster has (``kept_control_plane_azs``; set by ``live.apply_observed``).
        notes: what a deploy over the running network keeps, and how to move it.
    """

    create: bool
    cidr: str | None
    vpc_id: str | None
    az_ids: tuple[str, ...]
    region: str = ""
    private_subnets: Mapping[str, str] = field(default_factory=dict)
    subnet_cidrs: Mapping[str, str] = field(default_factory=dict)
    public_cidrs: Mapping[str, str] = field(default_factory=dict)
    nat_az_ids: tuple[str, ...] = ()
    s3_gateway_endpoint: bool = False
    control_plane_az_ids: tuple[str, ...] = ()
    nat_zone_pinned: bool = False
    cluster_az_ids: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def nat_for(self, az: str) -> str:
        """The AZ ID whose NAT gateway the private subnet of ``az`` routes through."""
        return az if az in self.nat_az_ids else self.nat_az_ids[0]


def nats_where_nodes_run(net: EksNetworkPlan, used_az_ids: set[str]) -> EksNetworkPlan:
    """``natGateways: perAz`` with a NAT gateway only in AZs where a node group runs: a NAT
    serves the private subnets of its own AZ (the route tables built from ``nat_for``), so one in
    an AZ without nodes (an AZ the control plane avoids and no GPU pool uses) bills by the hour
    for nothing ("Amazon VPC pricing": per NAT gateway-hour). ``single`` keeps its one."""
    if not net.create or len(net.nat_az_ids) <= 1:
        return net
    kept = tuple(a for a in net.nat_az_ids if a in used_az_ids) or net.nat_az_ids[:1]
    return replace(net, nat_az_ids=kept)


# AZ numbers a 10.x.0.0/16 has room for: private /20s at 16 x (N - 1) end below .240, where the
# public /24s start (.240 + N - 1 <= .254).
MAX_AZ_NUMBER = 15


def az_number(az_id: str) -> int:
    """N of ``use1-azN``: AWS never renumbers an AZ ID ("AZ IDs", https://docs.aws.amazon.com/
    ram/latest/userguide/working-with-az-ids.html), unlike its position among a region's AZs."""
    return int(az_id.rsplit("-az", 1)[1])


def subnet_cidrs(vpc_cidr: str, az_ids: list[str]) -> tuple[dict[str, str], dict[str, str]]:
    """Private /20 and public /24 per AZ of a 10.x.0.0/16, keyed on the AZ ID's number.

    By number, not by position: a catalog refresh that adds an AZ must not shift the CIDRs of the
    others, since a subnet's CIDR cannot change in place (EC2 CreateSubnet; the Pulumi/Terraform
    aws_subnet cidr_block forces replacement) and its node groups would be replaced with it.
    A /20 leaves ~4,000 pod IPs per AZ for the VPC CNI, which hands every pod a VPC address.
    """
    second = vpc_cidr.split(".")[1]
    ordered = sorted(az_ids, key=az_number)
    private = {az: f"10.{second}.{16 * (az_number(az) - 1)}.0/20" for az in ordered}
    public = {az: f"10.{second}.{240 + az_number(az) - 1}.0/24" for az in ordered}
    return private, public


def plan_network(
    cluster: EksClusterSpec, region: str, region_azs: set[str], issues: Issues
) -> EksNetworkPlan | None:
    """The VPC to create, or the given one checked against the region's AZ IDs."""
    vpc = cluster.vpc
    if vpc.private_subnets is not None:
        return _given_network(cluster, region, region_azs, issues)
    if vpc.id is not None:
        issues.add(
            "cluster.vpc.privateSubnets", "required with cluster.vpc.id (AZ ID -> subnet ID)"
        )
        return None
    if cluster.existing:
        issues.add(
            "cluster.vpc.privateSubnets",
            "required with cluster.existing: true (AZ ID -> subnet ID for the GPU node groups)",
        )
        return None
    return _new_network(cluster, region, region_azs, issues)


def _new_network(
    cluster: EksClusterSpec, region: str, region_azs: set[str], issues: Issues
) -> EksNetworkPlan:
    """A new VPC over every AZ ID of the region that offers GPU types."""
    vpc = cluster.vpc
    # AZ IDs beyond az15 would not fit the /16's layout (none exists in the catalog).
    azs = sorted(a for a in region_azs if _AZ_ID.fullmatch(a) and az_number(a) <= MAX_AZ_NUMBER)
    private, public = subnet_cidrs(vpc.cidr, azs)
    control = tuple(a for a in azs if a not in CONTROL_PLANE_AVOID_AZ_IDS)
    if len(public) < MIN_PUBLIC_SUBNETS:
        issues.add(
            "cluster.location",
            f"{region} has {len(public)} AZ(s) offering GPU types; an ALB needs public "
            f"subnets in at least {MIN_PUBLIC_SUBNETS} AZs",
        )
    nat_azs = (control[0],) if vpc.nat_gateways == "single" and control else tuple(azs)
    if vpc.nat_zone is not None:
        if vpc.nat_gateways != "single":
            issues.add(
                "cluster.vpc.natZone",
                f"{vpc.nat_zone!r} places the one NAT gateway of natGateways: single; perAz puts "
                "one in every AZ where nodes run",
            )
        elif vpc.nat_zone not in azs:
            issues.add(
                "cluster.vpc.natZone",
                f"{vpc.nat_zone!r} is not an AZ ID of the new VPC (it has a public subnet in "
                f"{', '.join(azs) or 'none'}: {region}'s AZ IDs offering GPU types)",
            )
        else:
            nat_azs = (vpc.nat_zone,)
    return EksNetworkPlan(
        create=True,
        region=region,
        cidr=vpc.cidr,
        vpc_id=None,
        az_ids=tuple(azs),
        subnet_cidrs=private,
        public_cidrs=public,
        nat_az_ids=nat_azs,
        s3_gateway_endpoint=True,
        control_plane_az_ids=control,
        nat_zone_pinned=vpc.nat_zone is not None and nat_azs == (vpc.nat_zone,),
    )


def keep_live_nat(net: EksNetworkPlan, live_az_ids: Sequence[str]) -> tuple[EksNetworkPlan, str]:
    """The network to deploy over the AZs NAT gateways of this VPC run in now, and a warning.

    With ``natGateways: single`` the planned AZ is the first control-plane AZ, which a catalog
    refresh listing a lower-numbered AZ changes: the NAT gateway's subnet forces a new one
    (terraform-provider-aws internal/service/ec2/vpc_nat_gateway.go: subnet_id ForceNew), so its
    Elastic IP, route table and every node's egress would move. A running one whose AZ still has
    a public subnet stays, unless ``natZone`` names another AZ (an edit moves it, as ``zones``
    moves a node group). ``perAz`` only adds NAT gateways where nodes start running.
    """
    if not net.create or net.nat_zone_pinned or len(net.nat_az_ids) != 1:
        return net, ""
    live = [a for a in sorted(set(live_az_ids)) if a in net.az_ids]
    if not live or net.nat_az_ids[0] in live:
        return net, ""
    kept = live[0]
    return replace(net, nat_az_ids=(kept,)), (
        f"EKS: cluster.vpc: the NAT gateway keeps the AZ it runs in ({kept}); the catalog now "
        f"plans it in {net.nat_az_ids[0]}: write cluster.vpc.natZone: {kept} to pin it there, "
        f"or natZone: {net.nat_az_ids[0]} to move it (a new gateway and Elastic IP: egress "
        "addresses change)"
    )


def kept_control_plane_azs(
    planned: tuple[str, ...], live: Sequence[str]
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """The control-plane AZs to send for a created VPC, the planned ones left out, and the live
    ones the plan no longer has.

    EKS updates a cluster's subnets in place, but "The subnets passed as an update must contain
    the same set of AZs as originally passed when creating the cluster" (aws/containers-roadmap
    #170, the EKS UpdateClusterConfig note): neither a catalog refresh adding an AZ nor one
    dropping an AZ may change the set. A running cluster (``live``: the AZ IDs of its subnets)
    keeps exactly its AZs, and the VPC keeps their subnets (``keep_subnets``); ``live`` empty (no
    cluster yet): the planned ones.
    """
    if not live:
        return planned, (), ()
    kept = tuple(sorted(set(live)))
    return (
        kept,
        tuple(a for a in planned if a not in kept),
        tuple(a for a in kept if a not in planned),
    )


def keep_subnets(net: EksNetworkPlan, az_ids: Sequence[str]) -> EksNetworkPlan:
    """``net`` (a VPC this stack creates) with the private and public subnets of ``az_ids`` it
    no longer plans kept, at the CIDRs they were created with (``subnet_cidrs`` is keyed on the
    AZ number, so the same AZ always gets the same CIDRs)."""
    missing = [
        a
        for a in az_ids
        if a not in net.az_ids and _AZ_ID.fullmatch(a) and az_number(a) <= MAX_AZ_NUMBER
    ]
    if not missing or net.cidr is None:
        return net
    private, public = subnet_cidrs(net.cidr, missing)
    return replace(
        net,
        az_ids=tuple(sorted((*net.az_ids, *missing))),
        subnet_cidrs={**net.subnet_cidrs, **private},
        public_cidrs={**net.public_cidrs, **public},
    )


def _given_network(
    cluster: EksClusterSpec, region: str, region_azs: set[str], issues: Issues
) -> EksNetworkPlan:
    """The given private subnets, checked against the region's AZ IDs."""
    vpc = cluster.vpc
    assert vpc.private_subnets is not None
    prefix = _AZ_ID.fullmatch(next(iter(region_azs)))
    region_code = prefix.group(1) if prefix else ""
    if vpc.id is None and not cluster.existing:
        issues.add("cluster.vpc.id", "required with cluster.vpc.privateSubnets (the subnets' VPC)")
    if vpc.nat_zone is not None:
        issues.add(
            "cluster.vpc.natZone",
            f"{vpc.nat_zone!r} applies to a VPC gpu-infra creates; the given VPC keeps its NAT",
        )
    if vpc.nat_gateways != "single":
        issues.add(
            "cluster.vpc.natGateways",
            f"{vpc.nat_gateways!r} applies to a VPC gpu-infra creates; the given VPC keeps its NAT",
        )
    ok = True
    for az in vpc.private_subnets:
        if az not in region_azs:
            ok = False
            issues.add(
                join_path("cluster.vpc.privateSubnets", az),
                f"{az!r} is not an AZ ID of {region} (AZ IDs there: "
                f"{', '.join(sorted(region_azs))}; names like {region}a differ per account, IDs "
                f"like {region_code}-az1 do not)",
            )
    by_subnet: dict[str, str] = {}
    for az, subnet in sorted(vpc.private_subnets.items()):
        if subnet in by_subnet:
            # A subnet is in exactly one AZ (EC2 Subnet AvailabilityZoneId).
            issues.add(
                join_path("cluster.vpc.privateSubnets", az),
                f"{subnet} is also given for {by_subnet[subnet]}; a subnet is in one AZ",
            )
        by_subnet.setdefault(subnet, az)
    azs = sorted(vpc.private_subnets)
    control = tuple(a for a in azs if a not in CONTROL_PLANE_AVOID_AZ_IDS)
    # "When you create a cluster, you specify a VPC and at least two subnets that are in different
    # Availability Zones" (https://docs.aws.amazon.com/eks/latest/userguide/network-reqs.html).
    if not cluster.existing and ok and len(control) < 2:
        issues.add(
            "cluster.vpc.privateSubnets",
            f"EKS needs subnets in at least two AZs its control plane supports; got "
            f"{', '.join(azs) or 'none'}",
        )
    return EksNetworkPlan(
        create=False,
        region=region,
        cidr=None,
        vpc_id=vpc.id,
        az_ids=tuple(azs),
        private_subnets=dict(sorted(vpc.private_subnets.items())),
        control_plane_az_ids=control,
    )
