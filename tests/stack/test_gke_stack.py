"""GKE wiring on the mock engine: the plan lands on the resources, with SDK-checked inputs."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

from infra import mockanswers, mockengine
from infra.components.gke import _cluster_args
from infra.core.config.stack import load_stack_file, parse
from infra.core.errors import ConfigErrors
from infra.core.gke.observed import GkeClusterObserved, GkeObserved
from infra.core.observed import Observed
from infra.core.plan import build_plan
from infra.mocklive import LiveAccount
from tests.conftest import GKE_GPU_TOLERATION, gke_config
from tests.stack.harness import run_stack, sample, sdk_problems

NODE_POOL = "gcp:container/nodePool:NodePool"
ROOT = Path(__file__).resolve().parents[2]


def gpu_pools(rec: mockengine.Recording) -> list[mockengine.Registered]:
    return [r for r in rec.of_type(NODE_POOL) if r.inputs["nodeConfig"].get("guestAccelerators")]


def test_gpu_pools_are_children_of_the_pools_component():
    rec = sample("gke-t4")
    (pool,) = gpu_pools(rec)
    parent = rec.by_urn(pool.parent)
    assert parent.type == "gpu-infra:gcp:GpuNodePools"


def test_gpu_pool_waits_for_node_sa_roles_not_the_system_pool():
    rec = sample("gke-t4")
    (pool,) = gpu_pools(rec)
    system = rec.one(NODE_POOL, "ml-system")
    sa = rec.one("gcp:serviceaccount/account:Account")
    bindings = rec.of_type("gcp:projects/iAMMember:IAMMember")
    assert system.urn not in pool.depends_on
    assert sa.urn in pool.depends_on and all(b.urn in pool.depends_on for b in bindings)
    assert pool.inputs["nodeConfig"]["serviceAccount"].startswith(sa.inputs["accountId"] + "@")


def test_cluster_has_workload_identity_shielded_nodes_and_deletion_protection():
    rec = sample("gke-t4")
    cluster = rec.one("gcp:container/cluster:Cluster").inputs
    assert cluster["workloadIdentityConfig"] == {"workloadPool": "demo-project.svc.id.goog"}
    assert cluster["enableShieldedNodes"] is True
    assert cluster["deletionProtection"] is True
    assert cluster["removeDefaultNodePool"] is True


def test_node_service_account_gets_only_least_privilege_roles():
    rec = sample("gke-t4")
    roles = sorted(r.inputs["role"] for r in rec.of_type("gcp:projects/iAMMember:IAMMember"))
    assert roles == ["roles/artifactregistry.reader", "roles/container.defaultNodeServiceAccount"]


def test_kubeconfig_is_a_secret_output():
    rec = sample("gke-t4")
    assert rec.outputs["kubeconfig"] == mockengine.SECRET
    provider = rec.one("pulumi:providers:kubernetes")
    assert provider.inputs["kubeconfig"] == mockengine.SECRET


def test_pool_outputs_carry_scheduling_hints():
    hints = sample("gke-t4").outputs["gpuPools"]["gpu-t4"]
    assert hints["nodeSelector"]["cloud.google.com/gke-accelerator"] == "nvidia-tesla-t4"
    assert hints["resourceName"] == "nvidia.com/gpu" and hints["gpusPerNode"] == 1
    assert GKE_GPU_TOLERATION in hints["tolerations"]


def test_existing_cluster_is_looked_up_by_the_observe_step_not_created():
    raw = gke_config(
        cluster={"name": "prod", "location": "us-central1", "existing": True, "cpuNodes": 5},
        gpuOperator={"clusterWide": True},
    )
    rec = run_stack(raw, account=LiveAccount(gke_clusters=frozenset({"prod"})))
    assert rec.of_type("gcp:container/cluster:Cluster") == []
    assert [t for t, _ in rec.invokes] == ["gcp:container/getCluster:getCluster"]
    (pool,) = gpu_pools(rec)
    assert pool.inputs["cluster"] == "prod"


def test_existing_cluster_is_reached_at_its_observed_endpoint():
    raw = gke_config(
        cluster={"name": "prod", "location": "us-central1", "existing": True, "cpuNodes": 5},
        gpuOperator={"clusterWide": True},
    )
    found = GkeClusterObserved(name="prod", endpoint="198.51.100.7", certificate_authority="Q0E=")
    rec = run_stack(raw, observed=Observed("gke", GkeObserved(cluster=found)))
    assert rec.invokes == [] and rec.outputs["clusterEndpoint"] == "https://198.51.100.7"


def test_an_existing_cluster_the_project_lacks_is_an_error_naming_it():
    raw = gke_config(
        cluster={"name": "prod", "location": "us-central1", "existing": True, "cpuNodes": 5},
        gpuOperator={"clusterWide": True},
    )
    with pytest.raises(Exception, match=r"cluster\.name: 'prod': no GKE cluster of that name"):
        run_stack(raw, account=LiveAccount())


def test_spot_l4_stack_with_compute_class_fallback():
    rec = sample("gke-l4-spot")
    pools = {p.inputs["name"]: p.inputs for p in gpu_pools(rec)}
    assert pools["l4-spot"]["nodeConfig"]["spot"] is True
    assert pools["l4-spot"]["nodeConfig"]["guestAccelerators"][0]["type"] == "nvidia-l4"
    assert (
        pools["l4-spot-a31395"]["nodeConfig"]["guestAccelerators"][0]["type"] == "nvidia-tesla-t4"
    )
    (cc,) = rec.of_type("kubernetes:cloud.google.com/v1:ComputeClass")
    # Registration order is not deterministic; the priority order is the stack file's order.
    assert cc.inputs["spec"]["priorities"] == [
        {"nodepools": ["l4-spot"]},
        {"nodepools": ["l4-spot-0a12e4"]},
        {"nodepools": ["l4-spot-a31395"]},
    ]
    assert set(pools) == {"l4-spot", "l4-spot-0a12e4", "l4-spot-a31395"}


def test_mig_stack_sets_partition_and_time_sharing():
    rec = sample("gke-a100-mig")
    (pool,) = gpu_pools(rec)
    acc = pool.inputs["nodeConfig"]["guestAccelerators"][0]
    assert acc["gpuPartitionSize"] == "1g.5gb"
    assert acc["gpuSharingConfig"] == {
        "gpuSharingStrategy": "TIME_SHARING",
        "maxSharedClientsPerGpu": 2,
    }


def test_harness_fails_on_an_unknown_input_property():
    rec = run_stack("gke-t4")
    pool = gpu_pools(rec)[0]
    broken = json.loads(json.dumps(pool.inputs))
    broken["nodeConfig"]["guestAccelerators"][0]["gpuDriverInstalationConfig"] = {}
    rec.resources[rec.resources.index(pool)] = mockengine.Registered(
        pool.urn,
        pool.id,
        pool.type,
        pool.name,
        pool.parent,
        pool.custom,
        pool.remote,
        broken,
        pool.depends_on,
    )
    (problem,) = sdk_problems(rec)
    assert "nodeConfig.guestAccelerators[0].gpuDriverInstalationConfig" in problem


def test_harness_fails_loudly_on_an_unmocked_invoke(monkeypatch):
    monkeypatch.delitem(mockanswers.INVOKES, "gcp:container/getCluster:getCluster")
    raw = gke_config(
        cluster={"name": "prod", "location": "us-central1", "existing": True, "cpuNodes": 5},
        gpuOperator={"clusterWide": True},
    )
    with pytest.raises(Exception, match="unmocked invoke gcp:container/getCluster"):
        run_stack(raw, account=LiveAccount(gke_clusters=frozenset({"prod"})))


@functools.cache
def autocreate() -> mockengine.Recording:
    return run_stack("gke-autocreate")


def test_auto_created_pools_have_a_compute_class_and_no_node_pool():
    # A ComputeClass with nodePoolAutoCreation lets GKE create the pools
    # (https://cloud.google.com/kubernetes-engine/docs/how-to/node-auto-provisioning).
    rec = autocreate()
    assert gpu_pools(rec) == []
    (cc,) = rec.of_type("kubernetes:cloud.google.com/v1:ComputeClass")
    spec = cc.inputs["spec"]
    assert spec["nodePoolAutoCreation"] == {"enabled": True}
    assert [p["machineType"] for p in spec["priorities"]] == ["g2-standard-8", "n1-standard-8"]
    (sa,) = rec.of_type("gcp:serviceaccount/account:Account")
    assert spec["nodePoolConfig"]["serviceAccount"].startswith(sa.inputs["accountId"] + "@")


def test_auto_created_pools_run_as_the_class_node_sa_and_the_cluster_sends_auto_provisioning_off():
    # nodePoolConfig.serviceAccount names the identity; clusterAutoscaling.autoProvisioningDefaults
    # is for node auto-provisioning, off here (hashicorp/terraform-provider-google#25307). The
    # block is sent as off, never left out: Optional+Computed keeps a live one, and off is what
    # flattenClusterAutoscaling reads back from a cluster without it.
    rec = autocreate()
    (cluster,) = rec.of_type("gcp:container/cluster:Cluster")
    assert cluster.inputs["clusterAutoscaling"] == {"enabled": False}


SA = "gcp:serviceaccount/account:Account"
IAM = "gcp:projects/iAMMember:IAMMember"


@functools.cache
def shared_autocreate() -> mockengine.Recording:
    return run_stack(
        gke_config(
            {
                "autoCreate": True,
                "machineType": "g2-standard-8",
                "gpu": None,
                "minNodes": 0,
                "maxNodes": 2,
            },
            cluster={
                "name": "prod",
                "location": "us-central1",
                "existing": True,
                "cpuNodes": 5,
                "minMasterVersion": "1.35",
            },
            gpuOperator={"enabled": False},
        )
    )


def test_node_sa_and_roles_are_retained_on_a_shared_cluster_whose_class_auto_creates_pools():
    # A destroy deletes the ComputeClass, not the pools GKE auto-created for it: their nodes keep
    # running as the node SA (lifecycle.csv, role auto-created-nodes).
    rec = shared_autocreate()
    identity = [*rec.of_type(SA), *rec.of_type(IAM)]
    assert len(identity) > 1 and all(r.options["retainOnDelete"] is True for r in identity)


def test_retained_node_sa_is_adopted_on_redeploy_create_ignore_already_exists():
    # The retained account keeps its fixed account_id: a redeploy of the destroyed stack would
    # fail "already exists" without create_ignore_already_exists (pulumi_gcp AccountArgs).
    (sa,) = shared_autocreate().of_type(SA)
    assert sa.inputs["createIgnoreAlreadyExists"] is True


def test_node_sa_of_a_stack_owned_cluster_is_never_adopted_from_another():
    (sa,) = autocreate().of_type(SA)
    assert "createIgnoreAlreadyExists" not in sa.inputs


def test_node_sa_is_deleted_with_the_stack_that_owns_the_cluster_and_its_auto_created_pools():
    rec = autocreate()  # the cluster goes first, with every node on it
    identity = [*rec.of_type(SA), *rec.of_type(IAM)]
    assert identity and all(r.options["retainOnDelete"] is False for r in identity)


def test_a_second_stack_cannot_take_over_a_compute_class_of_the_same_name():
    # pulumi-kubernetes >= 4.29.0 answers an existing object with AlreadyExists unless the
    # provider sets upsertExistingObjects (release notes v4.29.0, #2926); it is never set.
    rec = autocreate()
    (provider,) = rec.of_type("pulumi:providers:kubernetes")
    assert not provider.inputs.get("upsertExistingObjects")
    assert rec.of_type("kubernetes:cloud.google.com/v1:ComputeClass")[0].inputs["metadata"] == {
        "name": "l4-auto"
    }


GKE_STACKS = sorted(p for p in (ROOT / "stacks").glob("Pulumi.gke-*.yaml"))


@pytest.mark.parametrize("path", GKE_STACKS, ids=lambda p: p.stem)
def test_no_sample_stack_turns_auto_provisioning_on_or_sends_its_defaults(path):
    # Node auto-provisioning stays off and its defaults are not read back with it off
    # (terraform-provider-google flattenClusterAutoscaling, hashicorp/terraform-provider-google
    # #25307): defaults sent would be a permanent diff; `enabled: false` alone is what
    # flattenClusterAutoscaling returns for a cluster without it (nil -> enabled=false).
    _, raw = load_stack_file(path)
    g = build_plan(parse(raw, "s")).platform.plan
    assert g is not None
    block = _cluster_args(g, "nodes@demo-project.iam.gserviceaccount.com").cluster_autoscaling
    assert block is not None and block.enabled is False
    assert block.auto_provisioning_defaults is None and block.resource_limits is None


def test_below_the_gate_the_created_cluster_gets_nap_with_the_planned_limits_and_node_sa():
    # Below 1.33.3-gke.1136000 a ComputeClass auto-creates pools only with cluster-level node
    # auto-provisioning (about-custom-compute-classes); its defaults name the least-privilege node
    # SA and the stack's scopes, read back with it on (flattenClusterAutoscaling).
    _, raw = load_stack_file(ROOT / "stacks" / "Pulumi.gke-autocreate.yaml")
    # 1.33 is past standard support on the suite's day: the Extended channel still runs it.
    raw["gpu-infra:cluster"]["minMasterVersion"] = "1.33.2-gke.1240000"
    raw["gpu-infra:cluster"]["releaseChannel"] = "EXTENDED"
    g = build_plan(parse(raw, "s")).platform.plan
    assert g is not None and g.cluster.auto_provisioning_limits is not None
    args = _cluster_args(g, "nodes@demo-project.iam.gserviceaccount.com").cluster_autoscaling
    assert args is not None and args.enabled is True
    sent = {(r.resource_type, r.minimum, r.maximum) for r in args.resource_limits or []}
    planned = {(r.resource_type, r.minimum, r.maximum) for r in g.cluster.auto_provisioning_limits}
    assert sent == planned and {"cpu", "memory", "nvidia-l4", "nvidia-tesla-t4"} <= {
        t for t, _, _ in sent
    }
    defaults = args.auto_provisioning_defaults
    assert defaults is not None
    assert defaults.service_account == "nodes@demo-project.iam.gserviceaccount.com"
    assert defaults.oauth_scopes == ["https://www.googleapis.com/auth/cloud-platform"]


def test_an_existing_cluster_without_workload_identity_is_refused_at_cluster_name():
    # The pools run the GKE metadata server (GKE_METADATA), which "can only be enabled if
    # workload identity is enabled at the cluster level" (terraform-provider-google
    # container_cluster workload_metadata_config.mode).
    raw = gke_config(
        cluster={"name": "prod", "location": "us-central1", "existing": True, "cpuNodes": 5},
        gpuOperator={"clusterWide": True},
    )
    account = LiveAccount(
        gke_clusters=frozenset({"prod"}), gke_without_workload_identity=frozenset({"prod"})
    )
    config = parse(raw, "test")
    with pytest.raises(ConfigErrors) as e:
        build_plan(config, None, mockengine.observe(raw, "test", account))
    (issue,) = e.value.issues
    assert issue.path == "cluster.name" and "has no Workload Identity" in issue.reason
