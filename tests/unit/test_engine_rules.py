"""The engine's own rules in --diff: protect (old and new), retainOnDelete, and what a replacement
does to the resources that hang on it. Expected answers from pulumi/pulumi @ 1b594989
pkg/resource/deploy/step_generator.go and step.go, cited per test."""

from __future__ import annotations

from infra.core.cost import Cost
from infra.core.diff import RETAINED, ForcingRule, diff, half_applied
from infra.core.lifecycle import protect_refusal
from infra.planview.review import failures, review
from tests.unit.state_fixtures import state_resource

CL = "gcp:container/cluster:Cluster"
NP = "gcp:container/nodePool:NodePool"
PROV = "pulumi:providers:kubernetes"
NS = "kubernetes:core/v1:Namespace"


def _cluster(network, protect=False):
    return state_resource(
        {"name": "ml", "network": network}, CL, "ml", options={"protect": protect}
    )


CLUSTER_URN = _cluster("a")["urn"]


def _changes(old, new):
    return {c.name: c for c in diff(old, new)}


def test_a_pool_whose_replace_forcing_input_comes_from_a_replaced_cluster_is_replaced():
    # calculateDependentReplacements: the input is unknown, the provider's Diff says replace
    # (nodePool.cluster is ForceNew).
    pool = state_resource({"cluster": "ml"}, NP, "ml-gpu", deps={"cluster": [CLUSTER_URN]})
    changes = _changes([_cluster("a"), pool], [_cluster("b"), pool])
    assert changes["ml-gpu"].op == "replace"
    assert "input cluster comes from" in changes["ml-gpu"].because


def test_a_resource_tied_only_by_depends_on_is_left_alone():
    # "the edge from B to A may be a simple `dependsOn` edge such that a change to B does not
    # actually influence any of B's input properties"
    pool = state_resource({"cluster": "ml"}, NP, "ml-gpu", depends_on=[CLUSTER_URN])
    assert "ml-gpu" not in _changes([_cluster("a"), pool], [_cluster("b"), pool])


def test_a_resource_deleted_with_a_replaced_cluster_is_replaced():
    # "A resource deleted with a replaced resource is destroyed by that delete, so it must be
    # replaced regardless of property diffs."
    ns = state_resource({"metadata": {"name": "t"}}, NS, "ns", options={"deletedWith": CLUSTER_URN})
    changes = _changes([_cluster("a"), ns], [_cluster("b"), ns])
    assert changes["ns"].op == "replace" and "deleted with" in changes["ns"].because


def _provider(identifier):
    inputs = {"kubeconfig": "k", "clusterIdentifier": identifier}
    return state_resource(inputs, PROV, "k8s", deps={"kubeconfig": [CLUSTER_URN]})


def test_a_provider_with_the_same_identifier_is_updated_and_its_objects_flagged():
    # pulumi-kubernetes DiffConfig: an unchanged clusterIdentifier never replaces the provider,
    # so the engine keeps the objects although they went with the old cluster.
    ns = state_resource({"metadata": {"name": "t"}}, NS, "ns")
    changes = _changes(
        [_cluster("a"), _provider("gke_ml"), ns], [_cluster("b"), _provider("gke_ml"), ns]
    )
    assert changes["k8s"].op == "update"
    assert changes["ns"].op == "unknown" and "pulumi refresh" in changes["ns"].because


def test_objects_of_a_replaced_provider_are_replaced():
    # "If the resource's provider is in the replace set, we must replace this resource."
    ns = state_resource({"metadata": {"name": "t"}}, NS, "ns")
    changes = _changes([_provider("gke_a"), ns], [_provider("gke_b"), ns])
    assert changes["k8s"].op == "replace" and changes["ns"].op == "replace"


def test_an_input_that_does_not_force_replacement_is_updated():
    pool = state_resource(
        {"cluster": "ml", "autoscaling": {"totalMaxNodeCount": 3}},
        NP,
        "ml-gpu",
        deps={"autoscaling": [CLUSTER_URN]},
    )
    changes = _changes([_cluster("a"), pool], [_cluster("b"), pool])
    assert changes["ml-gpu"].op == "update"


def test_protect_refuses_a_replace_only_when_old_and_new_are_protected():
    # step_generator.go: `new.Protect && old.Protect` ("we do allow unprotecting and replacing to
    # happen in a single update cycle").
    on, off = _cluster("a", True), _cluster("b", False)
    assert protect_refusal("replace", on, _cluster("b", True))
    assert not protect_refusal("replace", on, off)
    assert not protect_refusal("replace", off, on)


