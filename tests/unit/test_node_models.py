"""Each receiver's node model against the receiver's own numbers: its source's test vectors and
published measurements of real nodes, never values computed by the function under test."""

from __future__ import annotations

import functools
import math
from pathlib import Path
from typing import Any

import pytest

from infra.core.catalog.vendored import DATA_DIR
from infra.core.config.stack import load_stack_file, parse
from infra.core.eks import node_model as eks
from infra.core.eks.karpenter.nodes import karpenter_memory_mib
from infra.core.gke import node_model as gke
from infra.core.kubernetes.platform import declared_memory_mib, reported_capacity_mib
from infra.core.operator.daemonsets import daemonset_budget_mib
from infra.core.plan import build_plan
from infra.core.planned import Plan
from infra.core.pools import PoolHints
from infra.core.scheduling.proof import pool_nodes, prove

MIB, GIB = 2**20, 2**30

# kubernetes/autoscaler @ 55c37cd5 cluster-autoscaler/cloudprovider/gce/gce_reserved_test.go
# TestCalculateKernelReservedLinux: (physical memory, reserved before the correction term, OS).
# The test adds min(0.00175 x memory, 248 MiB) (+ 4 MiB on Ubuntu) to each expected value.
KERNEL_VECTORS = [
    (256 * MIB, 4 * MIB + 16 * MIB + 8 * MIB, "cos"),
    (2 * GIB, 32 * MIB + 16 * MIB + 8 * MIB, "cos"),
    (3 * GIB, 48 * MIB + 16 * MIB + 8 * MIB, "cos"),
    (int(3.25 * GIB), 52 * MIB + 16 * MIB + 64 * MIB + 8 * MIB, "cos"),
    (4 * GIB, 64 * MIB + 16 * MIB + 64 * MIB + 8 * MIB, "cos"),
    (128 * GIB, 2 * GIB + 16 * MIB + 64 * MIB, "ubuntu"),
    (3 * GIB, 48 * MIB + 16 * MIB + 8 * MIB, "ubuntu"),
    (4 * GIB, 64 * MIB + 16 * MIB + 64 * MIB + 8 * MIB, "ubuntu"),
]


@pytest.mark.parametrize(("memory", "base", "os"), KERNEL_VECTORS)
def test_gce_kernel_reserved_matches_the_autoscaler_test_vectors(memory, base, os):
    expected = base + int(min(0.00175 * memory, 248 * MIB)) + (4 * MIB if os == "ubuntu" else 0)
    assert gke.kernel_reserved(memory, os) == expected


# Measured GKE nodes (kubectl get node), 2i2c-org/infrastructure src/deployer/dev/commands/
# generate/resource_allocation/node-capacity-info.json: (machine, GiB, allocatable bytes).
# n1-highmem-4 from the file before 071e00e5 (2024-04-03) removed it; the rest @ 9ad7cd0f.
GKE_MEASURED = [
    ("n1-highmem-4", 26, 23_829_102_592),
    ("n2-highmem-4", 32, 29_779_155_746),
    ("n2-highmem-16", 128, 125_132_800_000),
    ("n2-standard-16", 64, 61_481_127_936),
    ("n2-standard-64", 256, 257_760_940_032),
]


@pytest.mark.parametrize(("machine", "gib", "measured"), GKE_MEASURED)
def test_gce_template_memory_is_at_most_measured_gke_allocatable_and_within_a_quarter_percent(
    machine, gib, measured
):
    model = gke.template_allocatable(gib, "COS_CONTAINERD")
    assert model <= measured, machine
    assert measured - model < 0.0025 * measured, machine


def test_gke_template_of_n1_highmem_4_is_the_kernel_kube_reserved_and_eviction_cut():
    # 26 GiB: kernel 26 GiB/64 + 16 MiB + 64 MiB (swiotlb) + 0.00175 x 26 GiB; GKE kube-reserved
    # 1 + 0.8 + 0.8 + 0.6 GiB (25/20/10/6 %); eviction 100 MiB.
    memory = 26 * GIB
    kernel = memory // 64 + 16 * MIB + 64 * MIB + int(0.00175 * memory)
    assert gke.template_allocatable(26, "COS_CONTAINERD") == (
        memory - kernel - int(3.2 * GIB) - 100 * MIB
    )


def test_nodeadm_max_pods_is_enis_times_ips_less_one_plus_two():
    # nodeadm eni_max_pods_test.go TestCalcMaxPods: 3 ENIs x 6 IPs -> 17, 6 x 12 -> 68.
    assert eks.eni_pods(3, 6) == 17
    assert eks.eni_pods(6, 12) == 68
    # g5.12xlarge: 15 ENIs x 50 IPs (nodeadm instance-info.jsonl) -> 737 pods.
    assert eks.eni_limited_pods("g5.12xlarge", DATA_DIR) == 737


