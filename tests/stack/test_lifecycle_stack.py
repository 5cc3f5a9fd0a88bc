"""What the real engine will do on day 2 and at destroy, as the sample plans register it."""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import pulumi
import pytest

from infra import mockanswers
from infra import plan as plan_cli
from infra.core import lifecycle
from infra.core.config.stack import load_stack_file, parse
from infra.core.plan import build_plan
from infra.mockengine import Recording, Registered
from tests.stack.harness import run_stack, sample, sample_stacks

ROOT = Path(__file__).resolve().parents[2]
STACKS = sample_stacks()
PROVIDER = "pulumi:providers:kubernetes"
NAMESPACE = "kubernetes:core/v1:Namespace"
RELEASE = "kubernetes:helm.sh/v3:Release"


def raw(stack: str) -> dict[str, Any]:
    return copy.deepcopy(load_stack_file(ROOT / "stacks" / f"Pulumi.{stack}.yaml")[1])


@functools.cache
def gke_with_teams() -> Recording:
    """gke-t4 plus a team namespace and a smoke test: in-cluster objects on a created cluster."""
    cfg = raw("gke-t4")
    cfg["gpu-infra:gpuPools"][0]["smokeTest"] = True
    cfg["gpu-infra:gpuNamespaces"] = [{"name": "ml-team", "gpus": 2}]
    return run_stack(cfg, "gke-teams")


def team_namespaces(rec: Recording) -> list[Registered]:
    return [
        r
        for r in rec.of_type(NAMESPACE)
        if r.inputs["metadata"]["name"] not in ("gpu-operator", "gpu-smoke-test")
    ]


def names(rec: Recording, urns: tuple[str, ...]) -> set[str]:
    return {rec.by_urn(u).name for u in urns}


@pytest.mark.parametrize("stack", STACKS)
def test_every_resource_type_of_every_sample_plan_has_a_lifecycle_row(stack):
    missing = {r.type for r in sample(stack).resources if lifecycle.lookup(r.type) is None}
    assert missing == set()


@pytest.mark.parametrize("stack", STACKS)
def test_every_kubernetes_provider_carries_a_cluster_identifier(stack):
    providers = sample(stack).of_type(PROVIDER)
    assert providers
    assert all(p.inputs.get("clusterIdentifier") for p in providers)


@pytest.mark.parametrize("stack", [s for s in STACKS if s.startswith("onprem-")])
def test_onprem_providers_name_their_kubeconfig_and_context_explicitly(stack):
    for p in sample(stack).of_type(PROVIDER):
        assert p.inputs.get("kubeconfig") and p.inputs.get("context"), p.inputs


@pytest.mark.parametrize("stack", STACKS)
def test_existing_namespaces_are_never_adopted_silently(stack):
    # upsertExistingObjects would adopt an existing namespace and later delete it with the stack.
    for p in sample(stack).of_type(PROVIDER):
        assert not p.inputs.get("upsertExistingObjects")
    for ns in sample(stack).of_type(NAMESPACE):
        assert not ns.inputs["metadata"].get("annotations", {}).get("pulumi.com/patchForce")


def test_renamed_device_plugin_component_keeps_its_urn_by_an_alias():
    (dp,) = [r for r in sample("eks-device-plugin").resources if r.name.endswith("-nvidia")]
    assert any(a.get("type") == "gpu-infra:aws:NvidiaDevicePlugin" for a in dp.options["aliases"])


def test_cluster_endpoint_output_is_a_url_on_gke_and_eks():
    for stack in ("gke-t4", "eks-g4dn"):
        assert sample(stack).outputs["clusterEndpoint"].startswith("https://")


def test_onprem_without_context_is_a_config_error_naming_the_key(tmp_path, capsys):
    text = (ROOT / "stacks" / "Pulumi.onprem-containerd.yaml").read_text()
    path = tmp_path / "Pulumi.ambient.yaml"
    path.write_text("\n".join(x for x in text.splitlines() if "context:" not in x) + "\n")
    assert plan_cli.main(["--config", str(path)]) == 2
    assert "cluster.context: required on platform kubernetes" in capsys.readouterr().err


