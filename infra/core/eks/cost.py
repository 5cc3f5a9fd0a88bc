"""What an EKS stack costs: its node groups' nodes as the cost estimate prices them
(``infra.core.cost``), and the lines beside them (control plane, NAT gateways, gp3 root volumes;
``infra.core.platform_cost``)."""

from __future__ import annotations

from collections.abc import Mapping

from infra.core.catalog.eks_versions import eks_standard_support_ends, judged_day
from infra.core.catalog.pricing import Prices
from infra.core.eks.planner import EksPlan, EksSystemGroupPlan
from infra.core.platform import NodePlace, PricedPool
from infra.core.platform_cost import Line, line_of, price_of, sum_lines
from infra.core.pools import idle_nodes

# Capacity Blocks are paid up front at the block's price, not per node-hour.
CAPACITY_BLOCK_BOUND = "priced at on-demand: a Capacity Block is paid up front at its own price"


def priced_pools(eks: EksPlan) -> tuple[tuple[PricedPool, ...], PricedPool | None]:
    """Per GPU node group its instance types' places and range; the system group's."""
    pools: list[PricedPool] = []
    for g in eks.groups:
        # A Karpenter pool at its maximum: the nodes its NodePool limits admit (maxNodes and the
        # drift replacement, which limits cannot tell from a scale-up).
        hi = g.karpenter.limit_nodes if g.karpenter is not None else g.max_size
        pools.append(
            PricedPool(
                name=g.name,
                places=tuple(NodePlace("aws", t, az) for t in g.instance_types for az in g.az_ids),
                spot=g.capacity_type == "SPOT",
                min_nodes=g.min_size,
                max_nodes=hi,
                machine=", ".join(g.instance_types),
                bound=CAPACITY_BLOCK_BOUND if g.capacity_type == "CAPACITY_BLOCK" else "",
                drift_nodes=hi - g.max_size,
                spot_or_on_demand=g.capacity_type == "SPOT_OR_ON_DEMAND",
            )
        )
    s = eks.system
    if s is None:
        return tuple(pools), None
    azs = _system_azs(eks, s)
    system = PricedPool(
        name=s.name,
        places=tuple(NodePlace("aws", t, az) for t in s.instance_types for az in azs),
        spot=False,
        min_nodes=s.min_size,
        max_nodes=s.max_size,
        machine=", ".join(s.instance_types),
    )
    return tuple(pools), system


def _system_azs(eks: EksPlan, system: EksSystemGroupPlan) -> tuple[str, ...]:
    """The AZs the system group's subnets are in (its own, not every network AZ)."""
    if system.az_ids:
        return tuple(system.az_ids)
    return eks.network.az_ids if eks.network is not None else ()


def eks_control_plane(version: str, region: str, prices: Prices) -> Line:
    """The EKS control-plane fee for a cluster on ``version``, by the prices and the support
    calendar of one catalog (``prices``': the plan's), judged on the later of today and the
    day the prices and the calendar were read (as the version rule is, ``judged_day``): the
    extended-support rate from the day the version leaves standard support ("Billing for
    extended support starts at the beginning of the day that the version reaches end of standard
    support", https://docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.html), so a
    price file read before that day does not price a version standard after it."""
    standard = price_of(prices, "aws", "eks-cluster-fee", region)
    end = eks_standard_support_ends(prices.data_dir).get(version)
    if standard is None or end is None:
        why = "no price" if standard is None else f"no end-of-standard-support date for {version}"
        return Line("control plane (EKS fee)", None, None, None, f"EKS control plane: {why}")
    if max(standard.as_of, judged_day(prices.data_dir)) < end:
        return Line(f"control plane (EKS fee, {version} in standard support)", standard.usd,
                    standard.usd, standard)  # fmt: skip
    item = f"control plane (EKS fee, {version} in extended support since {end})"
    extended = "eks-cluster-fee-extended"
    return line_of(prices, item, "aws", extended, region, 1, 1, "EKS extended support")


def eks_lines(
    eks: EksPlan, region: str, prices: Prices, warm: Mapping[str, int] | None = None
) -> list[Line]:
    """EKS: control-plane fee (standard or extended support by the cluster's Kubernetes version),
    NAT gateways and their addresses, gp3 root volumes (``warm``: per pool its warm nodes), at
    ``prices``."""
    lines: list[Line] = []
    if not eks.existing:
        lines.append(eks_control_plane(eks.kubernetes_version, region, prices))
    net = eks.network
    if net is not None and net.create and net.nat_az_ids:
        n = len(net.nat_az_ids)
        nat = [
            line_of(prices, "", "aws", "nat-gateway", region, n, n, "NAT gateway"),
            line_of(prices, "", "aws", "public-ipv4", region, n, n, "NAT address"),
        ]
        line = sum_lines(
            f"NAT ({n} gateway{'s' if n > 1 else ''} and address{'es' if n > 1 else ''})", nat
        )
        if line is not None:
            lines.append(line)
    disks = [
        line_of(prices, "", "aws", "ebs-gp3", region,
              idle_nodes(g.min_size, (warm or {}).get(g.name, 0)) * g.disk_size_gib,
              g.max_size * g.disk_size_gib, g.name)
        for g in eks.groups
    ]  # fmt: skip
    if eks.system is not None:
        s = eks.system
        disks.append(
            line_of(
                prices,
                "",
                "aws",
                "ebs-gp3",
                region,
                s.min_size * s.disk_size_gib,
                s.max_size * s.disk_size_gib,
                s.name,
            )
        )
    line = sum_lines("boot disks (gp3)", disks)
    return lines + ([line] if line else [])