# Measured EKS AL2023 nodes (2i2c node-capacity-info.json @ 9ad7cd0f): capacity - allocatable is
# nodeadm's kube-reserved for the ENI-limited maxPods plus the 100Mi eviction threshold.
# (type, ENIs, IPv4 per ENI from nodeadm instance-info.jsonl, capacity, allocatable).
EKS_MEASURED = [
    ("r5.xlarge", 4, 15, 33_163_589_976, 32_122_060_406),
    ("r5.4xlarge", 8, 30, 133_523_017_039, 130_451_041_681),
    ("r5.16xlarge", 15, 50, 535_122_860_310, 526_249_457_876),
]


@pytest.mark.parametrize(("t", "enis", "ips", "capacity", "allocatable"), EKS_MEASURED)
def test_nodeadm_reserve_is_what_measured_eks_nodes_hold_back(t, enis, ips, capacity, allocatable):
    reserved = eks.kube_reserved_mib(eks.eni_pods(enis, ips)) + eks.EVICTION_HARD_MIB
    assert math.floor((capacity - allocatable) / MIB) == reserved, t


def test_vm_overhead_model_is_below_measured_eks_capacity():
    # r5.xlarge (32 GiB) reports 33,163,589,976 B of capacity; 7.5 % off 32 GiB is less.
    assert eks.vm_memory_mib(32) * MIB < 33_163_589_976
    assert eks.vm_memory_mib(32) == 32768 - 2458


def test_karpenter_kube_reserved_on_al2023_follows_eni_pods_not_max_pods():
    # aws/karpenter-provider-aws @ 1d927085 pkg/providers/instancetype/suite_test.go: t3.large
    # (3 ENIs x 12 IPs) with maxPods 10 reserves "640Mi" on AL2023 (11 x 35 + 255), "365Mi" on
    # Bottlerocket (11 x 10 + 255).
    assert eks.kube_reserved_mib(eks.eni_pods(3, 12)) == 640
    assert eks.kube_reserved_mib(10) == 365


def test_karpenter_allocatable_of_g5_12xlarge_is_memory_less_overhead_eni_reserve_eviction():
    # 192 GiB = 196608 MiB - ceil(7.5 %) 14746 - (11 x 737 + 255) 8362 - 100 = 173400 MiB.
    assert karpenter_memory_mib("g5.12xlarge", 192, DATA_DIR) == 173400


def test_karpenter_graviton_memory_leaves_out_the_cma_area():
    # types.go memory(): arm64 types lose 64 MiB before the 7.5 % overhead.
    assert eks.vm_memory_mib(32, arm64=True) == (32768 - 64) - math.ceil((32768 - 64) * 0.075)


def test_types_not_on_file_take_the_most_eni_limited_pods_on_file_not_nodeadms_110():
    # nodeadm eni_max_pods.go GetInstanceInfo asks EC2 for a type not in instance-info.jsonl
    # (110 only if that fails) and Karpenter reads EC2: the real reserve may be the largest.
    # instance-info.jsonl @ 81fec2e8: g7.24xlarge, default card 24 ENIs x 64 IPv4 -> 1514 pods.
    assert eks.eni_limited_pods("g7.24xlarge", DATA_DIR) == 24 * (64 - 1) + 2
    assert eks.eni_limited_pods("x9.unknown", DATA_DIR) == 1514
    assert eks.nodeadm_allocatable_mib("x9.unknown", 256, DATA_DIR) == (
        eks.vm_memory_mib(256) - (11 * 1514 + 255) - 100
    )


# 2i2c-org/infrastructure @ 9ad7cd0f src/deployer/dev/commands/generate/resource_allocation/
# node-capacity-info.json: nominal GiB and the capacity.memory (bytes) each node reported.
MEASURED_LINUX_CAPACITY = {
    "r5.xlarge": (32, 33_163_589_976),
    "r5.2xlarge": (64, 66_681_921_536),
    "r5.4xlarge": (128, 133_523_017_039),
    "r5.16xlarge": (512, 535_122_860_310),
    "r7i.xlarge": (32, 33_089_273_856),
    "r7i.4xlarge": (128, 132_918_992_896),
    "n2-highmem-4": (32, 33_669_926_912),
    "n2-highmem-16": (128, 135_074_349_056),
    "n2-standard-16": (64, 67_428_651_008),
    "n4-standard-16": (64, 67_428_655_104),
    "n2-standard-64": (256, 270_450_806_784),
}


@pytest.mark.parametrize("machine", sorted(MEASURED_LINUX_CAPACITY))
def test_onprem_node_of_nominal_memory_reports_no_more_than_measured_linux_nodes(machine):
    gib, measured = MEASURED_LINUX_CAPACITY[machine]
    modelled = reported_capacity_mib(gib) * 2**20
    assert modelled <= measured
    # ... and not absurdly less: within 3 % of the nominal size.
    assert measured - modelled < 0.03 * gib * 2**30


