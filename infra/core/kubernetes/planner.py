"""Planning for ``platform: kubernetes``: an existing cluster reached through a kubeconfig.

Nothing is created at the cluster level; the plan describes the existing GPU nodes as ``PoolHints``
so the GPU Operator plan, the workload hints and the smoke tests can target them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from infra.core.catalog.vendored import Catalog
from infra.core.config.kubernetes import KubernetesPoolSpec
from infra.core.config.stack import StackConfig
from infra.core.errors import Issues, join_path, shown
from infra.core.pools import PoolHints, Taint
from infra.core.sharing import nvidia_mig_profiles, operator_node_labels, pool_mig


@dataclass(frozen=True, slots=True, kw_only=True)
class KubernetesPlan:
    """An existing cluster and the GPU pools it already has.

    Attributes:
        cluster_name: the cluster's name in gpu-infra (outputs, resource names).
        kubeconfig: kubeconfig path, or ``None`` for the provider's default lookup.
        context: kubeconfig context, or ``None`` for the current one.
        distribution: ``containerd`` | ``k3s`` | ``rke2`` | ``microk8s``.
        pools: one ``PoolHints`` per described node set.
    """

    cluster_name: str = ""
    kubeconfig: str | None = None
    context: str | None = None
    distribution: str = "containerd"
    pools: tuple[PoolHints, ...] = ()


def plan_kubernetes(config: StackConfig, catalog: Catalog, issues: Issues) -> KubernetesPlan:
    """Describe the existing cluster's GPU pools; problems go to ``issues``.

    A pool's hint labels include the operator's sharing/MIG labels only when it lists ``nodes``
    (gpu-infra labels those); ``plan_operator`` reports pools that would lack them.
    """
    cluster = config.cluster
    pools: list[PoolHints] = []
    owner: dict[str, str] = {}  # node -> pool: a node gets one pool's labels (one NodePatch)
    for i, p in enumerate(config.pools):
        for j, node in enumerate(p.nodes):
            if node in owner:
                issues.add(
                    join_path("gpuPools", i, "nodes", j),
                    f"{node} is already in pool {owner[node]}; a node belongs to one pool",
                )
            owner.setdefault(node, p.name)
        _check_selector_apart(i, p, config.pools[:i], issues)
        labels = {**p.labels, **p.node_selector}
        if p.nodes:
            labels.update(operator_node_labels(p))
        pools.append(
            PoolHints(
                name=p.name,
                gpu_type=p.gpu.model,
                gpu_model=p.gpu.model,
                gpus_per_node=p.gpu.count,
                vcpus=p.vcpus,
                memory_gib=p.memory_gib,
                node_image=cluster.distribution,
                driver=p.driver,
                node_selector=dict(p.node_selector),
                labels=labels,
                taints=tuple(Taint(t.key, t.value, t.effect) for t in p.taints),
                spot=p.spot,
                min_nodes=p.min_nodes,
                max_nodes=p.max_nodes,
                mig_profiles=nvidia_mig_profiles(p.gpu.model, catalog.data_dir),
                mig=pool_mig(p.gpu.model, p.gpu.model, catalog.data_dir),
            )
        )
    # The provider otherwise follows KUBECONFIG and the file's current context: after a
    # `kubectl config use-context` the next `pulumi up` or `destroy` would target another cluster
    # (pulumi-kubernetes ProviderArgs kubeconfig/context: "If present, the name of the kubeconfig
    # context to use"; absent, the current one).
    for key, value in (("kubeconfig", cluster.kubeconfig), ("context", cluster.context)):
        if value is None:
            issues.add(
                f"cluster.{key}",
                "required on platform kubernetes: without it the provider follows the ambient "
                "kubeconfig and current context, which can name another cluster",
            )
    return KubernetesPlan(
        cluster_name=cluster.name,
        kubeconfig=cluster.kubeconfig,
        context=cluster.context,
        distribution=cluster.distribution,
        pools=tuple(pools),
    )


def _check_selector_apart(
    i: int, pool: KubernetesPoolSpec, earlier: Sequence[KubernetesPoolSpec], issues: Issues
) -> None:
    """A pool's nodeSelector selects exactly its nodes: one that is another pool's, or that the
    other's contains, also selects that pool's nodes (a node matches a selector when it carries
    every label of it: https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/
    #nodeselector), so one node would be described two ways."""
    mine = set(pool.node_selector.items())
    for j, other in enumerate(earlier):
        theirs = set(other.node_selector.items())
        if mine <= theirs or theirs <= mine:
            how = "is the same as" if mine == theirs else "overlaps"
            issues.add(
                join_path("gpuPools", i, "nodeSelector"),
                f"{shown(dict(pool.node_selector))} {how} gpuPools[{j}] ({other.name})'s "
                f"{shown(dict(other.node_selector))}: a node carrying the larger one matches both "
                "pools; give each pool a label only its nodes carry",
            )