def test_protect_refuses_a_delete_of_a_resource_protected_in_the_state():
    # step.go DeleteStep.Apply: `!s.replacing && s.old.Protect` -> deleteProtectedError.
    assert protect_refusal("delete", _cluster("a", True), None)
    assert not protect_refusal("delete", _cluster("a", False), None)


def test_a_replace_of_a_cluster_unprotected_in_the_same_edit_is_not_called_refused():
    (c,) = [c for c in diff([_cluster("a", True)], [_cluster("b", False)]) if c.name == "ml"]
    assert c.op == "replace" and "refused" not in c.disruptive


def _review(old, new):
    none = Cost(pools=(), system=None, prices_as_of="")
    return review(old, new, diff(old, new), (none, none), ("old", "new"))


def test_a_retained_namespace_removed_from_the_stack_is_forgotten_not_deleted():
    # step.go DeleteStep.Apply: "Deleting a "drop on delete" is a no-op".
    ns = state_resource(
        {"metadata": {"name": "team-a"}}, NS, "team-a", options={"retainOnDelete": True}
    )
    (c,) = diff([ns], [])
    assert c.op == "delete" and c.retained and c.because == RETAINED and not c.disruptive
    assert failures(_review([ns], []), "disruptive") == []  # --fail-on disruptive: exit 0
    plain = state_resource({"metadata": {"name": "team-a"}}, NS, "team-a")
    assert failures(_review([plain], []), "disruptive")  # a real delete empties the namespace


def test_a_protected_retained_resource_is_still_refused():
    # The protect check comes before the retainOnDelete no-op in DeleteStep.Apply.
    ns = state_resource({}, NS, "team-a", options={"retainOnDelete": True, "protect": True})
    (c,) = diff([ns], [])
    assert not c.retained and "refused" in c.disruptive


def _guarded(network, on):
    inputs = {"name": "ml", "network": network, "deletionProtection": on}
    return state_resource(inputs, CL, "ml", options={"protect": on})


def test_unprotect_and_replace_in_one_edit_is_a_half_applied_up():
    # The engine lets the replace start (new side unprotected); the provider's Delete reads the
    # old state: "Cannot destroy cluster because deletion_protection is set to true"
    # (terraform-provider-google resource_container_cluster.go resourceContainerClusterDelete).
    old, new = [_guarded("a", True)], [_guarded("b", False)]
    (h,) = half_applied(diff(old, new), old, new)
    assert h.guard == "deletionProtection" and h.turned_off


def test_a_replace_refused_by_protect_is_not_half_applied():
    old, new = [_guarded("a", True)], [_guarded("b", True)]
    assert half_applied(diff(old, new), old, new) == []


def test_a_replace_of_an_unguarded_cluster_is_not_half_applied():
    old, new = [_guarded("a", False)], [_guarded("b", False)]
    assert half_applied(diff(old, new), old, new) == []


def test_access_entries_are_keyed_by_principal_so_removing_one_leaves_the_others():
    # pulumi-eks names each entry's resources <cluster>-<key> (authenticationMode.ts
    # createAccessEntries); a URN cannot hold "::" (an IAM ARN has one after "iam").
    from infra.core.eks.access import access_entry_key

    a, b = "arn:aws:iam::111122223333:role/ml-admins", "arn:aws:iam::444455556666:role/ml-admins"
    assert access_entry_key(a) == access_entry_key(a) != access_entry_key(b)
    assert access_entry_key(a).startswith("ml-admins-") and "::" not in access_entry_key(a)


def test_every_replace_carries_the_order_the_engine_runs_it_in_and_why():
    # step_generator.go: the deleteBeforeReplace option wins, else the provider's Diff; the
    # bridge asks for delete-first when the name is set (lifecycle.csv).
    (c,) = [c for c in diff([_cluster("a")], [_cluster("b")]) if c.op == "replace"]
    doc = c.to_json()
    assert (doc["order"], doc["why"].startswith("name is set by gpu-infra")) == (
        "delete-first",
        True,
    )


def test_a_replace_of_a_type_without_a_lifecycle_row_still_has_an_order():
    rules = [ForcingRule("acme:index:Widget", "size", "acme schema (ForceNew)")]
    old, new = (
        state_resource({"size": 1}, "acme:index:Widget", "w"),
        state_resource({"size": 2}, "acme:index:Widget", "w"),
    )
    (c,) = diff([old], [new], rules)
    assert c.op == "replace" and c.order == "create-first" and "engine's default" in c.why
    forced = {**new, "options": {"deleteBeforeReplace": True}}
    (d,) = diff([old], [forced], rules)
    assert (d.order, d.why) == ("delete-first", "deleteBeforeReplace=true is set")


