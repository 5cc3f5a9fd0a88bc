"""The scheduling proof: every pod the project emits or describes (JupyterHub, Kubeflow, Flyte,
the Kubernetes Pod/Job, the smoke test) fits the node the cluster-autoscaler imagines at zero,
the running node and the namespace quota, for every sample stack and a matrix of pool shapes;
and a broken label, toleration or advertised resource makes it fail."""

from __future__ import annotations

import copy
import functools
import itertools
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from infra.core.config.stack import load_stack_file, parse
from infra.core.errors import ConfigErrors
from infra.core.plan import Plan, build_plan
from infra.core.scheduling.proof import count_pairs, pool_nodes, prove
from tests.unit.operator_fixtures import CLUSTERS

STACKS = sorted(Path(__file__).resolve().parents[2].joinpath("stacks").glob("Pulumi.*.yaml"))


@functools.cache
def sample(path: Path) -> Plan:
    name, raw = load_stack_file(path)
    return build_plan(parse(raw, name))


@pytest.mark.parametrize("path", STACKS, ids=lambda p: p.stem.removeprefix("Pulumi."))
def test_every_workload_of_every_sample_stack_lands_from_zero_and_running(path: Path):
    plan = sample(path)
    assert count_pairs(plan) > 0
    assert prove(plan) == []


# --------------------------------------------------------------------------------------------------
# The generated matrix: pool shape x sharing x minimum x spot, per platform

_PROVIDERS: dict[str, dict[str, Any]] = {
    "gke": {"gcp:project": "demo-project", "gcp:region": "us-central1"},
    "eks": {"aws:region": "us-west-2"},
    "kubernetes": {},
}
_ONPREM = {"machineType": "server", "nodeSelector": {"gpu-infra/pool": "p"}, "nodes": ["n1"]}
# (platform, shape, pool keys, MIG configs: smallest, one-per-GPU with media engine, large)
_SHAPES: list[tuple[str, str, dict[str, Any], tuple[str, str, str] | None]] = [
    ("gke", "t4", {"machineType": "n1-highmem-8", "gpu": {"type": "nvidia-tesla-t4"}}, None),
    ("gke", "l4x2", {"machineType": "g2-standard-24"}, None),
    (
        "gke",
        "a100",
        {"machineType": "a2-highgpu-1g"},
        ("all-1g.5gb", "all-1g.5gb.me", "all-4g.20gb"),
    ),
    (
        "gke",
        "a100x8",
        {"machineType": "a2-highgpu-8g"},
        ("all-1g.10gb", "all-1g.5gb.me", "all-7g.40gb"),
    ),
    (
        "gke",
        "h100",
        {"machineType": "a3-highgpu-8g"},
        ("all-1g.10gb", "all-1g.10gb.me", "all-4g.40gb"),
    ),
    (
        "gke",
        "l4-class",  # a ComputeClass: the pool, then a T4 fallback
        {
            "machineType": "g2-standard-8",
            "fallback": [{"machineType": "n1-standard-8", "gpu": {"type": "nvidia-tesla-t4"}}],
        },
        None,
    ),
    ("eks", "g4dn", {"machineType": "g4dn.xlarge"}, None),
    ("eks", "p5-hpc", {"machineType": "p5.48xlarge", "hpc": True, "zones": ["usw2-az2"]}, None),
    ("eks", "g5x12", {"machineType": "g5.12xlarge"}, None),
    (
        "eks",
        "p4d",
        {"machineType": "p4d.24xlarge"},
        ("all-1g.10gb", "all-1g.5gb.me", "all-4g.20gb"),
    ),
    ("eks", "p5", {"machineType": "p5.48xlarge"}, ("all-1g.10gb", "all-1g.10gb.me", "all-7g.80gb")),
    (
        "kubernetes",
        "t4",
        {**_ONPREM, "gpu": {"model": "T4"}, "vcpus": 8, "memoryGib": 32},
        None,
    ),
    (
        "kubernetes",
        "a100",
        {**_ONPREM, "gpu": {"model": "A100-40GB", "count": 8}, "vcpus": 96, "memoryGib": 1024},
        ("all-1g.5gb", "all-1g.5gb.me", "all-3g.20gb"),
    ),
]


