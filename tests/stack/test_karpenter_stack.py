"""Karpenter GPU pools on the mock engine: one EC2NodeClass and one NodePool per pool, children of
the pool's component, with the cluster's node role; no GPU node group; the system group stays."""

from __future__ import annotations

import pytest

from infra import mockengine
from infra.components.karpenter_pools import NODE_CLASS, NODE_POOL
from infra.core.eks.karpenter import crds
from tests.stack.harness import run_stack

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
POOLS = ("a10g-spot", "l4")


@pytest.fixture(scope="module")
def rec() -> mockengine.Recording:
    return run_stack("eks-karpenter")


def test_one_nodeclass_and_one_nodepool_per_gpu_pool(rec):
    assert sorted(r.inputs["metadata"]["name"] for r in rec.of_type(NODE_CLASS)) == list(POOLS)
    assert sorted(r.inputs["metadata"]["name"] for r in rec.of_type(NODE_POOL)) == list(POOLS)


def test_only_the_system_node_group_is_a_managed_node_group(rec):
    assert [r.name for r in rec.of_type(NODE_GROUP)] == ["karp-system"]


def test_nodeclass_role_is_the_cluster_node_role_and_sent_manifests_validate(rec):
    (role,) = [r for r in rec.of_type("aws:iam/role:Role") if r.name == "karp-nodes"]
    for r in [*rec.of_type(NODE_CLASS), *rec.of_type(NODE_POOL)]:
        assert crds.validate(r.inputs) == [], r.name
    for r in rec.of_type(NODE_CLASS):
        assert r.inputs["spec"]["role"] == role.name


def test_nodepool_waits_for_its_nodeclass_and_both_are_children_of_the_pool(rec):
    classes = {r.inputs["metadata"]["name"]: r for r in rec.of_type(NODE_CLASS)}
    for np in rec.of_type(NODE_POOL):
        nc = classes[np.inputs["metadata"]["name"]]
        assert nc.urn in np.depends_on
        assert np.parent == nc.parent and np.parent is not None
        assert "KarpenterGpuPool" in np.parent
