"""Change-preview rules: provider ForceNew tables beyond the GKE/EKS pools, unknown types, propagation."""

from __future__ import annotations

import pytest

from infra.core.diff import diff
from tests.unit.state_fixtures import state_resource

NP = "gcp:container/nodePool:NodePool"
NG = "aws:eks/nodeGroup:NodeGroup"
LT = "aws:ec2/launchTemplate:LaunchTemplate"


def _one(old, new):
    (c,) = [c for c in diff([old], [new]) if c.urn == new["urn"]]
    return c


@pytest.mark.parametrize(
    ("type_", "prop", "old", "new"),
    [
        ("aws:ec2/vpc:Vpc", "cidrBlock", "10.0.0.0/16", "10.1.0.0/16"),
        ("aws:ec2/subnet:Subnet", "cidrBlock", "10.0.0.0/19", "10.1.0.0/19"),
        ("aws:ec2/subnet:Subnet", "availabilityZoneId", "usw2-az1", "usw2-az2"),
        ("aws:ec2/subnet:Subnet", "vpcId", "a", "b"),
        ("aws:autoscaling/tag:Tag", "autoscalingGroupName", "a", "b"),
        ("aws:eks/addon:Addon", "addonName", "coredns", "kube-proxy"),
        ("aws:eks/podIdentityAssociation:PodIdentityAssociation", "serviceAccount", "a", "b"),
        ("aws:iam/role:Role", "name", "a", "b"),
        ("gcp:projects/iAMMember:IAMMember", "role", "roles/a", "roles/b"),
        ("gcp:serviceaccount/account:Account", "accountId", "a", "b"),
        ("gcp:compute/router:Router", "network", "a", "b"),
        ("gcp:projects/service:Service", "service", "a", "b"),
    ],
)
def test_force_new_property_of_a_network_iam_or_addon_type_forces_replacement(
    type_, prop, old, new
):
    c = _one(state_resource({prop: old}, type_, "x"), state_resource({prop: new}, type_, "x"))
    assert c.op == "replace" and c.replace_because[0][0] == prop


def test_asg_tag_key_forces_replacement_group_tag_go():
    t = "aws:autoscaling/tag:Tag"
    old = state_resource({"tag": {"key": "a", "value": "1", "propagateAtLaunch": False}}, t, "x")
    new = state_resource({"tag": {"key": "b", "value": "1", "propagateAtLaunch": False}}, t, "x")
    assert _one(old, new).op == "replace"
    new_value = state_resource(
        {"tag": {"key": "a", "value": "2", "propagateAtLaunch": False}}, t, "x"
    )
    assert _one(old, new_value).op == "update"


def test_a_changed_type_without_table_rows_is_unknown_never_update():
    t = "aws:ec2/somethingNew:SomethingNew"
    c = _one(state_resource({"a": 1}, t, "x"), state_resource({"a": 2}, t, "x"))
    assert c.op == "unknown" and "pulumi preview" in c.because
    assert c.to_json()["op"] == "unknown"


def test_internet_gateway_is_known_to_have_no_force_new_input_so_a_change_is_an_update():
    t = "aws:ec2/internetGateway:InternetGateway"
    assert (
        _one(state_resource({"vpcId": "a"}, t, "x"), state_resource({"vpcId": "b"}, t, "x")).op
        == "update"
    )


@pytest.mark.parametrize("prop", ["name", "namespace"])
def test_helm_release_name_or_namespace_change_is_a_replace_helm_release_force_new_fields(prop):
    t = "kubernetes:helm.sh/v3:Release"
    old = state_resource(
        {"name": "gpu-operator", "namespace": "gpu-operator", "chart": "c"}, t, "op"
    )
    new = state_resource(
        {"name": "gpu-operator", "namespace": "gpu-operator", "chart": "c", prop: "x"}, t, "op"
    )
    c = _one(old, new)
    assert c.op == "replace" and "helm_release.go" in c.replace_because[0][1]
    assert "Helm release" in c.disruptive


