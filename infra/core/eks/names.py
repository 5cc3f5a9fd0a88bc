"""Names and tags EKS stacks derive, fitted to what their receivers accept.

Pure code. A derived name that would be too long is cut and ends in 8 hex characters of a hash of
the whole name, so it stays unique and the same on every run (a random or shifting name would
replace the resource). Names that fit are kept as they are, so no running stack changes.
"""

from __future__ import annotations

import hashlib

from infra.core.rules.limits import limit

# IAM CreateRole RoleName: 1-64 characters
# (https://docs.aws.amazon.com/IAM/latest/APIReference/API_CreateRole.html).
IAM_ROLE_NAME_MAX = limit("aws.iam_role_name")
# EC2 CreateLaunchTemplate LaunchTemplateName: 3-128 characters
# (https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_CreateLaunchTemplate.html).
LAUNCH_TEMPLATE_NAME_MAX = limit("ec2.launch_template_name")
# Tags: key 1-128, value 0-256 characters
# (https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_Tag.html).
TAG_KEY_MAX = limit("aws.tag_key")
TAG_VALUE_MAX = limit("aws.tag_value")
# Helm: "release name ... exceeds max length of 53" (helm/helm pkg/chartutil/validate_name.go
# maxReleaseNameLen = 53: a release name becomes part of object names and labels of 63).
HELM_RELEASE_MAX = limit("helm.release_name")
# Pulumi auto-names a physical resource ``<logical name>-<7 random characters>`` and refuses a
# logical name too long for that: "name '<name>-' plus 7 random chars is longer than maximum
# length 64" (pulumi/pulumi sdk/go/common/resource/resource_id.go NewUniqueHex, called by
# pulumi-terraform-bridge's AutoName with the property's MaxLength).
AUTONAME_SUFFIX = limit("pulumi.autoname_suffix")

_HASH = 8


def fit(name: str, limit: int) -> str:
    """``name`` if it has at most ``limit`` characters, else its first characters, ``-`` and
    8 hex characters of its SHA-256 (``limit`` characters in all)."""
    if len(name) <= limit:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:_HASH]
    return f"{name[: limit - _HASH - 1].rstrip('-')}-{digest}"


def fit_autonamed(name: str, limit: int) -> str:
    """A logical name whose Pulumi auto-name (``name`` + 8) has at most ``limit`` characters."""
    return fit(name, limit - AUTONAME_SUFFIX)


def stack_slug(stack: str) -> str:
    """The stack name as DNS-label characters (lowercase alphanumerics and ``-``)."""
    return "".join(c if c.isalnum() else "-" for c in stack.lower()).strip("-")


def stack_scoped(base: str, stack: str, limit: int) -> str:
    """``<base>-<stack>`` fitted to ``limit``: the name of an object this stack adds to a cluster
    it does not own, where another stack (or the cluster's owner) may hold ``base`` already."""
    return fit(f"{base}-{stack_slug(stack)}", limit)


# Tag on what a stack creates that another stack or a person could also name: the cluster, its VPC,
# the IAM OIDC provider of an existing cluster. The observe step tells this stack's own from
# another's by it (``owner_value``), never by a name.
OWNER_TAG = "gpu-infra/stack"


def owner_value(cluster_name: str, stack: str) -> str:
    """``<cluster>/<stack>``: the ``OWNER_TAG`` value of this stack's objects (tag values: 256)."""
    return fit(f"{cluster_name}/{stack}", TAG_VALUE_MAX)


def eks_component_name(cluster_name: str) -> str:
    """The logical name of the pulumi-eks ``Cluster`` a stack creates (``components.eks``)."""
    return f"{cluster_name}-eks"


def pulumi_eks_name_tag(logical_name: str) -> str:
    """The ``Name`` tag pulumi-eks gives the EKS cluster of a component named ``logical_name``
    (pulumi/pulumi-eks nodejs/eks/cluster/cluster.ts: ``Name: `${name}-eksCluster```)."""
    return f"{logical_name}-eksCluster"
