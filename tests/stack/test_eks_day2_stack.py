"""EKS day-2 wiring on the mock engine: OIDC provider / Pod Identity, add-on order, NAT and S3
routing, EFA launch templates, Capacity Blocks, the device plugin release; one Pod Identity
association per service account, the autoscaler release after its association, replacement node
groups. One module so each sample stack is run once."""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

import pytest

from infra import mockengine
from infra.core import offline
from infra.core.config.stack import load_stack_file
from infra.core.eks.observed import EksClusterObserved, EksObserved
from infra.core.observed import Observed
from infra.mocklive import LiveAccount
from tests.stack.harness import ROOT, run_stack, sample

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
LT = "aws:ec2/launchTemplate:LaunchTemplate"
TAG = "aws:autoscaling/tag:Tag"
RELEASE = "kubernetes:helm.sh/v3:Release"
OIDC = "aws:iam/openIdConnectProvider:OpenIdConnectProvider"
ASSOC = "aws:eks/podIdentityAssociation:PodIdentityAssociation"
ADDON = "aws:eks/addon:Addon"
PREFIX = "k8s.io/cluster-autoscaler/node-template/"


def raw(stack: str) -> dict[str, Any]:
    _, cfg = load_stack_file(ROOT / "stacks" / f"Pulumi.{stack}.yaml")
    return copy.deepcopy(cfg)


# eks-existing's cluster "shared" in us-west-2, as DescribeCluster shows it.
SHARED = EksClusterObserved(
    name="shared",
    endpoint=f"https://{offline.ENDPOINT}",
    certificate_authority=offline.CERTIFICATE_AUTHORITY,
    oidc_issuer="oidc.eks.us-west-2.amazonaws.com/id/0123456789ABCDEF0123456789ABCDEF",
    security_group_id="sg-0fedcba9876543210",
    vpc_id="vpc-0fedcba9876543210",
)
SHARED_OIDC = f"arn:aws:iam::{offline.AWS_ACCOUNT}:oidc-provider/{SHARED.oidc_issuer}"


def shared(**fields: Any) -> Observed:
    """The live account of eks-existing: its cluster, plus ``fields`` of ``EksObserved``."""
    return Observed("eks", EksObserved(cluster=SHARED, **fields))


def running(node_groups: dict[str, int]) -> Observed:
    """A created stack's account holding these node groups (name -> desired size)."""
    return Observed("eks", EksObserved(node_groups=node_groups))


@pytest.fixture(scope="module")
def g4dn() -> mockengine.Recording:
    return sample("eks-g4dn")


@pytest.fixture(scope="module")
def hpc() -> mockengine.Recording:
    return sample("eks-hpc")


@pytest.fixture(scope="module")
def zonal() -> mockengine.Recording:
    return sample("eks-zonal-spot")


def test_eks_g4dn_done_when(g4dn):
    gpu = [r for r in g4dn.of_type(NODE_GROUP) if r.name != "ml-system"]
    assert gpu and all(r.inputs["nodeGroupName"] not in ("gpu-t4", "gpu-t4-spot") for r in gpu)
    assert all(r.inputs["nodeRepairConfig"] == {"enabled": True} for r in gpu)
    keys = {t.inputs["tag"]["key"] for t in g4dn.of_type(TAG)}
    assert PREFIX + "resources/ephemeral-storage" in keys
    public = [
        s
        for s in g4dn.of_type("aws:ec2/subnet:Subnet")
        if s.inputs["tags"].get("kubernetes.io/role/elb") == "1"
    ]
    assert len({s.inputs["availabilityZoneId"] for s in public}) >= 2
    addons = {a.inputs["addonName"] for a in g4dn.of_type("aws:eks/addon:Addon")}
    assert {"coredns", "aws-ebs-csi-driver", "vpc-cni", "kube-proxy"} <= addons


def test_add_ons_wait_for_the_system_node_group(g4dn):
    system = g4dn.one(NODE_GROUP, "ml-system")
    for addon in g4dn.of_type("aws:eks/addon:Addon"):
        assert system.urn in addon.depends_on, addon.name
    c = g4dn.one("eks:index:Cluster").inputs
    assert c["corednsAddonOptions"]["enabled"] is False
    assert c["kubeProxyAddonOptions"]["enabled"] is False


