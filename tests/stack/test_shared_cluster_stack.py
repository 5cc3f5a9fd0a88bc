"""Two stacks on one cluster neither owns: nothing by name in common, and neither reads the other's
node groups (the mock engine, with the fake account of ``infra.mocklive``)."""

from __future__ import annotations

import copy
import functools
from dataclasses import replace
from typing import Any

import pytest

from infra import mockengine
from infra.core import offline
from infra.core.catalog.vendored import Catalog
from infra.core.config.stack import parse
from infra.core.eks.lifecycle import owned_name
from infra.core.eks.names import eks_component_name
from infra.core.eks.observed import EksObserved
from infra.core.eks.platform import eks_plan
from infra.core.errors import ConfigErrors
from infra.core.plan import build_plan
from infra.mockengine import Recording
from infra.mocklive import LiveAccount, after, before
from infra.observe import observe as observe_step
from tests.stack.harness import ROOT, run_stack, sample, stack_source

STACKS = ("team-a", "team-b")


def _shared_existing() -> dict[str, Any]:
    """eks-existing with a warm node (namespace and PriorityClass) and an EFA pool (its plugin)."""
    _, raw = stack_source("eks-existing")
    raw = copy.deepcopy(raw)
    raw["gpu-infra:gpuPools"][0]["warm"] = 1
    raw["gpu-infra:gpuPools"].append(
        {"name": "hpc", "machineType": "p5.48xlarge", "hpc": True, "minNodes": 0, "maxNodes": 2}
    )
    return raw


@functools.cache
def _run(stack: str) -> Recording:
    return run_stack(_shared_existing(), stack)


def names_on_the_cluster(rec: Recording) -> set[tuple[str, ...]]:
    """Every name a run gives an object on the cluster or its account that another stack could
    also name: Helm releases (per namespace), Kubernetes objects (kind, namespace, name), node
    groups (per cluster), Pod Identity associations (namespace, service account), add-ons, IAM
    names set explicitly, and tags written onto resources the stack does not create."""
    out: set[tuple[str, ...]] = set()
    for r in rec.resources:
        i = r.inputs
        if r.type == "kubernetes:helm.sh/v3:Release":
            out.add(("release", str(i["namespace"]), str(i["name"])))
        elif r.type.startswith("kubernetes:") and isinstance(i.get("metadata"), dict):
            kind = r.type.rsplit(":", 1)[-1].removesuffix("Patch")
            md = i["metadata"]
            out.add((kind, str(md.get("namespace", "")), str(md["name"])))
        elif r.type == "aws:eks/nodeGroup:NodeGroup":
            out.add(("node group", str(i["clusterName"]), str(i["nodeGroupName"])))
        elif r.type == "aws:eks/podIdentityAssociation:PodIdentityAssociation":
            out.add(("pod identity", str(i["namespace"]), str(i["serviceAccount"])))
        elif r.type == "aws:eks/addon:Addon":
            out.add(("addon", str(i["clusterName"]), str(i["addonName"])))
        elif r.type.startswith("aws:iam/") and "name" in i:
            out.add(("iam", r.type, str(i["name"])))
        elif r.type == "aws:ec2/tag:Tag":
            out.add(("ec2 tag", str(i["resourceId"]), str(i["key"])))
    return out


def test_two_stacks_on_one_existing_cluster_share_no_release_namespace_object_group_or_tag():
    a, b = (names_on_the_cluster(_run(s)) for s in STACKS)
    kinds = {n[0] for n in a}
    # What the comparison covers (a test of nothing proves nothing).
    assert {"release", "Namespace", "PriorityClass", "node group"} <= kinds, kinds
    assert len([n for n in a if n[0] == "release"]) == 3  # autoscaler, NVIDIA and EFA plugins
    assert a & b == set()


def test_the_second_stack_reads_none_of_the_first_stacks_node_groups_as_its_own():
    raw = _shared_existing()
    first = parse(raw, "team-a")
    account = after(build_plan(first), _run("team-a"))
    theirs = set(account.node_groups)
    assert theirs
    found = mockengine.observe(raw, "team-b", account).part(EksObserved)
    assert found is not None
    assert not theirs & set(found.node_groups)
    assert theirs == set(found.foreign_node_groups)
    # ... and plans its own groups beside them.
    second = build_plan(parse(raw, "team-b"), None, mockengine.observe(raw, "team-b", account))
    planned = {ng.name for g in eks_plan(second.platform).groups for ng in g.node_groups}
    assert planned and not planned & theirs


def _live_group_without_our_tag(stack: str, tags: dict[str, str]) -> tuple[dict, str, LiveAccount]:
    name, raw = stack_source(stack)
    config = parse(raw, name)
    group = eks_plan(build_plan(config).platform).groups[0].node_groups[0].name
    account = after(build_plan(config), run_stack(stack))
    account = replace(account, node_group_tags={**account.node_group_tags, group: tags})
    return raw, group, account


