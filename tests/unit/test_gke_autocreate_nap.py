"""Cluster-level node auto-provisioning below the auto-creation gate (``infra/core/gke/nap.py``):
its resource limits let every pool of the cluster reach its maximum, and enabling it on a running
cluster updates it in place.

Source: https://cloud.google.com/kubernetes-engine/docs/concepts/node-auto-provisioning.
"""

from __future__ import annotations

import pytest

from infra.core.catalog.vendored import Catalog
from infra.core.config.stack import parse
from infra.core.diff import diff
from infra.core.gke.nap import NodeShape, resource_limits, system_shape
from infra.core.plan import Plan, build_plan
from tests.conftest import gke_config
from tests.unit.gke_autocreate_fixtures import AUTO, BELOW_CLUSTER, OFF, build, errors

# GKE version gates judged while their minors were supported (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("gke_minors_supported")

# Cluster-level node auto-provisioning below the gate (infra/core/gke/nap.py).
# "Any auto-provisioning limits that you define are enforced based on the total CPU and memory
# resources used across all node pools, not just auto-provisioned pools. The cluster autoscaler
# does not create new nodes if doing so would exceed one of the defined limits"
# (https://cloud.google.com/kubernetes-engine/docs/concepts/node-auto-provisioning#resource_limits).


def limits_of(plan: Plan) -> dict[str, tuple[int, int]]:
    assert (
        plan.platform.name == "gke"
        and plan.platform.plan.cluster.auto_provisioning_limits is not None
    )
    return {
        lim.resource_type: (lim.minimum, lim.maximum)
        for lim in plan.platform.plan.cluster.auto_provisioning_limits
    }


def test_nap_limits_let_every_pool_of_the_cluster_reach_max_nodes_system_pool_included():
    # System pool: 3 x e2-standard-4 (4 vCPUs, 16 GB); Spot g2-standard-8 (8 vCPUs, 32 GB, 1 L4)
    # x 4; n1-standard-8 (8 vCPUs, 30 GB) + 1 T4 x 4 (the fallback takes the pool's maxNodes).
    got = limits_of(build(cluster=BELOW_CLUSTER))
    assert got["cpu"] == (0, 3 * 4 + 4 * 8 + 4 * 8)
    assert got["memory"] == (0, 3 * 16 + 4 * 32 + 4 * 30)


def test_nap_limits_count_the_fixed_pools_of_the_cluster_too():
    fixed = {"name": "t4", "machineType": "n1-standard-8", "gpu": {"type": "nvidia-tesla-t4"}}
    raw = gke_config(AUTO, cluster=BELOW_CLUSTER, gpuOperator=OFF)
    raw["gpu-infra:gpuPools"].append({**fixed, "minNodes": 0, "maxNodes": 3})
    got = limits_of(build_plan(parse(raw, "s")))
    alone = limits_of(build(cluster=BELOW_CLUSTER))
    assert got["cpu"][1] == alone["cpu"][1] + 3 * 8
    assert got["memory"][1] == alone["memory"][1] + 3 * 30
    assert got["nvidia-tesla-t4"][1] == alone["nvidia-tesla-t4"][1] + 3


def test_nap_has_one_gpu_limit_per_accelerator_type_named_as_the_accelerator_max_nodes_x_gpus():
    # ResourceLimit.resourceType: "cpu", "memory" or gpu-specific string (GKE REST v1).
    pool = {"maxNodes": 2, "fallback": [{"machineType": "g2-standard-24", "maxNodes": 3}]}
    got = limits_of(build(pool, cluster=BELOW_CLUSTER))
    assert set(got) == {"cpu", "memory", "nvidia-l4"}
    assert got["nvidia-l4"] == (0, 2 * 1 + 3 * 2)  # g2-standard-24 carries 2 L4


def test_nap_memory_limit_is_in_whole_gb_rounded_up():
    # ResourceLimit: "For memory, value should be in GB"; a maximum is an int64.
    (_, memory) = resource_limits([], NodeShape(1, 3.75), 1)[:2]
    assert memory.maximum == 4


def test_nap_memory_of_a_system_type_outside_the_catalog_is_its_class_upper_bound():
    catalog = Catalog.load()
    assert system_shape("e2-standard-4", catalog) == NodeShape(4, 16.0)
    assert system_shape("n1-standard-4", catalog) == NodeShape(4, 15.0)
    assert system_shape("n2-highcpu-8", catalog) == NodeShape(8, 16.0)
    assert system_shape("m1-megamem-96", catalog) is None


def test_nap_with_a_system_type_of_unknown_memory_is_refused_at_its_key():
    cluster = {**BELOW_CLUSTER, "systemPool": {"machineType": "n2-megamem-8"}}
    reason = errors(cluster=cluster)["cluster.systemPool.machineType"]
    assert "memory is not known" in reason and "node auto-provisioning" in reason


def test_nap_plan_note_names_the_limits_and_that_other_stacks_pools_count_against_them():
    g = build(cluster=BELOW_CLUSTER).platform.plan
    assert g is not None
    (note,) = [n for n in g.notes if "resource limits" in n]
    assert "cpu 76" in note and "nvidia-l4 4" in note and "another stack" in note
    assert not any("is not enabled" in n for n in g.notes)


def test_enabling_nap_on_a_running_cluster_is_an_in_place_update():
    # cluster_autoscaling has an update path (UpdateCluster DesiredClusterAutoscaling) and no
    # ForceNew field the plan sends (resource_container_cluster.go; only boot_disk_kms_key is).
    urn = "urn:pulumi:s::p::gcp:container/cluster:Cluster::c"
    old = {"urn": urn, "type": "gcp:container/cluster:Cluster", "name": "c", "custom": True}
    block = {
        "enabled": True,
        "resourceLimits": [{"resourceType": "cpu", "minimum": 0, "maximum": 76}],
        "autoProvisioningDefaults": {"serviceAccount": "a", "oauthScopes": ["s"]},
    }
    (c,) = diff(
        [{**old, "inputs": {"name": "ml"}}],
        [{**old, "inputs": {"name": "ml", "clusterAutoscaling": block}}],
    )
    assert c.op == "update"
