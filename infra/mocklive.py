"""A fake cloud account for the mock engine: what the observe step finds, per run.

``LiveAccount`` is what the account holds before a run; ``mockengine.run(..., account=...)`` and
``mockengine.observe`` answer the observe step's invokes from it (``INVOKES``), nothing else does.
``before(config)`` is an account holding only what the stack file names (an existing cluster, its
IAM OIDC provider and Pod Identity agent); ``after(plan, recording, new)`` adds what a deploy of
that recording leaves running and what the new side's stack file attaches to, which is what
``--diff`` plans its new side over.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import grpc

from infra.core import offline
from infra.core.eks.names import pulumi_eks_name_tag
from infra.core.gke.observed import COMPUTE_CLASSES_PATH
from infra.core.tokens import COMPUTE_CLASS
from infra.observe.kubeapi import KubeReadError, NotServed, Read

if TYPE_CHECKING:
    from infra.core.catalog.vendored import Catalog
    from infra.core.config.stack import StackConfig
    from infra.core.observed import ClusterAccess
    from infra.core.plan import Plan
    from infra.mockengine import Recording


class InvokeFailure(Exception):
    """A look-up the real provider would answer with an error (e.g. "not found"), its reason the
    provider's own diagnostic.

    Raised to the program as the engine raises a bridged provider's failed read (``rpc_error``),
    so a program that catches or reports a failed look-up sees the text it will see live.
    """

    def rpc_error(self, token: str) -> grpc.RpcError:
        """The resource monitor's error for this failure of ``token``, as the Python SDK turns it
        into "invoke of <tok> failed: <details>" (``grpc_error_to_exception``)."""
        return _MonitorError(invoke_error_text(token, str(self)))


def invoke_error_text(token: str, reason: str) -> str:
    """What the engine answers a failed invoke of a bridged provider with: its own wrapper
    (pulumi/pulumi pkg/resource/deploy/source_eval.go ResourceMonitor.Invoke), the bridge's
    (pulumi-terraform-bridge pkg/tfbridge/provider.go Invoke) and go-multierror's list of the
    provider's diagnostics (pkg/tfshim/sdk-v2/diagnostics.go; hashicorp/go-multierror format.go)."""
    return (
        f"invocation of {token} returned an error: invoking {token}: "
        f"1 error occurred:\n\t* {reason}\n\n"
    )


class _MonitorError(grpc.RpcError):
    """A gRPC error from the resource monitor: what ``code()`` and ``details()`` the SDK reads."""

    def __init__(self, details: str) -> None:
        super().__init__(details)
        self._details = details

    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.UNKNOWN

    def details(self) -> str:
        return self._details