def test_rotated_endpoint_and_ca_keep_the_providers_identity_inputs(monkeypatch):
    before = {p.name: p.inputs for p in sample("gke-t4").of_type(PROVIDER)}
    monkeypatch.setattr(mockanswers, "MOCK_ENDPOINT", "203.0.113.99")
    monkeypatch.setattr(mockanswers, "MOCK_CA", "cm90YXRlZA==")
    after_rec = run_stack("gke-t4")
    assert after_rec.one("gcp:container/cluster:Cluster").inputs  # the run used the new values
    after = {p.name: p.inputs for p in after_rec.of_type(PROVIDER)}
    assert before.keys() == after.keys()
    for name, inputs in after.items():
        assert inputs["clusterIdentifier"] == before[name]["clusterIdentifier"]
        assert not lifecycle.provider_replaced(before[name], inputs)


def test_gke_and_eks_clusters_are_protected_and_eks_has_deletion_protection():
    assert sample("gke-t4").one("gcp:container/cluster:Cluster").options["protect"] is True
    eks = sample("eks-g4dn").one("eks:index:Cluster")
    # The component is not protected (its children would inherit it: sdk/nodejs resource.ts);
    # its aws.eks.Cluster child is, by the component's transform.
    assert eks.options["protect"] is False
    assert lifecycle.protected(eks.to_json())
    assert eks.inputs["deletionProtection"] is True


def _child(
    transform: pulumi.ResourceTransform, type_: str, name: str
) -> pulumi.ResourceOptions | None:
    """The options ``transform`` gives a pulumi-eks child (None: left as it is)."""
    args = pulumi.ResourceTransformArgs(True, type_, name, {}, pulumi.ResourceOptions())
    result = transform(args)
    assert not isinstance(result, Awaitable)
    return None if result is None else result.opts


def test_pulumi_eks_protects_its_control_plane_child_and_none_of_the_others():
    from infra.components.eks import _eks_children  # pyright: ignore[reportPrivateUsage]
    from infra.core.eks.access import EksAccessEntryPlan
    from infra.core.eks.platform import eks_plan

    plan = build_plan(parse(raw("eks-g4dn"), "eks-g4dn"))
    entry = EksAccessEntryPlan(principal_arn="arn:aws:iam::111122223333:role/ml", policy_arn="p")
    core_plan = dataclasses.replace(eks_plan(plan.platform), access_entries=(entry,))
    transform = _eks_children("ml", core_plan)
    control = _child(transform, "aws:eks/cluster:Cluster", "ml-eks-eksCluster")
    assert control is not None and control.protect is True
    for t, n in (("aws:iam/role:Role", "ml-eks-eksRole"), ("aws:eks/accessEntry:AccessEntry", "x")):
        assert _child(transform, t, n) is None  # no protect: inherited from nothing
    # An entry keyed by principal keeps the resources it had under its list position.
    moved = _child(transform, "aws:eks/accessEntry:AccessEntry", f"ml-eks-{entry.key}")
    aliases = [a for a in (moved.aliases if moved else None) or () if isinstance(a, pulumi.Alias)]
    assert [a.name for a in aliases] == ["ml-eks-entry0"]


def test_gke_deletion_protection_false_also_drops_the_engines_protect():
    cfg = raw("gke-t4")
    cfg["gpu-infra:cluster"] = {**cfg["gpu-infra:cluster"], "deletionProtection": False}
    cluster = run_stack(cfg, "gke-unprotected").one("gcp:container/cluster:Cluster")
    assert cluster.options["protect"] is False and cluster.inputs["deletionProtection"] is False