def _sharing(mig: tuple[str, str, str] | None) -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = [
        ("whole", {}),
        ("time-slicing", {"sharing": {"replicas": 4}}),
        ("time-slicing-renamed", {"sharing": {"replicas": 4, "renameByDefault": True}}),
    ]
    if mig is not None:
        small, me, large = mig
        out += [
            ("mig-single-small", {"mig": {"strategy": "single", "config": small}}),
            ("mig-single-large", {"mig": {"strategy": "single", "config": large}}),
            ("mig-mixed-small", {"mig": {"strategy": "mixed", "config": small}}),
            ("mig-mixed-me", {"mig": {"strategy": "mixed", "config": me}}),
            ("mig-mixed-balanced", {"mig": {"strategy": "mixed", "config": "all-balanced"}}),
        ]
    return out


def _matrix() -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    for platform, shape, keys, mig in _SHAPES:
        for (how, sharing), min_nodes, spot in itertools.product(_sharing(mig), (0, 1), (0, 1)):
            if platform == "kubernetes" and (min_nodes == 0 or spot):
                continue  # no autoscaler, no spot on-prem
            pool = {"name": "p", **copy.deepcopy(keys), **sharing, "minNodes": min_nodes}
            pool.update({"maxNodes": 3, "smokeTest": True, **({"spot": True} if spot else {})})
            pool["warm"] = 2  # the warm placeholders must land on every shape too
            raw = {
                **_PROVIDERS[platform],
                "gpu-infra:platform": platform,
                "gpu-infra:cluster": CLUSTERS[platform],
                "gpu-infra:gpuPools": [pool],
                "gpu-infra:gpuOperator": {},
                "gpu-infra:gpuNamespaces": [{"name": "team", "gpus": 4}],
            }
            name = f"{platform}/{shape}/{how}/min{min_nodes}/{'spot' if spot else 'on-demand'}"
            out.append((name, raw))
    return out


@functools.cache
def _matrix_results() -> dict[str, Plan | dict[str, str]]:
    out: dict[str, Plan | dict[str, str]] = {}
    for name, raw in _matrix():
        try:
            out[name] = build_plan(parse(raw, "matrix"))
        except ConfigErrors as e:
            out[name] = {i.path: i.reason for i in e.issues}
    return out


def test_matrix_proves_at_least_200_pool_shape_workload_pairs_and_every_one_lands():
    plans = {n: p for n, p in _matrix_results().items() if isinstance(p, Plan)}
    assert sum(count_pairs(p) for p in plans.values()) >= 200
    findings = {n: f for n, p in plans.items() if (f := prove(p))}
    assert findings == {}


def test_matrix_refuses_only_gke_shapes_leaving_nvidia_gpu_at_zero_or_miscounted_naming_the_key():
    results = _matrix_results()
    refused = {n: r for n, r in results.items() if isinstance(r, dict)}
    for name, reasons in refused.items():
        platform, _, how, _, _ = name.split("/")
        assert platform == "gke", name
        if how == "time-slicing-renamed" or "mig-mixed" in how:
            key = "renameByDefault" if how == "time-slicing-renamed" else "strategy"
        else:
            # The GCE template counts physical GPUs, the operator's slots differ: a pool that may
            # have a zone at zero (min0, a ComputeClass's fallback pools, or a minimum that
            # totalMinNodeCount spreads over the catalog's several zones).
            assert any("GCE autoscaler template" in r for r in reasons.values()), name
            assert how == "time-slicing" or "mig-single" in how, name
            key = "sharing" if how == "time-slicing" else "mig"
        assert any(path.endswith(key) for path in reasons), (name, reasons)
    # Running nodes carry cloud.google.com/gke-accelerator: refused at minNodes 1 too.
    zero_gpu = [n for n in results if n.startswith("gke/") and "/min1/" in n]
    zero_gpu = [n for n in zero_gpu if "time-slicing-renamed" in n or "mig-mixed" in n]
    assert zero_gpu and all(n in refused for n in zero_gpu)


def test_eks_mig_mixed_and_renamed_time_slicing_scale_from_zero():
    results = _matrix_results()
    for how in ("mig-mixed-small", "mig-mixed-me", "mig-mixed-balanced"):
        assert isinstance(results[f"eks/p4d/{how}/min0/on-demand"], Plan)
    assert isinstance(results["eks/g4dn/time-slicing-renamed/min0/on-demand"], Plan)


# --------------------------------------------------------------------------------------------------
# A broken seam fails the proof


def _eks(pool: dict[str, Any]) -> Plan:
    raw = {
        **_PROVIDERS["eks"],
        "gpu-infra:platform": "eks",
        "gpu-infra:cluster": CLUSTERS["eks"],
        "gpu-infra:gpuPools": [{"name": "p", "maxNodes": 3, "smokeTest": True, **pool}],
        "gpu-infra:gpuOperator": {},
    }
    return build_plan(parse(raw, "broken"))


