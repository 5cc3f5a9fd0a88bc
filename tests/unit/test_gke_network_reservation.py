"""Where GKE resources live: a subnetwork in its network's project, a specific reservation in
one zone."""

from __future__ import annotations

import pytest

from tests.unit.gke_fixtures import cluster, errors, plan

HOST = "projects/host-project"


@pytest.mark.parametrize(
    ("network", "subnetwork"),
    [
        (f"{HOST}/global/networks/shared", "ml-subnet"),  # bare: the cluster's project
        ("vpc", f"{HOST}/regions/us-central1/subnetworks/ml-subnet"),
        (
            f"{HOST}/global/networks/shared",
            "projects/other-project/regions/us-central1/subnetworks/ml-subnet",
        ),
    ],
)
def test_a_subnetwork_in_another_project_than_its_network_is_refused(network, subnetwork):
    reason = errors(cluster=cluster(network=network, subnetwork=subnetwork))["cluster.subnetwork"]
    assert "belongs to its network's project" in reason


def test_a_shared_vpc_network_and_subnetwork_of_the_host_project_plan():
    sub = f"{HOST}/regions/us-central1/subnetworks/ml-subnet"
    g = plan(cluster=cluster(network=f"{HOST}/global/networks/shared", subnetwork=sub))
    assert g.cluster.subnetwork == sub


def test_a_specific_reservation_over_several_zones_is_refused_at_zones():
    pool = {
        "reservation": {"type": "specific", "name": "t4-res"},
        "zones": ["us-central1-a", "us-central1-b"],
    }
    reason = errors(pool)["gpuPools[0].zones"]
    assert "a specific reservation is in one zone" in reason and "us-central1-b" in reason


def test_a_specific_reservation_in_one_zone_plans():
    pool = {"reservation": {"type": "specific", "name": "t4-res"}, "zones": ["us-central1-a"]}
    assert plan(pool).pools[0].node_locations == ("us-central1-a",)