@pytest.mark.parametrize("stack", ["eks-g4dn", "eks-hpc", "eks-zonal-spot"])
def test_eks_node_groups_replace_create_first_by_an_explicit_option(stack):
    groups = sample(stack).of_type("aws:eks/nodeGroup:NodeGroup")
    assert groups and all(g.options["deleteBeforeReplace"] is False for g in groups)


def test_operator_release_replaces_delete_first():
    release = sample("gke-t4").one(RELEASE, "gpu-operator-release")
    assert release.options["deleteBeforeReplace"] is True


@pytest.mark.parametrize("stack", ["onprem-containerd", "onprem-k3s-timeslicing"])
def test_team_namespaces_are_retained_when_removed_or_destroyed(stack):
    teams = team_namespaces(sample(stack))
    assert teams and all(t.options["retainOnDelete"] is True for t in teams)
    operator_ns = [r for r in sample(stack).of_type(NAMESPACE) if r not in teams]
    assert all(r.options["retainOnDelete"] is False for r in operator_ns)


def test_team_namespace_delete_with_stack_flag_reaches_the_registered_retain_on_delete():
    cfg = raw("onprem-k3s-timeslicing")
    cfg["gpu-infra:gpuNamespaces"] = [
        {"name": "kept", "gpus": 1},
        {"name": "scratch", "gpus": 1, "deleteWithStack": True},
        {"name": "kept-kf", "gpus": 1, "kubeflowProfile": {"owner": "ana@example.com"}},
        {
            "name": "scratch-kf",
            "gpus": 1,
            "kubeflowProfile": {"owner": "ana@example.com"},
            "deleteWithStack": True,
        },
    ]
    rec = run_stack(cfg, "onprem-delete-with-stack")
    retained = {
        r.inputs["metadata"]["name"]: r.options["retainOnDelete"]
        for r in [*team_namespaces(rec), *rec.of_type("kubernetes:kubeflow.org/v1:Profile")]
    }
    assert retained == {"kept": True, "scratch": False, "kept-kf": True, "scratch-kf": False}


def test_eks_g4dn_operator_release_does_not_wait_for_ebs_csi_or_node_monitoring():
    rec = sample("eks-g4dn")
    deps = names(rec, rec.one(RELEASE, "gpu-operator-release").depends_on)
    assert "ml-addons-vpc-cni" in deps and "ml-addons-coredns" in deps
    assert not deps & {"ml-addons-aws-ebs-csi-driver", "ml-addons-eks-node-monitoring-agent"}


@pytest.mark.parametrize("stack", [*STACKS, "gke-teams"])
def test_team_namespaces_and_quotas_do_not_depend_on_the_operator_release(stack):
    rec = gke_with_teams() if stack == "gke-teams" else sample(stack)
    releases = {r.urn for r in rec.of_type(RELEASE)}
    waiting = [*team_namespaces(rec), *rec.of_type("kubernetes:core/v1:ResourceQuota")]
    assert all(not set(r.depends_on) & releases for r in waiting)


def test_smoke_test_job_waits_for_its_pool_and_is_replaced_when_it_failed():
    rec = gke_with_teams()
    job = rec.one("kubernetes:batch/v1:Job")
    pool = rec.one("gcp:container/nodePool:NodePool", "ml-gpu-gpu-t4")
    assert pool.urn in job.depends_on
    assert job.inputs["metadata"]["annotations"]["pulumi.com/replaceUnready"] == "true"


def test_eks_smoke_test_job_waits_for_its_node_group_and_its_scale_from_zero_tags():
    cfg = raw("eks-g4dn")
    cfg["gpu-infra:gpuPools"][0]["smokeTest"] = True
    rec = run_stack(cfg, "eks-smoke")
    deps = names(rec, rec.one("kubernetes:batch/v1:Job").depends_on)
    pool = cfg["gpu-infra:gpuPools"][0]["name"]
    assert {f"ml-{pool}-ng", f"ml-{pool}-ng-resources/nvidia.com/gpu"} <= deps


