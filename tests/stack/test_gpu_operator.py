"""GPU Operator wiring on the mock engine: namespace, release, ordering, outputs, platform kubernetes."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from infra import mockengine
from infra.core.config.stack import parse_file
from infra.core.plan import build_plan
from tests.stack.harness import ROOT, run_stack, sample

RELEASE = "kubernetes:helm.sh/v3:Release"
NAMESPACE = "kubernetes:core/v1:Namespace"
QUOTA = "kubernetes:core/v1:ResourceQuota"
JOB = "kubernetes:batch/v1:Job"
COMPONENT = "gpu-infra:k8s:GpuOperator"
# Components that own GPU node pools / groups on the clouds.
GPU_POOL_COMPONENTS = ("gpu-infra:gcp:GpuNodePools", "gpu-infra:aws:GpuNodeGroup")
STACKS = ["gke-t4", "eks-g4dn", "onprem-containerd"]


@pytest.fixture(scope="module")
def recs() -> dict[str, mockengine.Recording]:
    return {s: sample(s) for s in [*STACKS, "onprem-k3s-timeslicing"]}


def operator_release(rec: mockengine.Recording) -> mockengine.Registered:
    (rel,) = [
        r for r in rec.of_type(RELEASE) if r.parent and rec.by_urn(r.parent).type == COMPONENT
    ]
    return rel


def find(rec: mockengine.Recording, urn: str | None) -> mockengine.Registered | None:
    # The stack resource itself (every top component's parent) is not recorded.
    return next((r for r in rec.resources if r.urn == urn), None)


def in_gpu_pool(rec: mockengine.Recording, r: mockengine.Registered) -> bool:
    node: mockengine.Registered | None = r
    while node is not None:
        if node.type in GPU_POOL_COMPONENTS:
            return True
        node = find(rec, node.parent)
    return False


def closure(rec: mockengine.Recording, r: mockengine.Registered) -> set[str]:
    seen: set[str] = set()
    todo = list(r.depends_on)
    while todo:
        urn = todo.pop()
        if urn not in seen:
            seen.add(urn)
            dep = find(rec, urn)
            todo.extend(dep.depends_on if dep else ())
    return seen


@pytest.mark.parametrize("stack", STACKS)
def test_release_installs_the_pinned_chart_into_a_privileged_namespace(recs, stack):
    rec = recs[stack]
    op = build_plan(parse_file(ROOT / "stacks" / f"Pulumi.{stack}.yaml")).operator
    assert op is not None and op.release is not None
    rel = operator_release(rec)
    ins = rel.inputs
    assert ins["chart"] == "gpu-operator"
    assert ins["version"] == op.release.version == "v26.7.0"
    assert ins["repositoryOpts"] == {"repo": "https://helm.ngc.nvidia.com/nvidia"}
    assert ins["namespace"] == "gpu-operator" and ins["createNamespace"] is False
    assert ins["values"] == json.loads(json.dumps(op.release.values))
    ns = rec.one(NAMESPACE, "gpu-operator-ns-gpu-operator")
    assert ns.inputs["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "privileged"
    assert ns.urn in rel.depends_on
    assert rec.by_urn(rel.parent).type == COMPONENT == rec.by_urn(ns.parent).type


@pytest.mark.parametrize("stack", STACKS)
def test_release_never_depends_on_a_gpu_pool(recs, stack):
    rec = recs[stack]
    deps = [find(rec, u) for u in closure(rec, operator_release(rec))]
    assert deps and not [d.urn for d in deps if d is not None and in_gpu_pool(rec, d)]


def test_release_waits_for_the_cluster_on_clouds(recs):
    rec = recs["gke-t4"]
    deps = {d.type for u in closure(rec, operator_release(rec)) if (d := find(rec, u))}
    assert "gcp:container/cluster:Cluster" in deps
    assert any(r.type in GPU_POOL_COMPONENTS for r in rec.resources)  # the check above has teeth


def test_gke_critical_pod_quota_exists_before_the_release(recs):
    rec = recs["gke-t4"]
    (quota,) = rec.of_type(QUOTA)
    assert quota.urn in operator_release(rec).depends_on
    scope = quota.inputs["spec"]["scopeSelector"]["matchExpressions"][0]
    assert scope["values"] == ["system-node-critical", "system-cluster-critical"]


def test_onprem_uses_the_kubeconfig_path_and_context(recs):
    rec = recs["onprem-containerd"]
    (provider,) = rec.of_type("pulumi:providers:kubernetes")
    assert provider.inputs["kubeconfig"] == "~/.kube/onprem.yaml"
    assert provider.inputs["context"] == "onprem-admin"
    assert rec.outputs["kubeconfig"] == "[secret]"


def test_smoke_job_comes_after_the_release_and_gpu_namespaces_do_not_wait_for_it(recs):
    rec = recs["onprem-containerd"]
    rel = operator_release(rec)
    (job,) = rec.of_type(JOB)
    assert rel.urn in job.depends_on
    pod = job.inputs["spec"]["template"]["spec"]
    assert pod["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": "1"}
    assert {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"} in pod[
        "tolerations"
    ]
    ns = rec.one(NAMESPACE, "gpu-operator-ns-ml-team")
    quota = rec.one(QUOTA, "gpu-operator-quota-ml-team-gpu-quota")
    # A namespace and its quota need no GPU Operator: a failed release must not hold them back.
    assert rel.urn not in ns.depends_on and rel.urn not in quota.depends_on
    assert quota.inputs["spec"]["hard"] == {"requests.nvidia.com/gpu": "2"}
    assert job.inputs["metadata"]["namespace"] == "gpu-smoke-test"


def test_time_slicing_configmap_precedes_release_and_nodes_get_labels(recs):
    rec = recs["onprem-k3s-timeslicing"]
    rel = operator_release(rec)
    (cm,) = rec.of_type("kubernetes:core/v1:ConfigMap")
    assert cm.urn in rel.depends_on
    assert rel.inputs["values"]["devicePlugin"]["config"]["name"] == cm.inputs["metadata"]["name"]
    patches = {
        r.inputs["metadata"]["name"]: r.inputs["metadata"]["labels"]
        for r in rec.of_type("kubernetes:core/v1:NodePatch")
    }
    # Each listed node also gets its pool's nodeSelector, which every integration selects on.
    assert patches == {
        "lab-gpu-01": {
            "gpu-infra/pool": "a10-shared",
            "nvidia.com/device-plugin.config": "time-slicing-4",
            "gpu-infra/accelerator": "nvidia-a10",
        },
        "lab-gpu-02": {
            "gpu-infra/pool": "a10-shared",
            "nvidia.com/device-plugin.config": "time-slicing-4",
            "gpu-infra/accelerator": "nvidia-a10",
        },
        "lab-dgx-01": {
            "gpu-infra/pool": "a100-mig",
            "nvidia.com/mig.config": "all-1g.5gb",
            "gpu-infra/gpu-partition-size": "1g.5gb",
            "gpu-infra/accelerator": "nvidia-tesla-a100",
        },
    }


def test_node_label_patches_force_past_the_operators_own_mig_config_label(recs):
    # The operator writes nvidia.com/mig.config=all-disabled on MIG-capable nodes; an unforced
    # server-side-apply patch of the same key fails `pulumi up` with a field-manager conflict.
    for r in recs["onprem-k3s-timeslicing"].of_type("kubernetes:core/v1:NodePatch"):
        assert r.inputs["metadata"]["annotations"] == {"pulumi.com/patchForce": "true"}


@pytest.mark.parametrize("stack", STACKS)
def test_outputs_carry_scheduling_hints_and_jupyterhub_profiles(recs, stack):
    out: dict[str, Any] = recs[stack].outputs
    assert out["gpuOperator"]["version"] == "v26.7.0"
    for pool, hints in out["gpuPools"].items():
        assert hints["resourceName"] == "nvidia.com/gpu"
        assert hints["nodeSelector"]
        profile = out["jupyterhubProfiles"][pool]
        assert profile["kubespawner_override"]["node_selector"] == hints["nodeSelector"]
    if stack == "gke-t4":
        assert (
            out["gpuPools"]["gpu-t4"]["nodeSelector"]["cloud.google.com/gke-accelerator"]
            == "nvidia-tesla-t4"
        )


def test_gpu_namespace_quota_waits_for_its_namespace(recs):
    rec = recs["onprem-k3s-timeslicing"]
    for ns_name in ("notebooks", "training"):
        ns = rec.one(NAMESPACE, f"gpu-operator-ns-{ns_name}")
        quota = rec.one(QUOTA, f"gpu-operator-quota-{ns_name}-gpu-quota")
        assert ns.urn in quota.depends_on


@pytest.mark.parametrize("stack", STACKS)
def test_outputs_carry_the_kubeflow_and_flyte_integrations(recs, stack):
    out: dict[str, Any] = recs[stack].outputs
    assert set(out["kubeflow"]) == {"spawnerFormDefaults", "profiles"}
    assert "gpu-resource-name" in out["flyte"]["pluginsK8s"]
    assert set(out["flyte"]["pools"]) == set(out["gpuPools"])


def test_kubeflow_profile_namespace_is_created_as_a_profile_custom_resource():
    raw = yaml.safe_load((ROOT / "stacks" / "Pulumi.onprem-containerd.yaml").read_text())["config"]
    raw["gpu-infra:gpuNamespaces"] = [
        {"name": "ml-team", "gpus": 2, "kubeflowProfile": {"owner": "ana@example.com"}}
    ]
    rec = run_stack(raw)
    (prof,) = rec.of_type("kubernetes:kubeflow.org/v1:Profile")
    assert prof.inputs["spec"]["owner"] == {"kind": "User", "name": "ana@example.com"}
    assert prof.inputs["spec"]["resourceQuotaSpec"]["hard"] == {"requests.nvidia.com/gpu": "2"}
    assert operator_release(rec).urn not in prof.depends_on  # a Profile needs Kubeflow only
    names = [r.inputs["metadata"]["name"] for r in rec.of_type(NAMESPACE)]
    assert "ml-team" not in names  # the profile controller creates it


DAEMONSET = "kubernetes:apps/v1:DaemonSet"
NODE_POOL = "gcp:container/nodePool:NodePool"


@pytest.mark.parametrize("stack", ["gke-t4", "gke-l4-spot"])
def test_gke_operator_stack_installs_googles_driver_daemonset_before_the_release(stack):
    rec = recs_gke(stack)
    (ds,) = rec.of_type(DAEMONSET)
    meta = ds.inputs["metadata"]
    assert (meta["namespace"], meta["name"]) == ("kube-system", "nvidia-driver-installer")
    spec = ds.inputs["spec"]["template"]["spec"]
    assert spec["priorityClassName"] == "system-node-critical"
    assert spec["initContainers"][0]["image"] == "cos-nvidia-installer:fixed"
    assert rec.by_urn(ds.parent).type == COMPONENT
    # The operator's validator waits for a driver; the release depends on the installer.
    assert ds.urn in operator_release(rec).depends_on
    for pool in rec.of_type(NODE_POOL):
        for acc in pool.inputs["nodeConfig"].get("guestAccelerators", []):
            cfg = acc["gpuDriverInstallationConfig"]
            assert cfg["gpuDriverVersion"] == "INSTALLATION_DISABLED", pool.name


def recs_gke(stack: str) -> mockengine.Recording:
    return sample(stack)


def test_gpu_operator_output_lists_the_config_values_deliberately_not_applied(recs):
    notes = recs["onprem-containerd"].outputs["gpuOperator"]["notes"]
    assert any(n.startswith("gpuOperator.toolkitEnv.CONTAINERD_SET_AS_DEFAULT:") for n in notes)