@dataclass(frozen=True, slots=True, kw_only=True)
class LiveAccount:
    """What the fake account holds before a run.

    Attributes:
        eks_clusters: EKS cluster name -> its subnet IDs (``vpcConfig.subnetIds``).
        eks_versions: EKS cluster name -> its Kubernetes version (absent: ``1.33``).
        eks_statuses: EKS cluster name -> its status (absent: ``ACTIVE``).
        addons: add-on name -> the version a created cluster runs (DescribeAddon).
        eks_cluster_tags: EKS cluster name -> its tags (none: an untagged cluster).
        node_groups: EKS node group name -> its current desired size.
        node_group_limits: EKS node group name -> its (min size, max size); absent: (0, at
            least its desired size).
        node_group_tags: EKS node group name -> its tags (none: a group no stack tagged).
        node_group_clusters: EKS node group name -> its cluster (none: every cluster lists it).
        vpcs: the VPC ``Name`` tags of the account's VPCs (``vpc-<n>`` IDs in this order).
        vpc_tags: each VPC's tags, in the order of ``vpcs`` (none: ``Name`` alone).
        nat_gateways: NAT gateway ID -> its subnet ID (in the first VPC).
        subnets: subnet ID -> its AZ ID.
        oidc_provider: whether the IAM OIDC provider of a cluster's issuer exists.
        oidc_provider_tags: its tags (untagged: someone else's).
        oidc_lookup_error: an error other than not-found the OIDC provider lookup fails with.
        pod_identity_agent: whether the eks-pod-identity-agent add-on is installed.
        gke_clusters: existing GKE cluster names (any project and location).
        gke_without_workload_identity: those of them without Workload Identity.
        gke_node_pools: GKE cluster name -> its node pools -> their ``nodeConfigs[0]`` as the
            cluster read answers it (``labels``, ``serviceAccount``).
        gke_compute_classes: GKE cluster name -> its ComputeClasses -> their ``spec``, as its
            Kubernetes API lists them (``kube_read``).
        gke_without_compute_classes: GKE clusters whose API serves no ComputeClass type (404).
        failures: invoke token (or ``GET <path>`` of a Kubernetes read) -> the reason a read of it
            fails with (AccessDenied, throttling, RBAC's forbidden): every such read fails so.
    """

    eks_clusters: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    eks_versions: Mapping[str, str] = field(default_factory=dict)
    eks_statuses: Mapping[str, str] = field(default_factory=dict)
    addons: Mapping[str, str] = field(default_factory=dict)
    eks_cluster_tags: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    node_groups: Mapping[str, int] = field(default_factory=dict)
    node_group_limits: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    node_group_tags: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    node_group_clusters: Mapping[str, str] = field(default_factory=dict)
    vpcs: tuple[str, ...] = ()
    vpc_tags: tuple[Mapping[str, str], ...] = ()
    nat_gateways: Mapping[str, str] = field(default_factory=dict)
    subnets: Mapping[str, str] = field(default_factory=dict)
    oidc_provider: bool = True
    oidc_provider_tags: Mapping[str, str] = field(default_factory=dict)
    oidc_lookup_error: str | None = None
    pod_identity_agent: bool = True
    gke_clusters: frozenset[str] = frozenset()
    gke_without_workload_identity: frozenset[str] = frozenset()
    gke_node_pools: Mapping[str, Mapping[str, Mapping[str, Any]]] = field(default_factory=dict)
    gke_compute_classes: Mapping[str, Mapping[str, Mapping[str, Any]]] = field(default_factory=dict)
    gke_without_compute_classes: frozenset[str] = frozenset()
    failures: Mapping[str, str] = field(default_factory=dict)


def before(config: StackConfig) -> LiveAccount:
    """An account holding only what ``config`` attaches to: its existing cluster (with its IAM
    OIDC provider and Pod Identity agent), as an offline plan (``Observed.none()``) assumes."""
    if not config.cluster.existing:
        return LiveAccount()
    if config.platform == "gke":
        return LiveAccount(gke_clusters=frozenset({config.cluster.name}))
    if config.platform == "eks":
        subnets = tuple((config.cluster.vpc.private_subnets or {}).values())
        name = config.cluster.name
        return LiveAccount(
            eks_clusters={name: subnets},
            eks_versions={name: config.cluster.kubernetes_version},
        )
    return LiveAccount()  # a kubeconfig's cluster: nothing is read


def _holding(a: LiveAccount, b: LiveAccount) -> LiveAccount:
    """The account holding the clusters of both ``a`` and ``b`` (``before`` fills nothing else)."""
    return replace(
        a,
        eks_clusters={**b.eks_clusters, **a.eks_clusters},
        eks_versions={**b.eks_versions, **a.eks_versions},
        gke_clusters=a.gke_clusters | b.gke_clusters,
    )


# Fields keyed by cluster, then by object: two stacks' objects on one cluster are both there.
PER_CLUSTER = ("gke_node_pools", "gke_compute_classes")


