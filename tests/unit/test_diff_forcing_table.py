"""Rows of replace_forcing_properties.csv corrected against the provider source (file @ commit)."""

from __future__ import annotations

import re

import pytest

from infra.core.diff import diff, forcing_rules
from tests.unit.state_fixtures import state_resource

GKE = "gcp:container/cluster:Cluster"
NP = "gcp:container/nodePool:NodePool"


def _one(type_, old, new):
    (c,) = diff([state_resource(old, type_)], [state_resource(new, type_)])
    return c


def test_every_forcing_row_cites_a_provider_file_at_a_commit():
    # The table was once written from memory; each row now names the upstream file and commit read.
    for rule in forcing_rules():
        assert re.search(r"\S+\.go\b.*@ [0-9a-f]{8}", rule.source), (rule.type, rule.property)


def test_eip_customer_owned_ipv4_pool_change_is_an_update_not_a_replace():
    # ec2_eip.go @ 01606926: customer_owned_ipv4_pool is Optional only (no ForceNew).
    c = _one("aws:ec2/eip:Eip", {"customerOwnedIpv4Pool": "a"}, {"customerOwnedIpv4Pool": "b"})
    assert c.op == "update"


@pytest.mark.parametrize(
    ("type_", "prop"),
    [
        ("aws:ec2/natGateway:NatGateway", "secondaryPrivateIpAddressCount"),
        ("aws:ec2/vpcEndpoint:VpcEndpoint", "resourceConfigurationArn"),
        ("aws:ec2/vpcEndpoint:VpcEndpoint", "serviceNetworkArn"),
        ("aws:ec2/vpcEndpoint:VpcEndpoint", "serviceRegion"),
        ("aws:eks/cluster:Cluster", "remoteNetworkConfig"),
        ("gcp:compute/router:Router", "nccGateway"),
        ("gcp:compute/router:Router", "params"),
        ("gcp:compute/routerNat:RouterNat", "type"),
        ("gcp:compute/routerNat:RouterNat", "initialNatIps"),
        ("gcp:compute/routerNat:RouterNat", "endpointTypes"),
        (GKE, "dataplaneOptimizationMode"),
        (GKE, "confidentialNodes"),
        (GKE, "nodePools"),
        (NP, "networkConfig"),
    ],
)
def test_force_new_input_missing_from_the_table_now_replaces(type_, prop):
    c = _one(type_, {prop: "a"}, {prop: "b"})
    assert c.op == "replace" and c.replace_because[0][0] == prop


@pytest.mark.parametrize(
    "sub",
    [
        "acceleratorNetworkProfile",
        "additionalNodeNetworkConfigs",
        "additionalPodNetworkConfigs",
        "podCidrOverprovisionConfig",
        "subnetwork",
    ],
)
def test_node_pool_network_config_force_new_field_replaces_the_pool(sub):
    c = _one(NP, {"networkConfig": {sub: "a"}}, {"networkConfig": {sub: "b"}})
    assert c.op == "replace"


def test_node_pool_ephemeral_storage_config_change_replaces_the_pool():
    old = {"nodeConfig": {"ephemeralStorageConfig": {"localSsdCount": 1}}}
    new = {"nodeConfig": {"ephemeralStorageConfig": {"localSsdCount": 2}}}
    assert _one(NP, old, new).op == "replace"


def test_eks_cluster_bootstrap_cluster_creator_admin_permissions_change_replaces_the_cluster():
    old = {"accessConfig": {"bootstrapClusterCreatorAdminPermissions": True}}
    new = {"accessConfig": {"bootstrapClusterCreatorAdminPermissions": False}}
    assert _one("aws:eks/cluster:Cluster", old, new).op == "replace"


def test_gke_ip_allocation_policy_stack_type_change_is_an_update_in_place():
    # resource_container_cluster.go @ 93c65b2d updates ip_allocation_policy.0.stack_type in place.
    old = {"ipAllocationPolicy": {"stackType": "IPV4"}}
    new = {"ipAllocationPolicy": {"stackType": "IPV4_IPV6"}}
    assert _one(GKE, old, new).op == "update"


def test_gke_ip_allocation_policy_secondary_range_change_replaces_the_cluster():
    old = {"ipAllocationPolicy": {"clusterSecondaryRangeName": "pods-a"}}
    new = {"ipAllocationPolicy": {"clusterSecondaryRangeName": "pods-b"}}
    assert _one(GKE, old, new).op == "replace"


def test_gke_ip_allocation_policy_block_added_replaces_the_cluster():
    assert _one(GKE, {}, {"ipAllocationPolicy": {}}).op == "replace"


@pytest.mark.parametrize(
    ("type_", "prop"),
    [
        ("aws:eks/nodeGroup:NodeGroup", "amiType"),
        ("aws:ec2/eip:Eip", "domain"),
        ("aws:ec2/natGateway:NatGateway", "privateIp"),
        ("gcp:compute/routerNat:RouterNat", "region"),
        ("gcp:serviceaccount/account:Account", "project"),
        (NP, "initialNodeCount"),
    ],
)
def test_removing_an_optional_computed_force_new_input_keeps_the_live_value(type_, prop):
    # Optional+Computed: Terraform plans the prior state for an attribute absent from the config.
    assert (
        diff([state_resource({prop: "a", "k": 1}, type_)], [state_resource({"k": 1}, type_)]) == []
    )


def test_removing_a_required_force_new_input_still_replaces():
    c = _one("aws:eks/nodeGroup:NodeGroup", {"nodeRoleArn": "a", "k": 1}, {"k": 1})
    assert c.op == "replace"


def test_renaming_the_karpenter_interruption_queue_replaces_it():
    # sqs/queue.go @ 00a35305: name is ForceNew (SQS cannot rename a queue; its URL holds the name).
    old = {"name": "karp-a-karpenter", "messageRetentionSeconds": 300}
    new = {"name": "karp-b-karpenter", "messageRetentionSeconds": 300}
    c = _one("aws:sqs/queue:Queue", old, new)
    assert c.op == "replace" and c.replace_because[0][0] == "name"


def test_interruption_queue_retention_change_is_an_update_in_place():
    # sqs/queue.go @ 00a35305: message_retention_seconds is set by SetQueueAttributes, not ForceNew.
    old = {"name": "q", "messageRetentionSeconds": 300}
    new = {"name": "q", "messageRetentionSeconds": 600}
    assert _one("aws:sqs/queue:Queue", old, new).op == "update"


@pytest.mark.parametrize(
    ("type_", "prop"),
    [
        ("aws:sqs/queuePolicy:QueuePolicy", "queueUrl"),
        ("aws:cloudwatch/eventRule:EventRule", "name"),
        ("aws:cloudwatch/eventTarget:EventTarget", "rule"),
        ("aws:cloudwatch/eventTarget:EventTarget", "targetId"),
        ("aws:ec2/tag:Tag", "key"),
        ("aws:ec2/tag:Tag", "resourceId"),
    ],
)
def test_karpenter_controller_force_new_input_change_replaces(type_, prop):
    c = _one(type_, {prop: "a", "value": "x"}, {prop: "b", "value": "x"})
    assert c.op == "replace" and c.replace_because[0][0] == prop


def test_discovery_tag_value_change_is_an_update_in_place():
    # aws/resource_aws_ec2_tag.go @ 299594d1: value is updated by CreateTags, only key/resource_id force.
    old = {"resourceId": "sg-1", "key": "karpenter.sh/discovery", "value": "a"}
    new = {"resourceId": "sg-1", "key": "karpenter.sh/discovery", "value": "b"}
    assert _one("aws:ec2/tag:Tag", old, new).op == "update"