def test_a_missing_node_label_makes_the_proof_fail():
    plan = sample(STACKS[[p.stem for p in STACKS].index("Pulumi.eks-g4dn")])
    nodes = pool_nodes(plan)
    name = next(iter(nodes))
    running = nodes[name].running
    labels = {k: v for k, v in running.labels.items() if k != "gpu-infra/pool"}
    broken = {**nodes, name: replace(nodes[name], running=replace(running, labels=labels))}
    findings = prove(plan, broken)
    assert findings and all("gpu-infra/pool" in f for f in findings)
    assert {f.split()[0] for f in findings} >= {"jupyterhub", "kubeflow", "kubernetes"}


def test_an_untolerated_taint_makes_the_proof_fail():
    plan = sample(STACKS[[p.stem for p in STACKS].index("Pulumi.gke-t4")])
    nodes = pool_nodes(plan)
    name = next(iter(nodes))
    template = nodes[name].template
    assert template is not None
    taints = (*template.taints, {"key": "dedicated", "value": "ml", "effect": "NoSchedule"})
    broken = {**nodes, name: replace(nodes[name], template=replace(template, taints=taints))}
    findings = prove(plan, broken)
    assert findings and all("untolerated taint dedicated=ml" in f for f in findings)


def test_a_template_advertising_gpus_instead_of_mig_slices_makes_the_proof_fail():
    # What the EKS template said before MIG counts came from mig-parted's table: 8 GPUs.
    plan = _eks(
        {"machineType": "p4d.24xlarge", "mig": {"strategy": "mixed", "config": "all-1g.10gb"}}
    )
    assert prove(plan) == []
    nodes = pool_nodes(plan)
    template = nodes["p"].template
    assert template is not None
    assert template.allocatable["nvidia.com/mig-1g.10gb"] == 32
    alloc = {k: v for k, v in template.allocatable.items() if not k.startswith("nvidia.com/mig-")}
    alloc["nvidia.com/gpu"] = Fraction(8)
    broken = {"p": replace(nodes["p"], template=replace(template, allocatable=alloc))}
    findings = prove(plan, broken)
    assert findings == [
        "p: template/p counts 0 nvidia.com/mig-1g.10gb per node, a running node 32: "
        + plan.platform.count_remedy
    ]


def test_eks_p4d_mixed_1g10gb_tags_the_mig_count_mig_parted_gives_and_no_gpu_label():
    plan = _eks(
        {"machineType": "p4d.24xlarge", "mig": {"strategy": "mixed", "config": "all-1g.10gb"}}
    )
    assert plan.platform.name == "eks"
    tags = plan.platform.plan.groups[0].asg_tags
    prefix = "k8s.io/cluster-autoscaler/node-template"
    assert tags[f"{prefix}/resources/nvidia.com/mig-1g.10gb"] == "32"  # 8 GPUs x 4
    assert tags[f"{prefix}/resources/nvidia.com/gpu"] == "0"
    assert not any(k.endswith("/label/k8s.amazonaws.com/accelerator") for k in tags)
    assert "k8s.amazonaws.com/accelerator" not in plan.platform.plan.groups[0].labels


def test_eks_mig_single_template_counts_slices_like_the_running_node():
    plan = _eks(
        {"machineType": "p4d.24xlarge", "mig": {"strategy": "single", "config": "all-1g.10gb"}}
    )
    nodes = pool_nodes(plan)["p"]
    assert nodes.template is not None
    assert (
        nodes.template.allocatable["nvidia.com/gpu"]
        == nodes.running.allocatable["nvidia.com/gpu"]
        == 32
    )


@pytest.mark.parametrize("min_nodes", [0, 1])
def test_gke_a2_highgpu_1g_operator_mig_mixed_at_any_min_is_a_config_error_naming_the_key(
    min_nodes,
):
    raw = {
        **_PROVIDERS["gke"],
        "gpu-infra:platform": "gke",
        "gpu-infra:cluster": CLUSTERS["gke"],
        "gpu-infra:gpuPools": [
            {
                "name": "p",
                "machineType": "a2-highgpu-1g",
                "minNodes": min_nodes,
                "maxNodes": 2,
                "mig": {"strategy": "mixed", "config": "all-1g.5gb"},
            }
        ],
    }
    with pytest.raises(ConfigErrors) as e:
        build_plan(parse(raw, "gke-mixed"))
    reasons = {i.path: i.reason for i in e.value.issues}
    reason = reasons["gpuPools[0].mig.strategy"]
    assert "'mixed'" in reason and "'all-1g.5gb'" in reason
    assert "cloud.google.com/gke-accelerator" in reason and "nvidia.com/gpu at 0" in reason


