"""EKS planning: the cluster, its network, the GPU node groups and the cluster-autoscaler.

`planner.plan_eks` is the entry; `groups` decides one GPU node group, `instance_types` its types and
purchase option, `lifecycle` its name and sizes across replacements, `names` every derived name
within its receiver's limit, `network` the VPC or given subnets, `autoscaler` the
cluster-autoscaler's tags, chart and IAM, `bootstrap` the node user data (GPU isolation, local
NVMe), `device_plugin` the NVIDIA device plugin chart when the GPU Operator is off and the EFA
device plugin for hpc groups. `platform` is EKS's ``Platform`` (``infra.core.platform``; Karpenter is
one of its features), answering from the plan with `nodes` (the scheduling proof's nodes; Karpenter's
in `karpenter.nodes`), `sent` (receiver checks and claims), `cost` (priced nodes and lines) and
`capacity` (quota sizings) and `presets` (its GPU Operator presets, one per NVIDIA AMI). May import: `infra.core.config`, the cross-platform modules (`pools`,
`labels`, `sharing`, `system_pool`, `kubeconfig`, `errors`), the neutral values a platform answers
with (`platform`, `nodes`, `sent`, `sizing`, `platform_cost`), `catalog` and `rules`; never another
platform's package, Pulumi or a cloud SDK.
"""
