"""EKS wiring on the mock engine: node groups, CA tags on the ASG, subnets, autoscaler, IRSA."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from infra import mockanswers, mockengine
from infra.components import eks_nodes
from infra.core.catalog.vendored import Catalog
from infra.core.config.stack import load_stack_file, parse
from infra.core.eks import planner as core
from infra.core.eks.groups import EKS_TAINT_EFFECT
from infra.core.eks.observed import EksObserved
from infra.core.labels import POOL_LABEL
from infra.core.observed import Observed
from infra.mocklive import LiveAccount, before
from tests.stack.harness import (
    ROOT,
    duplicate_urns,
    ignore_changes_seen,
    run_stack,
    sample,
    sdk_problems,
)

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
TAG = "aws:autoscaling/tag:Tag"
SUBNET = "aws:ec2/subnet:Subnet"
RELEASE = "kubernetes:helm.sh/v3:Release"
PREFIX = "k8s.io/cluster-autoscaler/node-template/"
K8S_EFFECT = {v: k for k, v in EKS_TAINT_EFFECT.items()}


@pytest.fixture(scope="module")
def rec() -> mockengine.Recording:
    return sample("eks-g4dn")


@pytest.fixture(scope="module")
def observing() -> mockengine.Recording:
    """eks-g4dn's first ``pulumi up``: the program observes an empty account, then plans."""
    return run_stack("eks-g4dn", account=LiveAccount())


def core_plan(raw: dict[str, Any]) -> core.EksPlan:
    from infra.core.config.stack import parse
    from infra.core.plan import build_plan

    p = build_plan(parse(raw, "eks-g4dn")).platform.plan
    assert p is not None
    return p


def raw_stack() -> dict[str, Any]:
    _, raw = load_stack_file(ROOT / "stacks" / "Pulumi.eks-g4dn.yaml")
    return copy.deepcopy(raw)


def gpu_groups(rec: mockengine.Recording) -> list[mockengine.Registered]:
    return [r for r in rec.of_type(NODE_GROUP) if r.name != "ml-system"]


def asg_name_of(node_group: mockengine.Registered) -> str:
    """The ASG name the engine reported for ``node_group`` (its ``resources`` output)."""
    fake = SimpleNamespace(name=node_group.name, inputs=node_group.inputs)
    outputs = mockanswers.OUTPUTS[NODE_GROUP](fake)  # type: ignore[arg-type]
    return outputs["resources"][0]["autoscalingGroups"][0]["name"]


def test_every_input_is_a_property_the_sdks_know(rec):
    assert sdk_problems(rec) == []


def test_gpu_node_group_is_g4dn_with_an_nvidia_ami_and_min_zero(rec):
    ng = rec.one(NODE_GROUP, "ml-gpu-t4-ng").inputs
    assert ng["instanceTypes"] == ["g4dn.xlarge"]
    assert ng["amiType"] == "AL2023_x86_64_NVIDIA"
    assert ng["capacityType"] == "ON_DEMAND"
    assert ng["scalingConfig"] == {"minSize": 0, "desiredSize": 0, "maxSize": 20}
    assert ng["taints"] == [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}]
    assert ng["labels"]["nvidia.com/gpu.present"] == "true"


def test_spot_variant_uses_spot_capacity(rec):
    ng = rec.one(NODE_GROUP, "ml-gpu-t4-spot-ng").inputs
    assert ng["capacityType"] == "SPOT" and ng["instanceTypes"] == ["g4dn.xlarge"]


