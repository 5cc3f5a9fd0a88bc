"""GKE's part of the fake cloud account: what a GKE stack finds and leaves there.

Its existing and deployed clusters, node pools and ComputeClasses, and the reads of GKE's observe
step (``infra.observe.gke``): the cluster, the provider's client config and the cluster's
ComputeClassList.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from infra.core import offline
from infra.core.gke.observed import COMPUTE_CLASSES_PATH
from infra.core.tokens import COMPUTE_CLASS
from infra.mocklive.account import AccountPart, Answer, InvokeFailure, LiveAccount
from infra.observe.kubeapi import NotServed

if TYPE_CHECKING:
    from infra.core.catalog.vendored import Catalog
    from infra.core.config.stack import StackConfig
    from infra.core.observed import ClusterAccess
    from infra.mockengine import Recording


def _existing(config: StackConfig, _catalog: Catalog) -> LiveAccount:
    return LiveAccount(gke_clusters=frozenset({config.cluster.name}))


def _deployed(found: LiveAccount, recording: Recording, config: StackConfig) -> LiveAccount:
    """``found`` plus the GKE clusters, node pools and ComputeClasses ``recording`` made."""
    made = {str(r.inputs["name"]) for r in recording.of_type("gcp:container/cluster:Cluster")}
    return replace(
        found,
        gke_clusters=found.gke_clusters | made,
        gke_node_pools=_gke_pools_made(found, recording),
        gke_compute_classes=_gke_classes_made(found, recording, config.cluster.name),
    )


def _gke_pools_made(
    found: LiveAccount, recording: Recording
) -> dict[str, dict[str, Mapping[str, Any]]]:
    """``found``'s GKE node pools plus those ``recording`` made, each with its node labels and
    service account."""
    out = {c: dict(pools) for c, pools in found.gke_node_pools.items()}
    for r in recording.of_type("gcp:container/nodePool:NodePool"):
        node = r.inputs.get("nodeConfig") or {}
        config = {
            "labels": dict(node.get("labels") or {}),
            "serviceAccount": str(node.get("serviceAccount") or ""),
        }
        out.setdefault(str(r.inputs["cluster"]), {})[str(r.inputs["name"])] = config
    return out


def _gke_classes_made(
    found: LiveAccount, recording: Recording, cluster: str
) -> dict[str, dict[str, Mapping[str, Any]]]:
    """``found``'s ComputeClasses plus those ``recording`` made in its stack's ``cluster``, each
    with the spec it was given (a class auto-creates no node pool until a pod asks for one, so
    only the class shows that an idle entry runs)."""
    out = {c: dict(classes) for c, classes in found.gke_compute_classes.items()}
    for r in recording.of_type(COMPUTE_CLASS):
        name = str((r.inputs.get("metadata") or {}).get("name") or "")
        if name:
            out.setdefault(cluster, {})[name] = dict(r.inputs.get("spec") or {})
    return out


def _gcp_get_cluster(args: Answer, _: Catalog, live: LiveAccount) -> Answer:
    """An existing GKE cluster: a placeholder endpoint and CA, and its workload pool."""
    name, location, project = args.get("name"), args.get("location"), args.get("project")
    if name not in live.gke_clusters:
        # terraform-provider-google data_source_google_container_cluster.go: "<id> not found".
        raise InvokeFailure(f"projects/{project}/locations/{location}/clusters/{name} not found")
    return {
        "name": name,
        "location": location,
        "project": project,
        "endpoint": offline.ENDPOINT,
        "masterAuths": [{"clusterCaCertificate": offline.CERTIFICATE_AUTHORITY}],
        "workloadIdentityConfigs": []
        if name in live.gke_without_workload_identity
        else [{"workloadPool": f"{project}.svc.id.goog"}],
        "nodePools": [
            {"name": pool, "nodeConfigs": [dict(config)]}
            for pool, config in sorted(live.gke_node_pools.get(str(name), {}).items())
        ],
    }


def _gcp_client_config(_args: Answer, _: Catalog, _live: LiveAccount) -> Answer:
    """The provider's configuration: an access token the fake Kubernetes API does not check."""
    return {"id": "client-config", "accessToken": "mock-access-token", "project": ""}


def _compute_classes(live: LiveAccount, cluster: ClusterAccess) -> Any:
    """The cluster's ComputeClassList (``infra.observe.kubeapi.READ``), or not served (404)."""
    name = cluster["name"]
    if name in live.gke_without_compute_classes:
        raise NotServed(COMPUTE_CLASSES_PATH)
    classes = live.gke_compute_classes.get(name, {})
    return {
        "apiVersion": "cloud.google.com/v1",
        "kind": "ComputeClassList",
        "items": [
            {"metadata": {"name": name}, "spec": dict(spec)}
            for name, spec in sorted(classes.items())
        ],
    }


ACCOUNT = AccountPart(
    existing=_existing,
    deployed=_deployed,
    invokes={
        "gcp:container/getCluster:getCluster": _gcp_get_cluster,
        "gcp:organizations/getClientConfig:getClientConfig": _gcp_client_config,
    },
    kube_paths={COMPUTE_CLASSES_PATH: _compute_classes},
)
