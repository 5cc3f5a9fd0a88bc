"""Observe -> plan -> build on the mock engine: the program reads the live platform only in its
observe step, before planning; the components call no provider function at all (what they need
of a resource the stack creates, such as the security group EKS made for its cluster, comes from
that resource's outputs).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from infra import mockengine
from infra.core.catalog.vendored import Catalog
from infra.core.config.stack import StackConfig, parse
from infra.core.eks.observed import EksObserved
from infra.core.eks.platform import eks_plan
from infra.core.observed import ClusterAccess, Observed, ObserveError, observed_from_json
from infra.core.plan import build_plan
from infra.mocklive import LiveAccount, after, before
from infra.observe import kubeapi, observe
from tests.stack.harness import run_stack, sample, sample_stacks, stack_source

STACKS = sample_stacks()


def config_of(stack: str) -> tuple[dict[str, Any], StackConfig]:
    name, raw = stack_source(stack)
    return raw, parse(raw, name)


def by_urn(rec: mockengine.Recording) -> dict[str, dict[str, Any]]:
    return {r.urn: r.to_json() for r in rec.resources}


def observe_recorded(raw: dict[str, Any], stack: str, config: StackConfig) -> tuple[Observed, list]:
    """The observe step alone against the account ``config`` attaches to, and its invokes."""
    found: list[Observed] = []
    rec = mockengine.run_body(
        raw, stack, None, lambda: found.append(observe(config, Catalog.load())), before(config)
    )
    return found[0], rec.invokes


@pytest.mark.parametrize("stack", STACKS)
def test_an_offline_plan_of_every_sample_makes_no_live_read(stack):
    assert sample(stack).invokes == []


@pytest.mark.parametrize("stack", ["eks-g4dn", "eks-existing"])
def test_a_first_deploy_reads_only_in_the_observe_step_and_builds_what_the_offline_plan_shows(
    stack,
):
    raw, config = config_of(stack)
    observed, reads = observe_recorded(raw, config.stack, config)
    assert reads
    deployed = run_stack(stack, account=before(config))
    # Every invoke of the run is the observe step's: the build makes none.
    assert deployed.invokes == reads
    # Registration order is concurrent (test_golden_plans normalises it too): compare by URN.
    assert by_urn(deployed) == by_urn(sample(stack))
    assert build_plan(config, None, observed).observed == observed


def test_the_diff_side_is_planned_over_what_the_old_sides_deploy_leaves_running():
    raw, config = config_of("eks-g4dn")
    plan = build_plan(config)
    observed = mockengine.observe(raw, config.stack, after(plan, sample("eks-g4dn")))
    eks, planned = observed.part(EksObserved), eks_plan(plan.platform)
    assert eks is not None and planned is not None and planned.network is not None
    assert eks.node_groups == {
        **{ng.name: ng.min_size for g in planned.groups for ng in g.node_groups},
        planned.system.node_group_name: planned.system.min_size,  # type: ignore[union-attr]
    }
    assert eks.nat_az_ids == planned.network.nat_az_ids
    assert (
        eks.cluster is not None
        and eks.cluster.subnet_az_ids == planned.network.control_plane_az_ids
    )
    # Planned over it, the same stack changes nothing: the JSON round trip is what a step
    # directory would hold.
    again = build_plan(config, None, observed_from_json(observed.to_json()))
    assert [ng.name for g in eks_plan(again.platform).groups for ng in g.node_groups] == [
        ng.name for g in planned.groups for ng in g.node_groups
    ]


def test_a_failed_read_stops_the_observe_step_with_the_providers_innermost_reason():
    # The mock engine fails a read as the engine fails a bridged one (mocklive.invoke_error_text):
    # the step names the key and the provider's own line, none of the wrappers around it.
    raw, config = config_of("eks-existing")
    reason = (
        "reading EKS Cluster (shared): operation error EKS: DescribeCluster, https response "
        "error StatusCode: 403, api error AccessDeniedException: not authorized"
    )
    account = LiveAccount(
        eks_clusters={"shared": ()}, failures={"aws:eks/getCluster:getCluster": reason}
    )
    with pytest.raises(ObserveError) as e:
        mockengine.observe(raw, config.stack, account)
    assert str(e.value) == f"cluster.name: could not read EKS cluster shared: {reason}"


# --- GKE: the ComputeClasses of an existing cluster, from its Kubernetes API -------------------

AUTO_CLUSTER = {"name": "shared", "location": "us-central1", "existing": True}


def _auto_stack(auto_create: bool = True) -> dict[str, Any]:
    pool = {"name": "l4-auto", "machineType": "g2-standard-8", "minNodes": 0, "maxNodes": 4}
    return {
        "gcp:project": "demo-project",
        "gcp:region": "us-central1",
        "gpu-infra:platform": "gke",
        "gpu-infra:cluster": {**AUTO_CLUSTER, "minMasterVersion": "1.35"},
        "gpu-infra:gpuPools": [{**pool, "autoCreate": auto_create}],
        "gpu-infra:gpuOperator": {"enabled": False},
    }


SPEC = {"priorities": [{"nodeLabels": {"gpu-infra/pool": "l4-auto"}}]}


def test_an_auto_creating_stack_reads_the_existing_clusters_compute_classes():
    live = LiveAccount(
        gke_clusters=frozenset({"shared"}), gke_compute_classes={"shared": {"l4-auto": SPEC}}
    )
    found = mockengine.observe(_auto_stack(), "team-a", live).to_json()["gke"]
    assert found["computeClasses"] == {
        "l4-auto": {"priorities": [{"labels": {"gpu-infra/pool": "l4-auto"}, "serviceAccount": ""}]}
    }
    # A cluster whose API serves no ComputeClass type (404) has none; a stack without
    # auto-creation reads none (it needs no Kubernetes grant).
    bare = replace(live, gke_without_compute_classes=frozenset({"shared"}))
    assert (
        mockengine.observe(_auto_stack(), "team-a", bare).to_json()["gke"]["computeClasses"] == {}
    )
    fixed = mockengine.observe(_auto_stack(auto_create=False), "team-a", live).to_json()["gke"]
    assert "computeClasses" not in fixed


def test_a_refused_compute_class_read_stops_the_observe_step_with_the_apis_reason():
    # Unknown is never absent: a refused list would otherwise rename a running class.
    reason = (
        'HTTP 403 Forbidden: computeclasses.cloud.google.com is forbidden: User "x" cannot list'
    )
    path = "/apis/cloud.google.com/v1/computeclasses"
    live = LiveAccount(gke_clusters=frozenset({"shared"}), failures={f"GET {path}": reason})
    with pytest.raises(ObserveError) as e:
        mockengine.observe(_auto_stack(), "team-a", live)
    assert str(e.value) == (
        f"cluster.name: could not read the ComputeClasses of GKE cluster shared (GET {path}): "
        f"{reason}"
    )


def test_the_live_kubernetes_read_refuses_a_ca_it_cannot_verify_the_server_with():
    cluster = ClusterAccess(
        name="shared", endpoint="203.0.113.10", certificate_authority="bm90IGEgY2VydA=="
    )
    with pytest.raises(kubeapi.KubeReadError, match="CA certificate is not usable"):
        kubeapi.https_read(cluster, "token", "/apis/cloud.google.com/v1/computeclasses")
