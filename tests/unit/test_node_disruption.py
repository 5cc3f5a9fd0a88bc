"""The disruption table (data/node_disruption.csv): what an in-place update does to nodes, per
receiver. Expected answers come from the receivers' code and docs named in each test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infra.core.diff import diff, forcing_rules
from infra.core.disruption import EFFECTS, RESOLVED, disruption_rules, update_disruption
from infra.core.eks.ami import AMI_PARAMETER_ANNOTATION, karpenter_ami_parameter
from infra.core.inputs import covers
from tests.unit.state_fixtures import state_resource

NP = "gcp:container/nodePool:NodePool"
NG = "aws:eks/nodeGroup:NodeGroup"
PATCH = "kubernetes:core/v1:NodePatch"
RELEASE = "kubernetes:helm.sh/v3:Release"
NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
MIG = "nvidia.com/mig.config"


def _change(type_, old, new):
    (c,) = diff([state_resource(old, type_, "x")], [state_resource(new, type_, "x")])
    return c


def test_every_row_has_a_known_effect_and_a_source():
    rows = disruption_rules()
    assert rows and all(r.effect in EFFECTS and r.source for r in rows)
    # One row per property, but for the resolved effects (each judged by its own model).
    keys = {
        (r.type, r.property, r.effect if r.effect in RESOLVED or r.when == "family" else "")
        for r in rows
    }
    assert len(keys) == len(rows)


@pytest.mark.parametrize("prop", ["version", "releaseVersion"])
def test_node_group_version_and_release_version_roll_every_node_update_nodegroup_version(prop):
    # terraform-provider-aws node_group.go resourceNodeGroupUpdate: a change of version or
    # release_version is sent by UpdateNodegroupVersion, which replaces every node of the group.
    old = {"version": "1.33", "releaseVersion": "1.33.5-20251120", "scalingConfig": {"maxSize": 2}}
    new = {**old, prop: "1.34" if prop == "version" else "1.33.5-20260714"}
    c = _change(NG, old, new)
    assert c.op == "update" and "re-creates every node" in c.disruptive


def test_node_group_scaling_and_taints_go_by_update_nodegroup_config_without_a_roll():
    # resourceNodeGroupUpdate: labels, scaling_config, taint go by UpdateNodegroupConfig.
    old = {"version": "1.33", "scalingConfig": {"maxSize": 2}, "labels": {"a": "1"}}
    new = {"version": "1.33", "scalingConfig": {"maxSize": 5}, "labels": {"a": "2"}}
    c = _change(NG, old, new)
    assert c.op == "update" and c.disruptive == ""


@pytest.mark.parametrize(
    ("type_", "where"),
    [(NP, ("nodeConfig", "labels")), (NG, ("labels",)), (PATCH, ("metadata", "labels"))],
)
def test_a_mig_layout_label_change_reconfigures_the_gpus_on_every_platform(type_, where):
    # gpu-operator-mig.html: the MIG manager applies the layout of the node's nvidia.com/mig.config.
    def inputs(layout):
        labels = {MIG: layout, "gpu-infra/pool": "a100"}
        return {where[0]: {where[1]: labels}} if len(where) == 2 else {where[0]: labels}

    c = _change(type_, inputs("all-1g.5gb"), inputs("all-2g.10gb"))
    assert c.op == "update"
    assert "changes the MIG layout" in c.disruptive
    assert "all-1g.5gb -> all-2g.10gb" in c.disruptive


def test_another_label_on_the_same_nodes_is_no_mig_change():
    old = {"labels": {MIG: "all-1g.5gb", "team": "a"}}
    new = {"labels": {MIG: "all-1g.5gb", "team": "b"}}
    assert _change(NG, old, new).disruptive == ""


def test_the_charts_mig_strategy_changes_what_the_device_plugin_advertises():
    # gpu-operator-mig.html "MIG strategies": single -> nvidia.com/gpu, mixed -> nvidia.com/mig-*.
    old = {"name": "gpu-operator", "values": {"mig": {"strategy": "single"}}}
    new = {"name": "gpu-operator", "values": {"mig": {"strategy": "mixed"}}}
    assert "nvidia.com/mig-<profile>" in _change(RELEASE, old, new).disruptive


def test_the_alias_parameter_is_karpenters_resolve_path_per_kubernetes_minor():
    # al2023.go resolvePath: /aws/service/eks/optimized-ami/%s/amazon-linux-2023/%s/%s/%s/image_id
    # with name amazon-eks-node-al2023-<arch>-<variant>-<k8s>-<amiVersion>; bottlerocket.go trims
    # the leading v: /aws/service/bottlerocket/aws-k8s-%s-nvidia/x86_64/%s/image_id.
    assert karpenter_ami_parameter("al2023", "v20260714", "1.36", "x86_64") == (
        "/aws/service/eks/optimized-ami/1.36/amazon-linux-2023/x86_64/nvidia/"
        "amazon-eks-node-al2023-x86_64-nvidia-1.36-v20260714/image_id"
    )
    assert karpenter_ami_parameter("bottlerocket", "v1.46.0", "1.35", "arm64") == (
        "/aws/service/bottlerocket/aws-k8s-1.35-nvidia/arm64/1.46.0/image_id"
    )


def _node_class(parameter):
    meta: dict[str, object] = {"name": "l4"}
    if parameter is not None:
        meta["annotations"] = {AMI_PARAMETER_ANNOTATION: parameter}
    return {"metadata": meta, "spec": {"amiSelectorTerms": [{"alias": "al2023@v20260714"}]}}


def test_a_newly_resolved_ami_parameter_drifts_every_node_of_the_node_class():
    # drift.go isAMIDrifted: nodes launched from the AMI of the old parameter are AMIDrift.
    c = _change(NODE_CLASS, _node_class("/a/1.35/image_id"), _node_class("/a/1.36/image_id"))
    assert "drifts every node of every NodePool using node class l4" in c.disruptive


def test_recording_the_ami_parameter_for_the_first_time_drifts_nothing():
    # Karpenter reads neither the annotation nor its absence: the same alias, the same AMI.
    c = _change(NODE_CLASS, _node_class(None), _node_class("/a/1.35/image_id"))
    assert c.op == "update" and c.disruptive == ""


def test_the_annotation_row_is_the_one_eks_writes():
    key = f"metadata.annotations.{AMI_PARAMETER_ANNOTATION}"
    rows = [r for r in disruption_rules() if r.type == NODE_CLASS and r.property == key]
    assert [(r.effect, r.when) for r in rows] == [("drifts", "was-set")]


def test_the_answer_comes_from_the_table_alone():
    old, new = {"version": "1.33"}, {"version": "1.34"}
    assert update_disruption(NG, ["version"], old, new)
    assert update_disruption(NG, ["version"], old, new, rules=()) == ""


def _operator(version, **values):
    return {"chart": "gpu-operator", "version": version, "values": values}


def test_a_chart_bump_with_the_operators_driver_reloads_it_node_by_node():
    # values-v26.3.3.yaml driver.version "580.126.20", values-v26.7.0.yaml "595.91.07";
    # driver.upgradePolicy.autoUpgrade true, maxUnavailable 25% in both.
    c = _change(RELEASE, _operator("v26.3.3"), _operator("v26.7.0"))
    assert "580.126.20 -> 595.91.07" in c.disruptive and "deletes its GPU pods" in c.disruptive
    assert "maxUnavailable 25%" in c.disruptive


def test_an_explicit_driver_version_equal_on_both_sides_reloads_nothing():
    pinned = {"version": "580.95.05"}
    c = _change(RELEASE, _operator("v26.3.3", driver=pinned), _operator("v26.7.0", driver=pinned))
    assert "driver" not in c.disruptive  # the toolkit still moves (v1.19.1 -> v1.20.0)


def test_without_auto_upgrade_the_new_driver_waits_for_the_nodes_reboot():
    off = {"upgradePolicy": {"autoUpgrade": False}}
    c = _change(RELEASE, _operator("v26.3.3", driver=off), _operator("v26.7.0", driver=off))
    assert "580.126.20 -> 595.91.07" in c.disruptive and "next reboot" in c.disruptive
    assert "deletes its GPU pods" not in c.disruptive


def test_a_preinstalled_driver_is_no_operator_driver_to_reload():
    off = {"enabled": False}
    tk = {"enabled": False}
    c = _change(
        RELEASE,
        _operator("v26.3.3", driver=off, toolkit=tk),
        _operator("v26.7.0", driver=off, toolkit=tk),
    )
    assert c.disruptive == ""


def test_a_toolkit_env_change_on_k3s_restarts_k3s_with_its_containerd():
    # k3s pkg/agent/containerd/containerd.go Run: k3s exits when its containerd exits.
    sock = {"name": "CONTAINERD_SOCKET", "value": "/run/k3s/containerd/containerd.sock"}
    old = _operator("v26.7.0", driver={"enabled": False}, toolkit={"env": [sock]})
    extra = {"name": "RUNTIME_RESTART_MODE", "value": "signal"}
    new = _operator("v26.7.0", driver={"enabled": False}, toolkit={"env": [sock, extra]})
    c = _change(RELEASE, old, new)
    assert "restarting containerd" in c.disruptive and "API server and etcd" in c.disruptive


POOL = "kubernetes:karpenter.sh/v1:NodePool"
ZONE = "topology.k8s.aws/zone-id"


def _pool(*reqs):
    return {"metadata": {"name": "p"}, "spec": {"template": {"spec": {"requirements": list(reqs)}}}}


def _req(key, op, *values):
    return {"key": key, "operator": op, "values": list(values)}


def test_adding_a_zone_to_an_in_requirement_drifts_nothing():
    # karpenter drift.go areRequirementsDrifted: nodeClaimReq.Compatible(nodepoolReq) != nil;
    # a node labelled az1 or az2 is compatible with In [az1, az2, az3].
    old, new = _pool(_req(ZONE, "In", "az1", "az2")), _pool(_req(ZONE, "In", "az1", "az2", "az3"))
    assert _change(POOL, old, new).disruptive == ""


@pytest.mark.parametrize(
    "new",
    [
        _pool(_req(ZONE, "In", "az1")),  # a node in az2 is no longer compatible
        _pool(_req(ZONE, "NotIn", "az3")),  # another operator
        _pool(_req(ZONE, "In", "az1", "az2"), _req("kubernetes.io/arch", "In", "amd64")),  # new key
    ],
)
def test_narrowing_requirements_may_drift_the_nodes_outside_them(new):
    old = _pool(_req(ZONE, "In", "az1", "az2"))
    assert "may drift the nodes that no longer match" in _change(POOL, old, new).disruptive


def test_dropping_a_requirement_or_a_not_in_value_drifts_nothing():
    old = _pool(_req(ZONE, "NotIn", "az3", "az4"), _req("kubernetes.io/arch", "In", "amd64"))
    assert _change(POOL, old, _pool(_req(ZONE, "NotIn", "az3"))).disruptive == ""


def _class_spec(**spec):
    return {"metadata": {"name": "c"}, "spec": spec}


def test_an_added_subnet_term_drifts_nothing_a_removed_one_may():
    # karpenter-provider-aws drift.go isSubnetDrifted: drift only when the node's subnet is not
    # among the resolved ones.
    a, b = {"tags": {"k": "a"}}, {"id": "subnet-0123456789abcdef0"}
    grown = _change(
        NODE_CLASS, _class_spec(subnetSelectorTerms=[a]), _class_spec(subnetSelectorTerms=[a, b])
    )
    assert grown.disruptive == ""
    cut = _change(
        NODE_CLASS, _class_spec(subnetSelectorTerms=[a, b]), _class_spec(subnetSelectorTerms=[b])
    )
    assert "may drift" in cut.disruptive


def test_an_added_security_group_term_may_still_drift():
    # areSecurityGroupsDrifted compares the resolved set with the instance's for equality.
    a, b = {"tags": {"k": "a"}}, {"id": "sg-0123456789abcdef0"}
    c = _change(
        NODE_CLASS,
        _class_spec(securityGroupSelectorTerms=[a]),
        _class_spec(securityGroupSelectorTerms=[a, b]),
    )
    assert "may drift" in c.disruptive


@pytest.mark.parametrize(("type_", "where"), [(NG, "taints"), (NP, "nodeConfig.taints")])
def test_adding_a_no_execute_taint_evicts_pods_without_a_toleration(type_, where):
    # kubernetes.io taint-and-toleration: NoExecute evicts running pods that do not tolerate it;
    # NoSchedule only keeps new pods away.
    def spec(*taints):
        out: dict = {}
        node = out
        *parents, last = where.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[last] = list(taints)
        return out

    soft = {"key": "sku", "value": "gpu", "effect": "NO_SCHEDULE"}
    hard = {"key": "maint", "value": "now", "effect": "NO_EXECUTE"}
    assert "evicted" in _change(type_, spec(soft), spec(soft, hard)).disruptive
    assert _change(type_, spec(), spec(soft)).disruptive == ""
    assert _change(type_, spec(soft, hard), spec(soft)).disruptive == ""


def test_another_ami_family_drifts_every_node_the_same_resolved_family_does_not():
    # ec2nodeclass.go Hash hashes AMIFamily(): spec.amiFamily, else the alias term's family.
    def cls(terms, family=None):
        spec = {"amiSelectorTerms": terms, **({"amiFamily": family} if family else {})}
        return {"metadata": {"name": "c"}, "spec": spec}

    al, br = [{"alias": "al2023@v20260714"}], [{"alias": "bottlerocket@v1.40.0"}]
    assert "drifts every node" in _change(NODE_CLASS, cls(al), cls(br)).disruptive
    newer = _change(NODE_CLASS, cls(al), cls([{"alias": "al2023@v20260801"}])).disruptive
    assert "may drift the nodes" in newer  # same family: only nodes off the resolved AMIs
    assert _change(NODE_CLASS, cls(al), cls(al, "AL2023")).disruptive == ""  # nil -> AL2023
    ids = [{"id": "ami-0123456789abcdef0"}]
    assert (
        "drifts every node"
        in _change(NODE_CLASS, cls(ids, "AL2023"), cls(ids, "Bottlerocket")).disruptive
    )


def test_dropping_a_zone_from_a_gke_pool_deletes_its_nodes_there_adding_one_does_not():
    # NodePool REST reference, locations[]: "changing node pool locations will result in nodes
    # being added and/or removed"; the provider updates node_locations in place (not ForceNew).
    two = {"nodeLocations": ["us-central1-a", "us-central1-b"], "version": "1.33"}
    one = {"nodeLocations": ["us-central1-a"], "version": "1.33"}
    dropped = _change(NP, two, one)
    assert dropped.op == "update" and "deleted" in dropped.disruptive
    assert "us-central1-b" in dropped.disruptive
    added = _change(NP, one, two)
    assert added.op == "update" and added.disruptive == ""


# The resources whose update can touch running nodes; each property a sample plan sets on one
# needs a verdict: replaced (the ForceNew table) or a row of the disruption table, "none" included.
NODE_OWNERS = (NP, NG, PATCH, NODE_CLASS, "kubernetes:karpenter.sh/v1:NodePool")
GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "plans"


def _leaves(value, prefix=""):
    if isinstance(value, dict) and value:
        for k, v in value.items():
            yield from _leaves(v, f"{prefix}.{k}" if prefix else k)
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        for v in value:
            yield from _leaves(v, prefix)
    else:
        yield prefix


def test_every_property_a_sample_plan_sets_on_a_node_owning_resource_has_a_verdict():
    # apiVersion and kind are part of the type token, so they never change within one type.
    fixed = {"apiVersion", "kind"}
    forcing = [r for r in forcing_rules() if r.property and not r.in_place]
    missing = set()
    for plan in sorted(GOLDEN.glob("*.json")):
        for res in json.loads(plan.read_text())["resources"]:
            if res["type"] not in NODE_OWNERS:
                continue
            rows = [r.property for r in disruption_rules() if r.type == res["type"]]
            rows += [r.property for r in forcing if r.type in (res["type"], "kubernetes:*")]
            for path in set(_leaves(res["inputs"])) - fixed:
                if not any(covers(row, path) for row in rows):
                    missing.add(f"{res['type']} {path}")
    assert not missing, sorted(missing)


def test_the_autoscalers_bounds_and_labels_take_no_gke_node_down():
    # nodePoolUpdate: autoscaling by Clusters.Update (DesiredNodePoolAutoscaling), labels and
    # upgradeSettings by NodePools.Update; none of them re-creates a node.
    old = {"autoscaling": {"totalMaxNodeCount": 4}, "nodeConfig": {"labels": {"a": "1"}}}
    new = {"autoscaling": {"totalMaxNodeCount": 20}, "nodeConfig": {"labels": {"a": "2"}}}
    c = _change(NP, old, new)
    assert c.op == "update" and c.disruptive == ""


def test_a_lower_gke_maximum_is_judged_as_removing_the_nodes_above_it():
    # No GKE rule says what happens to nodes above a lowered maximum: never under-reported.
    old = {"autoscaling": {"totalMaxNodeCount": 20}}
    assert (
        "while more than 4 nodes run"
        in _change(NP, old, {"autoscaling": {"totalMaxNodeCount": 4}}).disruptive
    )


def test_a_lower_max_size_terminates_the_nodes_above_it_a_higher_one_none():
    # EKS refuses desiredSize > maxSize, so the running size is sent clamped to the new maximum
    # (infra.core.eks.lifecycle.desired_size), and EC2 Auto Scaling terminates instances down to
    # a lowered desired capacity. The desired size itself is the autoscaler's: no verdict of its own.
    def group(n, desired=2):
        return {
            "version": "1.33",
            "scalingConfig": {"minSize": 0, "maxSize": n, "desiredSize": desired},
        }

    lowered = _change(NG, group(9), group(4))
    assert "while more than 4 nodes run, the rest are removed" in lowered.disruptive
    assert _change(NG, group(4), group(9)).disruptive == ""
    assert _change(NG, group(9, 2), group(9, 5)).disruptive == ""


@pytest.mark.parametrize(
    ("type_", "where"),
    [(PATCH, ("metadata", "labels")), (NG, ("labels",)), (NP, ("nodeConfig", "labels"))],
)
def test_a_new_device_plugin_config_label_changes_what_the_node_advertises(type_, where):
    # k8s-device-plugin README: the config manager restarts the plugin with the labelled config;
    # EKS (UpdateNodegroupConfig) and GKE (nodePoolUpdate) write pool labels onto running nodes.
    def spec(labels):
        out: dict = {"metadata": {"name": "n1"}}
        node = out
        for key in where[:-1]:
            node = node.setdefault(key, {})
        node[where[-1]] = labels
        return out

    label = "nvidia.com/device-plugin.config"
    old = spec({label: "time-slicing-4", "gpu-infra/pool": "p"})
    assert (
        "advertises"
        in _change(type_, old, spec({label: "time-slicing-8", "gpu-infra/pool": "p"})).disruptive
    )
    assert "advertises" in _change(type_, spec({"gpu-infra/pool": "p"}), old).disruptive
    other = spec({label: "time-slicing-4", "gpu-infra/pool": "q"})
    assert _change(type_, old, other).disruptive == ""


def test_consolidating_underutilized_nodes_evicts_running_pods():
    # https://karpenter.sh/v1.14/concepts/disruption/ (Consolidation): WhenEmptyOrUnderutilized removes nodes that still run pods.
    def pool(policy):
        return {"spec": {"template": {"spec": {}}, "disruption": {"consolidationPolicy": policy}}}

    np_ = "kubernetes:karpenter.sh/v1:NodePool"
    assert (
        "evicting" in _change(np_, pool("WhenEmpty"), pool("WhenEmptyOrUnderutilized")).disruptive
    )


@pytest.mark.parametrize("field", ["limits", "weight", "disruption"])
def test_a_nodepool_field_outside_the_template_drifts_no_node(field):
    # nodepool.go Hash covers spec.template only.
    old = {"spec": {"template": {"spec": {}}, field: {"x": 1}}}
    new = {"spec": {"template": {"spec": {}}, field: {"x": 2}}}
    assert _change("kubernetes:karpenter.sh/v1:NodePool", old, new).disruptive == ""