def test_ebs_csi_driver_has_its_own_irsa_role(g4dn):
    addon = g4dn.one("aws:eks/addon:Addon", "ml-addons-aws-ebs-csi-driver")
    role = g4dn.one("aws:iam/role:Role", "ml-addons-aws-ebs-csi-driver-role")
    assert addon.inputs["serviceAccountRoleArn"].endswith("/ml-addons-aws-ebs-csi-driver-role")
    (stmt,) = json.loads(role.inputs["assumeRolePolicy"])["Statement"]
    sub = next(v for k, v in stmt["Condition"]["StringEquals"].items() if k.endswith(":sub"))
    assert sub == "system:serviceaccount:kube-system:ebs-csi-controller-sa"


def test_s3_gateway_endpoint_is_on_every_private_route_table(zonal):
    (ep,) = zonal.of_type("aws:ec2/vpcEndpoint:VpcEndpoint")
    assert ep.inputs["serviceName"] == "com.amazonaws.us-east-1.s3"
    assert ep.inputs["vpcEndpointType"] == "Gateway"
    private = {
        r.id for r in zonal.of_type("aws:ec2/routeTable:RouteTable") if "-private-" in r.name
    }
    # One private route table per NAT gateway: perAz over the 6 AZ IDs but use1-az3, where no
    # group runs (the control plane avoids it; its subnet routes through another AZ's NAT).
    assert set(ep.inputs["routeTableIds"]) == private and len(private) == 5


def test_per_az_nat_routes_each_private_subnet_with_nodes_through_its_own_az(zonal):
    subnets = {s.id: s for s in zonal.of_type("aws:ec2/subnet:Subnet")}
    tables = {r.id: r for r in zonal.of_type("aws:ec2/routeTable:RouteTable")}
    nats = {n.id: n for n in zonal.of_type("aws:ec2/natGateway:NatGateway")}
    with_nodes = {s for g in zonal.of_type(NODE_GROUP) for s in g.inputs["subnetIds"]}
    own, other = 0, []
    for assoc in zonal.of_type("aws:ec2/routeTableAssociation:RouteTableAssociation"):
        subnet = subnets[assoc.inputs["subnetId"]]
        if subnet.inputs["tags"].get("kubernetes.io/role/internal-elb") != "1":
            continue
        (route,) = tables[assoc.inputs["routeTableId"]].inputs["routes"]
        nat_subnet = subnets[nats[route["natGatewayId"]].inputs["subnetId"]]
        if nat_subnet.inputs["availabilityZoneId"] == subnet.inputs["availabilityZoneId"]:
            own += 1
        else:
            other.append(subnet)
    # 6 private subnets; the one through another AZ's NAT (use1-az3) has no node group.
    assert own == 5 and len(other) == 1 and other[0].id not in with_nodes
    assert len(nats) == 5


def test_group_per_zone_stack_plans_one_node_group_per_az_and_balancing(zonal):
    groups = [r for r in zonal.of_type(NODE_GROUP) if r.name.startswith("infer-a10g-spot-")]
    assert len(groups) == 5 and all(len(g.inputs["subnetIds"]) == 1 for g in groups)
    values = zonal.one(RELEASE, "infer-ca-release").inputs["values"]
    assert values["extraArgs"]["balance-similar-node-groups"] == "true"
    assert values["extraArgs"]["balancing-label"] == "gpu-infra/pool"
    assert values["extraArgs"]["expander"] == "priority" and "expanderPriorities" in values