def test_onprem_node_allocatable_is_its_reported_capacity_less_the_kubelet_eviction_threshold():
    h = PoolHints(
        name="gpu",
        gpu_type="T4",
        gpu_model="T4",
        gpus_per_node=1,
        vcpus=8,
        memory_gib=64,
        node_image="containerd",
        driver="preinstalled",
        node_selector={},
    )
    # 64 GiB: 1/64 memmap (1024 MiB), the 2.5 % margin (1638.4 MiB), then evictionHard 100Mi.
    assert declared_memory_mib(h) == int(65536 - 1024 - 1638.4) - 100


# --- whole-node guarantees on the modelled nodes, DaemonSets included ------------------------

ROOT = Path(__file__).resolve().parents[2]


@functools.cache
def _plan(name: str, **edits: Any) -> Plan:
    _, config = load_stack_file(ROOT / "stacks" / f"Pulumi.{name}.yaml")
    pool = config["gpu-infra:gpuPools"][-1]
    for key, value in edits.items():
        if value is None:
            pool.pop(key, None)
        else:
            pool[key] = value
    return build_plan(parse(config, name))


def _guarantees(plan: Plan) -> dict[str, int]:
    assert plan.operator is not None
    return {
        slug: int(p["kubespawner_override"]["mem_guarantee"].removesuffix("M"))
        for slug, p in plan.operator.jupyterhub_profiles.items()
    }


@pytest.mark.parametrize(
    ("stack", "edits"),
    [
        ("gke-t4", ()),
        ("gke-l4-spot", ()),
        ("gke-autocreate", ()),
        ("gke-a100-mig", (("gpu", None),)),
        ("eks-karpenter", (("machineType", "g5.12xlarge"),)),
        ("eks-karpenter", (("machineType", "p4d.24xlarge"),)),
        ("eks-karpenter", (("machineType", "p5.48xlarge"),)),
        ("eks-g4dn", ()),
        ("onprem-containerd", ()),
        ("onprem-vsphere-vgpu", ()),
        ("onprem-k3s-timeslicing", ()),
    ],
)
def test_whole_node_notebook_fits_every_modelled_node_of_its_target_with_the_daemonset_budget(
    stack, edits
):
    plan = _plan(stack, **dict(edits))
    assert prove(plan) == []
    assert plan.operator is not None
    budget = daemonset_budget_mib(plan.platform, plan.operator.release)
    assert budget >= plan.platform.system_daemonset_mib > 0
    nodes = pool_nodes(plan)
    for slug, mib in _guarantees(plan).items():
        members = [h.name for h in plan.pools if h.name == slug or slug in h.labels.values()]
        assert members, slug
        for m in members:
            pn = nodes[m]
            for node in (pn.running, pn.template, *pn.launchable):
                if node is not None:
                    assert mib * 2**20 <= node.allocatable["memory"], (slug, node.name)
                    # a whole-node notebook leaves at least 256 MiB beyond its DaemonSets (the
                    # proof's node is already net of the budget)
                    if "x " in plan.operator.jupyterhub_profiles[slug]["display_name"][:4]:
                        slack = node.allocatable["memory"] / 2**20 - mib
                        assert slack >= 256, (slug, node.name, slack)


def test_operator_operands_budget_is_their_requests_plus_the_nfd_worker():
    # gpu-operator chart values leave every operand's resources empty; the NFD subchart's worker
    # requests 64Mi (node-feature-discovery chart 0.19.0 values.yaml worker.resources).
    from infra.core.operator.daemonsets import operand_memory_mib
    from infra.core.operator.model import HelmRelease

    def release(values: dict[str, Any]) -> HelmRelease:
        return HelmRelease(
            version="v26.7.0", values=values, namespace="gpu-operator", reasons={}, timeout=600
        )

    assert operand_memory_mib(release({}), DATA_DIR) == 64
    override = {"devicePlugin": {"resources": {"requests": {"memory": "200Mi"}}}}
    assert operand_memory_mib(release(override), DATA_DIR) == 264
    assert operand_memory_mib(release({"nfd": {"enabled": False}}), DATA_DIR) == 0
    assert operand_memory_mib(None, DATA_DIR) == 0


def test_daemonset_budget_counts_the_daemonsets_the_stacks_themselves_turn_on():
    from infra.core.nodes import daemonset_memory_mib

    # aws/eks-node-monitoring-agent values.yaml nodeAgent.resources.requests.memory 30Mi (an
    # add-on of every created EKS cluster, tolerating every taint), on top of the measured 250.
    assert daemonset_memory_mib("eks", DATA_DIR) == 250 + 30
    # aws/eks-pod-identity-agent values.yaml resources: {} -- no request.
    assert daemonset_memory_mib("eks-pod-identity", DATA_DIR) == 0
    # GoogleCloudPlatform/prometheus-engine values.global.yaml: collector 32M + config-reloader
    # 4M = 36,000,000 B, 35 MiB rounded up; on top of the measured 656 and the device plugin's 50.
    assert daemonset_memory_mib("gke", DATA_DIR) == 656 + 50 + math.ceil(36e6 / 2**20)