def test_ca_tags_land_on_the_node_groups_asg(rec):
    for ng in gpu_groups(rec):
        tags = [
            t
            for t in rec.of_type(TAG)
            if t.parent == ng.parent and t.inputs["tag"]["key"].startswith(PREFIX)
        ]
        assert tags, ng.name
        for t in tags:
            # The input is the node group's ASG name output: same value, and a dependency on it.
            assert t.inputs["autoscalingGroupName"] == asg_name_of(ng)
            assert ng.urn in t.depends_on
            assert t.inputs["tag"]["propagateAtLaunch"] is False
        got = {t.inputs["tag"]["key"]: t.inputs["tag"]["value"] for t in tags}
        pool = ng.name.removeprefix("ml-").removesuffix("-ng")
        assert got[PREFIX + "resources/nvidia.com/gpu"] == "1"
        assert got[PREFIX + "taint/nvidia.com/gpu"] == "true:NoSchedule"
        assert got[PREFIX + "label/nvidia.com/gpu.present"] == "true"
        assert got[PREFIX + "label/k8s.amazonaws.com/accelerator"] == "nvidia-tesla-t4"
        # Exactly the node group's labels and taints, so CA's template matches real nodes.
        labels = {k.removeprefix(PREFIX + "label/"): v for k, v in got.items() if "/label/" in k}
        assert labels == ng.inputs["labels"] and labels[POOL_LABEL] == pool
        taints = {k.removeprefix(PREFIX + "taint/"): v for k, v in got.items() if "/taint/" in k}
        assert taints == {
            t["key"]: f"{t['value']}:{K8S_EFFECT[t['effect']]}" for t in ng.inputs["taints"]
        }


def test_node_group_carries_the_gpu_resource_tag_for_describe_nodegroup(rec):
    tags = rec.one(NODE_GROUP, "ml-gpu-t4-ng").inputs["tags"]
    assert tags[PREFIX + "resources/nvidia.com/gpu"] == "1"


def test_group_subnets_are_only_in_azs_offering_the_type(rec, catalog: Catalog):
    subnets = {s.id: s.inputs.get("availabilityZoneId") for s in rec.of_type(SUBNET)}
    g4dn = catalog.aws_instance("g4dn.xlarge")
    assert g4dn is not None
    offered = g4dn.az_ids["us-west-2"]
    for ng in gpu_groups(rec):
        azs = {subnets[sid] for sid in ng.inputs["subnetIds"]}
        assert azs == set(offered)
        assert "usw2-az4" not in azs
    # The VPC itself spans usw2-az4 (system pods may run there).
    assert "usw2-az4" in subnets.values()


def test_offerings_are_read_once_by_az_id_for_every_pool_in_the_stack_region(observing):
    # One DescribeInstanceTypeOfferings per stack, not per pool: 100 pools make one call.
    rec = observing
    calls = [a for tok, a in rec.invokes if tok.startswith("aws:ec2/getInstanceTypeOfferings")]
    assert len(calls) == 1 and len(gpu_groups(rec)) == 2
    (a,) = calls
    assert a["locationType"] == "availability-zone-id" and a["region"] == "us-west-2"
    filters = {f["name"]: set(f["values"]) for f in a["filters"]}
    assert filters["instance-type"] == {
        t for g in gpu_groups(rec) for t in g.inputs["instanceTypes"]
    }


def test_one_offerings_read_gives_each_pool_the_subnets_of_its_own_types_and_zones():
    rec = run_stack("eks-hpc", account=LiveAccount())
    (a,) = [a for tok, a in rec.invokes if tok.startswith("aws:ec2/getInstanceTypeOfferings")]
    filters = {f["name"]: set(f["values"]) for f in a["filters"]}
    assert filters == {"instance-type": {"p5.48xlarge", "p5en.48xlarge", "p6-b200.48xlarge"}}
    az_of = {s.id: s.inputs.get("availabilityZoneId") for s in rec.of_type(SUBNET)}
    got = {
        ng.name: {az_of[sid] for sid in ng.inputs["subnetIds"]}
        for ng in rec.of_type(NODE_GROUP)
        if ng.name != "train-system"
    }
    assert got == {
        "train-h100-efa-ng": {"usw2-az2"},
        "train-h200-odcr-ng": {"usw2-az3"},
        "train-b200-block-ng": {"usw2-az4"},
    }


