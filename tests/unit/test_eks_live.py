"""EKS day 2 on the pure layer: each decision over what the observe step read (``EksObserved``).

Every case is a plan of the same stack over an observation stated as data: the live node groups
and their desired sizes, the NAT gateway's AZ, the running control plane's AZs, an existing
cluster with or without its IAM OIDC provider / Pod Identity agent, add-on defaults, offerings.
"""

from __future__ import annotations

from typing import Any

import pytest

from infra.core import offline
from infra.core.catalog.vendored import DATA_DIR
from infra.core.config.stack import parse
from infra.core.eks import planner as eks
from infra.core.eks.addons import plan_addons
from infra.core.eks.groups import EksNodeGroup
from infra.core.eks.lifecycle import node_group_name, subnet_hash_inputs
from infra.core.eks.live import sends_desired_size
from infra.core.eks.observed import (
    EksClusterObserved,
    EksObserved,
    node_groups_to_read,
    not_found,
    oidc_lookup_problem,
)
from infra.core.errors import ConfigErrors
from infra.core.observed import Observed
from infra.core.plan import build_plan
from tests.unit.test_eks import eks_config

EXISTING = {"existing": True, "vpc": {"privateSubnets": {"usw2-az1": "subnet-0a1b2c3d4e5f60001"}}}
CLUSTER = EksClusterObserved(
    name="ml",
    endpoint="https://198.51.100.20",
    certificate_authority="Q0E=",
    oidc_issuer="oidc.eks.us-west-2.amazonaws.com/id/ABCDEF",
    security_group_id="sg-0aaaaaaaaaaaaaaaa",
    vpc_id="vpc-0aaaaaaaaaaaaaaaa",
    # Stack "test"'s, should it create cluster ml (live.created_cluster_problems).
    tags={"gpu-infra/stack": "ml/test"},
)
ARN = "arn:aws:iam::111122223333:oidc-provider/oidc.eks.us-west-2.amazonaws.com/id/ABCDEF"


def plan_over(cfg: dict[str, Any], observed: EksObserved | None) -> eks.EksPlan:
    p = build_plan(parse(cfg, "test"), None, Observed("eks", observed)).platform.plan
    assert p is not None
    return p


def errors_over(cfg: dict[str, Any], observed: EksObserved) -> dict[str, str]:
    with pytest.raises(ConfigErrors) as e:
        build_plan(parse(cfg, "test"), None, Observed("eks", observed))
    return {i.path: i.reason for i in e.value.issues}


def only_group(p: eks.EksPlan) -> EksNodeGroup:
    (g,) = [g for g in p.groups if g.name == "gpu-t4"]
    (ng,) = g.node_groups
    return ng


# --- desired sizes (lifecycle.desired_size; EKS "Minimum capacity N can't be greater than desired
# size M", terraform-aws-modules/terraform-aws-eks#3306) --------------------------------------


@pytest.mark.parametrize(("live", "sent"), [(3, 3), (9, 4), (0, 1)])
def test_a_live_group_sends_its_own_desired_size_clamped_into_the_new_bounds(live, sent):
    cfg = eks_config({"minNodes": 1, "maxNodes": 4})
    name = only_group(plan_over(cfg, None)).name
    assert only_group(plan_over(cfg, EksObserved(node_groups={name: live}))).desired_size == sent


def test_a_new_group_starts_at_its_minimum_offline_and_on_an_empty_account():
    cfg = eks_config({"minNodes": 2, "maxNodes": 4})
    assert only_group(plan_over(cfg, None)).desired_size == 2
    assert only_group(plan_over(cfg, EksObserved())).desired_size == 2


def test_a_replacement_group_starts_at_its_predecessors_size_clamped():
    # A changed hash (new instance type) is a new group created before the old one goes.
    ng = only_group(
        plan_over(eks_config({"maxNodes": 4}), EksObserved(node_groups={"gpu-t4-0000abcd": 7}))
    )
    assert ng.name != "gpu-t4-0000abcd" and ng.desired_size == 4


def test_a_replacement_of_a_minimal_group_starts_at_its_minimum():
    # MINIMAL (a capacity reservation): the predecessor holds the capacity until it is deleted.
    pool = {"machineType": "p5.48xlarge", "hpc": True, "maxNodes": 2, "zones": ["usw2-az2"]}
    pool["capacityReservation"] = {"id": "cr-0123456789abcdef0"}
    p = plan_over(eks_config(pool), EksObserved(node_groups={"gpu-t4-0000abcd": 2}))
    assert only_group(p).desired_size == 0


def test_the_system_group_keeps_its_live_desired_size():
    cfg = eks_config(cluster={"systemPool": {"minNodes": 1, "maxNodes": 3}})
    system = plan_over(cfg, None).system
    assert system is not None and system.desired_size == 1
    live = plan_over(cfg, EksObserved(node_groups={system.node_group_name: 3})).system
    assert live is not None and live.desired_size == 3