def test_only_replaces_carry_an_order():
    pool_old = state_resource({"autoscaling": {"totalMaxNodeCount": 3}}, NP, "p")
    pool_new = state_resource({"autoscaling": {"totalMaxNodeCount": 4}}, NP, "p")
    (c,) = diff([pool_old], [pool_new])
    assert c.op == "update" and c.to_json()["order"] is None


def test_position_keyed_access_entries_refuse_only_an_index_that_changes_principal():
    # eks.py aliases <key> to entry<j> by the current index: only an index whose principal moves
    # re-keys an existing entry (a principalArn change, CreateAccessEntry ResourceInUseException).
    from infra.core.eks.access import positional_entry_issues
    from infra.core.errors import Issues

    a, b, c = (f"arn:aws:iam::111122223333:role/{n}" for n in "abc")
    for old, new, refused in (
        ([a, b], [a, b], False),
        ([a, b], [a, b, c], False),  # appended: entry2 is new
        ([a, b], [a], False),  # the last removed: entry1 deleted, entry0 kept
        ([a, b], [b], True),  # the first removed: b aliased onto a's entry0
        ([a, b], [c, a, b], True),  # inserted in front
    ):
        issues = Issues()
        positional_entry_issues(old, new, issues)
        assert bool(issues) is refused, (old, new)


def _k8s(type_, name, inputs, **options):
    return state_resource(inputs, type_, name, options=options)


def test_a_retained_namespace_replaced_delete_first_is_kept_then_created_and_refused():
    # pulumi step.go DeleteStep.Apply: no Delete call when old.RetainOnDelete, replacing or not;
    # the create of the same name then meets the kept object (AlreadyExists).
    from infra.core.diff import diff, kept_then_created

    cm = "kubernetes:core/v1:ConfigMap"
    ns = "kubernetes:core/v1:Namespace"
    target = _k8s(cm, "c", {"metadata": {"name": "c"}, "data": {"a": "1"}})
    changed = {**target, "inputs": {"metadata": {"name": "c"}, "data": {"a": "2"}}}
    team = {"metadata": {"name": "team-a"}}
    kept = _k8s(ns, "team-a", team, retainOnDelete=True, deletedWith=target["urn"])
    plain = _k8s(ns, "team-b", {"metadata": {"name": "team-b"}}, deletedWith=target["urn"])
    old, new = [target, kept, plain], [changed, kept, plain]
    changes = diff(old, new)
    by = {c.name: c for c in changes}
    assert (by["team-a"].op, by["team-a"].order) == ("replace", "delete-first")
    assert "kept, then created" in by["team-a"].disruptive and "kept" in by["team-a"].why
    assert by["team-b"].op == "replace" and "kept" not in by["team-b"].why
    assert [c.name for c in kept_then_created(changes, old, new)] == ["team-a"]


def test_a_node_group_replaced_by_its_role_keeps_its_name_and_collides_create_first():
    # nodeRoleArn is ForceNew (terraform-provider-aws node_group.go) but not in the group's name
    # hash: create-first (deleteBeforeReplace false) under the same nodeGroupName, which EKS
    # refuses (CreateNodegroup ResourceInUseException).
    from infra.core.diff import diff, name_collisions

    role_t, ng_t = "aws:iam/role:Role", "aws:eks/nodeGroup:NodeGroup"
    role = _k8s(role_t, "r", {"name": "r1"})
    renamed = {**role, "inputs": {"name": "r2"}}
    ng = _k8s(ng_t, "g", {"nodeGroupName": "gpu-1a2b", "nodeRoleArn": "r_id", "clusterName": "c"})
    ng["options"] = {"deleteBeforeReplace": False}
    changes = diff([role, ng], [renamed, ng])
    by = {c.name: c for c in changes}
    assert (by["g"].op, by["g"].order) == ("replace", "create-first")
    assert [c.name for c in name_collisions(changes, [role, ng], [renamed, ng])] == ["g"]
    moved = {**ng, "inputs": {**ng["inputs"], "nodeGroupName": "gpu-3c4d"}}
    assert name_collisions(diff([role, ng], [renamed, moved]), [role, ng], [renamed, moved]) == []