@pytest.mark.parametrize("kind", ["kubernetes:apps/v1:DaemonSet", "kubernetes:apps/v1:Deployment"])
def test_workload_spec_selector_change_is_a_replace_selector_is_immutable(kind):
    old = state_resource({"spec": {"selector": {"matchLabels": {"a": "1"}}}}, kind, "d")
    new = state_resource({"spec": {"selector": {"matchLabels": {"a": "2"}}}}, kind, "d")
    assert _one(old, new).op == "replace"


def test_job_spec_template_change_is_a_replace_job_template_is_immutable():
    t = "kubernetes:batch/v1:Job"
    old = state_resource({"spec": {"template": {"spec": {"containers": [{"image": "a"}]}}}}, t, "j")
    new = state_resource({"spec": {"template": {"spec": {"containers": [{"image": "b"}]}}}}, t, "j")
    assert _one(old, new).op == "replace"


def test_removing_an_optional_computed_datapath_provider_keeps_the_live_value_no_replace():
    t = "gcp:container/cluster:Cluster"
    old = state_resource({"name": "ml", "datapathProvider": "ADVANCED_DATAPATH"}, t, "ml")
    new = state_resource({"name": "ml"}, t, "ml")
    assert diff([old], [new]) == []
    changed = state_resource({"name": "ml", "datapathProvider": "LEGACY_DATAPATH"}, t, "ml")
    assert _one(old, changed).op == "replace"


def test_launch_template_update_rolls_the_node_group_update_nodegroup_version():
    lt_old = state_resource({"description": "a"}, LT, "ml-gpu-lt")
    lt_new = state_resource({"description": "b"}, LT, "ml-gpu-lt")
    ng = state_resource({"launchTemplate": {"id": "ml-gpu-lt_id", "version": "1"}}, NG, "ml-gpu-ng")
    changes = {c.name: c for c in diff([lt_old, ng], [lt_new, ng])}
    assert changes["ml-gpu-lt"].op == "update"
    assert changes["ml-gpu-ng"].op == "update"
    assert "UpdateNodegroupVersion" in changes["ml-gpu-ng"].disruptive


def test_unrelated_resources_are_not_marked_by_a_replacement():
    a_old, a_new = (
        state_resource({"name": "a"}, "aws:iam/role:Role", "a"),
        state_resource({"name": "b"}, "aws:iam/role:Role", "a"),
    )
    other = state_resource({"name": "o"}, "aws:iam/role:Role", "o")
    assert [c.name for c in diff([a_old, other], [a_new, other])] == ["a"]


@pytest.mark.parametrize(
    "sub",
    ["count", "type", "gpuPartitionSize", "gpuSharingConfig", "gpuDriverInstallationConfig"],
)
def test_each_guest_accelerator_field_forces_replacement_magic_modules_18493_state(sub):
    acc = {
        "count": 1,
        "type": "nvidia-l4",
        "gpuPartitionSize": "",
        "gpuSharingConfig": {},
        "gpuDriverInstallationConfig": {"gpuDriverVersion": "DEFAULT"},
    }
    changed = {**acc, sub: "x"}
    old = state_resource({"nodeConfig": {"guestAccelerators": [acc]}}, NP, "p")
    new = state_resource({"nodeConfig": {"guestAccelerators": [changed]}}, NP, "p")
    c = _one(old, new)
    assert c.op == "replace" and "18493" in c.replace_because[0][1]


def test_adding_a_guest_accelerator_block_forces_replacement():
    old = state_resource({"nodeConfig": {"guestAccelerators": []}}, NP, "p")
    new = state_resource(
        {"nodeConfig": {"guestAccelerators": [{"count": 1, "type": "nvidia-l4"}]}}, NP, "p"
    )
    assert _one(old, new).op == "replace"