def test_a_gke_node_with_the_gce_gpu_label_and_no_nvidia_gpu_makes_the_proof_fail():
    # cluster-autoscaler's GCE GPULabel with 0 allocatable nvidia.com/gpu: an unready node.
    plan = sample(STACKS[[p.stem for p in STACKS].index("Pulumi.gke-t4")])
    assert prove(plan) == []
    nodes = pool_nodes(plan)
    name = next(iter(nodes))
    running = nodes[name].running
    assert "cloud.google.com/gke-accelerator" in running.labels
    alloc = {**running.allocatable, "nvidia.com/gpu": Fraction(0)}
    broken = {**nodes, name: replace(nodes[name], running=replace(running, allocatable=alloc))}
    assert any(
        f"{name}: carries cloud.google.com/gke-accelerator but advertises 0" in f
        for f in prove(plan, broken)
    )


@pytest.mark.parametrize("path", STACKS, ids=lambda p: p.stem.removeprefix("Pulumi."))
def test_flyte_output_of_every_sample_stack_names_only_labels_its_pools_carry(path: Path):
    plan = sample(path)
    if plan.operator is None:
        return
    nodes = pool_nodes(plan)
    for name, entry in plan.operator.integrations["flyte"]["pools"].items():
        for member in entry.get("pools", [name]):
            carried = nodes[member].running.labels
            assert {k: carried.get(k) for k in entry["nodeLabels"]} == entry["nodeLabels"]


def test_emitted_label_and_tag_keys_equal_the_upstream_strings_the_proof_reads():
    # The proof writes the autoscaler's and GKE's strings out from upstream (nodes.py); the code
    # that emits them keeps its own constants, so a typo there shows here and in the proof.
    from infra.core import labels
    from infra.core.eks import nodes as eks_nodes
    from infra.core.eks.autoscaler import TEMPLATE_PREFIX
    from infra.core.eks.platform import eks_features
    from infra.core.gke import nodes as gke_nodes
    from infra.core.gke.platform import FEATURES as GKE

    assert f"{TEMPLATE_PREFIX}/label/" == eks_nodes.CA_TEMPLATE_LABEL
    assert f"{TEMPLATE_PREFIX}/taint/" == eks_nodes.CA_TEMPLATE_TAINT
    assert f"{TEMPLATE_PREFIX}/resources/" == eks_nodes.CA_TEMPLATE_RESOURCES
    assert labels.GKE_ACCELERATOR_LABEL == gke_nodes.GCE_GPU_LABEL == GKE.autoscaler_gpu_label
    assert labels.GKE_NODEPOOL_LABEL == gke_nodes.GKE_NODEPOOL
    eks = eks_features(
        sample(next(p for p in STACKS if p.stem == "Pulumi.eks-g4dn")).config.cluster
    )
    assert labels.EKS_ACCELERATOR_LABEL == eks_nodes.AWS_GPU_LABEL == eks.autoscaler_gpu_label


def test_flyte_says_a_karpenter_pools_labels_come_from_its_nodepool_template_which_carries_them():
    plan = sample(next(p for p in STACKS if p.stem == "Pulumi.eks-karpenter"))
    assert plan.operator is not None and plan.platform.name == "eks"
    pools = plan.operator.integrations["flyte"]["pools"]
    for g in plan.platform.plan.groups:
        assert g.karpenter is not None
        entry = pools[g.name]
        assert entry["labelledBy"] == "the Karpenter NodePool's template labels (gpu-infra)"
        template = g.karpenter.node_pool["spec"]["template"]["metadata"]["labels"]
        assert entry["nodeLabels"] and entry["nodeLabels"].items() <= template.items()
    plain = sample(next(p for p in STACKS if p.stem == "Pulumi.eks-g4dn"))
    assert plain.operator is not None
    assert all(
        e["labelledBy"] == "the node group's labels (gpu-infra)"
        for e in plain.operator.integrations["flyte"]["pools"].values()
    )


def test_jupyterhub_memory_guarantee_is_read_as_kubespawner_reads_it_in_powers_of_1024():
    # jupyterhub/traitlets.py ByteSpecification: "K", "M", "G", "T" multiply by 1024**n, so
    # "47249M" asks the pod for 47249 MiB, not 47249 MB.
    from infra.core.scheduling.workloads import byte_specification

    assert byte_specification("47249M") == 47249 * 2**20
    assert byte_specification("1.5G") == int(1.5 * 2**30)
    assert byte_specification(1000) == 1000
