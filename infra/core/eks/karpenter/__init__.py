"""Karpenter on EKS: the GPU pools as EC2NodeClass + NodePool (pure decisions, no Pulumi).

`names` holds the discovery tag both the pools and the controller side use, `pools` plans one
EC2NodeClass and one NodePool per GPU pool, `crds` checks each emitted manifest against the pinned
CRD schemas. May import what `infra.core.eks` may import, and `infra.core.eks` itself.
"""