def test_gke_pool_replace_deletes_before_create_same_pool_name():
    old = state_resource({"name": "gpu", "nodeConfig": {"spot": False}}, NP, "ml-gpu")
    new = state_resource({"name": "gpu", "nodeConfig": {"spot": True}}, NP, "ml-gpu")
    assert "deleted before its replacement is created" in _one(old, new).disruptive


def test_removing_private_node_blocks_is_no_change_because_the_provider_keeps_the_live_value():
    # privateClusterConfig and the pool's networkConfig.enablePrivateNodes are Optional+Computed.
    cl = "gcp:container/cluster:Cluster"
    old_c = state_resource(
        {"name": "ml", "privateClusterConfig": {"enablePrivateNodes": True}}, cl, "c"
    )
    new_c = state_resource({"name": "ml"}, cl, "c")
    old_p = state_resource({"name": "gpu", "networkConfig": {"enablePrivateNodes": True}}, NP, "p")
    new_p = state_resource({"name": "gpu"}, NP, "p")
    assert diff([old_c, old_p], [new_c, new_p]) == []


def test_turning_private_nodes_on_stays_an_in_place_update_not_a_replace():
    old_p = state_resource({"name": "gpu"}, NP, "p")
    new_p = state_resource({"name": "gpu", "networkConfig": {"enablePrivateNodes": True}}, NP, "p")
    c = _one(old_p, new_p)
    assert c.op == "update" and "re-creates every node" in c.disruptive


def test_removing_a_block_with_a_non_kept_field_is_still_a_change():
    old_p = state_resource(
        {"name": "gpu", "networkConfig": {"enablePrivateNodes": True, "x": 1}}, NP, "p"
    )
    new_p = state_resource({"name": "gpu"}, NP, "p")
    assert _one(old_p, new_p).op == "update"


# --- EKS vpc-cni: one minor version at a time ---------------------------------------------------

ADDON = "aws:eks/addon:Addon"


def _cni(version: str, name: str = "vpc-cni") -> dict:
    return state_resource(
        {"addonName": name, "clusterName": "ml", "addonVersion": version}, ADDON, name
    )


def test_vpc_cni_update_of_more_than_one_minor_is_refused_with_eks_error_text():
    c = _one(_cni("v1.18.5-eksbuild.1"), _cni("v1.20.4-eksbuild.1"))
    assert c.op == "update"
    assert c.disruptive.startswith("refused by EKS: vpc-cni v1.18.5-eksbuild.1 -> v1.20.4")
    assert "Updating VPC-CNI can only go up or down 1 minor version at a time" in c.disruptive


def test_vpc_cni_update_of_one_minor_or_a_build_is_not_flagged():
    assert _one(_cni("v1.19.2-eksbuild.5"), _cni("v1.20.4-eksbuild.1")).disruptive == ""
    assert _one(_cni("v1.20.1-eksbuild.3"), _cni("v1.20.4-eksbuild.1")).disruptive == ""


def test_vpc_cni_move_to_an_unpinned_default_is_flagged_as_unchecked_step():
    c = _one(_cni("v1.20.4-eksbuild.1"), _cni("(EKS default for 1.35 at deploy time)"))
    assert "cannot be checked before deploy" in c.disruptive


def test_other_addons_may_move_several_minors():
    old, new = _cni("v1.11.4-eksbuild.40", "coredns"), _cni("v1.13.2-eksbuild.11", "coredns")
    assert _one(old, new).disruptive == ""


KNP = "kubernetes:karpenter.sh/v1:NodePool"
KNC = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"


def _nodepool(**spec):
    base = {
        "weight": 10,
        "limits": {"nvidia.com/gpu": "4"},
        "disruption": {"consolidateAfter": "10m", "budgets": [{"nodes": "1"}]},
        "template": {"spec": {"expireAfter": "720h", "requirements": [], "taints": []}},
    }
    base.update(spec)
    return state_resource({"metadata": {"name": "l4"}, "spec": base}, KNP, "karp-l4-nodepool")