def withdraw_offerings(monkeypatch: pytest.MonkeyPatch, gone: Callable[[str, str], bool]) -> None:
    """DescribeInstanceTypeOfferings answers without the (type, AZ ID) pairs ``gone`` names."""
    token = "aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings"
    real = mockanswers.INVOKES[token]

    def answer(args: dict[str, Any], catalog: Catalog, account: LiveAccount) -> dict[str, Any]:
        out = real(args, catalog, account)
        pairs = zip(out["instanceTypes"], out["locations"], strict=True)
        keep = [i for i, (t, az) in enumerate(pairs) if not gone(t, az)]
        for k in ("instanceTypes", "locations", "locationTypes"):
            out[k] = [out[k][i] for i in keep]
        return out

    monkeypatch.setitem(mockanswers.INVOKES, token, answer)


def test_one_withdrawn_type_and_az_pair_fails_only_the_pool_that_plans_it(monkeypatch):
    # The shared answer is checked per pool: p5en.48xlarge gone from usw2-az3 fails h200-odcr,
    # not the pools planned on other types and AZ IDs of the same call.
    withdraw_offerings(monkeypatch, lambda t, az: (t, az) == ("p5en.48xlarge", "usw2-az3"))
    with pytest.raises(Exception, match=r"gpuPools\[1\]\.zones: usw2-az3 of us-west-2") as e:
        run_stack("eks-hpc", account=LiveAccount())
    assert "h100-efa" not in str(e.value) and "b200-block" not in str(e.value)


def test_deploy_time_offering_withdrawn_from_a_planned_az_fails_instead_of_narrowing(monkeypatch):
    # Narrowing changes subnet_ids, which force a new node group under the same hashed name
    # (terraform-provider-aws eks node_group.go ForceNew): EKS would answer "already exists".
    withdraw_offerings(monkeypatch, lambda _, az: az == "usw2-az2")
    with pytest.raises(Exception, match="usw2-az2 of us-west-2 no longer offers"):
        run_stack("eks-g4dn", account=LiveAccount())


def test_launch_template_requires_imdsv2_and_encrypts_the_volume(rec):
    ng = rec.one(NODE_GROUP, "ml-gpu-t4-ng")
    lt = rec.one("aws:ec2/launchTemplate:LaunchTemplate", "ml-gpu-t4-lt")
    assert ng.inputs["launchTemplate"]["id"] == lt.id and lt.urn in ng.depends_on
    meta = lt.inputs["metadataOptions"]
    assert meta["httpTokens"] == "required" and meta["httpPutResponseHopLimit"] == 1
    (bdm,) = lt.inputs["blockDeviceMappings"]
    assert bdm["ebs"]["volumeSize"] == 100 and bdm["ebs"]["encrypted"] == "true"
    assert "diskSize" not in ng.inputs  # EKS rejects diskSize together with a launch template


def test_raising_min_nodes_above_the_live_desired_size_sends_a_valid_scaling_config():
    # terraform-aws-eks#3306: "Minimum capacity 8 can't be greater than desired size 4" when the
    # (ignored) desired size stays below a raised minimum. The live desired size is read and
    # clamped into [min, max], so the update EKS gets is valid.
    raw = raw_stack()
    raw["gpu-infra:gpuPools"][0]["minNodes"] = 3
    raw["gpu-infra:cluster"]["systemPool"] = {"minNodes": 3, "maxNodes": 4}
    plan = core_plan(raw)
    gpu = plan.groups[0].node_groups[0].name
    assert plan.system is not None
    live = {gpu: 1, plan.system.node_group_name: 2, plan.groups[1].node_groups[0].name: 7}
    rec = run_stack(raw, "eks-g4dn", observed=Observed("eks", EksObserved(node_groups=live)))
    scaling = {r.name: r.inputs["scalingConfig"] for r in rec.of_type(NODE_GROUP)}
    assert scaling["ml-gpu-t4-ng"] == {"minSize": 3, "maxSize": 20, "desiredSize": 3}
    assert scaling["ml-system"] == {"minSize": 3, "maxSize": 4, "desiredSize": 3}
    # The autoscaler's value is kept where it is valid.
    assert scaling["ml-gpu-t4-spot-ng"]["desiredSize"] == 7
    for s in scaling.values():
        assert s["minSize"] <= s["desiredSize"] <= s["maxSize"]


