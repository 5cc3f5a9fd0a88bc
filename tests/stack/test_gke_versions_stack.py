"""A minor past GKE support refuses only what would send it: a cluster the stack creates.

terraform-provider-google resource_container_cluster.go (@e03b7622a2) sends min_master_version
as ``InitialClusterVersion`` when it creates a cluster, and on update upgrades the master only
when its current version is lower (``cur.LessThan(des)``): on a cluster that already runs, the
version is never sent again. Standard support of 1.31 ended 2026-01-16 and of 1.33 on
2026-08-03 (GKE release schedule, gke_standard_support.csv).
"""

from __future__ import annotations

import pytest

from infra import mockengine
from infra.core.config.stack import parse
from infra.core.gke.observed import GkeObserved
from infra.core.plan import build_plan
from infra.mocklive import LiveAccount, after
from tests.conftest import gke_config
from tests.stack.harness import run_stack

GET_CLUSTER = "gcp:container/getCluster:getCluster"


def _raw(version: str, **cluster: object) -> dict:
    return gke_config(
        cluster={"name": "ml", "location": "us-central1", **cluster, "minMasterVersion": version}
    )


def _notes(raw: dict, account: LiveAccount) -> tuple[str, ...]:
    observed = mockengine.observe(raw, "t", account)
    return build_plan(parse(raw, "t"), None, observed).notes


def test_creating_a_cluster_on_a_minor_past_support_exits_2_naming_min_master_version():
    # The observe step reads the project: no cluster "ml" runs, so the plan would create it.
    with pytest.raises(Exception, match=r"cluster\.minMasterVersion: '1\.31'.*ended 2026-01-16"):
        run_stack(_raw("1.31"), account=LiveAccount())


def test_a_running_cluster_on_a_minor_past_support_is_a_note_not_a_refusal():
    raw = _raw("1.31")
    account = LiveAccount(gke_clusters=frozenset({"ml"}))
    rec = run_stack(raw, account=account)
    assert [t for t, _ in rec.invokes] == [GET_CLUSTER]
    # The program still declares the version it was created with: the provider does not send it.
    assert rec.one("gcp:container/cluster:Cluster").inputs["minMasterVersion"] == "1.31"
    (note,) = [n for n in _notes(raw, account) if n.startswith("cluster.minMasterVersion")]
    assert "ended 2026-01-16" in note and "already runs" in note


def test_day_2_of_a_cluster_whose_minor_left_support_since_its_deploy_plans(monkeypatch):
    raw = _raw("1.33")
    monkeypatch.setenv("GPU_INFRA_TODAY", "2026-07-01")  # 1.33 still in standard support
    first = run_stack(raw, account=LiveAccount())
    assert first.invokes == []  # a supported minor: a created cluster is not read
    left = after(build_plan(parse(raw, "t")), first)
    monkeypatch.setenv("GPU_INFRA_TODAY", "2026-12-07")  # past 2026-08-03
    observed = mockengine.observe(raw, "t", left)
    gke = observed.part(GkeObserved)
    assert gke is not None and gke.cluster is not None and gke.cluster.name == "ml"
    notes = build_plan(parse(raw, "t"), None, observed).notes
    assert any(n.startswith("cluster.minMasterVersion") and "2026-08-03" in n for n in notes)


def test_an_existing_cluster_on_a_minor_past_support_is_a_note_offline_too():
    raw = _raw("1.31", existing=True, cpuNodes=5)
    raw["gpu-infra:gpuOperator"] = {"clusterWide": True}
    notes = build_plan(parse(raw, "t")).notes
    assert any(n.startswith("cluster.minMasterVersion") and "2026-01-16" in n for n in notes)
