"""GKE planning: the right pool by default, the wrong one impossible (rules: docs/gke.md "GKE rules we enforce")."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from infra.core.catalog.vendored import DATA_DIR
from infra.core.config.gke import FallbackSpec
from infra.core.config.stack import parse
from infra.core.gke.names import fallback_pool_name
from infra.core.gke.planner import GPU_TAINT, NO_GKE_DEVICE_PLUGIN, kubeconfig
from infra.core.gke.platform import gke_plan
from infra.core.plan import build_plan
from tests.conftest import gke_config
from tests.unit.gke_fixtures import a100_mig_shared, errors, plan


def test_seed_pool_spans_given_zones_with_totals_and_gpu_taint():
    (pool,) = plan(
        {"zones": ["us-central1-a", "us-central1-b", "us-central1-c", "us-central1-f"]}
    ).pools
    assert pool.node_locations == (
        "us-central1-a",
        "us-central1-b",
        "us-central1-c",
        "us-central1-f",
    )
    assert (pool.total_min, pool.total_max) == (0, 20)
    assert (pool.accelerator, pool.accelerator_count) == ("nvidia-tesla-t4", 1)
    assert pool.taints[0] == GPU_TAINT
    # The base stack runs the GPU Operator: Google's installer DaemonSet, not GKE, installs it.
    assert pool.driver_version == "INSTALLATION_DISABLED"


def test_omitted_zones_become_every_zone_of_the_region_offering_the_gpu(catalog):
    (pool,) = plan().pools
    assert pool.node_locations == tuple(
        catalog.gcp_zones_offering("nvidia-tesla-t4", "us-central1", 1)
    )
    assert len(pool.node_locations) > 1


def test_pool_spans_only_zones_offering_the_bundled_machine_type(catalog):
    (pool,) = plan({"machineType": "g2-standard-8", "gpu": None}).pools
    machine = catalog.gcp_machine("g2-standard-8")
    assert set(pool.node_locations) <= machine.zones
    assert pool.node_locations == ("us-central1-a", "us-central1-b", "us-central1-c")


def test_zone_without_the_gpu_is_named_with_the_offered_zones():
    reason = errors({"zones": ["us-central1-a", "us-central1-z"]})["gpuPools[0].zones[1]"]
    assert reason == (
        "us-central1-z does not offer n1-highmem-8 with 1x nvidia-tesla-t4 "
        "(offered: us-central1-a, -b, -c, -f)"
    )


def test_zone_of_another_region_is_rejected():
    assert "not in region us-central1" in errors({"zones": ["us-east1-c"]})["gpuPools[0].zones[0]"]


@pytest.mark.parametrize(
    ("machine", "gpu", "expected"),
    [
        ("g2-standard-8", {}, ("nvidia-l4", 1)),
        ("g2-standard-24", {}, ("nvidia-l4", 2)),
        ("a2-highgpu-4g", {}, ("nvidia-tesla-a100", 4)),
        ("a2-ultragpu-1g", {"type": "nvidia-a100-80gb", "count": 1}, ("nvidia-a100-80gb", 1)),
        ("a3-highgpu-8g", {}, ("nvidia-h100-80gb", 8)),
    ],
)
def test_gpu_of_bundled_machine_types_is_derived_and_checked(machine, gpu, expected):
    (pool,) = plan({"machineType": machine, "gpu": gpu, "spot": True}).pools
    assert (pool.accelerator, pool.accelerator_count) == expected


@pytest.mark.parametrize(
    ("pool", "path", "fragment"),
    [
        ({"machineType": "n2-standard-8"}, "gpuPools[0].machineType", "need an N1 machine type"),
        (
            {"gpu": {"type": "nvidia-tesla-t4", "count": 3}},
            "gpuPools[0].gpu.count",
            "allowed: 1, 2, 4",
        ),
        ({"machineType": "n1-highmem-64"}, "gpuPools[0].machineType", "at most 48 vCPUs"),
        (
            {"machineType": "n1-standard-16", "gpu": {"type": "nvidia-tesla-v100"}},
            "gpuPools[0].machineType",
            "at most 12 vCPUs",
        ),
        (
            {"machineType": "n1-standard-8", "gpu": {"type": "nvidia-l4"}},
            "gpuPools[0].gpu.type",
            "comes only built into g2-standard-*",
        ),
        (
            {"machineType": "g2-standard-8", "gpu": {"type": "nvidia-tesla-t4"}},
            "gpuPools[0].gpu.type",
            "comes with nvidia-l4",
        ),
        (
            {"machineType": "g2-standard-8", "gpu": {"count": 2}},
            "gpuPools[0].gpu.count",
            "fixed by the machine type",
        ),
        (
            {"machineType": "a2-highgpu-3g", "gpu": {}},
            "gpuPools[0].machineType",
            "not a known GPU machine type",
        ),
        ({"gpu": {"count": 1}}, "gpuPools[0].gpu.type", "required for 'n1-highmem-8'"),
        ({"machineType": "n1-highmem-7"}, "gpuPools[0].machineType", "not a known N1 machine type"),
    ],
)
def test_invalid_machine_gpu_count_triples_are_rejected(pool, path, fragment):
    assert fragment in errors(pool)[path]


def test_four_t4_allow_up_to_96_vcpus():
    (pool,) = plan(
        {"machineType": "n1-standard-96", "gpu": {"type": "nvidia-tesla-t4", "count": 4}}
    ).pools
    assert pool.vcpus == 96


def test_gke_latest_is_cos_only():
    reason = errors(
        {
            "imageType": "UBUNTU_CONTAINERD",
            "gpu": {"type": "nvidia-tesla-t4", "driver": "gke-latest"},
        }
    )
    assert "COS-only" in reason["gpuPools[0].gpu.driver"]


def test_operator_driver_disables_installation_and_gke_device_plugin():
    (pool,) = plan(
        {"imageType": "UBUNTU_CONTAINERD", "gpu": {"type": "nvidia-tesla-t4", "driver": "operator"}}
    ).pools
    assert pool.driver_version == "INSTALLATION_DISABLED"
    assert pool.labels[NO_GKE_DEVICE_PLUGIN] == "true"
    assert pool.secure_boot is False  # unsigned DKMS driver


def test_operator_driver_needs_the_operator_enabled():
    reason = errors(
        {
            "imageType": "UBUNTU_CONTAINERD",
            "gpu": {"type": "nvidia-tesla-t4", "driver": "operator"},
        },
        gpuOperator={"enabled": False},
    )
    assert "gpuOperator.enabled is false" in reason["gpuPools[0].gpu.driver"]


def test_without_the_operator_gke_keeps_its_device_plugin():
    (pool,) = plan(gpuOperator={"enabled": False}).pools
    assert NO_GKE_DEVICE_PLUGIN not in pool.labels


def test_gpu_taint_is_declared_even_with_user_taints():
    (pool,) = plan({"taints": [{"key": "team", "value": "ml", "effect": "NoExecute"}]}).pools
    assert [t.key for t in pool.taints] == ["nvidia.com/gpu", "team"]
    assert pool.hints.tolerations()[0] == {
        "key": "nvidia.com/gpu",
        "operator": "Equal",
        "value": "present",
        "effect": "NoSchedule",
    }


def test_gke_time_sharing_and_mig_partition_map_to_api_enums():
    (pool,) = plan(
        a100_mig_shared("mps", 4),
        gpuOperator={"enabled": False},
    ).pools
    assert (pool.partition_size, pool.sharing_strategy, pool.max_shared_clients_per_gpu) == (
        "1g.5gb",
        "MPS",
        4,
    )
    assert pool.gke_sharing


def test_mig_profile_must_belong_to_the_gpu():
    reason = errors(
        {"machineType": "a2-highgpu-1g", "gpu": {"partitionSize": "1g.10gb"}},
        gpuOperator={"enabled": False},
    )["gpuPools[0].gpu.partitionSize"]
    assert "allowed: 1g.5gb, 2g.10gb, 3g.20gb, 7g.40gb" in reason


def test_gke_sharing_and_operator_sharing_are_exclusive():
    reason = errors(
        {
            "gpu": {
                "type": "nvidia-tesla-t4",
                "sharing": {"strategy": "time-sharing", "maxSharedClientsPerGpu": 2},
            },
            "sharing": {"replicas": 4},
        },
        gpuOperator={"enabled": False},
    )
    assert "exclusive" in reason["gpuPools[0].sharing"]


def test_gke_sharing_is_rejected_when_the_operator_owns_the_device_plugin():
    reason = errors(
        {
            "gpu": {
                "type": "nvidia-tesla-t4",
                "sharing": {"strategy": "time-sharing", "maxSharedClientsPerGpu": 2},
            }
        }
    )
    assert "GKE's device plugin" in reason["gpuPools[0].gpu.sharing"]


@pytest.mark.parametrize(
    ("pool", "path"),
    [
        ({"spot": True, "reservation": {"type": "any"}}, "gpuPools[0].reservation"),
        (
            {"reservation": {"type": "specific"}, "zones": ["us-central1-a"]},
            "gpuPools[0].reservation.name",
        ),
        ({"reservation": {"type": "specific", "name": "r1"}}, "gpuPools[0].zones"),
        ({"reservation": {"type": "any", "name": "r1"}}, "gpuPools[0].reservation.name"),
        ({"spot": True, "flexStart": {}}, "gpuPools[0].flexStart"),
        ({"reservation": {"type": "any"}, "flexStart": {}}, "gpuPools[0].flexStart"),
        ({"minNodes": 1, "queuedProvisioning": True}, "gpuPools[0].queuedProvisioning"),
        ({"bestEffort": {"minNodes": 30}}, "gpuPools[0].bestEffort.minNodes"),
    ],
)
def test_capacity_cross_field_rules(pool, path):
    assert path in errors(pool)


def test_specific_reservation_sets_affinity_key_and_values():
    (pool,) = plan(
        {"reservation": {"type": "specific", "name": "t4-res"}, "zones": ["us-central1-a"]}
    ).pools
    assert (pool.reservation_type, pool.reservation_name) == ("SPECIFIC_RESERVATION", "t4-res")


def test_flex_start_pool_sends_no_upgrade_settings_and_does_not_auto_repair():
    (pool,) = plan({"flexStart": {"maxRunDuration": "86400s"}}).pools
    assert pool.flex_start and pool.max_run_duration == "86400s"
    assert (pool.max_surge, pool.max_unavailable, pool.auto_repair) == (None, None, False)


def test_fallback_pools_are_bound_to_one_compute_class_in_order():
    g = plan(
        {
            "machineType": "g2-standard-8",
            "gpu": None,
            "spot": True,
            "maxNodes": 8,
            "fallback": [
                {"machineType": "g2-standard-8"},
                {"machineType": "n1-standard-8", "gpu": {"type": "nvidia-tesla-t4"}, "maxNodes": 2},
            ],
        }
    )
    assert [p.name for p in g.pools] == ["gpu-t4", "gpu-t4-0a12e4", "gpu-t4-a31395"]
    (cc,) = g.compute_classes
    assert cc.manifest()["priorities"] == [
        {"nodepools": ["gpu-t4"]},
        {"nodepools": ["gpu-t4-0a12e4"]},
        {"nodepools": ["gpu-t4-a31395"]},
    ]
    for p in g.pools:
        assert p.labels["cloud.google.com/compute-class"] == "gpu-t4"
        assert ("cloud.google.com/compute-class", "gpu-t4") in [(t.key, t.value) for t in p.taints]
        assert p.hints.node_selector == {"cloud.google.com/compute-class": "gpu-t4"}
    assert [p.spot for p in g.pools] == [True, False, False]
    assert [p.total_max for p in g.pools] == [8, 8, 2]


_G2 = {"machineType": "g2-standard-8"}
_T4 = {"machineType": "n1-standard-8", "gpu": {"type": "nvidia-tesla-t4"}, "maxNodes": 2}


def _fallback_names(*fallback: dict[str, Any]) -> list[str]:
    g = plan(
        {"machineType": "g2-standard-8", "gpu": None, "spot": True, "fallback": list(fallback)}
    )
    return [p.name for p in g.pools[1:]]


def test_removing_the_first_fallback_leaves_the_second_pools_name_unchanged():
    # A renamed pool is a new GKE node pool: the unchanged T4 alternative must keep its name.
    (g2, t4) = _fallback_names(_G2, _T4)
    assert _fallback_names(_T4) == [t4]
    assert _fallback_names(_T4, _G2) == [t4, g2]  # reordering renames nothing either


def test_fallback_pool_name_ignores_in_place_properties_max_nodes_and_zones():
    (base,) = _fallback_names(_T4)
    moved = {**_T4, "maxNodes": 7, "zones": ["us-central1-a"]}
    assert _fallback_names(moved) == [base]


@pytest.mark.parametrize(
    "change",
    [
        {"machineType": "n1-standard-16"},
        {"gpu": {"type": "nvidia-tesla-t4", "count": 2}},
        {"gpu": {"type": "nvidia-tesla-p4"}},
        {"spot": True},
        {"reservation": {"type": "any"}},
        {"flexStart": {}},
        {
            "gpu": {
                "type": "nvidia-tesla-t4",
                "sharing": {"strategy": "time-sharing", "maxSharedClientsPerGpu": 2},
            }
        },
    ],
)
def test_fallback_pool_name_changes_with_each_replace_forcing_property(change):
    base = FallbackSpec.model_validate(_T4)
    changed = FallbackSpec.model_validate({**_T4, **change})
    assert fallback_pool_name("gpu-t4", changed, DATA_DIR) != fallback_pool_name(
        "gpu-t4", base, DATA_DIR
    )
    assert re.fullmatch(r"gpu-t4-[0-9a-f]{6}", fallback_pool_name("gpu-t4", changed, DATA_DIR))


def test_fallback_pool_name_is_unchanged_by_spelling_out_derived_gpu_defaults():
    # A built-in GPU follows from the machine type; an attached GPU's count defaults to 1.
    assert _fallback_names(_G2, _T4) == _fallback_names(
        {**_G2, "gpu": {"type": "nvidia-l4", "count": 1}},
        {**_T4, "gpu": {"type": "nvidia-tesla-t4", "count": 1}},
    )


def test_two_identical_fallbacks_are_a_config_error_naming_both_keys():
    errs = errors({"fallback": [_T4, _G2, {**_T4, "maxNodes": 5}]})
    reason = errs["gpuPools[0].fallback[2]"]
    assert "gpuPools[0].fallback[0]" in reason and "n1-standard-8" in reason


def test_fallback_pool_names_fit_gke_40_characters():
    name = "p" * 34  # plus "-" and six hex digits: 41
    errs = errors({"name": name, "fallback": [_T4]})
    assert "40 characters" in errs["gpuPools[0].name"]
    assert len(plan({"name": "p" * 33, "fallback": [_T4]}).pools[1].name) == 40


def test_invalid_fallback_is_reported_under_its_own_path():
    reason = errors(
        {"fallback": [{"machineType": "n2-standard-8", "gpu": {"type": "nvidia-tesla-t4"}}]}
    )
    assert "gpuPools[0].fallback[0].machineType" in reason


def test_no_zone_in_region_names_regions_that_offer_it():
    reason = errors(
        {"machineType": "g2-standard-8", "gpu": None},
        cluster={"name": "ml", "location": "us-west3"},
        **{"gcp:region": "us-west3"},
    )["gpuPools[0].machineType"]
    assert "no zone of us-west3" in reason and "us-central1" in reason


def test_node_identity_is_least_privilege_with_workload_identity():
    g = plan()
    assert g.cluster.workload_pool == "demo-project.svc.id.goog"
    assert "roles/editor" not in g.node_sa_roles
    assert g.node_sa_roles[0] == "roles/container.defaultNodeServiceAccount"
    assert 6 <= len(g.cluster.node_sa_id) <= 30


def test_kubeconfig_uses_the_auth_plugin_not_static_credentials():
    text = kubeconfig("ml", "203.0.113.10", "Q0E=")
    assert "gke-gcloud-auth-plugin" in text and "https://203.0.113.10" in text
    assert "token" not in text and "password" not in text


def exec_of(text: str) -> dict[str, Any]:
    return json.loads(text)["users"][0]["user"]["exec"]


def test_the_kubeconfig_reads_application_default_credentials_as_the_provider_does():
    # The provider's default is ADC (terraform-provider-google transport/config.go
    # GetCredentials); the plugin reads ADC only with this flag, else gcloud's active account.
    g = plan()
    found = exec_of(kubeconfig("ml", "203.0.113.10", "Q0E=", g.kubeconfig_env))
    assert found["args"] == ["--use_application_default_credentials"]
    assert "env" not in found


def test_a_provider_key_file_path_is_the_plugins_google_application_credentials():
    raw = {**gke_config(), "gcp:credentials": "/secrets/deployer.json"}
    g = gke_plan(build_plan(parse(raw, "s")).platform)
    assert g is not None
    found = exec_of(kubeconfig("ml", "203.0.113.10", "Q0E=", g.kubeconfig_env))
    assert found["env"] == [
        {"name": "GOOGLE_APPLICATION_CREDENTIALS", "value": "/secrets/deployer.json"}
    ]


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("gcp:credentials", '{"type": "service_account"}'),
        ("gcp:credentials", {"secure": "AAABAF"}),
        ("gcp:accessToken", "ya29.x"),
        ("gcp:impersonateServiceAccount", "deployer@demo-project.iam.gserviceaccount.com"),
    ],
)
def test_provider_credentials_the_plugin_cannot_read_are_refused_at_their_key(key, value):
    assert "Application Default Credentials" in errors(**{key: value})[key]


def test_operator_time_slicing_labels_the_pool_for_the_device_plugin_config():
    # minNodes 1 in one zone: at zero (or in an empty zone of several) the GCE template counts
    # 1 GPU, not 4 slots (the proof refuses it).
    (pool,) = plan({"sharing": {"replicas": 4}, "minNodes": 1, "zones": ["us-central1-a"]}).pools
    assert pool.labels["nvidia.com/device-plugin.config"] == "time-slicing-4"
    assert pool.hints.labels["nvidia.com/device-plugin.config"] == "time-slicing-4"


def test_operator_mig_labels_the_pool_for_the_mig_manager():
    (pool,) = plan(
        {
            "machineType": "a2-highgpu-1g",
            "gpu": None,
            "mig": {"strategy": "single", "config": "all-1g.5gb"},
            "minNodes": 1,
            "zones": ["us-central1-a"],
        }
    ).pools
    assert pool.labels["nvidia.com/mig.config"] == "all-1g.5gb"
