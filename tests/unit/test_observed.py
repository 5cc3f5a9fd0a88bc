"""``Observed``: what a plan read live, as frozen data that round-trips through JSON, recorded in
the Plan; GKE's existing-cluster decision over it."""

from __future__ import annotations

import dataclasses
import json

import pytest

from infra.core import offline
from infra.core.config.stack import parse
from infra.core.eks.observed import EksObserved
from infra.core.errors import ConfigErrors
from infra.core.gke.observed import GkeClusterObserved, GkeObserved, cluster_not_found
from infra.core.observed import Observed, ObserveError, failure_reason, observed_from_json
from infra.core.plan import build_plan
from tests.conftest import gke_config
from tests.unit.test_eks_live import CLUSTER

FULL_EKS = EksObserved(
    cluster=dataclasses.replace(
        CLUSTER, subnet_az_ids=("usw2-az2", "usw2-az3"), version="1.33", status="ACTIVE"
    ),
    node_groups={"gpu-t4-1a2b3c4d": 3, "system-00ff00ff": 2},
    node_group_limits={"gpu-t4-1a2b3c4d": (0, 20), "system-00ff00ff": (2, 3)},
    nat_az_ids=("usw2-az2",),
    oidc_provider_arn="arn:aws:iam::111122223333:oidc-provider/x",
    pod_identity_agent=True,
    addon_versions={"aws-ebs-csi-driver": "v1.50.0-eksbuild.1"},
    installed_addons={"aws-ebs-csi-driver": "v1.40.0-eksbuild.1"},
    offerings={"g4dn.xlarge": ("usw2-az1", "usw2-az2")},
)
GKE = GkeObserved(
    cluster=GkeClusterObserved(
        name="prod",
        endpoint="198.51.100.7",
        certificate_authority="Q0E=",
        workload_pool="demo-project.svc.id.goog",
    )
)


@pytest.mark.parametrize(
    "observed",
    [
        Observed.none(),
        Observed("eks", FULL_EKS),
        Observed("eks", EksObserved()),
        Observed("gke", GKE),
        Observed("gke", GkeObserved()),
    ],
)
def test_observed_round_trips_through_json_text(observed):
    text = json.dumps(observed.to_json(), sort_keys=True)
    assert observed_from_json(json.loads(text)) == observed


def test_offline_is_the_empty_object_and_each_platform_shows_under_its_name():
    assert Observed.none().to_json() == {}
    doc = Observed("eks", FULL_EKS).to_json()
    assert list(doc) == ["eks"]
    assert doc["eks"]["nodeGroups"] == {"gpu-t4-1a2b3c4d": 3, "system-00ff00ff": 2}
    assert doc["eks"]["cluster"]["subnetAzIds"] == ["usw2-az2", "usw2-az3"]
    assert Observed("eks", EksObserved()).to_json()["eks"]["offerings"] is None  # not read


@pytest.mark.parametrize(
    "doc",
    [
        {"ekss": {}},
        {"eks": {"nodegroups": {}}},
        {"eks": {"cluster": {"name": "x", "endpont": ""}}},
        {"gke": {"clusters": None}},
    ],
)
def test_a_key_to_json_never_writes_is_refused_not_defaulted(doc):
    with pytest.raises(ValueError, match="unknown"):
        observed_from_json(doc)


def test_observed_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        FULL_EKS.nat_az_ids = ()  # type: ignore[misc]


def test_a_failed_read_names_its_key_path_and_reason():
    e = ObserveError("cluster.vpc", "could not read the NAT gateways of VPC ml-vpc: throttled")
    assert str(e) == "cluster.vpc: could not read the NAT gateways of VPC ml-vpc: throttled"


# A bridged provider's failed read as the program receives it: the Python SDK's "invoke of %s
# failed: %s" (pulumi sdk/python/lib/pulumi/runtime/invoke.py) around the engine's "invocation of
# %v returned an error: %w" (pkg/resource/deploy/source_eval.go) around the bridge's "invoking %s"
# (pulumi-terraform-bridge pkg/tfbridge/provider.go) around go-multierror's ListFormatFunc
# (hashicorp/go-multierror format.go), with a DescribeCluster AccessDenied as the AWS SDK for Go
# v2 words it.
TOK = "aws:eks/getCluster:getCluster"
DENIED = (
    "reading EKS Cluster (ml): operation error EKS: DescribeCluster, https response error "
    "StatusCode: 403, RequestID: 1f0c, api error AccessDeniedException: User: "
    "arn:aws:iam::111122223333:user/ci is not authorized to perform: eks:DescribeCluster"
)
BRIDGED = (
    f"invoke of {TOK} failed: invocation of {TOK} returned an error: invoking {TOK}: "
    f"1 error occurred:\n\t* {DENIED}\n\n"
)


def test_a_failed_read_reports_the_providers_innermost_reason_of_a_bridged_invoke_error():
    assert failure_reason(BRIDGED) == DENIED


def test_a_failed_read_with_several_diagnostics_reports_each_of_them():
    # ListFormatFunc: "%d errors occurred:\n\t%s\n\n", the points joined by "\n\t".
    two = f"invoke of {TOK} failed: invoking {TOK}: 2 errors occurred:\n\t* a: x\n\t* b: y\n\n"
    assert failure_reason(two) == "a: x; b: y"


def test_a_failed_check_of_an_invoke_reports_its_reason_without_the_wrapper():
    # invoke.py's failures path: "invoke of {tok} failed: {reason} ({property})".
    assert failure_reason(f"invoke of {TOK} failed: name is required ()") == "name is required"
    assert failure_reason("") == "no reason given"


def test_the_plan_records_what_it_was_planned_over():
    cfg = parse(gke_config(), "test")
    assert build_plan(cfg).observed == Observed.none()
    assert build_plan(cfg, None, Observed("gke", GkeObserved())).observed == Observed(
        "gke", GkeObserved()
    )


# --- GKE: an existing cluster -------------------------------------------------------------------

EXISTING = {"name": "prod", "location": "us-central1", "existing": True, "cpuNodes": 5}


def _existing(observed: GkeObserved | None) -> GkeClusterObserved | None:
    raw = gke_config(cluster=EXISTING, gpuOperator={"clusterWide": True})
    p = build_plan(parse(raw, "test"), None, Observed("gke", observed)).platform.plan
    assert p is not None
    return p.existing_cluster


def test_an_existing_gke_cluster_is_planned_with_what_was_read():
    assert _existing(GKE) == GKE.cluster


def test_offline_an_existing_gke_cluster_is_placeholders():
    found = _existing(None)
    assert found is not None and found.endpoint == offline.ENDPOINT and found.name == "prod"


def test_an_existing_gke_cluster_the_project_lacks_is_a_config_error():
    with pytest.raises(ConfigErrors, match=r"cluster\.name: 'prod': no GKE cluster of that name"):
        _existing(GkeObserved())


def test_a_created_gke_cluster_reads_and_records_no_existing_cluster():
    p = build_plan(parse(gke_config(), "test"), None, Observed("gke", GkeObserved())).platform.plan
    assert p is not None and p.existing_cluster is None


def test_gke_not_found_is_the_data_sources_full_name_not_found_only():
    # terraform-provider-google data_source_google_container_cluster.go: "%s not found" of
    # containerClusterFullName, projects/%s/locations/%s/clusters/%s.
    assert cluster_not_found(
        "error: projects/p/locations/us-central1/clusters/prod not found",
        "p",
        "us-central1",
        "prod",
    )
    assert not cluster_not_found(
        "googleapi: Error 403: Permission denied", "p", "us-central1", "prod"
    )
