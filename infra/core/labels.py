"""Node labels more than one part of the plan reads: platform planners set them, the operator, the
integrations and the scheduling proof select on them. One home, so a workload never selects a
label a pool does not carry; with them the label and annotation gpu-infra puts on its own objects.
Pure constants; imports nothing.
"""

from __future__ import annotations

# What gpu-infra marks every object it creates in the cluster with (Kubernetes recommended labels,
# https://kubernetes.io/docs/concepts/overview/working-with-objects/common-labels/).
MANAGED_BY = {"app.kubernetes.io/managed-by": "gpu-infra"}
# The annotation that tells Pulumi's Kubernetes provider not to wait for a resource to be ready
# (https://www.pulumi.com/registry/packages/kubernetes/installation-configuration/#await-behavior);
# Argo CD and Flux ignore it.
SKIP_AWAIT = "pulumi.com/skipAwait"
# gpu-infra's own pool label, the same key on every platform so workloads select a pool alike.
POOL_LABEL = "gpu-infra/pool"
# The stack a GPU node belongs to, on a cluster the stack does not own (cluster.existing), where
# another stack may have a pool of the same name: every per-stack selector requires it beside
# POOL_LABEL. The key of the owner tag (infra.core.eks.names.OWNER_TAG); the value is the stack
# name as a label value (infra.core.neighbours.stack_label_value), the cluster being the node's.
STACK_LABEL = "gpu-infra/stack"
# The label the operator keys GPU nodes by (it sets it from NFD's PCI labels; NVIDIA/gpu-operator
# controllers/state_manager.go commonGPULabelKey, hasCommonGPULabel); the device plugin chart's
# default affinity accepts it when NFD is absent (NVIDIA/k8s-device-plugin
# deployments/helm/nvidia-device-plugin/values.yaml "affinity"). Set up front on GPU pools.
GPU_PRESENT_LABEL = "nvidia.com/gpu.present"

# GKE: the GPU type of a node (https://cloud.google.com/kubernetes-engine/docs/how-to/gpus#multiple_gpus).
GKE_ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"
# GKE: the ComputeClass a pod selects and a pool serves
# (https://cloud.google.com/kubernetes-engine/docs/concepts/about-custom-compute-classes).
GKE_COMPUTE_CLASS_LABEL = "cloud.google.com/compute-class"
# GKE: "Each node in the pool has a Kubernetes node label, cloud.google.com/gke-nodepool, which has
# the node pool's name" (https://cloud.google.com/kubernetes-engine/docs/concepts/node-pools).
GKE_NODEPOOL_LABEL = "cloud.google.com/gke-nodepool"

# EKS: the label cluster-autoscaler's AWS provider reads to tell GPU nodes apart (GPULabel in
# kubernetes/autoscaler cluster-autoscaler/cloudprovider/aws/aws_cloud_provider.go): it waits for
# the device plugin instead of over-scaling and scales GPU nodes down by GPU utilisation.
EKS_ACCELERATOR_LABEL = "k8s.amazonaws.com/accelerator"

# On-prem: the label gpu-infra patches onto listed nodes to name their accelerator (the value a
# Flyte task selects with accelerator=; GKE and EKS nodes carry the two above).
ONPREM_ACCELERATOR_LABEL = "gpu-infra/accelerator"