# --- live names across a catalog refresh (lifecycle.live_name) ---------------------------------


def test_a_live_group_named_over_fewer_azs_keeps_its_name_and_azs_and_says_so():
    cfg = eks_config()
    (g,) = plan_over(cfg, None).groups
    (ng,) = g.node_groups
    assert ng.frozen is not None and len(ng.az_ids) > 1
    narrower = ng.az_ids[:-1]
    old = node_group_name(
        "gpu-t4", None, {**ng.frozen.hash_base, **subnet_hash_inputs(narrower, {})}
    )
    (kept_group,) = plan_over(cfg, EksObserved(node_groups={old: 2})).groups
    (kept,) = kept_group.node_groups
    assert (kept.name, kept.az_ids, kept.desired_size) == (old, narrower, 2)
    assert kept_group.az_ids == g.az_ids  # the pool still plans every AZ's subnet
    (note,) = [n for n in kept_group.notes if "keeps the AZs it runs in" in n]
    assert f"the catalog now also offers {ng.az_ids[-1]}" in note


# --- the network: NAT gateway and control plane (network.keep_live_nat, kept_control_plane_azs) -


def test_a_running_nat_gateway_keeps_its_az_over_a_catalog_az_that_sorts_first():
    net = plan_over(eks_config(), EksObserved(nat_az_ids=("usw2-az2",))).network
    assert net is not None and net.nat_az_ids == ("usw2-az2",)
    assert any("the NAT gateway keeps the AZ it runs in (usw2-az2)" in n for n in net.notes)
    first = plan_over(eks_config(), None).network
    assert first is not None and first.nat_az_ids == ("usw2-az1",) and first.notes == ()


def test_a_running_control_plane_keeps_the_azs_it_was_created_with():
    # EKS: "The subnets passed as an update must contain the same set of AZs as originally passed
    # when creating the cluster" (aws/containers-roadmap#170).
    running = EksClusterObserved(
        **{**_fields(CLUSTER), "subnet_az_ids": ("usw2-az2", "usw2-az3", "usw2-az4")}
    )
    net = plan_over(eks_config(), EksObserved(cluster=running)).network
    assert net is not None and net.cluster_az_ids == ("usw2-az2", "usw2-az3", "usw2-az4")
    assert any("EKS cannot add usw2-az1" in n for n in net.notes)
    fresh = plan_over(eks_config(), EksObserved()).network
    assert fresh is not None and fresh.cluster_az_ids == fresh.control_plane_az_ids


def _fields(c: EksClusterObserved) -> dict[str, Any]:
    return {f: getattr(c, f) for f in c.__slots__}  # pyright: ignore[reportAttributeAccessIssue]


# --- an existing cluster: attach, OIDC provider, Pod Identity agent -----------------------------


def test_an_existing_cluster_is_planned_with_what_was_read():
    p = plan_over(eks_config(cluster=EXISTING), EksObserved(cluster=CLUSTER, oidc_provider_arn=ARN))
    assert p.existing_cluster == CLUSTER
    assert (p.declare_oidc_provider, p.oidc_provider_arn) == (False, ARN)


def test_an_existing_cluster_without_an_oidc_provider_declares_one():
    p = plan_over(eks_config(cluster=EXISTING), EksObserved(cluster=CLUSTER))
    assert (p.declare_oidc_provider, p.oidc_provider_arn) == (True, "")


def test_offline_an_existing_cluster_is_placeholders_and_its_provider_assumed_present():
    p = plan_over(eks_config(cluster=EXISTING), None)
    c = p.existing_cluster
    assert c is not None and c.endpoint == f"https://{offline.ENDPOINT}"
    assert c.oidc_issuer == offline.eks_oidc_issuer("us-west-2")
    assert not p.declare_oidc_provider
    assert p.oidc_provider_arn == offline.oidc_provider_arn(c.oidc_issuer)


def test_an_existing_cluster_the_account_lacks_is_a_config_error():
    got = errors_over(eks_config(cluster=EXISTING), EksObserved())
    assert "no EKS cluster of that name in us-west-2" in got["cluster.name"]


def test_pod_identity_on_an_existing_cluster_without_its_agent_is_a_config_error():
    cfg = eks_config(cluster={**EXISTING, "autoscaler": {"identity": "pod-identity"}})
    got = errors_over(cfg, EksObserved(cluster=CLUSTER, pod_identity_agent=False))
    assert "no eks-pod-identity-agent add-on" in got["cluster.autoscaler.identity"]
    ok = plan_over(cfg, EksObserved(cluster=CLUSTER, pod_identity_agent=True))
    assert not ok.declare_oidc_provider and ok.oidc_provider_arn == ""