@pytest.mark.parametrize(
    "tags",
    [{}, {"gpu-infra/autoscaler/ml/other-stack": "owned"}],
    ids=["untagged", "another-stacks"],
)
def test_a_same_named_node_group_not_tagged_as_this_stacks_is_a_pool_name_error(tags):
    # eks-g4dn creates its cluster: its group names carry no stack, so a group of the same name
    # that lacks its tag (made by hand, or by another stack) is refused, not adopted.
    raw, group, account = _live_group_without_our_tag("eks-g4dn", tags)
    observed = mockengine.observe(raw, "eks-g4dn", account)
    with pytest.raises(ConfigErrors) as e:
        build_plan(parse(raw, "eks-g4dn"), None, observed)
    (issue,) = [i for i in e.value.issues if i.path == "gpuPools[0].name"]
    assert group in issue.reason and "gpu-infra/autoscaler/ml/eks-g4dn=owned" in issue.reason


def test_a_running_existing_cluster_stack_keeps_the_group_named_before_the_stack_entered_the_hash():
    # Day 2: a group of eks-existing made when names carried no stack stays under its name (a new
    # name would replace the group and every node on it).
    name, raw = stack_source("eks-existing")
    config = parse(raw, name)
    (ng,) = eks_plan(build_plan(config).platform).groups[0].node_groups
    assert ng.legacy_name is not None and ng.name == owned_name(ng.legacy_name, name)
    account = LiveAccount(
        **{
            **{f: getattr(before(config), f) for f in LiveAccount.__dataclass_fields__},
            "node_groups": {ng.legacy_name: 3},
            "node_group_tags": {
                ng.legacy_name: {"gpu-infra/autoscaler/shared/eks-existing": "owned"}
            },
        }
    )
    plan = build_plan(config, None, mockengine.observe(raw, name, account))
    (kept,) = eks_plan(plan.platform).groups[0].node_groups
    assert (kept.name, kept.desired_size) == (ng.legacy_name, 3)


def test_karpenter_on_given_subnets_tags_no_subnet_and_selects_them_by_id():
    # EC2 CreateTags overwrites: a karpenter.sh/discovery tag written on a given subnet would
    # take it from another cluster's Karpenter that selects on it.
    _, raw = stack_source("eks-karpenter")
    raw = copy.deepcopy(raw)
    subnets = {"usw2-az1": "subnet-0a1b2c3d4e5f60001", "usw2-az2": "subnet-0a1b2c3d4e5f60002"}
    raw["gpu-infra:cluster"]["vpc"] = {"id": "vpc-0a1b2c3d4e5f60001", "privateSubnets": subnets}
    rec = run_stack(raw, "eks-karpenter")
    tagged = {str(r.inputs["resourceId"]) for r in rec.of_type("aws:ec2/tag:Tag")}
    assert tagged and not tagged & set(subnets.values())
    classes = rec.of_type("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass")
    assert classes
    for c in classes:
        assert c.inputs["spec"]["subnetSelectorTerms"] == [{"id": s} for s in subnets.values()]


# A 48h terminationGracePeriod (the sample's default) drains for 172800 s; pulumi-kubernetes then
# waits its own 300 s for the object to go (provider/pkg/await/await.go Deletion): 2885 minutes.
DRAIN_48H_DELETE = "2885m"


def test_eks_karpenter_pools_outlive_the_ebs_csi_addon_and_wait_out_the_drain_on_delete():
    rec = sample("eks-karpenter")
    (csi,) = [
        r.urn for r in rec.of_type("aws:eks/addon:Addon") if r.name.endswith("ebs-csi-driver")
    ]
    addons = {r.urn for r in rec.of_type("aws:eks/addon:Addon")}
    objects = [
        *rec.of_type("kubernetes:karpenter.sh/v1:NodePool"),
        *rec.of_type("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"),
    ]
    assert objects
    for r in objects:
        # Pulumi deletes a resource before what it depends on: the pools drain while every
        # add-on their nodes need (CNI, DNS, the CSI driver detaching volumes) still runs.
        assert csi in r.depends_on and addons <= set(r.depends_on), r.name
        assert r.options["customTimeouts"] == {"delete": DRAIN_48H_DELETE}, r.name


def _observe_reads(stack: str, account: LiveAccount) -> list[tuple[str, dict[str, Any]]]:
    name, raw = stack_source(stack)
    config = parse(raw, name)
    rec = mockengine.run_body(
        raw, name, None, lambda: observe_step(config, Catalog.load()), account
    )
    return rec.invokes


