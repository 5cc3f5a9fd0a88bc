"""Names and tags Karpenter's objects and the resources it selects share.

Pure code. The controller side tags the cluster's subnets and node security group with
`discovery_tag`; the EC2NodeClass selects them by the same tag, so both import it from here.
"""

from __future__ import annotations

# The tag Karpenter's getting-started guide puts on subnets and security groups and the
# EC2NodeClass selects by: "karpenter.sh/discovery: ${CLUSTER_NAME}"
# (aws/karpenter-provider-aws v1.14.1 website/content/en/docs/concepts/nodeclasses.md,
# getting-started/migrating-from-cas/scripts/step05-tag-subnets.sh).
DISCOVERY_TAG_KEY = "karpenter.sh/discovery"


def discovery_tag(cluster_name: str) -> tuple[str, str]:
    """The (key, value) tag that marks a subnet or security group for the cluster's Karpenter."""
    return DISCOVERY_TAG_KEY, cluster_name
