"""EKS planning: the cluster, its network, the GPU node groups and the cluster-autoscaler.

`planner.plan_eks` is the entry; `groups` decides one GPU node group, `instance_types` its types and
purchase option, `lifecycle` its name and sizes across replacements, `names` every derived name
within its receiver's limit, `network` the VPC or given subnets, `autoscaler` the
cluster-autoscaler's tags, chart and IAM, `bootstrap` the node user data (GPU isolation, local
NVMe), `device_plugin` the NVIDIA device plugin chart when the GPU Operator is off and the EFA
device plugin for hpc groups. May import: `infra.core.config`, the cross-platform modules
(`pools`, `labels`, `sharing`, `system_pool`, `kubeconfig`, `errors`), `catalog` and `rules`;
never another platform's package, Pulumi or a cloud SDK.
"""