@pytest.mark.parametrize(
    "template",
    [
        {"terminationGracePeriod": "48h"},
        {"expireAfter": "336h"},
        {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "l4b"}},
        {"taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]},
    ],
)
def test_karpenter_nodepool_template_change_drifts_every_node_of_the_pool(template):
    old = _nodepool()
    new = _nodepool(template={"spec": {**old["inputs"]["spec"]["template"]["spec"], **template}})
    c = _one(old, new)
    assert c.op == "update"
    assert "drifts every node of pool l4" in c.disruptive
    assert "terminationGracePeriod" in c.disruptive


@pytest.mark.parametrize(
    "spec",
    [
        {"weight": 20},
        {"limits": {"nvidia.com/gpu": "8"}},
        {"disruption": {"consolidateAfter": "5m", "budgets": [{"nodes": "2"}]}},
    ],
)
def test_karpenter_nodepool_behavioral_fields_do_not_drift(spec):
    c = _one(_nodepool(), _nodepool(**spec))
    assert c.op == "update"
    assert c.disruptive == ""


@pytest.mark.parametrize(
    ("key", "old_v", "new_v"),
    [
        ("userData", "a", "b"),
        ("blockDeviceMappings", [{"deviceName": "/dev/xvda"}], [{"deviceName": "/dev/xvdb"}]),
        ("metadataOptions", {"httpTokens": "required"}, {"httpTokens": "optional"}),
        ("role", "r1", "r2"),
        ("tags", {"a": "1"}, {"a": "2"}),
    ],
)
def test_karpenter_ec2nodeclass_spec_change_drifts_every_node_using_it(key, old_v, new_v):
    def nc(v):
        return state_resource(
            {"metadata": {"name": "l4"}, "spec": {key: v}}, KNC, "karp-l4-nodeclass"
        )

    c = _one(nc(old_v), nc(new_v))
    assert c.op == "update"
    assert "drifts every node of every NodePool using node class l4" in c.disruptive


def test_karpenter_nodepool_metadata_label_change_does_not_drift():
    old = _nodepool()
    new = _nodepool()
    new["inputs"]["metadata"] = {"name": "l4", "labels": {"team": "b"}}
    assert _one(old, new).disruptive == ""


def test_karpenter_resolved_fields_may_drift_only_nodes_that_no_longer_match():
    # hash:"ignore" fields checked against each node's resolved value (disruption.md "Special
    # Cases on Drift"): requirements, AMI / subnet / security group selector terms.
    req = [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}]
    old = _nodepool()
    spec = old["inputs"]["spec"]["template"]["spec"]
    new = _nodepool(template={"spec": {**spec, "requirements": req}})
    assert "may drift the nodes that no longer match it" in _one(old, new).disruptive

    def nc(**spec):
        return state_resource({"metadata": {"name": "l4"}, "spec": spec}, KNC, "karp-l4-nodeclass")

    ami = _one(
        nc(amiSelectorTerms=[{"alias": "al2023@v1"}]), nc(amiSelectorTerms=[{"alias": "al2023@v2"}])
    )
    assert "may drift the nodes that no longer match it" in ami.disruptive
    # Neither hashed nor resolved: no drift.
    assert _one(nc(ipPrefixCount=1), nc(ipPrefixCount=2)).disruptive == ""


def test_an_eks_node_group_version_update_drains_every_node_per_the_managed_node_update_phases():
    # docs.aws.amazon.com/eks/latest/userguide/managed-node-update-behavior.html: a version or
    # AMI release update launches new nodes, then drains and terminates every old one.
    from infra.core.diff import diff as run_diff

    def group(version: str) -> dict:
        return {
            "urn": "urn:ng",
            "type": "aws:eks/nodeGroup:NodeGroup",
            "name": "ml-gpu",
            "inputs": {"version": version, "releaseVersion": "1.33.0-20260101"},
        }

    (change,) = run_diff([group("1.33")], [group("1.34")])
    assert change.op == "update" and "re-creates every node" in change.disruptive
