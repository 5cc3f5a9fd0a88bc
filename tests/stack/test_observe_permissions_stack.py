"""docs/operations.md names the permission of every read the observe step makes.

Each provider function the fake account answers (``infra.mocklive.INVOKES``: the observe step's
reads) maps to the API actions it calls (terraform-provider-aws data sources: aws_eks_cluster
DescribeCluster, aws_eks_clusters ListClusters, aws_eks_node_groups ListNodegroups,
aws_eks_node_group DescribeNodegroup, aws_eks_addon DescribeAddon, aws_eks_addon_version
DescribeAddonVersions, aws_vpcs DescribeVpcs, aws_nat_gateways / aws_nat_gateway
DescribeNatGateways, aws_subnet DescribeSubnets, aws_ec2_instance_type_offerings
DescribeInstanceTypeOfferings, aws_iam_openid_connect_provider ListOpenIDConnectProviders +
GetOpenIDConnectProvider; google_container_cluster clusters.get; google_client_config calls no
API: it hands out the provider's own token). The observe step's Kubernetes read of GKE's
ComputeClasses (``GET <path>``) is a list of custom objects, IAM's
``container.thirdPartyObjects.list`` (https://cloud.google.com/iam/docs/roles-permissions/container).
"""

from __future__ import annotations

from infra.core.catalog.vendored import DATA_DIR
from infra.core.gke.observed import COMPUTE_CLASSES_PATH
from infra.mockanswers import INVOKES as ALL_INVOKES
from infra.mocklive import INVOKES

ACTIONS = {
    "aws:eks/getCluster:getCluster": ["eks:DescribeCluster"],
    "aws:eks/getClusters:getClusters": ["eks:ListClusters"],
    "aws:eks/getNodeGroups:getNodeGroups": ["eks:ListNodegroups"],
    "aws:eks/getNodeGroup:getNodeGroup": ["eks:DescribeNodegroup"],
    "aws:eks/getAddon:getAddon": ["eks:DescribeAddon"],
    "aws:eks/getAddonVersion:getAddonVersion": ["eks:DescribeAddonVersions"],
    "aws:ec2/getVpcs:getVpcs": ["ec2:DescribeVpcs"],
    "aws:ec2/getNatGateways:getNatGateways": ["ec2:DescribeNatGateways"],
    "aws:ec2/getNatGateway:getNatGateway": ["ec2:DescribeNatGateways"],
    "aws:ec2/getSubnet:getSubnet": ["ec2:DescribeSubnets"],
    "aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings": [
        "ec2:DescribeInstanceTypeOfferings"
    ],
    "aws:iam/getOpenIdConnectProvider:getOpenIdConnectProvider": [
        "iam:ListOpenIDConnectProviders",
        "iam:GetOpenIDConnectProvider",
    ],
    "gcp:container/getCluster:getCluster": ["container.clusters.get"],
    "gcp:organizations/getClientConfig:getClientConfig": [],
    f"GET {COMPUTE_CLASSES_PATH}": ["container.thirdPartyObjects.list"],
}


def section() -> str:
    text = (DATA_DIR.parents[2] / "docs" / "operations.md").read_text(encoding="utf-8")
    start = text.index("### The observe step")
    return text[start : text.index("\n### ", start + 1)]


def test_every_read_of_the_observe_step_has_its_permission_in_the_operations_page():
    reads = set(INVOKES) | {f"GET {COMPUTE_CLASSES_PATH}"}
    reads |= {t for t in ALL_INVOKES if t.endswith(("getAddonVersion", "getInstanceTypeOfferings"))}
    assert reads <= set(ACTIONS), sorted(reads - set(ACTIONS))
    doc = section()
    missing = sorted({a for t in reads for a in ACTIONS[t] if f"`{a}`" not in doc})
    assert missing == []
