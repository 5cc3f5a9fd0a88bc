"""Workload integrations (jupyterhub, kubeflow, flyte, kubernetes): generated from the pools' hints,
checked against each consumer's documented schema (keys and value shapes) on every sample stack."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from infra import plan as plan_cli
from infra.core.catalog.vendored import DATA_DIR
from infra.core.config.stack import parse, parse_file
from infra.core.errors import ConfigErrors
from infra.core.integrations import INTEGRATIONS
from infra.core.labels import POOL_LABEL, STACK_LABEL
from infra.core.plan import build_plan
from tests.unit.operator_fixtures import errors, hints_for, plan, stack

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted(
    p.name[len("Pulumi.") : -len(".yaml")] for p in (ROOT / "stacks").glob("Pulumi.*.yaml")
)
K8S_SCHEMA = "1.33.0"
A100 = {"gpu_model": "A100-40GB", "gpu_type": "nvidia-tesla-a100", "gpus_per_node": 8}

# KubeSpawner.profile_list: the keys a profile, an option and a choice may have
# (jupyterhub/kubespawner kubespawner/spawner.py, profile_list help).
PROFILE_KEYS = {
    "display_name",
    "slug",
    "description",
    "default",
    "kubespawner_override",
    "profile_options",
}
OPTION_KEYS = {"display_name", "choices", "unlisted_choice"}
CHOICE_KEYS = {"display_name", "default", "kubespawner_override"}
# KubeSpawner traits gpu-infra overrides (kubespawner/spawner.py trait names).
SPAWNER_TRAITS = {
    "environment",
    "node_selector",
    "tolerations",
    "extra_resource_limits",
    "mem_guarantee",
    "mem_limit",
    "extra_pod_config",
    "image",
}
# KubeSpawner ByteSpecification: an integer with a K/M/G/T suffix.
BYTES = re.compile(r"^\d+[KMGT]$")
# Kubeflow spawner_ui_config.yaml: `gpus.value.num` values the form offers.
KUBEFLOW_NUMS = {"none", "1", "2", "4", "8"}
# flytek8s config.go K8sPluginConfig json names gpu-infra sets.
FLYTE_KEYS = {
    "gpu-resource-name",
    "resource-tolerations",
    "gpu-device-node-label",
    "gpu-partition-size-node-label",
    "gpu-unpartitioned-node-selector-requirement",
}
# flytek8s config.go AcceleratorDeviceClassConfig json names gpu-infra sets.
FLYTE_DEVICE_CLASS_KEYS = {
    "resource-name",
    "device-node-label",
    "partition-size-node-label",
    "unpartitioned-node-selector-requirement",
}
NODE_SELECTOR_OPS = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"}


@pytest.fixture(scope="module")
def docs() -> dict[str, dict[str, Any]]:
    out = {}
    for s in SAMPLES:
        op = build_plan(parse_file(ROOT / "stacks" / f"Pulumi.{s}.yaml")).operator
        assert op is not None, s
        out[s] = dict(op.integrations)
    return out


def _pod(spec_part: dict[str, Any]) -> dict[str, Any]:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "x"},
        "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}], **spec_part},
    }
    kubernetes_validate.validate(pod, K8S_SCHEMA, strict=True)
    return pod


@pytest.mark.parametrize("sample", SAMPLES)
def test_every_sample_has_every_integration(docs, sample):
    assert set(docs[sample]) == set(INTEGRATIONS)


@pytest.mark.parametrize("sample", SAMPLES)
def test_jupyterhub_profile_list_matches_kubespawner_profile_list(docs, sample):
    for p in docs[sample]["jupyterhub"]["singleuser"]["profileList"]:
        assert set(p) <= PROFILE_KEYS and {"display_name", "slug", "kubespawner_override"} <= set(p)
        o = p["kubespawner_override"]
        assert set(o) <= SPAWNER_TRAITS
        assert o["environment"]["NVIDIA_DRIVER_CAPABILITIES"] == "compute,utility"
        assert o["mem_limit"] is None and BYTES.match(o["mem_guarantee"])
        assert all(isinstance(v, str) for v in o["extra_resource_limits"].values())
        _pod({"nodeSelector": o["node_selector"], "tolerations": o["tolerations"]})
        (option,) = p["profile_options"].values()
        assert set(option) <= OPTION_KEYS
        choices = option["choices"]
        assert sum(c["default"] for c in choices.values()) == 1
        for c in choices.values():
            assert set(c) <= CHOICE_KEYS
            image = c["kubespawner_override"]["image"]
            assert ":" in image.rsplit("/", 1)[-1] and not image.endswith(":latest")


def test_jupyterhub_mem_guarantee_is_a_share_of_the_nodes_allocatable_memory():
    whole = build_plan(stack("kubernetes", [{"memoryGib": 64}])).operator.jupyterhub_profiles["gpu"]
    shared = build_plan(
        stack("kubernetes", [{"memoryGib": 64, "sharing": {"replicas": 4}}])
    ).operator
    g_whole = int(whole["kubespawner_override"]["mem_guarantee"][:-1])
    g_shared = int(shared.jupyterhub_profiles["gpu"]["kubespawner_override"]["mem_guarantee"][:-1])
    assert 50_000 < g_whole < 64 * 1024  # allocatable, below capacity
    assert g_shared * 4 <= g_whole  # four notebooks fit on one node


def test_jupyterhub_mig_and_time_sliced_pools_advertise_their_resource():
    cfg = stack("eks", [{"mig": {"strategy": "mixed", "config": "all-1g.5gb"}, "minNodes": 1}])
    op = plan(cfg, hints_for(cfg, **A100))
    o = op.jupyterhub_profiles["gpu"]["kubespawner_override"]
    assert o["extra_resource_limits"] == {"nvidia.com/mig-1g.5gb": "1"}
    ts = plan(stack("kubernetes", [{"sharing": {"replicas": 2, "renameByDefault": True}}]))
    limits = ts.jupyterhub_profiles["gpu"]["kubespawner_override"]["extra_resource_limits"]
    assert limits == {"nvidia.com/gpu.shared": "1"}


def test_jupyterhub_images_come_from_config_and_must_be_pinned():
    rapids = "nvcr.io/nvidia/rapidsai/notebooks:25.10-cuda12.9-py3.12"
    cfg = stack(
        "kubernetes", integrations={"jupyterhub": {"images": [{"name": "rapids", "image": rapids}]}}
    )
    p = plan(cfg).jupyterhub_profiles["gpu"]
    (choice,) = p["profile_options"]["image"]["choices"].values()
    assert choice["kubespawner_override"] == {"image": rapids}
    latest = {
        "jupyterhub": {"images": [{"name": "x", "image": "quay.io/jupyter/base-notebook:latest"}]}
    }
    with pytest.raises(ConfigErrors) as e:
        stack("kubernetes", integrations=latest)
    assert [i.path for i in e.value.issues] == ["integrations.jupyterhub.images[0].image"]


@pytest.mark.parametrize("sample", SAMPLES)
def test_kubeflow_spawner_form_defaults_match_spawner_ui_config(docs, sample):
    form = docs[sample]["kubeflow"]["spawnerFormDefaults"]
    assert set(form) == {"gpus", "tolerationGroup", "affinityConfig"}
    gpus = form["gpus"]["value"]
    assert gpus["num"] in KUBEFLOW_NUMS
    keys = [v["limitsKey"] for v in gpus["vendors"]]
    assert all(set(v) == {"limitsKey", "uiName"} for v in gpus["vendors"])
    assert gpus["vendor"] in ("", *keys) and len(keys) == len(set(keys))
    for opt in form["tolerationGroup"]["options"]:
        assert set(opt) == {"groupKey", "displayName", "tolerations"}
        _pod({"tolerations": opt["tolerations"]})
    for opt in form["affinityConfig"]["options"]:
        assert set(opt) == {"configKey", "displayName", "affinity"}
        _pod({"affinity": opt["affinity"]})
    for section in form.values():
        assert section["readOnly"] is False and "value" in section


def test_kubeflow_vendors_include_every_mig_resource_of_the_pools():
    cfg = stack("eks", [{"mig": {"strategy": "mixed", "config": "all-balanced"}, "minNodes": 1}])
    op = plan(cfg, hints_for(cfg, **A100))
    vendors = op.integrations["kubeflow"]["spawnerFormDefaults"]["gpus"]["value"]["vendors"]
    assert [v["limitsKey"] for v in vendors] == [
        "nvidia.com/mig-1g.5gb",
        "nvidia.com/mig-2g.10gb",
        "nvidia.com/mig-3g.20gb",
    ]


def test_kubeflow_profile_replaces_the_bare_namespace_and_carries_the_gpu_quota():
    ns = [{"name": "team-a", "gpus": 4, "kubeflowProfile": {"owner": "ana@example.com"}}]
    op = plan(stack("kubernetes", namespaces=ns))
    kinds = [m["kind"] for m in op.after_release]
    assert "Namespace" not in kinds and "ResourceQuota" not in kinds
    (prof,) = [m for m in op.after_release if m["kind"] == "Profile"]
    assert prof["apiVersion"] == "kubeflow.org/v1" and prof["metadata"] == {"name": "team-a"}
    assert prof["spec"]["owner"] == {"kind": "User", "name": "ana@example.com"}
    assert prof["spec"]["resourceQuotaSpec"] == {"hard": {"requests.nvidia.com/gpu": "4"}}
    assert op.integrations["kubeflow"]["profiles"] == [prof]
    with pytest.raises(ConfigErrors):
        stack(
            "kubernetes", namespaces=[{"name": "b", "gpus": 1, "kubeflowProfile": {"owner": "x"}}]
        )


@pytest.mark.parametrize("sample", SAMPLES)
def test_flyte_plugins_k8s_matches_flytepropeller_config(docs, sample):
    doc = docs[sample]["flyte"]
    plugin = doc["pluginsK8s"]
    assert set(plugin) == FLYTE_KEYS
    assert doc["helmValues"]["flyte-core"]["configmap"]["k8s"]["plugins"]["k8s"] == plugin
    assert doc["helmValues"]["flyte-binary"]["configuration"]["inline"]["plugins"]["k8s"] == plugin
    # Flyte's documented list form: one single-key map per resource name.
    ((resource, tolerations),) = [i for m in plugin["resource-tolerations"] for i in m.items()]
    assert resource == plugin["gpu-resource-name"]
    _pod({"tolerations": tolerations})
    req = plugin["gpu-unpartitioned-node-selector-requirement"]
    assert req == {"key": plugin["gpu-partition-size-node-label"], "operator": "DoesNotExist"}
    assert req["operator"] in NODE_SELECTOR_OPS
    assert "accelerator-device-classes" not in plugin  # Flyte 2 only
    flyte2 = doc["flyte2PluginsK8s"]
    assert {k: v for k, v in flyte2.items() if k != "accelerator-device-classes"} == plugin
    (nvidia,) = flyte2["accelerator-device-classes"].values()
    assert set(nvidia) == FLYTE_DEVICE_CLASS_KEYS
    assert (
        nvidia["resource-name"] == resource
        and nvidia["unpartitioned-node-selector-requirement"] == req
    )
    templates = {t["metadata"]["name"]: t for t in doc["podTemplates"]}
    for pool in doc["pools"].values():
        if "podTemplateName" in pool:  # a ComputeClass, or a pool of a shared cluster
            template = templates.pop(pool["podTemplateName"])
            kubernetes_validate.validate(template, K8S_SCHEMA, strict=True)
            selector = template["template"]["spec"]["nodeSelector"]
            if pool["accelerator"] is None:  # a ComputeClass: its PodTemplate selects it
                continue
            # A shared cluster: the template keeps the task on this stack's nodes.
            assert selector[STACK_LABEL] and selector[POOL_LABEL] in pool["pools"]
            assert any(pool["podTemplateName"] in n for n in doc["notes"])
        if pool["accelerator"] is None:  # its nodes carry no device label: a note says so
            assert plugin["gpu-device-node-label"] not in pool["nodeLabels"]
            assert any(plugin["gpu-device-node-label"] in n for n in doc["notes"])
            continue
        assert pool["nodeLabels"][plugin["gpu-device-node-label"]] == pool["accelerator"]
        assert re.match(r"^nvidia-[a-z0-9-]+$", pool["accelerator"])
    assert templates == {}


def test_flyte_operator_mig_pools_carry_the_partition_label_flyte_selects():
    cfg = stack("gke", [{"mig": {"strategy": "single", "config": "all-2g.10gb"}}])
    op = plan(cfg, hints_for(cfg, **A100))
    doc = op.integrations["flyte"]
    assert doc["pluginsK8s"]["gpu-partition-size-node-label"] == "gpu-infra/gpu-partition-size"
    assert doc["pools"]["gpu"]["partitionSize"] == "2g.10gb"


@pytest.mark.parametrize("sample", SAMPLES)
def test_kubernetes_pod_and_job_per_pool_are_valid_manifests(docs, sample):
    for pool, ms in docs[sample]["kubernetes"].items():
        for m in ms.values():
            kubernetes_validate.validate(m, K8S_SCHEMA, strict=True)
        (c,) = ms["pod"]["spec"]["containers"]
        assert list(c["resources"]["limits"].values()) == ["1"], pool


def test_pre_cdi_chart_without_default_runtime_is_refused_since_not_every_output_can_name_the_class():
    # Kubeflow's spawner form and PodDefault cannot set runtimeClassName; Flyte only by template.
    op_cfg = {"version": "v25.3.4", "toolkitEnv": {"CONTAINERD_SET_AS_DEFAULT": "false"}}
    errs = errors(stack("kubernetes", operator=op_cfg))
    assert "runtimeClassName" in errs["gpuOperator.toolkitEnv.CONTAINERD_SET_AS_DEFAULT"]
    assert plan(stack("kubernetes")).scheduling["gpu"]["runtimeClassName"] is None


@pytest.mark.parametrize("name", INTEGRATIONS)
def test_plan_cli_prints_one_integration_as_yaml_or_json(capsys, name):
    assert plan_cli.main(["--stack", "onprem-k3s-timeslicing", "--integration", name]) == 0
    as_yaml = yaml.safe_load(capsys.readouterr().out)
    assert (
        plan_cli.main(["--stack", "onprem-k3s-timeslicing", "--integration", name, "--json"]) == 0
    )
    assert json.loads(capsys.readouterr().out) == as_yaml


def test_plan_cli_yaml_has_no_anchors_for_kubectl_readers(capsys):
    assert plan_cli.main(["--stack", "gke-t4", "--integration", "kubernetes"]) == 0
    out = capsys.readouterr().out
    assert "&id" not in out and "*id" not in out


def _l4_spot() -> dict[str, Any]:
    op = build_plan(parse_file(ROOT / "stacks" / "Pulumi.gke-l4-spot.yaml")).operator
    assert op is not None
    return dict(op.integrations)


CLASS = {"cloud.google.com/compute-class": "l4-spot"}


def test_compute_class_workloads_select_the_class_only_never_one_pools_gpu():
    docs = _l4_spot()
    (profile,) = docs["jupyterhub"]["singleuser"]["profileList"]
    o = profile["kubespawner_override"]
    assert o["node_selector"] == CLASS
    assert {t["key"] for t in o["tolerations"]} == {"nvidia.com/gpu", *CLASS}
    (affinity,) = docs["kubeflow"]["spawnerFormDefaults"]["affinityConfig"]["options"]
    terms = affinity["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms["nodeSelectorTerms"] == [
        {
            "matchExpressions": [
                {"key": k, "operator": "In", "values": [v]} for k, v in CLASS.items()
            ]
        }
    ]
    assert list(docs["kubernetes"]) == ["l4-spot"]
    for m in docs["kubernetes"]["l4-spot"].values():
        spec = m["spec"] if m["kind"] == "Pod" else m["spec"]["template"]["spec"]
        assert spec["nodeSelector"] == CLASS


def test_compute_class_promises_what_its_smallest_pool_gives():
    (profile,) = _l4_spot()["jupyterhub"]["singleuser"]["profileList"]
    # n1-standard-8 (30 GB, T4) is the class's smallest member; g2-standard-8 has 32 GB.
    g = int(profile["kubespawner_override"]["mem_guarantee"][:-1])
    assert g == int(plan_jupyter_allocatable(30.0))
    assert "L4 or T4" in profile["display_name"]


def plan_jupyter_allocatable(memory_gib: float, operator: bool = True) -> int:
    """The GCE template's allocatable less GKE's DaemonSets and, with the operator, NFD's 64 MiB,
    and the 1 % (at least 256 MiB) the guarantees leave unclaimed."""
    import math

    from infra.core.gke.node_model import template_allocatable_mib
    from infra.core.nodes import daemonset_memory_mib

    budget = daemonset_memory_mib("gke", DATA_DIR) + (
        daemonset_memory_mib("nfd-worker", DATA_DIR) if operator else 0
    )
    allocatable = template_allocatable_mib(memory_gib, "COS_CONTAINERD")
    return allocatable - budget - max(256, math.ceil(allocatable * 0.01))


def test_flyte_compute_class_is_a_pod_template_without_accelerator():
    doc = _l4_spot()["flyte"]
    assert list(doc["pools"]) == ["l4-spot"]
    entry = doc["pools"]["l4-spot"]
    assert entry["accelerator"] is None and entry["pools"] == [
        "l4-spot",
        "l4-spot-0a12e4",
        "l4-spot-a31395",
    ]
    (template,) = doc["podTemplates"]
    assert template["metadata"]["name"] == entry["podTemplateName"]
    assert template["template"]["spec"]["nodeSelector"] == CLASS
    assert any(t["key"] in CLASS for t in template["template"]["spec"]["tolerations"])
    # Every GPU task gets resource-tolerations: the class taint must stay out of them.
    ((tolerations,),) = [m.values() for m in doc["pluginsK8s"]["resource-tolerations"]]
    assert all(t["key"] not in CLASS for t in tolerations)


def test_flyte2_device_class_keeps_the_renamed_resource_name():
    op = plan(stack("kubernetes", [{"sharing": {"replicas": 2, "renameByDefault": True}}]))
    doc = op.integrations["flyte"]
    assert doc["pluginsK8s"]["gpu-resource-name"] == "nvidia.com/gpu.shared"
    nvidia = doc["flyte2PluginsK8s"]["accelerator-device-classes"]["NVIDIA_GPU"]
    assert nvidia["resource-name"] == "nvidia.com/gpu.shared"


def test_flyte1_helm_values_carry_only_keys_flyte1_reads_not_accelerator_device_classes():
    # accelerator-device-classes is read only by the Flyte 2 code line (flytek8s config.go, v2).
    doc = plan(stack("kubernetes")).integrations["flyte"]
    core = doc["helmValues"]["flyte-core"]["configmap"]["k8s"]["plugins"]["k8s"]
    binary = doc["helmValues"]["flyte-binary"]["configuration"]["inline"]["plugins"]["k8s"]
    assert set(core) == set(binary) == FLYTE_KEYS


def test_gke_partitioned_pool_slots_are_what_gke_advertises_per_node():
    # gke-a100-mig: 1 A100 x 7 partitions (1g.5gb) x 2 time-sharing clients = 14 nvidia.com/gpu.
    op = build_plan(parse_file(ROOT / "stacks" / "Pulumi.gke-a100-mig.yaml")).operator
    assert op is not None
    assert op.scheduling["a100-mig"]["slotsPerNode"] == 14
    profile = op.jupyterhub_profiles["a100-mig"]
    assert "one GKE-shared GPU slot (14 per node)" in profile["description"]
    o = profile["kubespawner_override"]
    assert o["extra_resource_limits"] == {"nvidia.com/gpu": "1"}
    assert int(o["mem_guarantee"][:-1]) * 14 <= plan_jupyter_allocatable(85.0, operator=False)


def test_flyte_pod_templates_go_to_the_configured_flytepropeller_namespace():
    cfg = stack("gke", integrations={"flyte": {"namespace": "flyte-system"}})
    op = plan(cfg)
    flyte = op.integrations["flyte"]
    assert all(t["metadata"]["namespace"] == "flyte-system" for t in flyte["podTemplates"])


def test_flyte_resource_tolerations_use_the_documented_list_form():
    op = plan(stack("gke"))
    tolerations = op.integrations["flyte"]["pluginsK8s"]["resource-tolerations"]
    assert isinstance(tolerations, list) and all(len(m) == 1 for m in tolerations)


@pytest.mark.parametrize("config", ["all-4g.20gb", "all-7g.40gb", "all-1g.5gb.me"])
def test_jupyterhub_one_per_gpu_mig_profiles_give_a_notebook_one_slice_not_the_node(config):
    cfg = stack("eks", [{"mig": {"strategy": "mixed", "config": config}, "minNodes": 1}])
    op = plan(cfg, hints_for(cfg, **A100))
    (profile,) = op.integrations["jupyterhub"]["singleuser"]["profileList"]
    (count,) = profile["kubespawner_override"]["extra_resource_limits"].values()
    assert count == "1"
    assert "one MIG instance" in profile["description"]


def test_flyte_offers_no_accelerator_for_a_pool_whose_resource_tasks_cannot_request():
    # Flyte requests one GPU resource name cluster-wide (flytek8s gpu-resource-name): a task
    # selecting a mixed-MIG pool's accelerator would stay Pending, so the pool offers none and one
    # note says why; the plan (whose scheduling proof covers every Flyte task) succeeds.
    path = ROOT / "stacks" / "Pulumi.onprem-k3s-timeslicing.yaml"
    text = path.read_text().replace(
        "strategy: single, config: all-1g.5gb", "strategy: mixed, config: all-1g.5gb"
    )
    assert "strategy: mixed" in text
    p = build_plan(parse(yaml.safe_load(text)["config"], "onprem"))
    assert p.operator is not None
    doc = p.operator.integrations["flyte"]
    assert doc["pools"]["a100-mig"]["accelerator"] is None
    assert [n for n in doc["notes"] if n.startswith("a100-mig:")] == [
        "a100-mig: advertises nvidia.com/mig-1g.5gb, but Flyte requests one GPU resource name "
        "cluster-wide (nvidia.com/gpu); tasks cannot target this pool"
    ]


@pytest.mark.parametrize(
    ("model", "accelerator"),
    [("A100-80GB", "nvidia-a100-80gb"), ("l4", "nvidia-l4"), ("T4", "nvidia-tesla-t4")],
)
def test_flyte_names_an_on_prem_gpu_by_gkes_accelerator_type_for_its_model(model, accelerator):
    # flytekit's accelerator constants are GKE's accelerator types
    # (https://cloud.google.com/compute/docs/gpus: nvidia-a100-80gb, nvidia-l4, nvidia-tesla-t4).
    from dataclasses import replace

    from infra.core.catalog.vendored import Catalog
    from infra.core.integrations.flyte import accelerator_name
    from infra.core.kubernetes.platform import FEATURES
    from tests.unit.operator_fixtures import hints_for, stack

    (h,) = hints_for(stack("kubernetes"))
    h = replace(h, gpu_type=model, gpu_model=model)
    assert accelerator_name(h, FEATURES, Catalog.load()) == accelerator
    unknown = replace(h, gpu_type="X9", gpu_model="X9")
    assert accelerator_name(unknown, FEATURES, Catalog.load()) == "nvidia-x9"