def beside(a: LiveAccount, b: LiveAccount) -> LiveAccount:
    """One account holding what both ``a`` and ``b`` hold (``a``'s value where both name a key):
    another stack's deploy ``b`` beside this stack's account ``a`` (``--beside``)."""
    merged: dict[str, Any] = {}
    for name in LiveAccount.__dataclass_fields__:
        mine, theirs = getattr(a, name), getattr(b, name)
        if name in PER_CLUSTER:
            clusters = {*theirs, *mine}
            merged[name] = {c: {**theirs.get(c, {}), **mine.get(c, {})} for c in clusters}
        elif isinstance(mine, Mapping):
            merged[name] = {**theirs, **mine}
        elif isinstance(mine, frozenset):
            merged[name] = mine | theirs
        elif isinstance(mine, tuple):  # vpcs and vpc_tags, kept in step
            merged[name] = (*mine, *theirs)
    return replace(a, **merged)


def _recorded_clusters(found: LiveAccount, recording: Recording) -> dict[str, Any]:
    """``found``'s EKS cluster fields plus the clusters ``recording`` made (subnets, tags,
    version), as ``replace`` keywords."""
    made = [r for r in recording.of_type("eks:index:Cluster") if r.inputs.get("name")]
    clusters = {
        str(r.inputs["name"]): tuple(str(i) for i in r.inputs.get("privateSubnetIds", []))
        for r in made
    }
    tags = {
        str(r.inputs["name"]): {
            # pulumi-eks tags the cluster Name=<component>-eksCluster beside its clusterTags
            # (nodejs/eks/cluster/cluster.ts).
            "Name": pulumi_eks_name_tag(r.name),
            **{str(k): str(v) for k, v in (r.inputs.get("clusterTags") or {}).items()},
        }
        for r in made
    }
    versions = {str(r.inputs["name"]): str(r.inputs.get("version", "")) for r in made}
    return {
        "eks_clusters": {**found.eks_clusters, **clusters},
        "eks_cluster_tags": {**found.eks_cluster_tags, **tags},
        "eks_versions": {**found.eks_versions, **versions},
    }


