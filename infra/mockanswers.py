"""What the mock engine answers in a provider's place, each answer with the source of its data.

Provider functions (``INVOKES``: the catalog's offerings, placeholders, the run's fake account in
``infra.mocklive``), the outputs a provider computes for a resource (``OUTPUTS``), and the children
of a remote component that the program reads back through its outputs (``CHILDREN``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pulumi
from pulumi.runtime import mocks as pulumi_mocks

from infra import mocklive
from infra.core import offline
from infra.core.catalog.vendored import Catalog
from infra.mocklive import LiveAccount

# Placeholders so nothing looks like a real cluster (one home: infra.core.offline).
MOCK_ENDPOINT = offline.ENDPOINT
MOCK_CA = offline.CERTIFICATE_AUTHORITY
MOCK_ACCOUNT = offline.AWS_ACCOUNT

InvokeFn = Callable[[dict[str, Any], Catalog, LiveAccount], dict[str, Any]]
OutputsFn = Callable[[pulumi_mocks.MockResourceArgs], dict[str, Any]]


class UnmockedInvokeError(AssertionError):
    """The program called a provider function the mock engine has no answer for."""


def _mock_oidc_issuer() -> str:
    """An OIDC issuer in the stack's region (``aws:region``, required on every eks stack)."""
    return offline.eks_oidc_issuer(pulumi.Config("aws").require("region"))


def _aws_instance_type_offerings(
    args: dict[str, Any], catalog: Catalog, _: LiveAccount
) -> dict[str, Any]:
    """EC2 DescribeInstanceTypeOfferings by AZ ID, from the catalog's per-region AZ IDs."""
    if args.get("locationType") != "availability-zone-id" or not args.get("region"):
        raise UnmockedInvokeError(
            "getInstanceTypeOfferings is mocked for locationType "
            "availability-zone-id with an explicit region only"
        )
    filters = {f["name"]: set(f["values"]) for f in args.get("filters") or []}
    pairs = []
    for t in sorted(filters.get("instance-type", set(catalog.aws_instances()))):
        inst = catalog.aws_instance(t)
        for az in sorted(inst.az_ids.get(args["region"], ())) if inst else ():
            if "location" not in filters or az in filters["location"]:
                pairs.append((t, az))
    return {
        "id": args["region"],
        "region": args["region"],
        "filters": args.get("filters"),
        "locationType": "availability-zone-id",
        "instanceTypes": [t for t, _ in pairs],
        "locations": [a for _, a in pairs],
        "locationTypes": ["availability-zone-id"] * len(pairs),
    }


def _aws_eks_get_addon_version(args: dict[str, Any], *_: Any) -> dict[str, Any]:
    """DescribeAddonVersions' default for a Kubernetes version (read only for an add-on the pinned
    table lacks): a placeholder saying so, as ``--diff`` shows it."""
    addon, k8s = args["addonName"], args["kubernetesVersion"]
    return {
        "id": addon,
        "addonName": addon,
        "kubernetesVersion": k8s,
        "version": offline.eks_addon_default(k8s),
    }


def _eks_cluster_outputs(a: pulumi_mocks.MockResourceArgs) -> dict[str, Any]:
    """pulumi-eks Cluster (a remote component: its children are not seen under mocks)."""
    issuer = _mock_oidc_issuer()
    return {
        "kubeconfigJson": json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {
                        "name": a.inputs.get("name"),
                        "cluster": {"server": f"https://{MOCK_ENDPOINT}"},
                    }
                ],
            }
        ),
        "oidcIssuer": issuer,
        "oidcProviderArn": offline.oidc_provider_arn(issuer),
        "core": {"endpoint": f"https://{MOCK_ENDPOINT}"},
    }


