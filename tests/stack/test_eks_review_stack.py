"""EKS review findings on the mock engine: one Pod Identity association per service account, the
autoscaler release after its association, the EFA launch template layout."""

from __future__ import annotations

import pytest

from infra import mockengine
from tests.stack.harness import run_stack

RELEASE = "kubernetes:helm.sh/v3:Release"
ASSOC = "aws:eks/podIdentityAssociation:PodIdentityAssociation"
ADDON = "aws:eks/addon:Addon"
LT = "aws:ec2/launchTemplate:LaunchTemplate"


@pytest.fixture(scope="module")
def zonal() -> mockengine.Recording:
    return run_stack("eks-zonal-spot")


@pytest.fixture(scope="module")
def hpc() -> mockengine.Recording:
    return run_stack("eks-hpc")


def test_pod_identity_addon_role_has_no_second_association_association_already_exists(zonal):
    ebs = zonal.one(ADDON, "infer-addons-aws-ebs-csi-driver").inputs
    (pia,) = ebs["podIdentityAssociations"]
    assert pia["serviceAccount"] == "ebs-csi-controller-sa"
    standalone = [(a.inputs["namespace"], a.inputs["serviceAccount"]) for a in zonal.of_type(ASSOC)]
    assert ("kube-system", "ebs-csi-controller-sa") not in standalone
    assert len(standalone) == len(set(standalone)) == 1  # the autoscaler's only


def test_autoscaler_release_depends_on_its_pod_identity_association(zonal):
    (assoc,) = zonal.of_type(ASSOC)
    release = zonal.one(RELEASE, "infer-ca-release")
    assert assoc.urn in release.depends_on


def test_efa_launch_template_puts_efa_only_interfaces_at_device_index_0(hpc):
    nics = hpc.one(LT, "train-h100-efa-lt").inputs["networkInterfaces"]
    assert (nics[0]["networkCardIndex"], nics[0]["deviceIndex"]) == (0, 0)
    assert {n["deviceIndex"] for n in nics} == {0}
    assert [n["networkCardIndex"] for n in nics] == list(range(32))


def test_capacity_block_upgrade_note_is_logged_as_a_warning(hpc):
    assert any(lvl == "warning" and "desired size 0" in msg for lvl, msg in hpc.logs)


def test_replacement_node_group_starts_at_its_predecessors_clamped_desired_size(monkeypatch):
    # A changed hash (e.g. a new instance type) makes a new group; it starts where the old one
    # was (clamped into its [min, max]) instead of at minSize while the old one drains.
    monkeypatch.setattr(mockengine, "LIVE", mockengine.LiveAws(node_groups={"gpu-t4-00000000": 7}))
    rec = run_stack("eks-g4dn")
    ng = rec.one("aws:eks/nodeGroup:NodeGroup", "ml-gpu-t4-ng").inputs
    assert ng["nodeGroupName"] != "gpu-t4-00000000"
    assert ng["scalingConfig"]["desiredSize"] == 7
