"""GPU Operator plan: sharing, tolerations, GPU namespaces, smoke tests, hints, on-prem pools.

MIG and the sample stacks' plans (golden values, schema validity) are in the sibling modules.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
import yaml

from infra.core.catalog.pins import pin
from infra.core.catalog.vendored import DATA_DIR
from infra.core.config.stack import parse
from infra.core.errors import ConfigErrors
from infra.core.labels import GKE_COMPUTE_CLASS_LABEL
from infra.core.operator import (
    DEVICE_PLUGIN_CONFIG_LABEL,
    DEVICE_PLUGIN_CONFIGMAP,
    OperatorPlan,
)
from infra.core.operator.helm_values import chart_defaults
from infra.core.plan import build_plan
from infra.core.pools import PoolGroup, Taint
from tests.conftest import GKE_GPU_TOLERATION, gke_config
from tests.unit.operator_fixtures import (
    errors,
    hints_for,
    plan,
    stack,
)
from tests.unit.operator_workloads_fixtures import A100

# The chart version a stack naming none gets (pins.csv row gpu-operator).
DEFAULT_OPERATOR_VERSION = pin("gpu-operator", DATA_DIR).version


def cm_data(op: OperatorPlan) -> dict[str, Any]:
    (cm,) = [m for m in op.before_release if m["kind"] == "ConfigMap"]
    return {k: yaml.safe_load(v) for k, v in cm["data"].items()}


# --- time-slicing -----------------------------------------------------------------------------------


def test_time_slicing_builds_the_device_plugin_configmap_and_pool_label():
    op = plan(stack("kubernetes", [{"sharing": {"strategy": "time-slicing", "replicas": 4}}]))
    assert op.release is not None
    (cm,) = [m for m in op.before_release if m["kind"] == "ConfigMap"]
    # The release names the ConfigMap the plan registers (its name carries its data's hash).
    assert op.release.values["devicePlugin"] == {"config": {"name": cm["metadata"]["name"]}}
    assert cm["metadata"]["name"].startswith(f"{DEVICE_PLUGIN_CONFIGMAP}-")
    assert cm_data(op) == {
        "time-slicing-4": {
            "version": "v1",
            "sharing": {
                "timeSlicing": {
                    "renameByDefault": False,
                    "failRequestsGreaterThanOne": True,
                    "resources": [{"name": "nvidia.com/gpu", "replicas": 4}],
                }
            },
        }
    }
    (cm,) = [m for m in op.before_release if m["kind"] == "ConfigMap"]
    assert cm["metadata"]["namespace"] == op.namespace  # the operator ignores other namespaces
    (nl,) = op.node_labels
    assert nl.nodes == ("node-1",)
    # The pool's selector too: workloads select on it and the proof assumes the nodes carry it.
    assert nl.labels == {
        DEVICE_PLUGIN_CONFIG_LABEL: "time-slicing-4",
        "gpu-infra/accelerator": "nvidia-tesla-t4",
        "gpu-infra/pool": "gpu",
    }


def test_pools_with_different_replicas_get_one_configmap_key_each():
    cfg = stack(
        "kubernetes",
        [
            {"name": "a", "sharing": {"replicas": 2}},
            {"name": "b", "nodes": ["node-2"], "sharing": {"replicas": 8}},
            {"name": "c", "nodes": ["node-3"]},
        ],
    )
    op = plan(cfg)
    assert sorted(cm_data(op)) == ["time-slicing-2", "time-slicing-8"]
    labels = {nl.pool: nl.labels for nl in op.node_labels}
    # c shares nothing: its selector and the accelerator label Flyte's device selector reads
    assert labels["c"] == {**cfg.pools[2].node_selector, "gpu-infra/accelerator": "nvidia-tesla-t4"}
    assert labels["b"]["nvidia.com/device-plugin.config"] == "time-slicing-8"


GKE_TIME_SHARING = {
    "type": "nvidia-tesla-t4",
    "sharing": {"strategy": "time-sharing", "maxSharedClientsPerGpu": 2},
}


def test_gke_sharing_and_operator_sharing_are_never_both_on():
    cfg = stack("gke", [{"sharing": {"replicas": 2}, "gpu": GKE_TIME_SHARING}])
    errs = errors(cfg, hints_for(cfg))
    assert "not both" in errs["gpuPools[0].sharing"]


def test_bottlerocket_rejects_operator_time_slicing():
    cfg = stack("eks", [{"sharing": {"replicas": 2}}])
    errs = errors(cfg, hints_for(cfg, node_image="BOTTLEROCKET_x86_64_NVIDIA"))
    assert "Bottlerocket" in errs["gpuPools[0].sharing"]


def test_cloud_pool_missing_the_operator_label_is_reported():
    cfg = stack("gke", [{"sharing": {"replicas": 2}}])
    errs = errors(cfg, hints_for(cfg, labels={}))
    assert DEVICE_PLUGIN_CONFIG_LABEL in errs["gpuPools[0].labels"]


def test_onprem_sharing_needs_node_names_or_an_existing_label():
    with pytest.raises(ConfigErrors) as e:
        build_plan(stack("kubernetes", [{"nodes": [], "sharing": {"replicas": 2}}]))
    assert [i.path for i in e.value.issues] == ["gpuPools[0].nodes"]
    labelled = {"labels": {DEVICE_PLUGIN_CONFIG_LABEL: "time-slicing-2"}}
    ok = build_plan(stack("kubernetes", [{"nodes": [], "sharing": {"replicas": 2}, **labelled}]))
    assert ok.operator is not None and ok.operator.node_labels == ()


# --- tolerations ------------------------------------------------------------------------------------


def test_operands_and_nfd_worker_tolerate_every_custom_gpu_taint():
    taints = [
        {"key": "dedicated", "value": "ml", "effect": "NoSchedule"},
        {"key": "sku", "value": "gpu", "effect": "NoExecute"},
    ]
    op = plan(stack("kubernetes", [{"taints": taints}]))
    assert op.release is not None
    v = op.release.values
    for path in ("daemonsets.tolerations", "node-feature-discovery.worker.tolerations"):
        head, tail = path.rsplit(".", 1)
        node: Any = v
        for part in head.split("."):
            node = node[part]
        got = node[tail]
        default: Any = chart_defaults(DEFAULT_OPERATOR_VERSION)
        for part in path.split("."):
            default = default[part]
        assert got[: len(default)] == default  # the list replaces the chart's: keep its entries
        assert {"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"} in got
        assert {"key": "sku", "operator": "Exists", "effect": "NoExecute"} in got


def test_the_default_gpu_taint_needs_no_toleration_override():
    op = plan(stack("gke"))  # nvidia.com/gpu=present:NoSchedule is covered by the chart default
    assert op.release is not None
    assert "daemonsets" not in op.release.values


def test_a_gpu_taint_with_another_effect_is_added():
    cfg = stack("gke")
    op = plan(cfg, hints_for(cfg, taints=(Taint("nvidia.com/gpu", "present", "NoExecute"),)))
    assert op.release is not None
    assert {
        "key": "nvidia.com/gpu",
        "operator": "Exists",
        "effect": "NoExecute",
    } in op.release.values["daemonsets"]["tolerations"]


# --- namespaces, smoke tests, hints --------------------------------------------------------------


def test_gpu_namespace_quotas_use_requests_only_as_kubernetes_allows_for_extended_resources():
    op = plan(stack("kubernetes", namespaces=[{"name": "team-a", "gpus": 3}]))
    ns, quota = op.after_release
    assert ns["kind"] == "Namespace" and ns["metadata"]["name"] == "team-a"
    assert quota["spec"]["hard"] == {"requests.nvidia.com/gpu": "3"}


def test_gpu_namespace_gpus_is_a_quota_of_n_for_each_gpu_resource_name_and_says_so():
    pools = [
        {"name": "mig", "minNodes": 1, "mig": {"strategy": "mixed", "config": "all-2g.10gb"}},
        {"name": "ts", "minNodes": 1, "sharing": {"replicas": 2, "renameByDefault": True}},
    ]
    cfg = stack("eks", pools, namespaces=[{"name": "team-a", "gpus": 3}])
    a, b = hints_for(cfg, **A100)
    op = plan(cfg, (a, replace(b, min_nodes=1)))
    (quota,) = [m for m in op.after_release if m["kind"] == "ResourceQuota"]
    hard = quota["spec"]["hard"]
    assert not any(k.startswith("limits.") for k in hard)
    assert {"requests.nvidia.com/gpu", "requests.nvidia.com/gpu.shared"} <= set(hard)
    assert {f"requests.nvidia.com/mig-{p}" for p in ("1g.5gb", "1g.5gb.me", "7g.40gb")} <= set(hard)
    # gpus: N is N of each name, not N in total; the quota says so.
    assert set(hard.values()) == {"3"}
    meaning = quota["metadata"]["annotations"]["gpu-infra/gpus-per-resource-name"]
    assert "each GPU resource name separately" in meaning and "not 3 in total" in meaning


def test_gpu_namespace_may_not_be_the_operator_namespace():
    cfg = stack("kubernetes", namespaces=[{"name": "gpu-operator", "gpus": 1}])
    assert "gpuNamespaces[0].name" in errors(cfg)


def test_gke_fallback_pools_follow_their_main_pool_entry():
    cfg = stack("gke", [{"sharing": {"replicas": 2}, "smokeTest": True}])
    (own,) = hints_for(cfg)
    # As GKE binds them (infra.core.gke.pools): one ComputeClass named after the gpuPools entry.
    taint = Taint(GKE_COMPUTE_CLASS_LABEL, "gpu")
    group = PoolGroup("gpu", {GKE_COMPUTE_CLASS_LABEL: "gpu"}, taint)
    labels = {**own.labels, GKE_COMPUTE_CLASS_LABEL: "gpu"}
    main = replace(own, labels=labels, taints=(*own.taints, taint), spec="gpu", group=group)
    fb = replace(main, name="gpu-0a12e4")
    op = plan(cfg, (main, fb))
    assert op.scheduling["gpu-0a12e4"]["timeSlicingReplicas"] == 2
    jobs = [
        m["metadata"]["labels"]["gpu-infra/pool"] for m in op.after_release if m["kind"] == "Job"
    ]
    assert jobs == ["gpu"]  # one Job per ComputeClass
    assert list(op.integrations["kubernetes"]) == ["gpu"]  # one workload per class
    fb_operator_driver = replace(fb, driver="operator", node_image="UBUNTU_CONTAINERD")
    assert "gpuPools[0].gpu.driver" in errors(cfg, (main, fb_operator_driver))


def test_gpu_namespace_may_not_be_a_reserved_kube_namespace():
    cfg = stack("kubernetes", namespaces=[{"name": "kube-gpu", "gpus": 1}])
    assert "reserved" in errors(cfg)["gpuNamespaces[0].name"]


def test_smoke_test_job_only_for_pools_that_opt_in():
    cfg = stack("gke", [{"name": "a", "smokeTest": True}, {"name": "b"}])
    op = plan(cfg)
    (job,) = [m for m in op.after_release if m["kind"] == "Job"]
    spec = job["spec"]
    pod = spec["template"]["spec"]
    assert job["metadata"]["name"].startswith("smoke-a-")
    assert pod["nodeSelector"] == op.scheduling["a"]["nodeSelector"]
    assert pod["tolerations"] == op.scheduling["a"]["tolerations"]
    (c,) = pod["containers"]
    assert c["command"] == ["nvidia-smi"]
    assert c["resources"]["limits"] == {"nvidia.com/gpu": "1"}
    assert c["image"].startswith("nvcr.io/nvidia/cuda:") and ":latest" not in c["image"]


def test_scheduling_hints_carry_the_cloud_accelerator_label_and_gpu_toleration():
    cfg = stack("gke")
    hints = plan(cfg).scheduling["gpu"]
    assert hints["nodeSelector"]["cloud.google.com/gke-accelerator"] == "nvidia-tesla-t4"
    assert GKE_GPU_TOLERATION in hints["tolerations"]
    eks = stack("eks")
    h = hints_for(eks, labels={"k8s.amazonaws.com/accelerator": "nvidia-tesla-t4"})
    assert (
        plan(eks, h).scheduling["gpu"]["nodeSelector"]["k8s.amazonaws.com/accelerator"]
        == "nvidia-tesla-t4"
    )


def test_jupyterhub_profile_matches_seed_000_shape():
    cfg = stack("eks")
    (h,) = hints_for(cfg)
    profile = plan(
        cfg, (replace(h, gpus_per_node=4, vcpus=48, memory_gib=192.0),)
    ).jupyterhub_profiles["gpu"]
    # The GPUs, the memory guarantee and the CPUs it gets: nodeadm's node of 192 GiB (196608 MiB
    # - ceil(7.5 %) 14746 - kube-reserved for g4dn.xlarge's 29 ENI pods 574 - eviction 100 =
    # 181188) less EKS's DaemonSets' 250 MiB, the node monitoring agent's 30 MiB, the operator's
    # NFD worker's 64 MiB and the 1 % headroom 1812 MiB = 179032 MiB = 174.8 GiB.
    assert profile["display_name"] == "4x NVIDIA T4, 174.8 GiB RAM, 48 vCPUs - gpu"
    k = profile["kubespawner_override"]
    assert k["environment"] == {"NVIDIA_DRIVER_CAPABILITIES": "compute,utility"}
    assert k["extra_resource_limits"] == {"nvidia.com/gpu": "4"}
    assert k["node_selector"] == {"eks.amazonaws.com/nodegroup": "gpu"}


def test_shared_pool_profile_asks_for_one_replica():
    op = plan(
        stack("kubernetes", [{"gpu": {"model": "T4", "count": 2}, "sharing": {"replicas": 4}}])
    )
    assert op.jupyterhub_profiles["gpu"]["kubespawner_override"]["extra_resource_limits"] == {
        "nvidia.com/gpu": "1"
    }


def test_onprem_pools_must_agree_on_the_driver_source():
    cfg = stack(
        "kubernetes",
        [
            {"name": "a"},
            {
                "name": "b",
                "nodes": ["node-2"],
                "driver": "preinstalled",
                "nodeSelector": {"gpu-infra/pool": "b"},
            },
        ],
    )
    with pytest.raises(ConfigErrors) as e:
        build_plan(cfg)
    assert [i.path for i in e.value.issues] == ["gpuPools[1].driver"]


def test_onprem_node_in_two_pools_is_rejected_at_its_second_listing():
    b = {"name": "b", "nodes": ["node-2", "node-1"], "nodeSelector": {"gpu-infra/pool": "b"}}
    cfg = stack("kubernetes", [{"name": "a"}, b])
    with pytest.raises(ConfigErrors) as e:
        build_plan(cfg)
    assert [(i.path, i.reason.split(";")[0]) for i in e.value.issues] == [
        ("gpuPools[1].nodes[1]", "node-1 is already in pool a")
    ]


def test_onprem_preinstalled_drivers_turn_the_operator_driver_off():
    op = build_plan(stack("kubernetes", [{"driver": "preinstalled"}])).operator
    assert op is not None and op.release is not None
    assert op.release.values["driver"] == {"enabled": False}
    assert op.release.reasons["driver.enabled"].startswith("preset containerd:")


def test_gke_critical_pod_quota_counts_the_stated_cpu_nodes_of_an_existing_cluster():
    cluster = {"name": "prod", "location": "us-central1", "existing": True}
    wide = {"clusterWide": True}
    with pytest.raises(ConfigErrors) as e:
        build_plan(parse(gke_config(cluster=cluster, gpuOperator=wide), "shared"))
    assert "cluster.cpuNodes" in {i.path for i in e.value.issues}

    def sizing(cpu_nodes: int) -> str:
        raw = gke_config(cluster={**cluster, "cpuNodes": cpu_nodes}, gpuOperator=wide)
        p = build_plan(parse(raw, "shared"))
        assert p.operator is not None
        (q,) = [m for m in p.operator.before_release if m["kind"] == "ResourceQuota"]
        return q["metadata"]["annotations"]["gpu-infra/sizing"]

    assert "+ 12 CPU-node NFD workers" in sizing(12)
    assert "+ 40 CPU-node NFD workers" in sizing(40)


def test_a_gpu_quota_the_node_setup_cannot_enforce_says_so_on_the_quota_and_in_the_plan():
    ns = [{"name": "team-a", "gpus": 2}]
    off = plan(stack("kubernetes", operator={"enabled": False}, namespaces=ns))
    (quota,) = [m for m in off.after_release if m["kind"] == "ResourceQuota"]
    assert (
        "a CUDA image there sees every GPU"
        in quota["metadata"]["annotations"]["gpu-infra/not-enforced"]
    )
    assert any(n.startswith("gpuNamespaces: the GPU quotas do not bind") for n in off.notes)
    # The stack itself re-opening the env-var path: nvidia as default runtime and the toolkit told
    # to honour NVIDIA_VISIBLE_DEVICES from unprivileged pods.
    env = {
        "NVIDIA_RUNTIME_SET_AS_DEFAULT": "true",
        "ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED": "true",
    }
    forced = plan(stack("kubernetes", operator={"toolkitEnv": env}, namespaces=ns))
    (quota,) = [m for m in forced.after_release if m["kind"] == "ResourceQuota"]
    gap = quota["metadata"]["annotations"]["gpu-infra/not-enforced"]
    assert gap.startswith("gpu: any pod (nvidia is, or may be, containerd's default runtime)")
    assert "sees every GPU of its node" in gap
    assert any(gap in n for n in forced.notes)


def test_gpu_quotas_on_isolated_node_setups_carry_no_not_enforced_mark():
    ns = [{"name": "team-a", "gpus": 2}]
    for platform in ("gke", "eks", "kubernetes"):
        op = plan(stack(platform, namespaces=ns))
        (quota,) = [m for m in op.after_release if m["kind"] == "ResourceQuota"]
        assert "gpu-infra/not-enforced" not in quota["metadata"]["annotations"], platform
        assert not any("do not bind" in n for n in op.notes)


@pytest.mark.parametrize("platform", ["gke", "eks"])
def test_operator_on_an_existing_cloud_cluster_is_refused_unless_it_may_manage_every_gpu_node(
    platform,
):
    cluster = {"existing": True, "cpuNodes": 3} if platform == "gke" else {"existing": True}
    if platform == "eks":
        cluster["vpc"] = {"privateSubnets": {"usw2-az1": "subnet-0aaaaaaa"}}
    refused = errors(stack(platform, cluster=cluster))
    assert "other teams' included" in refused["gpuOperator.clusterWide"]
    assert "gpuOperator.enabled: false" in refused["gpuOperator.clusterWide"]
    op = plan(stack(platform, cluster=cluster, operator={"clusterWide": True}))
    assert op.release is not None
    off = plan(stack(platform, cluster=cluster, operator={"enabled": False}))
    assert off.release is None


def test_device_plugin_configmap_name_follows_its_data_so_a_sharing_change_is_create_first():
    # pulumi-kubernetes replaces a ConfigMap whose data changes, delete-first under the same name
    # (provider.go Diff); the config-manager sidecar reacts to node label changes only.
    def name(replicas: int, rename: bool = False) -> str:
        sharing = {"strategy": "time-slicing", "replicas": replicas, "renameByDefault": rename}
        op = plan(stack("kubernetes", [{"sharing": sharing}]))
        (cm,) = [m for m in op.before_release if m["kind"] == "ConfigMap"]
        return cm["metadata"]["name"]

    assert name(4) == name(4)
    assert len({name(4), name(8), name(4, rename=True)}) == 3


def test_team_namespaces_are_retained_unless_their_entry_sets_delete_with_stack():
    ns = [{"name": "kept", "gpus": 1}, {"name": "scratch", "gpus": 1, "deleteWithStack": True}]
    cfg = stack("kubernetes", namespaces=ns)
    assert [n.delete_with_stack for n in cfg.namespaces] == [False, True]
    assert plan(cfg).deleted_with_stack == frozenset({"scratch"})
