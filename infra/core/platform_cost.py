"""What a stack costs besides its nodes' machines and GPUs: control plane, NAT, boot disks, Local SSD.

Prices come from ``data/platform_prices.csv``, as the catalog reads it (``Catalog.prices``): one row
per item, cloud and region, each with its own source and the date its price was read (so a line of the estimate is dated by its price, not
by when the catalog was copied). An item whose price the file lacks is listed as unpriced, never
counted as 0. Usage-based charges (NAT data processing, data transfer) cannot be planned and are
always listed as unpriced.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from infra.core.catalog.eks_versions import eks_standard_support_ends
from infra.core.catalog.pricing import UnitPrice
from infra.core.catalog.vendored import Catalog
from infra.core.warm import idle_nodes

if TYPE_CHECKING:
    from infra.core.eks.planner import EksPlan
    from infra.core.gke.model import GkePlan

# A month is 730 hours: 8,760 hours a year / 12, the average month (a 31-day month is 744 h), so
# twelve monthly figures add up to a year. Prices per GB-month are spread over the same hours.
HOURS_PER_MONTH = 730.0
# GKE's boot disk when nodeConfig.diskSizeGb is unset: "If unspecified, the default disk size is
# 100GB" (NodeConfig, https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/NodeConfig).
GKE_DEFAULT_DISK_GB = 100
# "Each Local SSD disk is 375 GiB" (https://cloud.google.com/compute/docs/disks/local-ssd).
LOCAL_SSD_GB = 375
# Cloud NAT bills per VM up to 32, then a flat rate (https://cloud.google.com/nat/pricing).
CLOUD_NAT_VM_CAP = 32


@dataclass(frozen=True, slots=True)
class Line:
    """One line of the estimate beside the nodes: USD per hour at minimum and maximum scale.

    ``at_min`` / ``at_max`` are ``None`` when the price is unknown (then ``missing`` says what).
    """

    item: str
    at_min: float | None
    at_max: float | None
    price: UnitPrice | None
    missing: str = ""
    more: tuple[UnitPrice, ...] = ()  # the other prices a summed line is made of

    @property
    def prices(self) -> tuple[UnitPrice, ...]:
        """Every price this line is made of, once each."""
        found = (self.price, *self.more) if self.price is not None else self.more
        return tuple({(p.item, p.usd): p for p in found}.values())


def unit_prices() -> dict[tuple[str, str, str], UnitPrice]:
    """``(cloud, item, region) -> price`` (region ``*``: every region), as the catalog reads them."""
    return Catalog.load().prices.units


def price_of(cloud: str, item: str, region: str) -> UnitPrice | None:
    """The price of ``item`` in ``region`` (or in every region), ``None`` if unknown."""
    return Catalog.load().prices.unit(cloud, item, region)


def _per_hour(p: UnitPrice, quantity: float) -> float:
    return p.usd * quantity / (HOURS_PER_MONTH if p.unit == "per_gb_month" else 1.0)


def _line(
    item: str, cloud: str, key: str, region: str, q_min: float, q_max: float, what: str
) -> Line:
    """A line for ``q_min`` / ``q_max`` units of price ``key`` (``what`` names it if unpriced)."""
    p = price_of(cloud, key, region)
    if p is None:
        return Line(item, None, None, None, f"{what}: no price for {key} in {region}")
    return Line(item, _per_hour(p, q_min), _per_hour(p, q_max), p)


def _sum_lines(item: str, lines: list[Line]) -> Line | None:
    """Lines of the same item added up (unpriced parts reported together)."""
    if not lines:
        return None
    priced = [x for x in lines if x.price is not None]
    missing = "; ".join(x.missing for x in lines if x.missing)
    if not priced:
        return Line(item, None, None, None, missing)
    return Line(
        item,
        sum(x.at_min or 0.0 for x in priced),
        sum(x.at_max or 0.0 for x in priced),
        priced[0].price,
        missing,
        tuple(x.price for x in priced[1:] if x.price is not None),
    )


def gke_lines(
    gke: GkePlan, system_nodes: tuple[int, int], warm: Mapping[str, int] | None = None
) -> list[Line]:
    """GKE: cluster fee, boot disks, Local SSD, Cloud NAT (``system_nodes``: system pool at
    minimum and maximum, as the node estimate counts it; ``warm``: per pool its warm nodes, which
    run at minimum too)."""
    region = gke.region
    lo_of = {p.name: idle_nodes(p.nodes_at_min, (warm or {}).get(p.name, 0)) for p in gke.pools}
    lines: list[Line] = []
    if not gke.cluster.existing:
        lines.append(_line("control plane (GKE fee)", "gcp", "gke-cluster-fee", region, 1, 1, ""))
    disks: list[Line] = []
    ssd: list[Line] = []
    for p in gke.pools:
        size = p.disk_size_gb or GKE_DEFAULT_DISK_GB
        disks.append(
            _line(
                "",
                "gcp",
                f"disk-{p.disk_type}",
                region,
                lo_of[p.name] * size,
                p.total_max * size,
                p.name,
            )
        )
        if p.local_ssd_count:
            gb = p.local_ssd_count * LOCAL_SSD_GB
            ssd.append(
                _line("", "gcp", "local-ssd", region, lo_of[p.name] * gb, p.total_max * gb, p.name)
            )
    if not gke.cluster.existing:
        lo, hi = system_nodes
        disks.append(
            _line(
                "",
                "gcp",
                f"disk-{gke.cluster.system_disk_type}",
                region,
                lo * GKE_DEFAULT_DISK_GB,
                hi * GKE_DEFAULT_DISK_GB,
                "system",
            )
        )
    lines += [x for x in (_sum_lines("boot disks", disks), _sum_lines("local SSD", ssd)) if x]
    if not gke.cluster.private_nodes:
        # Public nodes hold one external IPv4 each, billed per in-use address
        # (https://cloud.google.com/vpc/network-pricing#ipaddress).
        lo = system_nodes[0] + sum(lo_of.values())
        hi = system_nodes[1] + sum(p.total_max for p in gke.pools)
        lines.append(_line("external IPv4 (1 per public node)", "gcp", "external-ipv4", region,
                           lo, hi, "node addresses"))  # fmt: skip
    if gke.cluster.cloud_nat:
        lines.append(_cloud_nat(gke, region, (system_nodes[0] + sum(lo_of.values()), 0)))
    return lines


def _cloud_nat(gke: GkePlan, region: str, nodes: tuple[int, int]) -> Line:
    """Cloud NAT: per VM using it, capped at 32 VMs, plus one external address (auto-allocated;
    more under load). ``nodes``: every node at minimum (warm ones included), the system pool's
    at maximum."""
    vm, cap, ip = (
        price_of("gcp", k, region) for k in ("cloud-nat-per-vm", "cloud-nat-max", "cloud-nat-ip")
    )
    if vm is None or cap is None or ip is None:
        return Line("Cloud NAT", None, None, None, "Cloud NAT: no price")
    lo = nodes[0]
    hi = nodes[1] + sum(p.total_max for p in gke.pools)

    def at(n: int) -> float:
        return (vm.usd * n if n <= CLOUD_NAT_VM_CAP else cap.usd) + ip.usd

    return Line("Cloud NAT (gateway and 1 address)", at(lo), at(hi), vm, more=(cap, ip))


def eks_control_plane(version: str, region: str) -> Line:
    """The EKS control-plane fee for a cluster on ``version``, priced on the date the prices were
    read: the extended-support rate from the day the version leaves standard support ("Billing for
    extended support starts at the beginning of the day that the version reaches end of standard
    support", https://docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.html)."""
    standard = price_of("aws", "eks-cluster-fee", region)
    end = eks_standard_support_ends().get(version)
    if standard is None or end is None:
        why = "no price" if standard is None else f"no end-of-standard-support date for {version}"
        return Line("control plane (EKS fee)", None, None, None, f"EKS control plane: {why}")
    if standard.as_of < end:
        return Line(f"control plane (EKS fee, {version} in standard support)", standard.usd,
                    standard.usd, standard)  # fmt: skip
    item = f"control plane (EKS fee, {version} in extended support since {end})"
    return _line(item, "aws", "eks-cluster-fee-extended", region, 1, 1, "EKS extended support")


def eks_lines(eks: EksPlan, region: str, warm: Mapping[str, int] | None = None) -> list[Line]:
    """EKS: control-plane fee (standard or extended support by the cluster's Kubernetes version),
    NAT gateways and their addresses, gp3 root volumes (``warm``: per pool its warm nodes)."""
    lines: list[Line] = []
    if not eks.existing:
        lines.append(eks_control_plane(eks.kubernetes_version, region))
    net = eks.network
    if net is not None and net.create and net.nat_az_ids:
        n = len(net.nat_az_ids)
        nat = [
            _line("", "aws", "nat-gateway", region, n, n, "NAT gateway"),
            _line("", "aws", "public-ipv4", region, n, n, "NAT address"),
        ]
        line = _sum_lines(
            f"NAT ({n} gateway{'s' if n > 1 else ''} and address{'es' if n > 1 else ''})", nat
        )
        if line is not None:
            lines.append(line)
    disks = [
        _line("", "aws", "ebs-gp3", region,
              idle_nodes(g.min_size, (warm or {}).get(g.name, 0)) * g.disk_size_gib,
              g.max_size * g.disk_size_gib, g.name)
        for g in eks.groups
    ]  # fmt: skip
    if eks.system is not None:
        s = eks.system
        disks.append(
            _line(
                "",
                "aws",
                "ebs-gp3",
                region,
                s.min_size * s.disk_size_gib,
                s.max_size * s.disk_size_gib,
                s.name,
            )
        )
    line = _sum_lines("boot disks (gp3)", disks)
    return lines + ([line] if line else [])


USAGE_BASED = {
    "gcp": "Cloud NAT data processing ($0.045/GiB), data transfer, load balancers, logging",
    "aws": "NAT data processing (per GB), data transfer, load balancers, CloudWatch",
}
