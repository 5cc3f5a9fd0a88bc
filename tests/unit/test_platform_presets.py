"""Each platform answers its own GPU Operator presets (``Platform.presets``): the names its schema
accepts, each a frozen value, and GKE's containerd-config floor as a row of its version gates."""

from __future__ import annotations

import dataclasses
from typing import get_args

import pytest

from infra.core.catalog.vendored import DATA_DIR
from infra.core.config.kubernetes import Distribution
from infra.core.config.operator import EksPreset, GkePreset
from infra.core.gke.presets import gke_needs_config_file
from infra.core.gke.versions import feature_versions
from tests.unit.operator_fixtures import platform_of, stack

SCHEMA = {"gke": GkePreset, "eks": EksPreset, "kubernetes": Distribution}


@pytest.mark.parametrize("platform", sorted(SCHEMA))
def test_each_platform_answers_exactly_the_presets_its_schema_accepts(platform):
    presets = platform_of(stack(platform)).presets()
    assert tuple(presets) == get_args(SCHEMA[platform])
    for name, preset in presets.items():
        assert preset.name == name
        with pytest.raises(dataclasses.FrozenInstanceError):
            preset.name = "other"  # type: ignore[misc]


def test_the_containerd_config_file_floor_is_a_row_of_the_gke_version_gates():
    # GKE 1.33 is the first minor on containerd 2.0 (GKE "Migrate nodes to containerd 2").
    assert feature_versions(DATA_DIR)["containerd-config-file"] == "1.33.0-gke.0"


@pytest.mark.parametrize(
    ("version", "needs"),
    [
        (None, True),  # unpinned: every release channel is past 1.33
        ("latest", True),
        ("1.32", False),
        ("1.32.9-gke.1072000", False),
        ("1.33", True),
        ("1.33.5", True),
        ("1.34.1-gke.1829001", True),
    ],
)
def test_gke_reads_containerd_config_from_the_file_from_1_33_on_containerd_2(version, needs):
    assert gke_needs_config_file(version, DATA_DIR) is needs
