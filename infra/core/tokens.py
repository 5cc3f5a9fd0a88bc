"""Pulumi type tokens more than one part of the program names: the plan's views (diff, review,
export), the lifecycle table, the quota preflight and the mock engine read resources by them.
One home, so a view never looks for a type the program does not register. Pure constants;
imports nothing. Each is ``<package>:<module>:<type>`` as the provider's schema spells it
(pulumi/pulumi-gcp, pulumi/pulumi-aws, pulumi/pulumi-eks, pulumi/pulumi-kubernetes ``schema.json``;
CustomResources: ``kubernetes:<apiVersion>:<kind>``).
"""

from __future__ import annotations

GKE_CLUSTER = "gcp:container/cluster:Cluster"
GKE_NODE_POOL = "gcp:container/nodePool:NodePool"
EKS_CLUSTER = "eks:index:Cluster"  # pulumi-eks's component
AWS_EKS_CLUSTER = "aws:eks/cluster:Cluster"
EKS_NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
NAMESPACE = "kubernetes:core/v1:Namespace"
COMPUTE_CLASS = "kubernetes:cloud.google.com/v1:ComputeClass"  # GKE's CRD
KARPENTER_NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
KARPENTER_NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