def test_pod_identity_associates_the_autoscaler_role_and_needs_no_oidc_trust(zonal):
    role = zonal.one("aws:iam/role:Role", "infer-ca-role")
    (stmt,) = json.loads(role.inputs["assumeRolePolicy"])["Statement"]
    assert stmt["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    assert stmt["Action"] == ["sts:AssumeRole", "sts:TagSession"]
    assoc = zonal.one(
        "aws:eks/podIdentityAssociation:PodIdentityAssociation", "infer-ca-pod-identity"
    )
    assert (assoc.inputs["namespace"], assoc.inputs["serviceAccount"]) == (
        "kube-system",
        "cluster-autoscaler",
    )
    sa = zonal.one(RELEASE, "infer-ca-release").inputs["values"]["rbac"]["serviceAccount"]
    assert "annotations" not in sa
    assert zonal.one("eks:index:Cluster").inputs["createOidcProvider"] is False


def test_efa_launch_template_names_the_cluster_security_group_and_placement_group(hpc):
    lt = hpc.one(LT, "train-h100-efa-lt").inputs
    nics = lt["networkInterfaces"]
    assert len(nics) == 32 and nics[0]["interfaceType"] == "efa"
    assert {n["interfaceType"] for n in nics[1:]} == {"efa-only"}
    sgs = ["sg-0123456789abcdef0", "train-efa_id"]  # the cluster's, then the EFA self group
    assert all(n["securityGroups"] == sgs for n in nics)
    pg = hpc.one("aws:ec2/placementGroup:PlacementGroup", "train-h100-efa-pg")
    assert (
        pg.inputs["strategy"] == "cluster" and lt["placement"]["groupName"] == "train-h100-efa-pg"
    )
    assert "userData" in lt  # nodeadm RAID0 of the instance store


def test_hpc_pools_get_the_efa_device_plugin_tolerating_the_gpu_taint(hpc):
    rel = hpc.one(RELEASE, "train-efa-device-plugin")
    assert rel.inputs["chart"] == "aws-efa-k8s-device-plugin" and rel.inputs["version"] == "v0.5.30"
    assert {
        "key": "nvidia.com/gpu",
        "operator": "Equal",
        "value": "true",
        "effect": "NoSchedule",
    } in (rel.inputs["values"]["tolerations"])
    # What the chart reads (it renders its affinity from supportedInstanceLabels).
    labels = rel.inputs["values"]["supportedInstanceLabels"]
    assert labels == {"keys": ["gpu-infra/pool"], "values": ["h100-efa", "h200-odcr"]}
    assert "affinity" not in rel.inputs["values"]


def test_capacity_block_launch_template_holds_the_type_and_the_block(hpc):
    lt = hpc.one(LT, "train-b200-block-lt").inputs
    assert lt["instanceMarketOptions"] == {"marketType": "capacity-block"}
    assert lt["instanceType"] == "p6-b200.48xlarge"
    assert lt["capacityReservationSpecification"] == {
        "capacityReservationTarget": {"capacityReservationId": "cr-0fedcba9876543210"}
    }
    ng = hpc.one(NODE_GROUP, "train-b200-block-ng").inputs
    assert ng["capacityType"] == "CAPACITY_BLOCK" and "instanceTypes" not in ng


def test_odcr_group_targets_its_reservation_without_a_preference(hpc):
    spec = hpc.one(LT, "train-h200-odcr-lt").inputs["capacityReservationSpecification"]
    assert spec == {"capacityReservationTarget": {"capacityReservationId": "cr-0123456789abcdef0"}}


def test_device_plugin_stack_installs_the_pinned_chart_after_the_system_group():
    rec = sample("eks-device-plugin")
    rel = rec.one(RELEASE, "ml-dp-nvidia-device-plugin")
    assert not [r for r in rec.of_type(RELEASE) if r.inputs["chart"] == "aws-efa-k8s-device-plugin"]
    assert rel.inputs["chart"] == "nvidia-device-plugin" and rel.inputs["version"] == "0.18.2"
    assert rec.one(NODE_GROUP, "ml-dp-system").urn in rel.depends_on
    assert rec.of_type("kubernetes:helm.sh/v3:Release") and not [
        r for r in rec.of_type(RELEASE) if r.inputs["chart"] == "gpu-operator"
    ]


def test_existing_cluster_without_an_oidc_provider_gets_one():
    rec = run_stack("eks-existing", observed=shared(oidc_provider_arn=None))
    (provider,) = rec.of_type(OIDC)
    assert provider.inputs["url"] == f"https://{SHARED.oidc_issuer}"
    assert provider.inputs["clientIdLists"] == ["sts.amazonaws.com"]
    assert provider.inputs["tags"] == {"gpu-infra/stack": "shared/eks-existing"}
    role = rec.one("aws:iam/role:Role", "shared-ca-role")
    assert provider.urn in role.depends_on


def test_an_oidc_provider_left_by_an_earlier_destroy_is_used_not_declared_again():
    # IAM refuses a second provider for the same URL (EntityAlreadyExists): the one this stack
    # kept on destroy is found, used by ARN, and nothing is declared.
    rec = run_stack("eks-existing", observed=shared(oidc_provider_arn=SHARED_OIDC))
    assert rec.of_type(OIDC) == []
    (stmt,) = json.loads(rec.one("aws:iam/role:Role", "shared-ca-role").inputs["assumeRolePolicy"])[
        "Statement"
    ]
    assert stmt["Principal"]["Federated"] == SHARED_OIDC
    assert f"{SHARED.oidc_issuer}:sub" in stmt["Condition"]["StringEquals"]


def test_an_existing_cluster_is_reached_at_its_observed_endpoint_and_security_group():
    cfg = raw("eks-existing")
    cfg["gpu-infra:gpuPools"][0] |= {"machineType": "p5.48xlarge", "hpc": True, "maxNodes": 2}
    rec = run_stack(cfg, "eks-existing", observed=shared(oidc_provider_arn=SHARED_OIDC))
    assert rec.outputs["clusterEndpoint"] == SHARED.endpoint
    (sg,) = rec.of_type("aws:ec2/securityGroup:SecurityGroup")  # the EFA group, in its VPC
    assert sg.inputs["vpcId"] == SHARED.vpc_id
    (lt,) = [r for r in rec.of_type(LT) if r.inputs.get("networkInterfaces")]
    assert {g for n in lt.inputs["networkInterfaces"] for g in n["securityGroups"]} == {
        SHARED.security_group_id,
        sg.id,
    }


def test_existing_cluster_uses_an_oidc_provider_someone_else_made():
    rec = sample("eks-existing")
    assert rec.of_type(OIDC) == []
    (stmt,) = json.loads(rec.one("aws:iam/role:Role", "shared-ca-role").inputs["assumeRolePolicy"])[
        "Statement"
    ]
    assert stmt["Principal"]["Federated"].startswith("arn:aws:iam::123456789012:oidc-provider/")


def test_existing_cluster_pod_identity_without_its_agent_is_an_error():
    cfg = raw("eks-existing")
    cfg["gpu-infra:cluster"]["autoscaler"] = {"identity": "pod-identity"}
    with pytest.raises(Exception, match=r"cluster\.autoscaler\.identity: .*eks-pod-identity-agent"):
        run_stack(cfg, "eks-existing", observed=shared(pod_identity_agent=False))


def test_existing_cluster_autoscaler_discovers_only_this_stacks_groups():
    rec = sample("eks-existing")
    tags = rec.one(RELEASE, "shared-ca-release").inputs["values"]["autoDiscovery"]["tags"]
    assert "gpu-infra/autoscaler/shared/eks-existing" in tags
    own = [t for t in rec.of_type(TAG) if t.inputs["tag"]["key"] == tags[-1]]
    assert len(own) == len(rec.of_type(NODE_GROUP)) == 1


def test_pod_identity_addon_role_has_no_second_association_association_already_exists(zonal):
    ebs = zonal.one(ADDON, "infer-addons-aws-ebs-csi-driver").inputs
    (pia,) = ebs["podIdentityAssociations"]
    assert pia["serviceAccount"] == "ebs-csi-controller-sa"
    standalone = [(a.inputs["namespace"], a.inputs["serviceAccount"]) for a in zonal.of_type(ASSOC)]
    assert ("kube-system", "ebs-csi-controller-sa") not in standalone
    assert len(standalone) == len(set(standalone)) == 1  # the autoscaler's only


def test_autoscaler_release_depends_on_its_pod_identity_association(zonal):
    (assoc,) = zonal.of_type(ASSOC)
    release = zonal.one(RELEASE, "infer-ca-release")
    assert assoc.urn in release.depends_on


def test_efa_launch_template_puts_efa_only_interfaces_at_device_index_0(hpc):
    nics = hpc.one(LT, "train-h100-efa-lt").inputs["networkInterfaces"]
    assert (nics[0]["networkCardIndex"], nics[0]["deviceIndex"]) == (0, 0)
    assert {n["deviceIndex"] for n in nics} == {0}
    assert [n["networkCardIndex"] for n in nics] == list(range(32))


def test_capacity_block_upgrade_note_is_logged_as_a_warning(hpc):
    assert any(lvl == "warning" and "desired size 0" in msg for lvl, msg in hpc.logs)


def test_replacement_node_group_starts_at_its_predecessors_clamped_desired_size():
    # A changed hash (e.g. a new instance type) makes a new group; it starts where the old one
    # was (clamped into its [min, max]) instead of at minSize while the old one drains.
    rec = run_stack("eks-g4dn", observed=running({"gpu-t4-00000000": 7}))
    ng = rec.one("aws:eks/nodeGroup:NodeGroup", "ml-gpu-t4-ng").inputs
    assert ng["nodeGroupName"] != "gpu-t4-00000000"
    assert ng["scalingConfig"]["desiredSize"] == 7


def test_eks_g4dn_node_bootstrap_turns_off_envvar_device_requests_for_unprivileged_pods(g4dn):
    # awslabs/amazon-eks-ami nodeadm makes nvidia the default runtime on NVIDIA AMIs; the
    # toolkit's AcceptEnvvarUnprivileged default (true) would hand every GPU to any CUDA image.
    lts = [r for r in g4dn.resources if r.type == LT and "system" not in r.name]
    assert lts
    for lt in lts:
        data = base64.b64decode(lt.inputs["userData"]).decode()
        assert "Content-Type: text/x-shellscript" in data
        assert "--set accept-nvidia-visible-devices-envvar-when-unprivileged=false" in data
        assert "--set accept-nvidia-visible-devices-as-volume-mounts=true" in data
        assert "RAID0" not in data  # g4dn is not hpc


def test_every_reserved_capacity_block_and_hpc_group_updates_with_minimal_strategy(hpc):
    # EKS NodegroupUpdateConfig.updateStrategy MINIMAL: old nodes go before new ones launch, so a
    # fully used reservation or Capacity Block can still take an AMI or launch-template update.
    groups = [r for r in hpc.of_type(NODE_GROUP) if r.name != "train-system"]
    assert len(groups) == 3
    assert {g.inputs["updateConfig"]["updateStrategy"] for g in groups} == {"MINIMAL"}


def test_on_demand_groups_and_the_system_group_keep_the_default_surge_update(g4dn):
    strategies = {r.inputs["updateConfig"].get("updateStrategy") for r in g4dn.of_type(NODE_GROUP)}
    assert strategies <= {"DEFAULT", None} and "MINIMAL" not in strategies


def test_replacement_of_a_minimal_group_starts_at_its_minimum_not_its_predecessors_size():
    # The predecessor still holds the reservation until it is deleted: seeding the replacement at
    # its size would ask for nodes the reservation cannot give.
    rec = run_stack("eks-hpc", observed=running({"h200-odcr-00000000": 2}))
    ng = rec.one(NODE_GROUP, "train-h200-odcr-ng").inputs
    assert ng["nodeGroupName"] != "h200-odcr-00000000"
    assert ng["scalingConfig"]["desiredSize"] == 0


def test_efa_security_group_allows_all_traffic_to_and_from_itself_on_every_efa_interface(hpc):
    # EC2 "Prepare an EFA-enabled security group": all inbound and outbound traffic to and from
    # the security group itself; the cluster group's egress to 0.0.0.0/0 does not cover EFA.
    (sg,) = hpc.of_type("aws:ec2/securityGroup:SecurityGroup")
    every = {"protocol": "-1", "fromPort": 0, "toPort": 0, "self": True}
    assert sg.inputs["ingress"] == [every] and sg.inputs["egress"] == [every]
    assert sg.inputs["vpcId"] == "vpc-0123456789abcdef0"
    efa_lts = [lt for lt in hpc.of_type(LT) if lt.inputs.get("networkInterfaces")]
    assert {lt.name for lt in efa_lts} == {"train-h100-efa-lt", "train-h200-odcr-lt"}
    for lt in efa_lts:
        assert all("train-efa_id" in n["securityGroups"] for n in lt.inputs["networkInterfaces"])


def test_stacks_without_efa_make_no_efa_security_group(g4dn):
    assert g4dn.of_type("aws:ec2/securityGroup:SecurityGroup") == []


def test_a_30_character_cluster_name_keeps_every_iam_name_within_64_and_tag_key_within_128():
    cfg = raw("eks-zonal-spot")  # Pod Identity, EBS CSI role, per-AZ groups
    cfg["gpu-infra:cluster"]["name"] = "c" * 30
    rec = run_stack(cfg, "a-rather-long-stack-name-for-tests")
    roles = rec.of_type("aws:iam/role:Role")
    assert roles
    # Pulumi auto-names "<logical>-<7 random>": IAM CreateRole RoleName is 1-64.
    assert all(len(r.name) + 8 <= 64 for r in roles), [r.name for r in roles]
    keys = [t.inputs["tag"]["key"] for t in rec.of_type(TAG)]
    keys += [k for ng in rec.of_type(NODE_GROUP) for k in ng.inputs["tags"]]
    assert keys and max(len(k) for k in keys) <= 128
    lts = rec.of_type(LT)
    assert all(len(lt.name) + 8 <= 128 for lt in lts)


def test_oidc_provider_this_stack_creates_is_retained_on_destroy():
    # Other stacks' IRSA roles on the shared cluster trust it; destroy must not delete it.
    (provider,) = run_stack("eks-existing", observed=shared()).of_type(OIDC)
    assert provider.options["retainOnDelete"]


def test_oidc_lookup_access_denied_stops_the_observe_step_not_read_as_missing():
    # The observe step against an account whose OIDC lookup is denied: the run stops, naming
    # the key and the error, instead of declaring a provider that may exist.
    denied = "reading IAM OIDC Provider: AccessDenied: not authorized to perform: iam:List..."
    account = LiveAccount(eks_clusters={"shared": ()}, oidc_lookup_error=denied)
    with pytest.raises(
        Exception,
        match=r"cluster.autoscaler.identity: irsa .* looking it up failed: .*AccessDenied",
    ):
        run_stack("eks-existing", account=account)


def test_the_observe_step_reads_a_missing_pod_identity_agent_as_absent_and_the_plan_refuses():
    cfg = raw("eks-existing")
    cfg["gpu-infra:cluster"]["autoscaler"] = {"identity": "pod-identity"}
    account = LiveAccount(eks_clusters={"shared": ()}, pod_identity_agent=False)
    with pytest.raises(Exception, match="has no eks-pod-identity-agent add-on; install it"):
        run_stack(cfg, "eks-existing", account=account)


def test_an_existing_cluster_the_account_lacks_is_an_error_naming_it():
    with pytest.raises(Exception, match=r"cluster\.name: 'shared': no EKS cluster of that name"):
        run_stack("eks-existing", account=LiveAccount())


def test_a_live_group_named_before_a_catalog_refresh_keeps_its_name_and_subnets():
    # The catalog now lists one more AZ for the pool than when the live group was made: the
    # deploy keeps the live group (name, AZs) instead of replacing it with a wider one.
    from infra.core.config.stack import parse
    from infra.core.eks.lifecycle import node_group_name, subnet_hash_inputs
    from infra.core.plan import build_plan

    eks = build_plan(parse(raw("eks-g4dn"), "eks-g4dn")).platform.plan
    assert eks is not None
    (ng,) = next(g for g in eks.groups if g.name == "gpu-t4").node_groups
    assert ng.frozen is not None and len(ng.az_ids) > 1
    narrower = ng.az_ids[:-1]
    old = node_group_name(
        "gpu-t4", None, {**ng.frozen.hash_base, **subnet_hash_inputs(narrower, {})}
    )
    rec = run_stack("eks-g4dn", observed=running({old: 3}))
    sent = rec.one(NODE_GROUP, "ml-gpu-t4-ng").inputs
    assert sent["nodeGroupName"] == old and sent["tags"]["Name"] == old
    assert len(sent["subnetIds"]) == len(narrower) and sent["scalingConfig"]["desiredSize"] == 3


def test_existing_cluster_autoscaler_namespace_is_labelled_restricted_and_its_pod_meets_it():
    rec = sample("eks-existing")
    release = rec.one(RELEASE, "shared-ca-release")
    (patch,) = rec.of_type("kubernetes:core/v1:NamespacePatch")
    labels = patch.inputs["metadata"]["labels"]
    assert patch.inputs["metadata"]["name"] == release.inputs["namespace"]
    assert labels["pod-security.kubernetes.io/enforce"] == "restricted"
    assert release.urn in patch.depends_on
    # Pod Security Standards "restricted": non-root, RuntimeDefault seccomp, no escalation,
    # every capability dropped.
    values = release.inputs["values"]
    pod, ctr = values["securityContext"], values["containerSecurityContext"]
    assert pod["runAsNonRoot"] is True and pod["seccompProfile"] == {"type": "RuntimeDefault"}
    assert ctr["allowPrivilegeEscalation"] is False and ctr["capabilities"] == {"drop": ["ALL"]}


def test_new_cluster_autoscaler_in_kube_system_patches_no_namespace(g4dn):
    assert g4dn.of_type("kubernetes:core/v1:NamespacePatch") == []


def test_nat_gateways_wait_for_the_internet_gateway(zonal):
    (igw,) = zonal.of_type("aws:ec2/internetGateway:InternetGateway")
    nats = zonal.of_type("aws:ec2/natGateway:NatGateway")
    assert nats and all(igw.urn in n.depends_on for n in nats)
