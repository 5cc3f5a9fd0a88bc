"""Stack-config schema for ``platform: kubernetes``: an existing cluster reached through a kubeconfig.

The cluster is not created: gpu-infra installs the GPU
Operator and the workload helpers into it. ``gpuPools`` describe GPU nodes that already exist, so
the operator can target them and workloads get scheduling hints.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from infra.core import rules
from infra.core.config.base import ClusterBase, ClusterIdentity, Model, PoolBase
from infra.core.config.entry import PlatformConfig
from infra.core.config.operator import Distribution


class OnPremGpuSpec(Model):
    """The GPUs of an existing node.

    Attributes:
        model: GPU model as people write it (``T4``, ``A100-80GB``, ``H100``); MIG support is
            looked up from it.
        count: GPUs per node.
    """

    model: str = Field(
        min_length=1,
        max_length=63,
        description=(
            "GPU model as people write it (`T4`, `A100-80GB`, `H100`); MIG support is looked up "
            "from it. It becomes a label value, so it takes no spaces."
        ),
    )
    count: int = Field(default=1, ge=1, le=16, description="GPUs per node.")


class KubernetesPoolSpec(PoolBase):
    """A set of existing GPU nodes, described so the operator and workloads can target them.

    Attributes:
        gpu: the nodes' GPUs.
        node_selector: labels the nodes already carry that select exactly this pool.
        vcpus: vCPUs per node (for the JupyterHub profile's display name).
        memory_gib: installed memory per node in GiB (the node reports less).
        driver: ``operator`` (the GPU Operator installs the driver), ``preinstalled`` (the host
            has one) or ``vgpu`` (the operator installs the vGPU guest driver the user built).
        nodes: node names; gpu-infra labels them for the operator's time-slicing/MIG config.
    """

    gpu: OnPremGpuSpec = Field(description="The nodes' GPUs.")
    # Applied by an API NodePatch, not by the kubelet's --node-labels: the kubelet's self-labelling
    # limit (NodeRestriction, KEP 279) does not bind an admin's patch, so node-role.kubernetes.io/*
    # is fine here (https://kubernetes.io/docs/reference/access-authn-authz/admission-controllers/#noderestriction).
    labels: rules.Labels = Field(  # type: ignore[assignment]
        default_factory=dict,
        description=(
            "Labels gpu-infra patches onto the listed `nodes`, or labels the nodes already carry "
            "(operator sharing and MIG need their config label one way or the other); Kubernetes "
            "label rules only."
        ),
    )
    node_selector: rules.Labels = Field(
        min_length=1,
        description="Labels the nodes already carry that select exactly this pool.",
    )
    vcpus: int = Field(
        ge=1,
        le=4096,
        description=(
            "vCPUs per node: the JupyterHub profile's name and memory share, the scheduling "
            "proof's node."
        ),
    )
    memory_gib: float = Field(
        gt=0,
        le=65536,
        description=(
            "Memory per node, GiB, as installed (the VM's configured size, the host's RAM). The "
            "node reports less (`kubectl get node`: `status.capacity.memory`): JupyterHub's "
            "guarantee and the scheduling proof take the kernel's share (1/64 for its page "
            "map plus a 2.5 % margin), the kubelet's 100 MiB eviction threshold and the "
            "DaemonSets' requests off it."
        ),
    )
    driver: Literal["operator", "preinstalled", "vgpu"] = Field(
        default="operator",
        description=(
            "`operator` (the GPU Operator installs the driver), `preinstalled` (the host has "
            "one) or `vgpu` (VMs with an NVIDIA vGPU: the operator installs the guest driver "
            "image of `gpuOperator.vgpu`); pools must agree, and `preinstalled` turns the "
            "operator's driver off."
        ),
    )
    nodes: list[rules.NodeName] = Field(
        default_factory=list,
        description=(
            "Node names gpu-infra labels (for the operator's time-slicing or MIG config): at most "
            "`maxNodes`, no repeats, each node in one pool only."
        ),
    )

    def listed_nodes(self) -> tuple[str, ...]:
        return tuple(self.nodes)


class KubernetesClusterSpec(ClusterBase):
    """An existing cluster; ``location`` is free text (a site or rack).

    Attributes:
        existing: always true (may be omitted); ``false`` is rejected, gpu-infra creates no
            on-prem cluster.
        kubeconfig: kubeconfig file path; required (the planner refuses it missing).
        context: kubeconfig context; required likewise.
        distribution: how containerd runs on the nodes (decides the operator preset).
    """

    # Optional in the schema so that a missing one is reported by the planner with its reason.
    kubeconfig: rules.KubeconfigPath | None = Field(
        default=None,
        description=(
            "Required: the kubeconfig file (absolute or `~/`); the provider never follows "
            "`KUBECONFIG`."
        ),
    )
    context: rules.KubeconfigContext | None = Field(
        default=None,
        description=(
            "Required: the context of that file the provider uses, never the current one, so a "
            "`kubectl config use-context` cannot send the next `up` to another cluster."
        ),
    )
    distribution: Distribution = Field(
        default="containerd",
        description=(
            "How containerd runs on the nodes: `containerd` (a stock one), `k3s`, `rke2` or "
            "`microk8s`. It is the GPU Operator's default `preset`, which sets where the toolkit "
            "finds containerd's config and socket."
        ),
    )
    existing: bool = Field(
        default=True,
        description="Always true (may be omitted): gpu-infra creates no on-prem cluster.",
    )

    @field_validator("existing")
    @classmethod
    def _always_existing(cls, v: bool) -> bool:
        if not v:
            raise ValueError(
                "platform kubernetes attaches to an existing cluster; gpu-infra cannot create one "
                "(omit existing or set it to true)"
            )
        return v

    def identity(self, project: str | None, region: str | None) -> ClusterIdentity:
        del project, region
        # The provider reaches the cluster through this file and context alone (its name only
        # names the outputs), so they are what tells one cluster from another.
        return ClusterIdentity(
            "cluster.context",
            str(self.context),
            f"the cluster of kubeconfig {self.kubeconfig}, context {self.context}",
        )


CONFIG = PlatformConfig(
    KubernetesClusterSpec, KubernetesPoolSpec, ("Existing clusters", "Kubernetes")
)