def test_a_created_cluster_declares_no_oidc_provider_of_its_own():
    # pulumi-eks makes it (createOidcProvider) for a cluster this stack creates.
    p = plan_over(eks_config(), EksObserved(cluster=CLUSTER))
    assert p.existing_cluster is None and not p.declare_oidc_provider


# --- add-on defaults and offerings --------------------------------------------------------------


def test_an_addon_without_a_pin_takes_the_observed_eks_default():
    cfg = eks_config(cluster={"kubernetesVersion": "1.35"})
    unpinned = {
        a.name for a in plan_addons("aws", False, "irsa", "1.35", DATA_DIR) if not a.version
    }
    assert "aws-ebs-csi-driver" in unpinned
    seen = {n: f"v1.0.0-{n}" for n in unpinned}
    got = {a.name: a.version for a in plan_over(cfg, EksObserved(addon_versions=seen)).addons}
    assert {n: got[n] for n in unpinned} == seen
    offline_got = {a.name: a.version for a in plan_over(cfg, None).addons}
    assert offline_got["aws-ebs-csi-driver"] == offline.eks_addon_default("1.35")


def test_an_observed_offering_withdrawn_from_a_planned_az_is_a_config_error_for_that_pool():
    # Narrowing would change subnet_ids, which force a new node group under the same hashed name
    # (terraform-provider-aws eks node_group.go ForceNew): EKS answers "already exists".
    cfg = eks_config()
    (g,) = plan_over(cfg, None).groups
    offers = {"g4dn.xlarge": tuple(az for az in g.az_ids if az != g.az_ids[0])}
    got = errors_over(cfg, EksObserved(offerings=offers))
    assert got["gpuPools[0].zones"].startswith(f"{g.az_ids[0]} of us-west-2 no longer offers")
    assert plan_over(cfg, EksObserved(offerings={"g4dn.xlarge": g.az_ids})).groups


# --- what the observe step reads and how it classifies a failed read ---------------------------


def test_only_node_groups_named_like_a_pool_of_the_stack_are_read():
    live = ["gpu-t4-1a2b3c4d", "gpu-t4-usw2-az1-1a2b3c4d", "system-00ff00ff", "other-1a2b3c4d"]
    live += ["gpu-t4", "gpu-t4-spot-1a2b3c4d"]
    assert node_groups_to_read(live, ["gpu-t4", "system"]) == [
        "gpu-t4-1a2b3c4d",
        "gpu-t4-usw2-az1-1a2b3c4d",
        "system-00ff00ff",
    ]


def test_a_pool_reads_its_own_groups_not_those_of_a_pool_whose_name_it_prefixes():
    # <pool>[-<az id>]-<8 hex> (lifecycle.node_group_name): "gpu-t4-1a2b3c4d" is pool gpu-t4's.
    live = ["gpu-1a2b3c4d", "gpu-usw2-az1-1a2b3c4d", "gpu-t4-1a2b3c4d", "gpu-t4-usw2-az1-1a2b3c4d"]
    assert node_groups_to_read(live, ["gpu"]) == ["gpu-1a2b3c4d", "gpu-usw2-az1-1a2b3c4d"]


def test_not_found_is_told_apart_from_a_read_that_failed():
    # terraform-provider-aws returns retry.NotFoundError ("couldn't find resource") for IAM
    # NoSuchEntity and EKS ResourceNotFoundException.
    assert not_found("reading EKS Add-On (ml:eks-pod-identity-agent): couldn't find resource")
    assert (
        oidc_lookup_problem("reading IAM OIDC Provider (https://x): couldn't find resource", "ml")
        is None
    )
    denied = "reading IAM OIDC Provider: AccessDenied: not authorized"
    assert not not_found(denied)
    problem = oidc_lookup_problem(denied, "ml")
    assert (
        problem is not None
        and "looking it up failed: reading IAM OIDC Provider: AccessDenied" in problem
    )


def test_a_running_group_sends_its_desired_size_only_when_its_min_or_max_change():
    # terraform-provider-aws: ignore_changes on scaling_config[0].desired_size for autoscaled
    # groups; the provider sends desired_size with any scaling_config change (node_group.go).
    limits = {"gpu-t4-1a2b3c4d": (0, 20)}
    assert not sends_desired_size("gpu-t4-1a2b3c4d", limits, 0, 20)
    assert sends_desired_size("gpu-t4-1a2b3c4d", limits, 1, 20)
    assert sends_desired_size("gpu-t4-1a2b3c4d", limits, 0, 5)
    assert sends_desired_size("gpu-t4-1a2b3c4d", {}, 0, 20)  # limits not read: sent
