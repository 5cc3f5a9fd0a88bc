"""The version gate of GKE node pool auto-creation by ComputeClass (1.33.3-gke.1136000): below it
a created cluster gets cluster-level node auto-provisioning and an existing one is refused.

Source: https://cloud.google.com/kubernetes-engine/docs/how-to/node-auto-provisioning
(Limitations).
"""

from __future__ import annotations

import pytest

from infra.core.catalog.vendored import DATA_DIR
from infra.core.gke.nap import cluster_nap_needed
from infra.core.gke.versions import version_at_least, version_surely_at_least
from tests.unit.gke_autocreate_fixtures import ABOVE, BELOW_CLUSTER, build, errors

# GKE version gates judged while their minors were supported (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("gke_minors_supported")

BELOW = ["1.33.2-gke.1240000", "1.33.2", "1.32", "1.33.3-gke.1135999"]
EXISTING = {**ABOVE, "existing": True, "cpuNodes": 3}


@pytest.mark.parametrize("version", BELOW)
def test_auto_creation_below_1_33_3_gke_1136000_on_an_existing_cluster_is_refused_nap_not_owned(
    version,
):
    # The stack does not own an existing cluster's node auto-provisioning settings.
    reason = errors(cluster={**EXISTING, "minMasterVersion": version})["gpuPools[0].autoCreate"]
    assert "1.33.3-gke.1136000" in reason and version in reason
    assert (
        "cluster.existing is true" in reason
        and "does not own" in reason
        and "autoCreate false" in reason
    )


@pytest.mark.parametrize("version", BELOW)
def test_auto_creation_below_1_33_3_gke_1136000_on_a_created_cluster_enables_cluster_nap(version):
    # "If your cluster is running a version earlier than GKE version 1.33.3-gke.1136000, you must
    # also enable cluster-level node auto-provisioning" (about-custom-compute-classes).
    g = build(cluster={**ABOVE, "minMasterVersion": version}).platform.plan
    assert g is not None and g.cluster.auto_provisioning_limits is not None


@pytest.mark.parametrize("version", ["1.33.3-gke.1136000", "1.34", None, "1.33"])
def test_cluster_nap_is_enabled_only_where_the_version_surely_requires_it(version):
    assert not cluster_nap_needed(version, DATA_DIR)
    if version is not None and version_surely_at_least(version, "1.33.3-gke.1136000"):
        g = build(cluster={**ABOVE, "minMasterVersion": version}).platform.plan
        assert g is not None and g.cluster.auto_provisioning_limits is None


def test_fixed_pools_below_the_gate_get_no_cluster_nap():
    g = build(
        {"autoCreate": False}, gpuOperator={"enabled": True}, cluster=BELOW_CLUSTER
    ).platform.plan
    assert g is not None and g.cluster.auto_provisioning_limits is None


@pytest.mark.parametrize("version", ["1.33.3-gke.1136000", "1.33.3-gke.1200000", "1.33.4", "1.34"])
def test_compute_class_auto_creation_from_1_33_3_gke_1136000_plans(version):
    assert build(cluster={**ABOVE, "minMasterVersion": version}).platform.name == "gke"


@pytest.mark.parametrize("version", [None, "latest", "-", "1.33", "1.33.3"])
def test_compute_class_auto_creation_version_that_may_name_an_older_release_is_refused(version):
    # "1.33" / "1.33.3" may resolve below 1.33.3-gke.1136000; unset is the channel's default,
    # not known here: below the gate pods stay Pending with nothing refused, so ask for a version.
    cluster = {**ABOVE, "minMasterVersion": version}
    if version is None:
        del cluster["minMasterVersion"]
    reason = errors(cluster=cluster)["gpuPools[0].autoCreate"]
    assert "may name an older release" in reason and "1.33.3-gke.1136000" in reason


def test_auto_creation_gate_on_an_existing_cluster_says_the_declared_version_is_not_enforced():
    shared = {**ABOVE, "existing": True, "cpuNodes": 3}
    g = build(cluster=shared).platform.plan
    assert g is not None
    (note,) = [n for n in g.notes if "version gate trusts" in n]
    assert "1.33.3-gke.1136000" in note and "does not enforce" in note
    reason = errors(cluster={**shared, "minMasterVersion": "1.33.2"})["gpuPools[0].autoCreate"]
    assert "upgrade the existing cluster" in reason and "set a full version" not in reason
    own = build().platform.plan  # the stack's own cluster runs the version it sets: no such note
    assert own is not None and not any("version gate trusts" in n for n in own.notes)


@pytest.mark.parametrize("channel", ["RAPID", "REGULAR", "STABLE", "EXTENDED", "UNSPECIFIED"])
def test_compute_class_auto_creation_needs_no_particular_release_channel(channel):
    # The version is the only gate without node auto-provisioning (about-custom-compute-classes).
    assert build(cluster={**ABOVE, "releaseChannel": channel}).platform.name == "gke"


def test_other_feature_gates_keep_reading_an_alias_as_its_highest_release():
    # Only the auto-creation gate is strict; e.g. flex-start's 1.32.2-gke.1652000 passes "1.32".
    assert version_at_least("1.32", "1.32.2-gke.1652000") and version_at_least(None, "1.34")
    assert not version_surely_at_least("1.32", "1.32.2-gke.1652000")
    assert not version_surely_at_least(None, "1.34")
