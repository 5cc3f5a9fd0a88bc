"""EKS's part of the fake cloud account: what an EKS stack finds and leaves there.

Its existing and deployed clusters, node groups, add-ons, IAM OIDC provider and network, and the
reads of EKS's observe step (``infra.observe.eks``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from infra.core import offline
from infra.core.eks.names import pulumi_eks_name_tag
from infra.core.eks.versions import with_planned_version
from infra.mocklive.account import AccountPart, Answer, InvokeFailure, LiveAccount

if TYPE_CHECKING:
    from infra.core.catalog.vendored import Catalog
    from infra.core.config.stack import StackConfig
    from infra.mockengine import Recording


def _existing(config: StackConfig, catalog: Catalog) -> LiveAccount:
    """The existing cluster with its subnets and the version it is planned at over ``catalog``
    (its IAM OIDC provider and Pod Identity agent are there by ``LiveAccount``'s defaults)."""
    subnets = tuple((config.cluster.vpc.private_subnets or {}).values())
    name = config.cluster.name
    version = with_planned_version(config.cluster, catalog.data_dir).planned_version
    return LiveAccount(eks_clusters={name: subnets}, eks_versions={name: version})


def _deployed(found: LiveAccount, recording: Recording, _config: StackConfig) -> LiveAccount:
    """``found`` plus the EKS cluster, node groups (name -> desired size), add-ons, IAM OIDC
    provider, VPC, NAT gateways and subnets ``recording`` made."""
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


ACCOUNT = AccountPart(
    existing=_existing,
    deployed=_deployed,
    invokes={
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
    },
)
