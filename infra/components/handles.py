"""What every cluster builder hands to the platform-neutral layers (operator, workloads, outputs)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterHandle:
    """A built (or attached) cluster.

    Attributes:
        name: cluster name.
        endpoint: API server endpoint (empty for platform kubernetes).
        kubeconfig: kubeconfig text (on platform kubernetes: the kubeconfig path), always a secret.
        provider: the Kubernetes provider every in-cluster object uses.
        ready: resources in-cluster objects must wait for (cluster, system pool) - never GPU pools,
            so the operator installs while GPU pools still sit at zero nodes.
        owner: the cluster resource this stack created, when not protected (in-cluster objects
            are ``deletedWith`` it); ``None`` for an existing or a protected cluster, whose objects
            are deleted one by one.
        pools: GPU pool name -> the resource a workload on it waits for (smoke-test Jobs).
        classes: GKE ComputeClass name -> its resource (warm placeholders select the class).
    """

    name: pulumi.Input[str]
    endpoint: pulumi.Input[str]
    kubeconfig: pulumi.Output[str]
    provider: k8s.Provider
    ready: list[pulumi.Resource] = field(default_factory=list)
    owner: pulumi.Resource | None = None
    pools: Mapping[str, pulumi.Resource] = field(default_factory=dict)
    classes: Mapping[str, pulumi.Resource] = field(default_factory=dict)