def after(plan: Plan, recording: Recording, new: StackConfig | None = None) -> LiveAccount:
    """``before(plan.config)`` plus the GKE or EKS cluster, node groups (name -> desired size),
    VPC, NAT gateways and subnets ``recording`` made, as a deploy over that stack finds them, and what the
    new side's ``new`` attaches to: re-pointing an existing-cluster stack at another running
    cluster is a change over a live account that holds both."""
    found = before(plan.config)
    if new is not None:
        found = _holding(found, before(new))
    of = recording.of_type
    groups = {
        str(r.inputs["nodeGroupName"]): r.inputs.get("scalingConfig", {})
        for r in of("aws:eks/nodeGroup:NodeGroup")
        if r.inputs.get("nodeGroupName")
    }
    oidc = of("aws:iam/openIdConnectProvider:OpenIdConnectProvider")
    if oidc:  # declared by the recording: it exists now, with the tags it was given
        found = replace(
            found, oidc_provider=True, oidc_provider_tags=oidc[0].inputs.get("tags", {})
        )
    return replace(
        found,
        **_recorded_clusters(found, recording),
        gke_clusters=found.gke_clusters
        | {str(r.inputs["name"]) for r in of("gcp:container/cluster:Cluster")},
        gke_node_pools=_gke_pools_made(found, recording),
        gke_compute_classes=_gke_classes_made(found, recording, plan.config.cluster.name),
        addons={
            str(r.inputs["addonName"]): str(r.inputs["addonVersion"])
            for r in of("aws:eks/addon:Addon")
            if r.inputs.get("addonName") and r.inputs.get("addonVersion")
        },
        # The sizes the recording sent: the autoscaler has not acted since (what --diff plans
        # over; a live account's desired size is whatever the autoscaler last set).
        node_groups={n: int(sc.get("desiredSize", 0)) for n, sc in groups.items()},
        node_group_limits={
            n: (int(sc.get("minSize", 0)), int(sc.get("maxSize", 0))) for n, sc in groups.items()
        },
        node_group_tags={
            str(r.inputs["nodeGroupName"]): dict(r.inputs.get("tags") or {})
            for r in of("aws:eks/nodeGroup:NodeGroup")
            if r.inputs.get("nodeGroupName")
        },
        node_group_clusters={
            str(r.inputs["nodeGroupName"]): str(r.inputs["clusterName"])
            for r in of("aws:eks/nodeGroup:NodeGroup")
            if r.inputs.get("nodeGroupName") and isinstance(r.inputs.get("clusterName"), str)
        },
        **_network_made(recording),
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


def _network_made(recording: Recording) -> dict[str, Any]:
    """The VPCs, NAT gateways and subnets ``recording`` made, as ``LiveAccount`` fields."""
    of = recording.of_type
    return {
        "vpcs": tuple(
            str((r.inputs.get("tags") or {}).get("Name", "")) for r in of("aws:ec2/vpc:Vpc")
        ),
        "vpc_tags": tuple(
            {str(k): str(v) for k, v in (r.inputs.get("tags") or {}).items()}
            for r in of("aws:ec2/vpc:Vpc")
        ),
        "nat_gateways": {
            str(r.id): str(r.inputs["subnetId"])
            for r in of("aws:ec2/natGateway:NatGateway")
            if r.id
        },
        "subnets": {
            str(r.id): str(r.inputs["availabilityZoneId"])
            for r in of("aws:ec2/subnet:Subnet")
            if r.id
        },
    }


Answer = dict[str, Any]


def _eks_get_cluster(args: Answer, _: Catalog, live: LiveAccount) -> Answer:
    """DescribeCluster: placeholder endpoint, CA, OIDC issuer and cluster security group."""
    name = args["name"]
    region = args.get("region") or ""
    return {
        "id": name,
        "name": name,
        "version": live.eks_versions.get(name) or "1.33",
        "status": live.eks_statuses.get(name, "ACTIVE"),
        "endpoint": f"https://{offline.ENDPOINT}",
        "certificateAuthorities": [{"data": offline.CERTIFICATE_AUTHORITY}],
        "identities": [{"oidcs": [{"issuer": f"https://{offline.eks_oidc_issuer(region)}"}]}],
        "vpcConfig": {
            "clusterSecurityGroupId": offline.SECURITY_GROUP_ID,
            "vpcId": offline.VPC_ID,
            "subnetIds": list(live.eks_clusters.get(name, ())),
        },
        "tags": dict(live.eks_cluster_tags.get(name, {})),
    }


def _eks_get_clusters(_args: Answer, _: Catalog, live: LiveAccount) -> Answer:
    return {"id": "clusters", "names": sorted(live.eks_clusters)}


def _get_oidc_provider(args: Answer, _: Catalog, live: LiveAccount) -> Answer:
    url = str(args.get("url", "")).removeprefix("https://")
    if live.oidc_lookup_error is not None:
        raise InvokeFailure(live.oidc_lookup_error)
    if not live.oidc_provider:
        # terraform-provider-aws findOpenIDConnectProviderByURL: retry.NotFoundError.
        raise InvokeFailure(f"reading IAM OIDC Provider (https://{url}): couldn't find resource")
    arn = offline.oidc_provider_arn(url)
    return {"id": arn, "url": url, "arn": arn, "tags": dict(live.oidc_provider_tags)}


def _eks_get_node_groups(args: Answer, _: Catalog, live: LiveAccount) -> Answer:
    return {
        "id": args["clusterName"],
        "clusterName": args["clusterName"],
        "names": sorted(
            n
            for n in live.node_groups
            if live.node_group_clusters.get(n, args["clusterName"]) == args["clusterName"]
        ),
    }


def _eks_get_node_group(args: Answer, _: Catalog, live: LiveAccount) -> Answer:
    """DescribeNodegroup: ``scalingConfig`` and ``tags`` are read."""
    name = args["nodeGroupName"]
    desired = live.node_groups[name]
    lo, hi = live.node_group_limits.get(name, (0, max(desired, 1)))
    return {
        "id": f"{args['clusterName']}:{name}",
        "scalingConfigs": [{"desiredSize": desired, "minSize": lo, "maxSize": hi}],
        "tags": dict(live.node_group_tags.get(name, {})),
    }


def _eks_get_addon(args: Answer, _: Catalog, live: LiveAccount) -> Answer:
    """DescribeAddon: a created cluster's add-on (``addons``), or an existing cluster's Pod
    Identity agent (``pod_identity_agent``)."""
    name = args["addonName"]
    if name in live.addons:
        return {"id": name, "addonName": name, "addonVersion": live.addons[name]}
    if name != "eks-pod-identity-agent" or not live.pod_identity_agent:
        # terraform-provider-aws internal/service/eks/addon.go findAddon: retry.NotFoundError.
        raise InvokeFailure(
            f"reading EKS Add-On ({args['clusterName']}:{args['addonName']}): "
            "couldn't find resource"
        )
    return {"id": args["addonName"], "addonName": args["addonName"]}


def _get_vpcs(args: Answer, _: Catalog, live: LiveAccount) -> Answer:
    """DescribeVpcs by tags: the VPCs carrying every tag asked for."""
    wanted = dict(args.get("tags") or {})
    ids = []
    for i, name in enumerate(live.vpcs):
        tags = live.vpc_tags[i] if i < len(live.vpc_tags) else {"Name": name}
        if all(tags.get(k) == v for k, v in wanted.items()):
            ids.append(f"vpc-{i}")
    return {"id": "vpcs", "ids": ids}


def _get_nat_gateways(_args: Answer, _: Catalog, live: LiveAccount) -> Answer:
    return {"id": "nat-gateways", "ids": sorted(live.nat_gateways)}


def _get_nat_gateway(args: Answer, _: Catalog, live: LiveAccount) -> Answer:
    """DescribeNatGateways: only ``subnetId`` is read."""
    return {"id": args["id"], "subnetId": live.nat_gateways[args["id"]]}


def _get_subnet(args: Answer, _: Catalog, live: LiveAccount) -> Answer:
    """DescribeSubnets: only ``availabilityZoneId`` is read."""
    return {"id": args["id"], "availabilityZoneId": live.subnets[args["id"]]}


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


def kube_read(live: LiveAccount) -> Read:
    """The observe step's Kubernetes reads answered from ``live``: the ComputeClassList of the
    cluster read (``infra.observe.kubeapi.READ``); ``failures`` keyed ``GET <path>`` fail so."""

    def read(cluster: ClusterAccess, _token: str, path: str) -> Any:
        if (reason := live.failures.get(f"GET {path}")) is not None:
            raise KubeReadError(reason)
        name = cluster["name"]
        if path != COMPUTE_CLASSES_PATH or name in live.gke_without_compute_classes:
            raise NotServed(path)
        classes = live.gke_compute_classes.get(name, {})
        return {
            "apiVersion": "cloud.google.com/v1",
            "kind": "ComputeClassList",
            "items": [
                {"metadata": {"name": name}, "spec": dict(spec)}
                for name, spec in sorted(classes.items())
            ],
        }

    return read


# Provider function token -> answer from the account (the observe step's reads).
INVOKES = {
    "gcp:container/getCluster:getCluster": _gcp_get_cluster,
    "gcp:organizations/getClientConfig:getClientConfig": _gcp_client_config,
    "aws:eks/getCluster:getCluster": _eks_get_cluster,
    "aws:eks/getClusters:getClusters": _eks_get_clusters,
    "aws:iam/getOpenIdConnectProvider:getOpenIdConnectProvider": _get_oidc_provider,
    "aws:eks/getNodeGroups:getNodeGroups": _eks_get_node_groups,
    "aws:eks/getNodeGroup:getNodeGroup": _eks_get_node_group,
    "aws:eks/getAddon:getAddon": _eks_get_addon,
    "aws:ec2/getVpcs:getVpcs": _get_vpcs,
    "aws:ec2/getNatGateways:getNatGateways": _get_nat_gateways,
    "aws:ec2/getNatGateway:getNatGateway": _get_nat_gateway,
    "aws:ec2/getSubnet:getSubnet": _get_subnet,
}
