"""Field rules of what GCP and GKE receive (``infra.core.rules.gcp``): project IDs, resource and
label names, machine types, versions, networks, reservations, maintenance recurrences and run
durations, as their APIs accept them.
"""

from __future__ import annotations

import pytest

from infra.core import rules
from tests.unit.config_rules_fixtures import refused


@pytest.mark.parametrize("good", ["gpu", "projects/host-proj/regions/us-central1/subnetworks/gpu"])
def test_check_gce_subnetwork_takes_a_name_or_a_subnetwork_path(good):
    assert rules.check_gce_subnetwork(good) == good


@pytest.mark.parametrize(
    "bad",
    [
        "Gpu",
        "projects/host-proj/global/networks/gpu",
        "projects/p/regions/us-central1/subnetworks/x",
    ],
)
def test_check_gce_subnetwork_refuses_capitals_network_paths_and_bad_project_ids(bad):
    assert "is not a subnetwork" in refused(rules.check_gce_subnetwork, bad)


@pytest.mark.parametrize("good", ["demo-project", "my-proj-123456", "example.com:my-project"])
def test_check_gcp_project_id_accepts_project_ids(good):
    assert rules.check_gcp_project_id(good) == good


@pytest.mark.parametrize("bad", ["My Project!", "proj", "1project", "project-", "a" * 31, 123])
def test_check_gcp_project_id_refuses_display_names_and_numbers(bad):
    assert "is not a project ID" in refused(rules.check_gcp_project_id, bad)


def test_check_gce_labels_refuses_capitals_and_over_64_labels():
    assert rules.check_gce_labels({"team": "ml", "env": ""})
    assert "not a GCE label key" in refused(rules.check_gce_labels, {"Team": "ml"})
    assert "not a GCE label key" in refused(rules.check_gce_labels, {"1team": "ml"})
    assert "not a GCE label value" in refused(rules.check_gce_labels, {"team": "ML"})
    assert "at most 64" in refused(rules.check_gce_labels, {f"k{i}": "" for i in range(65)})


def test_check_gce_resource_name_is_an_rfc1035_label():
    assert rules.check_gce_resource_name("res-1") == "res-1"
    assert "GCE resource name" in refused(rules.check_gce_resource_name, "1res")


def test_check_reservation_name_accepts_local_and_shared_reservations():
    assert rules.check_reservation_name("a100-res")
    assert rules.check_reservation_name("projects/owner-proj/reservations/a100-res")
    assert "GCE resource name" in refused(rules.check_reservation_name, "My Reservation")
    assert "project ID" in refused(rules.check_reservation_name, "projects/X/reservations/r")


@pytest.mark.parametrize("good", ["latest", "-", "1.33", "1.33.5", "1.33.5-gke.1200"])
def test_check_gke_version_accepts_gke_version_aliases(good):
    assert rules.check_gke_version(good) == good


@pytest.mark.parametrize("bad", ["1,33", "v1.33", "1.33.5-eks.1", "1", "1.33-gke.1", "stable"])
def test_check_gke_version_refuses_commas_and_other_formats(bad):
    assert "is not a GKE version" in refused(rules.check_gke_version, bad)


@pytest.mark.parametrize(
    "good", ["e2-standard-4", "n2-highmem-8", "e2-medium", "n2-custom-4-16384"]
)
def test_check_gce_machine_type_accepts_machine_type_names(good):
    assert rules.check_gce_machine_type(good) == good


@pytest.mark.parametrize("bad", ["e2-bogus-4", "m6i.large", "E2-standard-4", "standard-4"])
def test_check_gce_machine_type_refuses_unknown_shapes(bad):
    assert "is not a GCE machine type" in refused(rules.check_gce_machine_type, bad)


@pytest.mark.parametrize(
    ("console", "api"),
    [
        ("NVIDIA T4", "nvidia-tesla-t4"),
        ("NVIDIA Tesla V100", "nvidia-tesla-v100"),
        ("NVIDIA A100 40GB", "nvidia-tesla-a100"),
        ("NVIDIA A100 80GB", "nvidia-a100-80gb"),
        ("NVIDIA L4", "nvidia-l4"),
    ],
)
def test_gpu_type_hint_maps_console_wording_to_the_api_name(console, api):
    known = [
        "nvidia-tesla-t4",
        "nvidia-tesla-v100",
        "nvidia-tesla-a100",
        "nvidia-a100-80gb",
        "nvidia-l4",
    ]
    assert rules.gpu_type_hint(console, known) == f"; did you mean '{api}'?"


def test_gpu_type_hint_stays_silent_for_unrelated_names():
    assert rules.gpu_type_hint("foo", ["nvidia-l4"]) == ""


def test_check_gce_labels_refuses_a_trailing_newline():
    with pytest.raises(ValueError):
        rules.check_gce_labels({"team": "ml\n"})


@pytest.mark.parametrize("good", ["ml", "a", "a" * 40, "gpu-1"])
def test_check_gke_cluster_name_accepts_lowercase_up_to_40(good):
    assert rules.check_gke_cluster_name(good) == good


@pytest.mark.parametrize("bad", ["ML", "1ml", "ml-", "a" * 41, "ml_x"])
def test_check_gke_cluster_name_refuses_capitals_digit_start_trailing_hyphen_and_41(bad):
    assert "is not a GKE cluster name" in refused(rules.check_gke_cluster_name, bad)


@pytest.mark.parametrize("good", ["a", "gpu-a100", "a" * 40])
def test_check_pool_name_accepts_lowercase_up_to_40(good):
    assert rules.check_pool_name(good) == good


# The GKE API's refusal (pulumi/pulumi-gcp#1510): "primaryPreemptibleNodes-b8a97f9" is not a node pool name.
@pytest.mark.parametrize(
    "bad", ["primaryPreemptibleNodes-b8a97f9", "1gpu", "gpu-", "gpu_a", "a" * 41, "gpu\n"]
)
def test_check_pool_name_refuses_what_gke_node_pools_refuse(bad):
    assert "at most 40 characters" in refused(rules.check_pool_name, bad)


def test_check_gce_network_and_subnetwork_take_names_or_resource_paths():
    assert rules.check_gce_network("projects/host-proj/global/networks/shared-vpc")
    assert rules.check_gce_subnetwork("projects/host-proj/regions/us-central1/subnetworks/gpu")
    assert "is not a network" in refused(rules.check_gce_network, "Default")
    assert "is not a subnetwork" in refused(
        rules.check_gce_subnetwork, "projects/p/regions/us-central1/subnetworks/x"
    )


def test_check_rrule_refuses_non_rrule_text():
    assert rules.check_rrule("FREQ=WEEKLY;BYDAY=SA,SU") == "FREQ=WEEKLY;BYDAY=SA,SU"
    assert "RRULE" in refused(rules.check_rrule, "every saturday")
    assert "RRULE" in refused(rules.check_rrule, "FREQ=WEEKLY\n")


def test_check_max_run_duration_is_at_most_seven_days():
    assert rules.check_max_run_duration("604800s") == "604800s"
    assert "longer than 7 days" in refused(rules.check_max_run_duration, "604801s")
    assert "not a duration" in refused(rules.check_max_run_duration, "9" * 5000 + "s")
