"""EFA on EKS GPU groups: the launch template's network interfaces and the devices a node advertises.

Pure code: the per-card EFA layout of an hpc pool's instance type (catalog), and the extended
resources an EFA pod requests.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from infra.core.catalog.vendored import AwsInstance
from infra.core.config.eks import EksPoolSpec
from infra.core.errors import Issues, join_path

# EFA nodes: "EC2 instances with EFA pre-allocate 5128 2MiB huge pages" and pods request them as
# hugepages-2Mi (https://docs.aws.amazon.com/eks/latest/userguide/node-efa.html); the node
# template advertises those 5128 x 2Mi, or CA never scales from zero for such a pod.
EFA_HUGEPAGES_2MI = f"{5128 * 2}Mi"
# Extended resource of AWS's EFA device plugin (aws-efa-k8s-device-plugin): one per EFA device.
EFA_RESOURCE = "vpc.amazonaws.com/efa"


@dataclass(frozen=True, slots=True)
class NetworkInterface:
    """One launch-template network interface (EC2 LaunchTemplateInstanceNetworkInterfaceSpecification)."""

    card: int
    device: int
    interface_type: Literal["interface", "efa", "efa-only"]


def efa_interfaces(efa_cards: tuple[int, ...], max_efa: int) -> tuple[NetworkInterface, ...]:
    """The EFA layout: card 0 device 0 is the primary interface (``efa`` where card 0 takes an
    EFA, plain ``interface`` where it does not, e.g. p6-b300), every other EFA card one
    ``efa-only`` interface at device 0 ("Maximize network bandwidth ... with multiple network
    cards", https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa-acc-inst-types.html: the
    primary interface can't be EFA-only; further cards take EFA-only at device index 0).
    """
    cards = list(efa_cards)[:max_efa]
    out = [NetworkInterface(0, 0, "efa" if 0 in cards else "interface")]
    out += [NetworkInterface(c, 0, "efa-only") for c in cards if c != 0]
    return tuple(out)


@dataclass(frozen=True, slots=True, kw_only=True)
class EfaLayout:
    """Step 3 (EFA): the launch template's interfaces and the EFA devices a node advertises."""

    count: int = 0
    nics: tuple[NetworkInterface, ...] = ()


def plan_efa(i: int, pool: EksPoolSpec, first: AwsInstance, issues: Issues) -> EfaLayout:
    """EFA interfaces of an hpc pool (none otherwise)."""
    if not pool.hpc:
        return EfaLayout()
    if first.efa_interfaces == 0:
        issues.add(
            join_path("gpuPools", i, "hpc"),
            f"{first.name} supports no EFA interface (EC2 DescribeInstanceTypes "
            "NetworkInfo.EfaSupported); hpc is for EFA types such as p4d.24xlarge, "
            "p5.48xlarge, p6-b200.48xlarge",
        )
        return EfaLayout()
    if first.efa_cards:
        nics = efa_interfaces(first.efa_cards, first.efa_interfaces)
        return EfaLayout(count=sum(n.interface_type != "interface" for n in nics), nics=nics)
    # A catalog without per-card data: one EFA per card from card 0.
    nics = efa_interfaces(tuple(range(first.efa_interfaces)), first.efa_interfaces)
    return EfaLayout(count=first.efa_interfaces, nics=nics)
