"""Karpenter on EKS (pure decisions, no Pulumi): the GPU pools as EC2NodeClass + NodePool and the
controller that launches their nodes.

`names` holds the discovery tag both sides use, `pools`/`plan` plan one EC2NodeClass and one
NodePool per GPU pool, `crds` checks each emitted manifest against the pinned CRD schemas, and
`controller` plans the Helm release, its IAM role and the interruption queue. May import what
`infra.core.eks` may import, and `infra.core.eks` itself.
"""
