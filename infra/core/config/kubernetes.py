"""Stack-config schema for ``platform: kubernetes``: an existing cluster reached through a kubeconfig.

The cluster is not created: gpu-infra installs the GPU
Operator and the workload helpers into it. ``gpuPools`` describe GPU nodes that already exist, so
the operator can target them and workloads get scheduling hints.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from infra.core import rules
from infra.core.config.base import ClusterBase, Model, PoolBase

# Which Kubernetes distribution runs containerd on the nodes; it decides where the toolkit finds the
# containerd config and socket (NVIDIA gpu-operator getting-started.html, "Specifying Configuration
# Options for containerd": k3s/RKE2/MicroK8s paths).
Distribution = Literal["containerd", "k3s", "rke2", "microk8s"]


class OnPremGpuSpec(Model):
    """The GPUs of an existing node.

    Attributes:
        model: GPU model as people write it (``T4``, ``A100-80GB``, ``H100``); MIG support is
            looked up from it.
        count: GPUs per node.
    """

    model: str = Field(min_length=1, max_length=63)
    count: int = Field(default=1, ge=1, le=16)


class KubernetesPoolSpec(PoolBase):
    """A set of existing GPU nodes, described so the operator and workloads can target them.

    Attributes:
        gpu: the nodes' GPUs.
        node_selector: labels the nodes already carry that select exactly this pool.
        vcpus: vCPUs per node (for the JupyterHub profile's display name).
        memory_gib: memory per node in GiB.
        driver: ``operator`` (the GPU Operator installs the driver) or ``preinstalled`` (the host
            has one).
        nodes: node names; gpu-infra labels them for the operator's time-slicing/MIG config.
    """

    gpu: OnPremGpuSpec
    # Applied by an API NodePatch, not by the kubelet's --node-labels: the kubelet's self-labelling
    # limit (NodeRestriction, KEP 279) does not bind an admin's patch, so node-role.kubernetes.io/*
    # is fine here (https://kubernetes.io/docs/reference/access-authn-authz/admission-controllers/#noderestriction).
    labels: rules.Labels = Field(default_factory=dict)  # type: ignore[assignment]
    node_selector: rules.Labels = Field(min_length=1)
    vcpus: int = Field(ge=1, le=4096)
    memory_gib: float = Field(gt=0, le=65536)
    driver: Literal["operator", "preinstalled"] = "operator"
    nodes: list[rules.NodeName] = Field(default_factory=list)


class KubernetesClusterSpec(ClusterBase):
    """An existing cluster; ``location`` is free text (a site or rack).

    Attributes:
        existing: always true (may be omitted); ``false`` is rejected, gpu-infra creates no
            on-prem cluster.
        kubeconfig: kubeconfig file path; default: what the Kubernetes provider finds
            (``KUBECONFIG``, then ``~/.kube/config``).
        context: kubeconfig context; default: the file's current context.
        distribution: how containerd runs on the nodes (decides the operator preset).
    """

    kubeconfig: rules.KubeconfigPath | None = None
    context: str | None = Field(default=None, min_length=1)
    distribution: Distribution = "containerd"
    existing: bool = True

    @field_validator("existing")
    @classmethod
    def _always_existing(cls, v: bool) -> bool:
        if not v:
            raise ValueError(
                "platform kubernetes attaches to an existing cluster; gpu-infra cannot create one "
                "(omit existing or set it to true)"
            )
        return v