def test_no_node_group_ignores_desired_size_changes(monkeypatch):
    by_type = ignore_changes_seen(monkeypatch, {NODE_GROUP})
    run_stack("eks-g4dn")
    seen = by_type[NODE_GROUP]
    assert set(seen) == {"ml-system", "ml-gpu-t4-ng", "ml-gpu-t4-spot-ng"}
    assert all(v == [] for v in seen.values())


def test_gpu_groups_wait_for_the_cluster_and_node_role_policies(rec):
    cluster = rec.one("eks:index:Cluster")
    attachments = {
        r.urn
        for r in rec.of_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment")
        if r.name.startswith("ml-nodes-")
    }
    for ng in gpu_groups(rec):
        assert cluster.urn in ng.depends_on and attachments <= set(ng.depends_on)


def test_cluster_is_pulumi_eks_with_oidc_access_entries_api_and_no_default_group(rec):
    c = rec.one("eks:index:Cluster").inputs
    assert c["name"] == "ml" and c["version"] == "1.35"  # the stack's kubernetesVersion
    assert c["skipDefaultNodeGroup"] is True and c["createOidcProvider"] is True
    assert c["authenticationMode"] == "API"
    subnets = {s.id: s.inputs.get("availabilityZoneId") for s in rec.of_type(SUBNET)}
    assert all(
        subnets[s] in ("usw2-az1", "usw2-az2", "usw2-az3", "usw2-az4")
        for s in c["privateSubnetIds"]
    )


def test_system_group_is_small_cpu_al2023(rec):
    ng = rec.one(NODE_GROUP, "ml-system").inputs
    assert ng["amiType"] == "AL2023_x86_64_STANDARD" and ng["instanceTypes"] == ["m6i.large"]
    assert ng["labels"] == {POOL_LABEL: "system"} and "taints" not in ng


def test_autoscaler_release_is_pinned_and_discovers_by_cluster_name(rec):
    rel = rec.one(RELEASE, "ml-ca-release")
    assert rel.inputs["chart"] == "cluster-autoscaler"
    assert rel.inputs["version"] == "9.52.1"
    assert rel.inputs["repositoryOpts"] == {"repo": "https://kubernetes.github.io/autoscaler"}
    values = rel.inputs["values"]
    assert values["autoDiscovery"] == {
        "clusterName": "ml",
        "tags": [
            "k8s.io/cluster-autoscaler/enabled",
            "k8s.io/cluster-autoscaler/ml",
            "gpu-infra/autoscaler/ml/eks-g4dn",
        ],
    }
    assert values["extraArgs"]["expander"] == "least-waste"
    assert "scale-down-gpu-utilization-threshold" in values["extraArgs"]


def test_autoscaler_runs_on_the_system_group_after_it_exists(rec):
    rel = rec.one(RELEASE, "ml-ca-release")
    system = rec.one(NODE_GROUP, "ml-system")
    assert rel.inputs["values"]["nodeSelector"] == system.inputs["labels"]
    assert system.urn in rel.depends_on


