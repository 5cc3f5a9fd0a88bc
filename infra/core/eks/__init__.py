"""EKS planning: the cluster, its network, the GPU node groups and the cluster-autoscaler.

`planner.plan_eks` is the entry; `groups` decides one GPU node group, `instance_types` its types and
purchase option, `lifecycle` its name and sizes across replacements, `network` the VPC or given
subnets, `autoscaler` the cluster-autoscaler's tags, chart and IAM, `device_plugin` the charts used
when the GPU Operator is off. May import: `infra.core.config`, the cross-platform modules, `catalog`
and `rules`; never another platform's package, Pulumi or a cloud SDK.
"""