@functools.cache
def gke_unprotected() -> Recording:
    """gke-t4 with teams and a smoke test, its cluster unprotected for a destroy."""
    cfg = raw("gke-t4")
    cfg["gpu-infra:gpuPools"][0]["smokeTest"] = True
    cfg["gpu-infra:gpuNamespaces"] = [{"name": "ml-team", "gpus": 2}]
    cfg["gpu-infra:cluster"] = {**cfg["gpu-infra:cluster"], "deletionProtection": False}
    return run_stack(cfg, "gke-unprotected-teams")


def test_in_cluster_objects_are_deleted_with_the_unprotected_cluster_this_stack_created():
    rec = gke_unprotected()
    cluster = rec.one("gcp:container/cluster:Cluster").urn
    in_cluster = [r for r in rec.resources if r.custom and r.type.startswith("kubernetes:")]
    assert in_cluster and all(r.options["deletedWith"] == cluster for r in in_cluster)


def test_gke_node_pools_are_deleted_with_the_unprotected_cluster_that_deletes_them():
    rec = gke_unprotected()
    cluster = rec.one("gcp:container/cluster:Cluster").urn
    pools = rec.of_type("gcp:container/nodePool:NodePool")
    assert pools and all(p.options["deletedWith"] == cluster for p in pools)


@pytest.mark.parametrize("stack", [*STACKS, "gke-teams"])
def test_no_resource_is_deleted_with_a_protected_cluster(stack):
    # step.go: a protected cluster's delete fails after isDeletedWith has already dropped every
    # object deleted with it from the state, never deleting it (lifecycle.deleted_with_allowed).
    rec = gke_with_teams() if stack == "gke-teams" else sample(stack)
    protected = {r.urn for r in rec.resources if r.options["protect"]}
    assert not [r.name for r in rec.resources if r.options["deletedWith"] in protected]


def test_eks_node_groups_are_deleted_one_by_one_before_the_cluster():
    # "If you have managed node groups ... attached to the cluster, you must delete them first"
    # (https://docs.aws.amazon.com/eks/latest/APIReference/API_DeleteCluster.html).
    groups = sample("eks-g4dn").of_type("aws:eks/nodeGroup:NodeGroup")
    assert groups and all(g.options["deletedWith"] is None for g in groups)


def test_objects_in_an_existing_cluster_are_not_deleted_with_anything():
    rec = sample("onprem-containerd")
    assert all(r.options["deletedWith"] is None for r in rec.resources)


def test_pools_and_groups_have_timeouts_sized_from_their_rolling_update():
    pool = sample("gke-t4").one("gcp:container/nodePool:NodePool", "ml-gpu-gpu-t4")
    # maxNodes 20, one node per surge batch, up to an hour of PDB drain each.
    assert pool.options["customTimeouts"]["update"] == "1200m"
    for g in sample("eks-g4dn").of_type("aws:eks/nodeGroup:NodeGroup"):
        assert int(g.options["customTimeouts"]["update"].removesuffix("m")) >= 60


