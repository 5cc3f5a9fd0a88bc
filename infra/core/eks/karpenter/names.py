"""Names and tags Karpenter's controller and node classes share. Pure code."""

from __future__ import annotations

# The tag Karpenter's getting-started guide puts on the cluster's subnets and node security group,
# and the EC2NodeClass's subnetSelectorTerms/securityGroupSelectorTerms select by
# (aws/karpenter-provider-aws website/content/en/v1.14/getting-started/migrating-from-cas/scripts/
# step05-tag-subnets.sh and step06-tag-security-groups.sh: karpenter.sh/discovery=<cluster name>).
DISCOVERY_TAG_KEY = "karpenter.sh/discovery"


def discovery_tag(cluster_name: str) -> tuple[str, str]:
    """``(key, value)`` of the discovery tag: ``karpenter.sh/discovery`` = the cluster's name."""
    return DISCOVERY_TAG_KEY, cluster_name