def _eks_node_group_outputs(a: pulumi_mocks.MockResourceArgs) -> dict[str, Any]:
    """EKS names a managed node group's ASG eks-<nodegroup>-<uuid>; one ASG per group."""
    ng = a.inputs.get("nodeGroupName") or a.name
    return {
        "resources": [{"autoscalingGroups": [{"name": f"eks-{ng}-00000000-0000-0000-0000-mock"}]}],
    }


# Provider function token -> answer. Each entry says where its data comes from: the catalog's
# aws_gpu_instances.csv (offerings by AZ ID, a point-in-time AWS snapshot), a placeholder
# (add-on defaults), or the run's account (every read of the observe step: infra.mocklive).
INVOKES: dict[str, InvokeFn] = {
    "aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings": _aws_instance_type_offerings,
    "aws:eks/getAddonVersion:getAddonVersion": _aws_eks_get_addon_version,
    **mocklive.INVOKES,
}


def _sqs_queue_outputs(a: pulumi_mocks.MockResourceArgs) -> dict[str, Any]:
    """The queue's ARN and URL as SQS forms them (CreateQueue returns the URL, the id)."""
    region = pulumi.Config("aws").require("region")
    name = a.inputs.get("name", a.name)
    return {
        "arn": f"arn:aws:sqs:{region}:{MOCK_ACCOUNT}:{name}",
        "url": f"https://sqs.{region}.amazonaws.com/{MOCK_ACCOUNT}/{name}",
    }


def _eks_cluster_children(a: pulumi_mocks.MockResourceArgs) -> dict[str, tuple[str, str, dict]]:
    """The aws.eks.Cluster pulumi-eks creates as ``<name>-eksCluster`` (nodejs/eks/cluster/
    cluster.ts), with the VPC config EKS reports for it: the cluster security group EKS made and
    the VPC, placeholders as for an observed cluster (``infra.core.offline``)."""
    state = {
        "name": a.inputs.get("name", a.name),
        "vpcConfig": {
            "clusterSecurityGroupId": offline.SECURITY_GROUP_ID,
            "vpcId": offline.VPC_ID,
            "subnetIds": list(a.inputs.get("privateSubnetIds") or []),
        },
    }
    return {"eksCluster": ("aws:eks/cluster:Cluster", f"{a.name}-eksCluster", state)}


# Remote component type token -> the children the program reads back through the component's
# outputs (output name -> (type, name, state)): under mocks a remote component's own code does not
# run, so the engine registers them, and the output is a reference to the child, as a real
# engine returns it. Their dependents then depend on the child's URN, as they do at ``pulumi up``.
CHILDREN: dict[str, Callable[[pulumi_mocks.MockResourceArgs], dict[str, tuple[str, str, dict]]]] = {
    "eks:index:Cluster": _eks_cluster_children,
}


# Resource type token -> outputs a real provider computes (camelCase, merged over the inputs).
OUTPUTS: dict[str, OutputsFn] = {
    "gcp:container/cluster:Cluster": lambda _: {
        "endpoint": MOCK_ENDPOINT,
        "masterAuth": {"clusterCaCertificate": MOCK_CA},
    },
    "gcp:serviceaccount/account:Account": lambda a: {
        "email": f"{a.inputs.get('accountId')}@{a.inputs.get('project')}.iam.gserviceaccount.com"
    },
    "eks:index:Cluster": _eks_cluster_outputs,
    "aws:eks/nodeGroup:NodeGroup": _eks_node_group_outputs,
    "aws:ec2/launchTemplate:LaunchTemplate": lambda _: {"latestVersion": 1},
    "aws:ec2/placementGroup:PlacementGroup": lambda a: {"name": a.name},
    "aws:iam/openIdConnectProvider:OpenIdConnectProvider": lambda a: {
        "arn": offline.oidc_provider_arn(str(a.inputs.get("url", "")))
    },
    "aws:iam/role:Role": lambda a: {
        "name": a.name,
        "arn": f"arn:aws:iam::{MOCK_ACCOUNT}:role/{a.name}",
    },
    "aws:sqs/queue:Queue": _sqs_queue_outputs,
}