def test_plan_json_records_each_resources_registered_options(capsys):
    assert plan_cli.main(["--stack", "eks-g4dn", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    keys = {
        "protect",
        "deleteBeforeReplace",
        "retainOnDelete",
        "deletedWith",
        "customTimeouts",
        "ignoreChanges",
        "aliases",
    }
    assert all(set(r["options"]) == keys for r in doc["resources"])


def test_diff_of_an_eks_instance_type_change_says_create_first(tmp_path, capsys):
    cfg = raw("eks-g4dn")
    old = tmp_path / "Pulumi.old.yaml"
    old.write_text((ROOT / "stacks" / "Pulumi.eks-g4dn.yaml").read_text())
    pools = cfg["gpu-infra:gpuPools"]
    assert pools[0]["machineType"] == "g4dn.xlarge"
    pools[0]["machineType"] = "g4dn.2xlarge"
    new = tmp_path / "Pulumi.eks-g4dn.yaml"
    new.write_text(json.dumps({"config": cfg}))
    assert plan_cli.main(["--config", str(new), "--diff", str(old), "--json"]) == 0
    changes = json.loads(capsys.readouterr().out)["changes"]
    replaced = [c for c in changes if c["op"] == "replace" and "nodeGroup" in c["urn"]]
    assert replaced
    assert all(
        "replacement created before the old one is deleted" in c["disruptive"] for c in replaced
    )


def diff_against_sample(stack: str, cfg: dict[str, Any], tmp_path: Path, capsys) -> list[dict]:
    new = tmp_path / f"Pulumi.{stack}.yaml"
    new.write_text(json.dumps({"config": cfg}))
    old = ROOT / "stacks" / f"Pulumi.{stack}.yaml"
    assert plan_cli.main(["--config", str(new), "--diff", str(old), "--json"]) == 0
    return json.loads(capsys.readouterr().out)["changes"]


def test_diff_of_an_operator_namespace_change_says_the_release_is_deleted_first(tmp_path, capsys):
    cfg = raw("gke-t4")
    cfg["gpu-infra:gpuOperator"] = {**cfg.get("gpu-infra:gpuOperator", {}), "namespace": "gpu-op"}
    changes = diff_against_sample("gke-t4", cfg, tmp_path, capsys)
    (release,) = [c for c in changes if c["urn"].endswith("::gpu-operator-release")]
    assert release["op"] == "replace"
    assert "deleted before its replacement is created" in release["disruptive"]


def test_smoke_test_job_wait_outlasts_its_deadline_so_one_update_sees_it_end():
    # replaceUnready re-runs any unready Job on the next update; waiting past the Job's own
    # activeDeadlineSeconds means only an interrupted update leaves one running (docs/day2.md, the smoke-test Job).
    job = gke_with_teams().one("kubernetes:batch/v1:Job")
    deadline = job.inputs["spec"]["activeDeadlineSeconds"]
    assert int(job.options["customTimeouts"]["create"].removesuffix("m")) * 60 > deadline


def test_diff_of_a_time_slicing_replicas_change_replaces_the_configmap_create_first(
    tmp_path, capsys
):
    # pulumi-kubernetes replaces a ConfigMap whose data changes, delete-first under the same name;
    # the data-hashed name makes it create-first, and the release moves to the new name.
    cfg = raw("onprem-k3s-timeslicing")
    pools = cfg["gpu-infra:gpuPools"]
    assert pools[0]["sharing"]["replicas"] == 4
    pools[0]["sharing"] = {**pools[0]["sharing"], "replicas": 8}
    changes = diff_against_sample("onprem-k3s-timeslicing", cfg, tmp_path, capsys)
    config_maps = [c for c in changes if "kubernetes:core/v1:ConfigMap" in c["urn"]]
    assert [c["op"] for c in config_maps] == ["replace"]
    assert config_maps[0]["disruptive"] is None  # a delete-first replace would say so here
    new = tmp_path / "Pulumi.onprem-k3s-timeslicing.yaml"
    plans = []
    for f in (ROOT / "stacks" / new.name, new):
        assert plan_cli.main(["--config", str(f), "--json"]) == 0
        (cm,) = [
            r
            for r in json.loads(capsys.readouterr().out)["resources"]
            if r["type"] == "kubernetes:core/v1:ConfigMap"
        ]
        plans.append(cm)
    assert plans[0]["urn"] == plans[1]["urn"]
    assert lifecycle.replace_order(plans[0], plans[1]) == (
        "create-first",
        "its name or namespace changes (pulumi-kubernetes Diff)",
    )
    (release,) = [c for c in changes if c["urn"].endswith("::gpu-operator-release")]
    assert release["op"] == "update"
    assert "values.devicePlugin.config.name" in release["properties"]