def test_autoscaler_uses_an_irsa_role_for_its_service_account_only(rec):
    rel = rec.one(RELEASE, "ml-ca-release")
    role = rec.one("aws:iam/role:Role", "ml-ca-role")
    sa = rel.inputs["values"]["rbac"]["serviceAccount"]
    assert sa["annotations"]["eks.amazonaws.com/role-arn"].endswith(":role/ml-ca-role")
    assert role.urn in rel.depends_on
    trust = json.loads(role.inputs["assumeRolePolicy"])
    (stmt,) = trust["Statement"]
    assert stmt["Action"] == "sts:AssumeRoleWithWebIdentity"
    assert stmt["Principal"]["Federated"].startswith("arn:aws:iam::")
    (cond,) = stmt["Condition"].values()
    sub = next(v for k, v in cond.items() if k.endswith(":sub"))
    assert sub == "system:serviceaccount:kube-system:cluster-autoscaler"


def test_autoscaler_policy_changes_only_asgs_tagged_for_this_stack(rec):
    policy = json.loads(rec.one("aws:iam/rolePolicy:RolePolicy", "ml-ca-policy").inputs["policy"])
    writes = [s for s in policy["Statement"] if "autoscaling:SetDesiredCapacity" in s["Action"]]
    assert writes and all(
        s["Condition"]["StringEquals"]
        == {"aws:ResourceTag/gpu-infra/autoscaler/ml/eks-g4dn": "owned"}
        for s in writes
    )


def test_every_asg_of_the_stack_carries_the_tag_the_autoscaler_discovers_and_may_scale(rec):
    tag = "gpu-infra/autoscaler/ml/eks-g4dn"
    discovered = rec.one(RELEASE, "ml-ca-release").inputs["values"]["autoDiscovery"]["tags"]
    assert tag in discovered
    for ng in rec.of_type(NODE_GROUP):
        asg = asg_name_of(ng)
        tagged = [
            t
            for t in rec.of_type(TAG)
            if t.inputs["autoscalingGroupName"] == asg and t.inputs["tag"]["key"] == tag
        ]
        assert [t.inputs["tag"]["value"] for t in tagged] == ["owned"], ng.name


def test_kubeconfig_is_a_secret_output(rec):
    assert rec.outputs["kubeconfig"] == mockengine.SECRET
    assert rec.one("pulumi:providers:kubernetes").inputs["kubeconfig"] == mockengine.SECRET


def test_existing_cluster_is_attached_not_created():
    raw = raw_stack()
    raw["gpu-infra:cluster"] |= {
        "existing": True,
        "vpc": {"privateSubnets": {"usw2-az1": "subnet-0aaaaaaa", "usw2-az4": "subnet-0bbbbbbb"}},
    }
    raw["gpu-infra:gpuOperator"] = {"clusterWide": True}
    rec = run_stack(raw, "eks-existing", account=before(parse(raw, "eks-existing")))
    assert rec.of_type("eks:index:Cluster") == [] and rec.of_type(SUBNET) == []
    assert sorted(r.name for r in rec.of_type(NODE_GROUP)) == ["ml-gpu-t4-ng", "ml-gpu-t4-spot-ng"]
    for ng in rec.of_type(NODE_GROUP):
        assert ng.inputs["subnetIds"] == ["subnet-0aaaaaaa"]  # usw2-az4 lacks g4dn.xlarge
    tokens = {tok for tok, _ in rec.invokes}
    assert "aws:eks/getCluster:getCluster" in tokens
    assert rec.one(RELEASE, "ml-ca-release").inputs["values"]["nodeSelector"] == {}


def test_bottlerocket_group_sizes_its_data_volume():
    raw = raw_stack()
    raw["gpu-infra:gpuPools"] = [raw["gpu-infra:gpuPools"][0] | {"amiFamily": "bottlerocket"}]
    rec = run_stack(raw, "eks-br")
    assert rec.one(NODE_GROUP, "ml-gpu-t4-ng").inputs["amiType"] == "BOTTLEROCKET_x86_64_NVIDIA"
    lt = rec.one("aws:ec2/launchTemplate:LaunchTemplate", "ml-gpu-t4-lt")
    os_volume, data = lt.inputs["blockDeviceMappings"]
    assert data["deviceName"] == "/dev/xvdb" and data["ebs"]["volumeSize"] == 100
    # Root volumes encrypted on Bottlerocket too: its OS volume is asked for encrypted.
    assert os_volume["deviceName"] == "/dev/xvda" and "volumeSize" not in os_volume["ebs"]
    assert data["ebs"]["encrypted"] == os_volume["ebs"]["encrypted"] == "true"


