"""The NVIDIA device plugin Helm chart, for EKS GPU groups when the GPU Operator is off.

Without the operator nothing on an AL2023 NVIDIA node advertises ``nvidia.com/gpu``: the AMI ships
the driver and container toolkit but no device plugin ("Amazon EKS optimized accelerated Amazon
Linux AMIs": install the NVIDIA device plugin, https://docs.aws.amazon.com/eks/latest/userguide/
ml-eks-optimized-ami.html). Bottlerocket NVIDIA variants run NVIDIA's device plugin themselves
(https://bottlerocket.dev/en/os/latest/#/concepts/variants/), so the chart skips their nodes.
Pure code: ``infra.components.eks`` installs what ``plan_device_plugin`` returns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from infra.core.catalog.pins import Pin, pin
from infra.core.catalog.vendored import DATA_DIR
from infra.core.config.base import SharingSpec
from infra.core.pools import Taint
from infra.core.sharing import (
    DEVICE_LIST_STRATEGY,
    DEVICE_PLUGIN_CONFIG_LABEL,
    sharing_config_key,
    time_slicing_config,
)

# The NVIDIA device plugin chart: pins.csv row nvidia-device-plugin of the plan's catalog. Its
# name, which names the release on a cluster the stack creates, is what this code knows it by.
CHART_PIN = "nvidia-device-plugin"
CHART_NAME = pin(CHART_PIN, DATA_DIR).chart
NAMESPACE = "kube-system"
# The chart's default tolerations (values.yaml), kept when more are added.
DEFAULT_TOLERATIONS: tuple[Mapping[str, str], ...] = (
    {"key": "CriticalAddonsOnly", "operator": "Exists"},
    {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
)
DEFAULT_CONFIG = "default"


@dataclass(frozen=True, slots=True, kw_only=True)
class DevicePluginPlan:
    """The device plugin release: its name, chart pin, namespace and values.

    ``release``: the chart's name on a cluster the stack creates; on an existing cluster the
    stack's own (``names.stack_scoped``), since a release name is unique per namespace and a
    second stack installing ``nvidia-device-plugin`` into kube-system fails "cannot re-use a name
    that is still in use" (helm/helm pkg/action/install.go availableName). The chart names its
    DaemonSet, ConfigMap and RBAC after the release (templates/_helpers.tpl fullname).
    """

    release: str
    chart: str
    version: str
    repo: str
    namespace: str
    values: Mapping[str, Any]
    # Pools whose node groups the release waits for: on a shared cluster its DaemonSet requires
    # the stack label, which a running group gets in the same deploy (UpdateNodegroupConfig
    # writes it onto the running nodes); changed first, the DaemonSet would leave those nodes
    # without a device plugin until the label lands.
    after_pools: tuple[str, ...] = ()


def _release(
    chart: Pin, release: str, values: Mapping[str, Any], waits_for: Sequence[str]
) -> DevicePluginPlan:
    """One device-plugin release of a pinned chart (``pins.csv``) into kube-system."""
    return DevicePluginPlan(
        release=release,
        chart=chart.chart,
        version=chart.version,
        repo=chart.repo,
        namespace=NAMESPACE,
        values=values,
        after_pools=tuple(sorted(waits_for)),
    )


def plan_device_plugin(
    pool_label: str,
    pools: Sequence[str],
    taints: Sequence[Taint],
    sharing: Sequence[SharingSpec],
    *,
    release: str = CHART_NAME,
    stack: Mapping[str, str] | None = None,
    data_dir: Path,
) -> DevicePluginPlan | None:
    """The chart for the GPU pools ``pools`` (selected by ``pool_label``), or ``None`` if none,
    at the version the catalog of ``data_dir`` pins.

    Args:
        pool_label: the node label naming a node's pool.
        pools: pools whose nodes need the chart (AL2023 NVIDIA groups).
        taints: every taint on those pools (each tolerated, beside the chart's defaults).
        sharing: the pools' time-slicing setups; each becomes a named config that nodes pick by
            ``nvidia.com/device-plugin.config`` (same keys and files as the GPU Operator's).
        release: the Helm release name (``DevicePluginPlan.release``).
        stack: the stack label of a shared cluster (``neighbours.stack_node_labels``), required
            beside the pool label: another stack's pool of the same name runs its own plugin.
    """
    if not pools:
        return None
    # One term, every requirement ANDed (core/v1 NodeSelectorTerm; terms would be ORed).
    match = [{"key": pool_label, "operator": "In", "values": sorted(pools)}]
    match += [{"key": k, "operator": "In", "values": [v]} for k, v in (stack or {}).items()]
    tolerations = [dict(t) for t in DEFAULT_TOLERATIONS]
    for t in taints:
        tol = t.toleration()
        if tol not in tolerations and not (t.key == "nvidia.com/gpu" and t.effect == "NoSchedule"):
            tolerations.append(tol)
    values: dict[str, Any] = {
        # Only the chosen pools' nodes (the chart's default affinity would also match
        # Bottlerocket nodes, which already run a device plugin).
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": match}]
                }
            }
        },
        "tolerations": tolerations,
        # AL2023 nodes accept only volume-mount device lists from unprivileged containers
        # (infra.core.eks.bootstrap); the plugin itself then needs privileged to see the GPUs.
        "deviceListStrategy": DEVICE_LIST_STRATEGY,
        "securityContext": {"privileged": True},
    }
    if sharing:
        configs = {DEFAULT_CONFIG: yaml.safe_dump({"version": "v1"}, sort_keys=False)}
        for spec in sharing:
            configs[sharing_config_key(spec)] = yaml.safe_dump(
                time_slicing_config(spec), sort_keys=False
            )
        # Nodes pick their config by the nvidia.com/device-plugin.config label; unlabelled
        # nodes get the default (chart values.yaml "config").
        values["config"] = {"map": configs, "default": DEFAULT_CONFIG}
    return _release(pin(CHART_PIN, data_dir), release, values, pools if stack else ())


# AWS's EFA device plugin advertises vpc.amazonaws.com/efa, which pods of an hpc pool request to
# use the EFA interfaces ("Run machine learning training on Amazon EKS with Elastic Fabric
# Adapter", https://docs.aws.amazon.com/eks/latest/userguide/node-efa.html): pins.csv row
# aws-efa-k8s-device-plugin. Its default tolerations are empty, so the GPU taint and the pools'
# taints are added.
EFA_CHART_PIN = "aws-efa-k8s-device-plugin"
EFA_CHART_NAME = pin(EFA_CHART_PIN, DATA_DIR).chart


def plan_efa_device_plugin(
    pool_label: str,
    pools: Sequence[str],
    taints: Sequence[Taint],
    *,
    release: str = EFA_CHART_NAME,
    stack: Mapping[str, str] | None = None,
    data_dir: Path,
) -> DevicePluginPlan | None:
    """The EFA device plugin for the hpc pools ``pools``, or ``None`` if there are none
    (``stack``, ``data_dir``: as in ``plan_device_plugin``)."""
    if not pools:
        return None
    tolerations: list[dict[str, str]] = []
    for t in taints:
        tol = t.toleration()
        if tol not in tolerations:
            tolerations.append(tol)
    values: dict[str, Any] = {
        "tolerations": tolerations,
        # The chart builds its node affinity from supportedInstanceLabels (keys x values) and
        # ignores an `affinity` value (aws/eks-charts stable/aws-efa-k8s-device-plugin/
        # templates/daemonset.yaml); one key, the pool label, with the hpc pools as values.
        "supportedInstanceLabels": {"keys": [pool_label], "values": sorted(pools)},
    }
    if stack:
        # Each key there is a nodeSelectorTerm of its own (ORed), so the stack label goes in the
        # chart's nodeSelector, which the pod must match as well (same template @ 5239609, the
        # pinned v0.5.30).
        values["nodeSelector"] = dict(stack)
    return _release(pin(EFA_CHART_PIN, data_dir), release, values, pools if stack else ())


__all__ = [
    "DEVICE_PLUGIN_CONFIG_LABEL",
    "DevicePluginPlan",
    "plan_device_plugin",
    "plan_efa_device_plugin",
]
