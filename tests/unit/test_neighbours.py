"""Two stacks on one cluster they do not own: the per-stack node label and GKE's per-stack names
(pure plan decisions over what the observe step would read)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from infra.core import rules
from infra.core.catalog.vendored import DATA_DIR, Catalog
from infra.core.config.stack import parse
from infra.core.eks.platform import eks_plan
from infra.core.errors import ConfigErrors
from infra.core.gke.model import GkePlan
from infra.core.gke.names import node_sa_email, project_names
from infra.core.gke.neighbours import stack_pool_name
from infra.core.gke.observed import (
    GkeClusterObserved,
    GkeComputeClassObserved,
    GkeNodePoolObserved,
    GkeObserved,
)
from infra.core.labels import GKE_NODEPOOL_LABEL, POOL_LABEL, STACK_LABEL
from infra.core.neighbours import STACK_NAME_MAX, stack_label_value
from infra.core.observed import Observed
from infra.core.plan import Plan, build_plan
from infra.core.rules.limits import limit
from tests.conftest import gke_config
from tests.unit.test_eks_day2 import gpu_pool
from tests.unit.test_shared_cluster import existing

# GKE's node-pool name: "Must be a match of regex '(?:[a-z](?:[-a-z0-9]{0,38}[a-z0-9])?)'"
# (the API's refusal quoted in pulumi/pulumi-gcp#1510): check_pool_name holds that regex.
POOL_NAME_MAX = 40
SHARED = {"name": "shared", "location": "us-central1", "existing": True}
FALLBACK = [{"machineType": "n1-standard-8", "gpu": {"type": "nvidia-tesla-t4", "count": 1}}]


# --- the stack label's value -------------------------------------------------------------------


@pytest.mark.parametrize("stack", ["team-a", "eks-existing", "Prod_2.blue"])
def test_a_stack_name_that_is_a_label_value_is_its_own_label_value(stack: str):
    assert stack_label_value(stack) == stack


def test_every_pulumi_stack_name_fits_a_kubernetes_label_value_and_two_names_stay_apart():
    # Pulumi takes 1-100 of [A-Za-z0-9_.-] (receiver_limits.csv pulumi.stack_name), free to start
    # or end with '_', '.' or '-'; a label value may not, and holds at most 63.
    assert STACK_NAME_MAX == 100
    names = [
        "a" * STACK_NAME_MAX,
        "a" * (STACK_NAME_MAX - 1) + "b",  # differs past any cut
        "_team.a-",
        "-.-",
        "x" * 62 + "_",
    ]
    values = [stack_label_value(n) for n in names]
    for v in values:
        assert rules.check_label_value(v) == v and 0 < len(v) <= limit("k8s.label_value")
    assert len(set(values)) == len(values)
    assert [stack_label_value(n) for n in names] == values  # the same on every run


# --- GKE node pool names per stack -------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["gpu", "a" * 33, "a" * 34, "a" * POOL_NAME_MAX, "gpu-t4-" + "9" * 30]
)
def test_a_pools_name_per_stack_keeps_gkes_node_pool_rule(name: str):
    assert rules.check_pool_name(name) == name  # what gpuPools[].name takes
    scoped = stack_pool_name(name, "0a12e4")
    assert rules.check_pool_name(scoped) == scoped and len(scoped) <= POOL_NAME_MAX
    assert scoped != name


def test_two_long_pools_of_one_stack_keep_apart_after_the_cut():
    a, b = "a" * 36 + "-one", "a" * 36 + "-two"
    assert stack_pool_name(a, "0a12e4") != stack_pool_name(b, "0a12e4")


def _gke(stack: str, pools: dict[str, GkeNodePoolObserved] | None = None, **pool: Any) -> Plan:
    cfg = gke_config(pool or None, cluster=dict(SHARED), gpuOperator={"enabled": False})
    observed = None
    if pools is not None:
        running = GkeClusterObserved(
            name="shared", endpoint="10.0.0.1", certificate_authority="Y2E=", workload_pool="p"
        )
        observed = Observed("gke", GkeObserved(cluster=running, node_pools=pools))
    return build_plan(parse(cfg, stack), None, observed)


def gke_of(plan: Plan) -> GkePlan:
    return plan.platform.plan  # type: ignore[attr-defined]


def _names(plan: Plan) -> set[tuple[str, str]]:
    g = gke_of(plan)
    pools = {("node pool", p.node_pool) for p in g.pools}
    return pools | {("ComputeClass", c.name) for c in g.compute_classes}


def test_two_gke_stacks_on_one_existing_cluster_name_no_node_pool_or_class_alike():
    a, b = (_gke(s, fallback=FALLBACK) for s in ("team-a", "team-b"))
    assert len(_names(a)) == 3  # the pool, its fallback and their ComputeClass
    assert _names(a).isdisjoint(_names(b))
    for p in gke_of(a).pools:
        assert p.labels[STACK_LABEL] == "team-a"
        # The node label GKE puts on the pool's nodes is what a workload of it selects.
        assert p.hints.node_selector.get(GKE_NODEPOOL_LABEL, p.node_pool) == p.node_pool


def test_an_offline_plan_names_a_shared_clusters_pools_for_a_first_deploy():
    mark = project_names("team-a", "us-central1", "shared").node_sa_id.split("-")[1]
    (pool,) = gke_of(_gke("team-a")).pools
    assert (pool.name, pool.node_pool) == ("gpu-t4", f"gpu-t4-{mark}")


def _account(stack: str) -> str:
    return node_sa_email(project_names(stack, "us-central1", "shared").node_sa_id, "demo-project")


def test_a_running_pool_made_before_names_carried_the_stack_keeps_its_name():
    # Renaming a node pool replaces it (NodePool.name is ForceNew): every node would go.
    old = GkeNodePoolObserved(labels={POOL_LABEL: "gpu-t4"}, service_account=_account("team-a"))
    plan = _gke("team-a", {"gpu-t4": old})
    (pool,) = gke_of(plan).pools
    assert pool.node_pool == "gpu-t4" and pool.labels[STACK_LABEL] == "team-a"
    assert any("keep their names" in n and "this stack created" in n for n in plan.notes)


@pytest.mark.parametrize(
    "theirs",
    [
        GkeNodePoolObserved(labels={POOL_LABEL: "gpu-t4", STACK_LABEL: "team-b"}),
        GkeNodePoolObserved(labels={POOL_LABEL: "gpu-t4"}, service_account=_account("team-b")),
    ],
    ids=["labelled-for-another-stack", "running-as-another-stacks-account"],
)
def test_another_stacks_running_pool_of_the_same_name_is_never_taken(theirs: GkeNodePoolObserved):
    plan = _gke("team-a", {"gpu-t4": theirs})
    (pool,) = gke_of(plan).pools
    assert pool.node_pool != "gpu-t4"
    assert not any("keep their names" in n for n in plan.notes)


def test_an_unlabelled_pool_on_a_shared_account_is_kept_and_says_who_else_could_own_it():
    # A brought node account may be another stack's too: nothing proves whose pool it is, and a
    # wrong guess the other way would replace this stack's pool.
    brought = "gpu-nodes@demo-project.iam.gserviceaccount.com"
    cfg_pool = GkeNodePoolObserved(labels={POOL_LABEL: "gpu-t4"}, service_account=brought)
    cfg = gke_config(
        None, cluster={**SHARED, "nodeServiceAccount": brought}, gpuOperator={"enabled": False}
    )
    running = GkeClusterObserved(
        name="shared", endpoint="10.0.0.1", certificate_authority="Y2E=", workload_pool="p"
    )
    observed = Observed("gke", GkeObserved(cluster=running, node_pools={"gpu-t4": cfg_pool}))
    plan = build_plan(parse(cfg, "team-a"), None, observed)
    assert gke_of(plan).pools[0].node_pool == "gpu-t4"
    assert any("may have made it" in n and "409" in n for n in plan.notes)


def test_a_node_pool_of_the_planned_name_that_is_not_this_stacks_is_a_pool_name_error():
    mark = project_names("team-a", "us-central1", "shared").node_sa_id.split("-")[1]
    hand_made = GkeNodePoolObserved(labels={"team": "ml"})
    with pytest.raises(ConfigErrors) as e:
        _gke("team-a", {f"gpu-t4-{mark}": hand_made})
    (issue,) = [i for i in e.value.issues if i.path == "gpuPools[0].name"]
    assert f"gpu-t4-{mark}" in issue.reason and "409" in issue.reason


def test_a_hand_made_pool_of_the_unscoped_name_is_left_to_its_owner():
    plan = _gke("team-a", {"gpu-t4": GkeNodePoolObserved(labels={"team": "ml"})})
    assert gke_of(plan).pools[0].node_pool != "gpu-t4"


def test_observed_node_pools_read_back_from_the_json_they_wrote():
    doc = GkeObserved(
        node_pools={"gpu": GkeNodePoolObserved(labels={POOL_LABEL: "gpu"}, service_account="x")}
    ).to_json()
    assert GkeObserved.from_json(doc).to_json() == doc
    assert GkeObserved.from_json({"cluster": None}).node_pools is None  # not read
    with pytest.raises(ValueError, match="unknown key"):
        GkeObserved.from_json({"nodePools": {"gpu": {"label": {}}}})


# --- auto-creating ComputeClasses, found by the class itself ----------------------------------

AUTO = {
    "name": "l4-auto",
    "autoCreate": True,
    "machineType": "g2-standard-8",
    "gpu": None,
    "minNodes": 0,
    "maxNodes": 4,
}


def _auto(stack: str, classes: dict[str, GkeComputeClassObserved] | None) -> Plan:
    """An auto-creating entry on the shared cluster, planned over a read that found no node pool
    (an idle class has none) and ``classes``."""
    cluster = {**SHARED, "minMasterVersion": "1.35"}
    cfg = gke_config(AUTO, cluster=cluster, gpuOperator={"enabled": False})
    running = GkeClusterObserved(
        name="shared", endpoint="10.0.0.1", certificate_authority="Y2E=", workload_pool="p"
    )
    found = GkeObserved(cluster=running, node_pools={}, compute_classes=classes)
    return build_plan(parse(cfg, stack), None, Observed("gke", found))


def _class(*rules: dict[str, str], account: str = "") -> GkeComputeClassObserved:
    return GkeComputeClassObserved(
        priorities=tuple(GkeNodePoolObserved(labels=r, service_account=account) for r in rules)
    )


def test_an_idle_auto_creating_class_made_before_names_carried_the_stack_keeps_its_name():
    # A ComputeClass acts only on the pods whose compute-class label is its name (the CRD's
    # description): a new name leaves the pods that select l4-auto without new nodes.
    mine = _class({POOL_LABEL: "l4-auto"}, account=_account("team-a"))
    plan = _auto("team-a", {"l4-auto": mine})
    (cc,) = gke_of(plan).compute_classes
    assert (cc.name, cc.key) == ("l4-auto", "l4-auto")
    assert gke_of(plan).pools[0].compute_class == "l4-auto"
    assert any("runs ComputeClass l4-auto" in n and "this stack created" in n for n in plan.notes)


@pytest.mark.parametrize(
    "theirs",
    [
        _class({POOL_LABEL: "l4-auto", STACK_LABEL: "team-b"}),
        _class({POOL_LABEL: "l4-auto"}, account=_account("team-b")),
        _class({POOL_LABEL: "other"}, account=_account("team-a")),
    ],
    ids=["labelled-for-another-stack", "running-as-another-stacks-account", "another-entrys"],
)
def test_a_class_of_the_entrys_name_that_is_not_this_entrys_is_never_taken(theirs):
    plan = _auto("team-a", {"l4-auto": theirs})
    (cc,) = gke_of(plan).compute_classes
    assert cc.name == stack_pool_name("l4-auto", _mark("team-a"))
    assert not any("runs ComputeClass" in n for n in plan.notes)


def test_a_class_this_stack_already_labelled_keeps_its_name_without_a_note():
    labelled = _class({POOL_LABEL: "l4-auto", STACK_LABEL: "team-a"})
    plan = _auto("team-a", {"l4-auto": labelled})
    assert gke_of(plan).compute_classes[0].name == "l4-auto"
    assert not any("runs ComputeClass" in n for n in plan.notes)


def test_a_compute_class_list_item_is_read_as_its_rules_labels_and_account():
    # The CRD's fields (https://cloud.google.com/kubernetes-engine/docs/reference/crds/computeclass):
    # nodePoolConfig.nodeLabels apply to every rule, a rule's own nodeLabels over them.
    item = {
        "metadata": {"name": "l4-auto"},
        "spec": {
            "nodePoolConfig": {"serviceAccount": "sa@p.iam", "nodeLabels": {"team": "ml"}},
            "priorities": [
                {"machineType": "g2-standard-8", "nodeLabels": {POOL_LABEL: "l4-auto"}},
                {"nodepools": ["fixed"]},
            ],
        },
    }
    k = GkeComputeClassObserved.of(item)
    assert [dict(r.labels) for r in k.priorities] == [
        {"team": "ml", POOL_LABEL: "l4-auto"},
        {"team": "ml"},
    ]
    assert {r.service_account for r in k.priorities} == {"sa@p.iam"}
    doc = GkeObserved(compute_classes={"l4-auto": k}).to_json()
    assert GkeObserved.from_json(doc).to_json() == doc
    with pytest.raises(ValueError, match="unknown key"):
        GkeObserved.from_json({"computeClasses": {"x": {"rules": []}}})


def _mark(stack: str) -> str:
    return project_names(stack, "us-central1", "shared").node_sa_id.split("-")[1]


# --- EKS ---------------------------------------------------------------------------------------


def test_every_eks_gpu_node_and_selector_of_a_shared_cluster_stack_carries_its_stack():
    p = eks_plan(
        build_plan(parse(existing(gpu_pool(machineType="g4dn.xlarge")), "team-a")).platform
    )
    (g,) = p.groups
    assert g.labels[STACK_LABEL] == "team-a"
    assert g.hints.node_selector == {POOL_LABEL: "gpu", STACK_LABEL: "team-a"}
    # At zero nodes the autoscaler knows the label only from the ASG's node-template tag
    # (kubernetes/autoscaler cluster-autoscaler/cloudprovider/aws/README.md "Auto-Discovery Setup").
    assert g.asg_tags[f"k8s.io/cluster-autoscaler/node-template/label/{STACK_LABEL}"] == "team-a"


def test_a_cluster_the_stack_creates_gets_no_stack_label():
    cfg = existing(gpu_pool(machineType="g4dn.xlarge"))
    cfg["gpu-infra:cluster"] = {"name": "ml", "location": "us-west-2"}
    (g,) = eks_plan(build_plan(parse(cfg, "team-a")).platform).groups
    assert STACK_LABEL not in g.labels and STACK_LABEL not in g.hints.node_selector


def older_gpu_infra_catalog(tmp_path: Path) -> Catalog:
    """The catalog of a gpu-infra from before the stack label (``--old-catalog REF``): its
    receiver_limits.csv lacks the pulumi.stack_name row that came with it."""
    old = tmp_path / "catalog"
    shutil.copytree(DATA_DIR, old, ignore=shutil.ignore_patterns("gpu-operator", "karpenter"))
    limits = old / "receiver_limits.csv"
    rows = limits.read_text(encoding="utf-8").splitlines(keepends=True)
    limits.write_text("".join(r for r in rows if not r.startswith("pulumi.stack_name,")))
    return Catalog(old)


def test_an_older_gpu_infras_catalog_plans_its_side_without_the_label_and_names(tmp_path: Path):
    # Its side is planned as that gpu-infra deployed it.
    catalog = older_gpu_infra_catalog(tmp_path)
    assert not catalog.stack_node_labels and Catalog().stack_node_labels
    eks = build_plan(parse(existing(gpu_pool(machineType="g4dn.xlarge")), "team-a"), catalog)
    assert STACK_LABEL not in eks_plan(eks.platform).groups[0].labels
    cfg = gke_config(None, cluster=dict(SHARED), gpuOperator={"enabled": False})
    (pool,) = gke_of(build_plan(parse(cfg, "team-a"), catalog)).pools
    assert pool.node_pool == "gpu-t4" and STACK_LABEL not in pool.labels