def test_every_node_group_including_system_requires_imdsv2(rec):
    templates = {lt.id: lt for lt in rec.of_type("aws:ec2/launchTemplate:LaunchTemplate")}
    groups = rec.of_type(NODE_GROUP)
    assert len(groups) == 3
    for ng in groups:
        lt = templates[ng.inputs["launchTemplate"]["id"]]
        assert lt.inputs["metadataOptions"]["httpTokens"] == "required", ng.name


def test_arm_group_gets_the_arm_nvidia_ami_and_its_own_azs():
    raw = raw_stack()
    raw["gpu-infra:gpuPools"] = [{"name": "gpu-arm", "machineType": "g5g.xlarge", "maxNodes": 2}]
    rec = run_stack(raw, "eks-arm")
    ng = rec.one(NODE_GROUP, "ml-gpu-arm-ng").inputs
    assert ng["amiType"] == "AL2023_ARM_64_NVIDIA" and ng["instanceTypes"] == ["g5g.xlarge"]
    subnets = {s.id: s.inputs.get("availabilityZoneId") for s in rec.of_type(SUBNET)}
    assert {subnets[s] for s in ng["subnetIds"]} == {"usw2-az1", "usw2-az2", "usw2-az3"}


def labels_that_differ_only_by_slash_and_dash() -> dict[str, Any]:
    raw = raw_stack()
    raw["gpu-infra:gpuPools"] = [
        raw["gpu-infra:gpuPools"][0] | {"labels": {"example.com/x": "a", "example.com-x": "b"}}
    ]
    return raw


def test_tag_keys_differing_only_by_slash_and_dash_get_distinct_tag_resources():
    rec = run_stack(labels_that_differ_only_by_slash_and_dash(), "eks-labels")
    keys = {t.inputs["tag"]["key"]: t.urn for t in rec.of_type(TAG)}
    a, b = keys[PREFIX + "label/example.com/x"], keys[PREFIX + "label/example.com-x"]
    assert a != b


def test_harness_fails_a_stack_that_registers_one_urn_twice(monkeypatch):
    # The old suffix mapped "/" to "-", so the two labels above became one child name.
    monkeypatch.setattr(
        eks_nodes, "_tag_suffix", lambda key: key.removeprefix(PREFIX).replace("/", "-")
    )
    with pytest.raises(AssertionError, match="registered more than once"):
        run_stack(labels_that_differ_only_by_slash_and_dash(), "eks-labels")


def test_duplicate_urns_lists_each_repeated_urn_once():
    def reg(urn: str) -> mockengine.Registered:
        return mockengine.Registered(urn, None, "t", urn, None, True, False, {}, ())

    rec = mockengine.Recording(resources=[reg("a"), reg("b"), reg("a"), reg("a")])
    assert duplicate_urns(rec) == ["a"]


@pytest.mark.parametrize("resources", [None, [], [SimpleNamespace(autoscaling_groups=[])]])
def test_a_node_group_without_an_asg_fails_loudly_rather_than_tagging_nothing(resources):
    with pytest.raises(ValueError, match="EKS reported no Auto Scaling group"):
        eks_nodes.first_asg_name(resources)


def test_the_first_asg_name_is_the_node_groups_only_asg():
    res = [SimpleNamespace(autoscaling_groups=[SimpleNamespace(name="eks-gpu-t4-abc")])]
    assert eks_nodes.first_asg_name(res) == "eks-gpu-t4-abc"