def test_nat_gateways_are_read_in_the_running_clusters_vpc_and_never_by_a_vpc_name():
    name, raw = stack_source("eks-g4dn")
    config = parse(raw, name)
    deployed = after(build_plan(config), sample("eks-g4dn"))
    reads = _observe_reads("eks-g4dn", deployed)
    nats = [args for token, args in reads if token == "aws:ec2/getNatGateways:getNatGateways"]
    assert [a["vpcId"] for a in nats] == [offline.VPC_ID]  # DescribeCluster's vpcConfig.vpcId
    assert not [t for t, _ in reads if t == "aws:ec2/getVpcs:getVpcs"]


def test_before_its_cluster_exists_the_stacks_vpc_is_found_by_its_owner_tag():
    # A VPC another stack (or a person) named <cluster>-vpc is not this stack's.
    name, raw = stack_source("eks-g4dn")
    account = LiveAccount(vpcs=("ml-vpc",), vpc_tags=({"Name": "ml-vpc"},))
    reads = _observe_reads("eks-g4dn", account)
    (vpcs,) = [args for token, args in reads if token == "aws:ec2/getVpcs:getVpcs"]
    assert vpcs["tags"] == {"gpu-infra/stack": "ml/eks-g4dn"}
    found = mockengine.observe(raw, name, account).part(EksObserved)
    assert found is not None and found.nat_az_ids == ()


def test_a_created_clusters_deploy_tags_the_cluster_and_vpc_as_this_stacks():
    rec = sample("eks-g4dn")
    (cluster,) = rec.of_type("eks:index:Cluster")
    assert cluster.inputs["clusterTags"] == {"gpu-infra/stack": "ml/eks-g4dn"}
    (vpc,) = rec.of_type("aws:ec2/vpc:Vpc")
    assert vpc.inputs["tags"]["gpu-infra/stack"] == "ml/eks-g4dn"
    # The logical name the legacy Name tag is matched by (names.eks_component_name).
    assert cluster.name == eks_component_name("ml")


SAMPLES = sorted(
    p.name.removeprefix("Pulumi.").removesuffix(".yaml")
    for p in (ROOT / "stacks").glob("Pulumi.*.yaml")
)
ENFORCE = "pod-security.kubernetes.io/enforce"


@pytest.mark.parametrize("stack", SAMPLES)
def test_every_namespace_a_component_creates_carries_pod_security_labels(stack):
    # Pod Security Admission applies a namespace's pod-security.kubernetes.io labels
    # (https://kubernetes.io/docs/concepts/security/pod-security-admission/); an unlabelled one
    # runs under the cluster's default level. Only the GPU Operator's namespace is privileged
    # (its operands are); a namespace Helm creates is labelled by a NamespacePatch. The teams'
    # gpuNamespaces take the level their workloads need and are checked with them.
    name, raw = stack_source(stack)
    teams = {n.name for n in parse(raw, name).namespaces}
    rec = sample(stack)
    labelled: dict[str, str] = {}
    for r in rec.of_type("kubernetes:core/v1:Namespace") + rec.of_type(
        "kubernetes:core/v1:NamespacePatch"
    ):
        md = r.inputs["metadata"]
        labelled[str(md["name"])] = str((md.get("labels") or {}).get(ENFORCE, ""))
    helm_made = {
        str(r.inputs["namespace"])
        for r in rec.of_type("kubernetes:helm.sh/v3:Release")
        if r.inputs.get("createNamespace")
    }
    assert helm_made <= set(labelled)
    for ns, level in labelled.items():
        if ns in teams:
            continue
        assert level in ("restricted", "baseline", "privileged"), ns
        if level == "privileged":
            assert ns == "gpu-operator", ns


def test_beside_takes_a_file_or_a_file_deployed_by_an_older_catalog(tmp_path):
    from infra.planview.beside import split_spec

    odd = tmp_path / "Pulumi.team@a.yaml"  # a file whose own name holds '@' is that file
    odd.write_text("config: {}\n", encoding="utf-8")
    assert split_spec(str(odd)) == (str(odd), None)
    assert split_spec("stacks/Pulumi.team-a.yaml@v1.4.0") == ("stacks/Pulumi.team-a.yaml", "v1.4.0")
    assert split_spec("stacks/Pulumi.team-a.yaml") == ("stacks/Pulumi.team-a.yaml", None)


def test_a_beside_ref_git_cannot_resolve_is_a_beside_error(tmp_path, capsys):
    from infra import plan as plan_cli

    team_a = ROOT / "tests" / "day2" / "gke-existing-second-stack-same-pool" / "Pulumi.team-a.yaml"
    new = tmp_path / "Pulumi.team-b.yaml"
    new.write_text(team_a.read_text(encoding="utf-8"), encoding="utf-8")
    argv = ["--stack", str(new), "--diff", "/dev/null", "--beside", f"{team_a}@no-such-ref-x"]
    assert plan_cli.main(argv) == 2
    assert capsys.readouterr().err.startswith("--beside: ")
