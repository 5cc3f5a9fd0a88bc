"""Run the real Pulumi program in-process on Pulumi's mock engine, recording what it registers.

Provider look-ups (invokes) are answered from the vendored catalog through ``INVOKES``; an invoke
with no entry fails loudly instead of returning ``{}``. Resources get the outputs a real provider
would compute (``OUTPUTS``), so later inputs that depend on them are concrete and traceable.
Used by ``python -m infra.plan`` and by the stack-test harness.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

import pulumi
from google.protobuf import struct_pb2
from google.protobuf.json_format import MessageToDict
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import rpc
from pulumi.runtime.proto import resource_pb2
from pulumi.runtime.settings import ROOT, SETTINGS
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _ensure_event_loop, _sync_await

from infra.core.catalog.vendored import Catalog
from infra.core.config.stack import PROJECT, encode_engine_config

SECRET = "[secret]"
# A documentation address (RFC 5737) and a placeholder CA so nothing looks like a real cluster.
MOCK_ENDPOINT = "203.0.113.10"
MOCK_CA = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCm1vY2sKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="

InvokeFn = Callable[[dict[str, Any], Catalog], dict[str, Any]]
OutputsFn = Callable[[pulumi_mocks.MockResourceArgs], dict[str, Any]]


class UnmockedInvokeError(AssertionError):
    """The program called a provider function the mock engine has no answer for."""


class InvokeFailure(Exception):
    """A look-up the real provider would answer with an error (e.g. "not found").

    Returned to the program as invoke failures, as a real provider's are, so a program that
    catches a failed look-up behaves the same under mocks.
    """


def _gcp_get_cluster(args: dict[str, Any], _: Catalog) -> dict[str, Any]:
    return {
        "name": args.get("name"),
        "location": args.get("location"),
        "project": args.get("project"),
        "endpoint": MOCK_ENDPOINT,
        "masterAuths": [{"clusterCaCertificate": MOCK_CA}],
    }


# A documentation account ID and a fixed OIDC issuer, so nothing looks like a real cluster.
MOCK_ACCOUNT = "123456789012"


def _mock_oidc_issuer() -> str:
    """An OIDC issuer in the stack's region (``aws:region``, required on every eks stack)."""
    region = pulumi.Config("aws").require("region")
    return f"oidc.eks.{region}.amazonaws.com/id/MOCK0000000000000000000000000000"


def _aws_instance_type_offerings(args: dict[str, Any], catalog: Catalog) -> dict[str, Any]:
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


@dataclass
class LiveAws:
    """What the mock AWS account holds before the run (tests set it; the plan CLI uses the
    defaults: node groups none yet, an IAM OIDC provider and the Pod Identity agent present).

    Attributes:
        node_groups: EKS node group name -> its current desired size.
        oidc_provider: whether the cluster's IAM OIDC provider exists.
        oidc_provider_tags: its tags.
        oidc_lookup_error: an error other than not-found the OIDC provider lookup fails with.
        pod_identity_agent: whether the eks-pod-identity-agent add-on is installed.
        nat_gateways: NAT gateway ID -> its subnet ID, in the stack's VPC.
        subnets: subnet ID -> its AZ ID.
        clusters: EKS cluster name -> its subnet IDs (``vpcConfig.subnetIds``).
    """

    node_groups: dict[str, int] = field(default_factory=dict)
    oidc_provider: bool = True
    oidc_provider_tags: dict[str, str] = field(default_factory=dict)
    oidc_lookup_error: str | None = None
    pod_identity_agent: bool = True
    nat_gateways: dict[str, str] = field(default_factory=dict)
    subnets: dict[str, str] = field(default_factory=dict)
    clusters: dict[str, list[str]] = field(default_factory=dict)


LIVE = LiveAws()


@contextlib.contextmanager
def groups_of(recording: Recording) -> Iterator[None]:
    """``LIVE`` holding the EKS node groups ``recording`` made (name -> desired size), its NAT
    gateways, subnets and cluster, as a deploy over that stack finds them; restored afterwards."""
    global LIVE
    found = {
        str(r.inputs["nodeGroupName"]): int(r.inputs.get("scalingConfig", {}).get("desiredSize", 0))
        for r in recording.resources
        if r.type == "aws:eks/nodeGroup:NodeGroup" and r.inputs.get("nodeGroupName")
    }
    subnets = {
        str(r.id): str(r.inputs["availabilityZoneId"])
        for r in recording.resources
        if r.type == "aws:ec2/subnet:Subnet" and r.id
    }
    nats = {
        str(r.id): str(r.inputs["subnetId"])
        for r in recording.resources
        if r.type == "aws:ec2/natGateway:NatGateway" and r.id
    }
    clusters = {
        str(r.inputs["name"]): [str(i) for i in r.inputs.get("privateSubnetIds", [])]
        for r in recording.resources
        if r.type == "eks:index:Cluster" and r.inputs.get("name")
    }
    saved = LIVE
    LIVE = replace(
        saved,
        node_groups={**saved.node_groups, **found},
        nat_gateways={**saved.nat_gateways, **nats},
        subnets={**saved.subnets, **subnets},
        clusters={**saved.clusters, **clusters},
    )
    try:
        yield
    finally:
        LIVE = saved


def _aws_eks_get_cluster(args: dict[str, Any], _: Catalog) -> dict[str, Any]:
    """An EKS cluster: placeholder endpoint, CA, OIDC issuer and cluster security group."""
    return {
        "id": args["name"],
        "name": args["name"],
        "endpoint": f"https://{MOCK_ENDPOINT}",
        "certificateAuthorities": [{"data": MOCK_CA}],
        "identities": [{"oidcs": [{"issuer": f"https://{_mock_oidc_issuer()}"}]}],
        "vpcConfig": {
            "clusterSecurityGroupId": "sg-0123456789abcdef0",
            "vpcId": "vpc-0123456789abcdef0",
            "subnetIds": list(LIVE.clusters.get(args["name"], [])),
        },
    }


def _oidc_provider_arn(url: object) -> str:
    """The IAM OIDC provider ARN for an issuer URL (``https://`` dropped, as IAM names it)."""
    return f"arn:aws:iam::{MOCK_ACCOUNT}:oidc-provider/{str(url).removeprefix('https://')}"


def _aws_get_oidc_provider(args: dict[str, Any], _: Catalog) -> dict[str, Any]:
    url = str(args.get("url", "")).removeprefix("https://")
    if LIVE.oidc_lookup_error is not None:
        raise InvokeFailure(LIVE.oidc_lookup_error)
    if not LIVE.oidc_provider:
        # terraform-provider-aws findOpenIDConnectProviderByURL: retry.NotFoundError.
        raise InvokeFailure(f"reading IAM OIDC Provider (https://{url}): couldn't find resource")
    return {
        "id": url,
        "url": url,
        "arn": _oidc_provider_arn(url),
        "tags": dict(LIVE.oidc_provider_tags),
    }


def _aws_eks_get_node_groups(args: dict[str, Any], _: Catalog) -> dict[str, Any]:
    return {
        "id": args["clusterName"],
        "clusterName": args["clusterName"],
        "names": sorted(LIVE.node_groups),
    }


def _aws_eks_get_node_group(args: dict[str, Any], _: Catalog) -> dict[str, Any]:
    """DescribeNodegroup: only ``scalingConfig.desiredSize`` is read by the program."""
    desired = LIVE.node_groups[args["nodeGroupName"]]
    return {
        "id": f"{args['clusterName']}:{args['nodeGroupName']}",
        "scalingConfigs": [{"desiredSize": desired, "minSize": 0, "maxSize": max(desired, 1)}],
    }


def _aws_get_vpcs(_args: dict[str, Any], _: Catalog) -> dict[str, Any]:
    """The stack's VPC exists once it has a NAT gateway (a mock VPC ID)."""
    return {"id": "vpcs", "ids": ["vpc-0123456789abcdef0"] if LIVE.nat_gateways else []}


def _aws_get_nat_gateways(_args: dict[str, Any], _: Catalog) -> dict[str, Any]:
    return {"id": "nat-gateways", "ids": sorted(LIVE.nat_gateways)}


def _aws_get_nat_gateway(args: dict[str, Any], _: Catalog) -> dict[str, Any]:
    """DescribeNatGateways: only ``subnetId`` is read."""
    return {"id": args["id"], "subnetId": LIVE.nat_gateways[args["id"]]}


def _aws_get_subnet(args: dict[str, Any], _: Catalog) -> dict[str, Any]:
    """DescribeSubnets: only ``availabilityZoneId`` is read."""
    return {"id": args["id"], "availabilityZoneId": LIVE.subnets[args["id"]]}


def _aws_eks_get_clusters(_args: dict[str, Any], _: Catalog) -> dict[str, Any]:
    """ListClusters: the clusters ``LIVE`` holds (none by default)."""
    return {"id": "clusters", "names": sorted(LIVE.clusters)}


def _aws_eks_get_addon_version(args: dict[str, Any], _: Catalog) -> dict[str, Any]:
    """DescribeAddonVersions' default for a Kubernetes version (read only for an add-on the pinned
    table lacks): a placeholder saying so, as ``--diff`` shows it."""
    addon, k8s = args["addonName"], args["kubernetesVersion"]
    return {
        "id": addon,
        "addonName": addon,
        "kubernetesVersion": k8s,
        "version": f"(EKS default for {k8s} at deploy time)",
    }


def _aws_eks_get_addon(args: dict[str, Any], _: Catalog) -> dict[str, Any]:
    if not LIVE.pod_identity_agent:
        raise InvokeFailure(f"ResourceNotFoundException: No addon: {args['addonName']}")
    return {"id": args["addonName"], "addonName": args["addonName"]}


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
        "oidcProviderArn": _oidc_provider_arn(issuer),
        "core": {"endpoint": f"https://{MOCK_ENDPOINT}"},
    }


def _eks_node_group_outputs(a: pulumi_mocks.MockResourceArgs) -> dict[str, Any]:
    """EKS names a managed node group's ASG eks-<nodegroup>-<uuid>; one ASG per group."""
    ng = a.inputs.get("nodeGroupName") or a.name
    return {
        "resources": [{"autoscalingGroups": [{"name": f"eks-{ng}-00000000-0000-0000-0000-mock"}]}],
    }


# Provider function token -> answer. Extend per platform; each entry says where its data comes from.
INVOKES: dict[str, InvokeFn] = {
    # Existing GKE cluster: a placeholder endpoint and CA (nothing else is read from it).
    "gcp:container/getCluster:getCluster": _gcp_get_cluster,
    # Offerings by AZ ID: the catalog's aws_gpu_instances.csv (a point-in-time AWS snapshot).
    "aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings": _aws_instance_type_offerings,
    # Existing EKS cluster and its IAM OIDC provider: placeholders.
    "aws:eks/getCluster:getCluster": _aws_eks_get_cluster,
    "aws:iam/getOpenIdConnectProvider:getOpenIdConnectProvider": _aws_get_oidc_provider,
    # Live node groups (desired sizes) and add-ons: ``LIVE`` (none / present by default).
    "aws:eks/getNodeGroups:getNodeGroups": _aws_eks_get_node_groups,
    "aws:eks/getNodeGroup:getNodeGroup": _aws_eks_get_node_group,
    "aws:eks/getAddon:getAddon": _aws_eks_get_addon,
    "aws:eks/getAddonVersion:getAddonVersion": _aws_eks_get_addon_version,
    # The stack VPC's NAT gateways and their subnets' AZ IDs: ``LIVE`` (none by default).
    "aws:ec2/getVpcs:getVpcs": _aws_get_vpcs,
    "aws:ec2/getNatGateways:getNatGateways": _aws_get_nat_gateways,
    "aws:ec2/getNatGateway:getNatGateway": _aws_get_nat_gateway,
    "aws:ec2/getSubnet:getSubnet": _aws_get_subnet,
    # The region's clusters and a created one's subnets: ``LIVE`` (none by default).
    "aws:eks/getClusters:getClusters": _aws_eks_get_clusters,
}


def _sqs_queue_outputs(a: pulumi_mocks.MockResourceArgs) -> dict[str, Any]:
    """The queue's ARN and URL as SQS forms them (CreateQueue returns the URL, the id)."""
    region = pulumi.Config("aws").require("region")
    name = a.inputs.get("name", a.name)
    return {
        "arn": f"arn:aws:sqs:{region}:{MOCK_ACCOUNT}:{name}",
        "url": f"https://sqs.{region}.amazonaws.com/{MOCK_ACCOUNT}/{name}",
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
        "arn": _oidc_provider_arn(a.inputs.get("url", ""))
    },
    "aws:iam/role:Role": lambda a: {
        "name": a.name,
        "arn": f"arn:aws:iam::{MOCK_ACCOUNT}:role/{a.name}",
    },
    "aws:sqs/queue:Queue": _sqs_queue_outputs,
}


@dataclass(frozen=True, slots=True)
class Registered:
    """One resource as the engine saw it register."""

    urn: str
    id: str | None
    type: str
    name: str
    parent: str | None
    custom: bool
    remote: bool
    inputs: dict[str, Any]
    depends_on: tuple[str, ...]
    ignore_changes: tuple[str, ...] = ()  # the ignoreChanges option: paths the engine never diffs
    # The resource options the engine received (``options_of``): protect, deleteBeforeReplace, ...
    options: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The contract's resource shape for ``python -m infra.plan --json``."""
        return {
            "urn": self.urn,
            "id": self.id,
            "type": self.type,
            "name": self.name,
            "parent": self.parent,
            "custom": self.custom,
            "inputs": self.inputs,
            "dependsOn": list(self.depends_on),
            "options": self.options,
        }


@dataclass
class Recording:
    """Everything one program run registered, in registration order, and its stack outputs."""

    resources: list[Registered] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)
    invokes: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    outputs_registered: set[str] = field(default_factory=set)
    # (level, message) the program logged (pulumi.log): kept here, not printed by the mock engine.
    logs: list[tuple[str, str]] = field(default_factory=list)

    def components_without_outputs(self) -> list[str]:
        """URNs of local components that never called ``register_outputs``."""
        return [
            r.urn
            for r in self.resources
            if not r.custom and not r.remote and r.urn not in self.outputs_registered
        ]

    def of_type(self, token: str) -> list[Registered]:
        """Resources of one type token, in registration order."""
        return [r for r in self.resources if r.type == token]

    def one(self, token: str, name: str | None = None) -> Registered:
        """The single resource of ``token`` (named ``name``, if given)."""
        found = [r for r in self.of_type(token) if name is None or r.name == name]
        if len(found) != 1:
            raise AssertionError(
                f"expected one {token} {name or ''}, found {len(found)}: {[r.name for r in found]}"
            )
        return found[0]

    def by_urn(self, urn: str) -> Registered:
        """The resource with this URN."""
        return next(r for r in self.resources if r.urn == urn)


class CatalogMocks(pulumi.runtime.Mocks):
    """Answers invokes from ``INVOKES`` and computes outputs from ``OUTPUTS``."""

    def __init__(self, catalog: Catalog, recording: Recording) -> None:
        self.catalog = catalog
        self.recording = recording

    def new_resource(self, args: pulumi_mocks.MockResourceArgs) -> tuple[str | None, dict]:
        extra = OUTPUTS.get(args.typ)
        state = {**args.inputs, **(extra(args) if extra else {})}
        return (f"{args.name}_id" if args.custom else None), state

    def call(self, args: pulumi_mocks.MockCallArgs) -> dict:  # type: ignore[override]
        fn = INVOKES.get(args.token)
        if fn is None:
            raise UnmockedInvokeError(
                f"unmocked invoke {args.token}; add it to "
                "infra.mockengine.INVOKES with its data source"
            )
        plain = _plain(args.args)
        self.recording.invokes.append((args.token, plain))
        try:
            return fn(plain, self.catalog)
        except InvokeFailure as e:
            return {}, [("", str(e))]  # type: ignore[return-value]  # (ret, failures) form


class RecordingMonitor(pulumi_mocks.MockMonitor):
    """The mock monitor, plus a record of each registration's parent and dependencies.

    Registers resources itself rather than through ``MockMonitor.RegisterResource``: that one
    serialises each resource's state back with the SDK's async serializer on a per-thread event
    loop (~5 % of a 100-pool plan's CPU time), although the state is plain JSON almost always. A
    state that is not (a resource reference, an asset) is still serialised by the SDK, and a
    registration with transforms goes through ``MockMonitor.RegisterResource`` itself.
    """

    def __init__(self, mocks: CatalogMocks, recording: Recording) -> None:
        super().__init__(mocks)
        self.catalog_mocks = mocks
        self.recording = recording

    def RegisterResource(self, request: Any) -> Any:  # engine RPC name
        if request.type == "pulumi:pulumi:Stack" or request.transforms:
            # The SDK's own path: the Stack, and transforms (which it resolves for new_resource).
            return self._record(request, super().RegisterResource(request))
        urn = self.make_urn(request.parent, request.type, request.name)
        # Resource references in the inputs deserialize into resources, which needs a loop.
        _ensure_event_loop()
        inputs = rpc.deserialize_properties(request.object)
        id_, state = self.catalog_mocks.new_resource(
            pulumi_mocks.MockResourceArgs(
                typ=request.type,
                name=request.name,
                inputs=inputs,
                provider=request.provider,
                resource_id=request.importId,
                custom=bool(request.custom),
            )
        )
        # As the SDK keeps it (None for a component); getResource and ReadResource read it.
        self.resources[urn] = pulumi_mocks.MockMonitor.ResourceRegistration(
            urn,
            id_,  # pyright: ignore[reportArgumentType]  # the SDK's NamedTuple says str
            state,
        )
        return self._record(
            request,
            resource_pb2.RegisterResourceResponse(
                urn=urn, id=id_ or "", object=state_struct(state)
            ),
            inputs,
        )

    def _record(self, request: Any, response: Any, inputs: Any = None) -> Any:
        """Append the registration to the recording (not the Stack); returns ``response``."""
        if request.type == "pulumi:pulumi:Stack":
            return response
        if inputs is None:
            inputs = rpc.deserialize_properties(request.object)
        deps = set(request.dependencies)
        for pdeps in request.propertyDependencies.values():
            deps.update(pdeps.urns)
        self.recording.resources.append(
            Registered(
                urn=response.urn,
                id=response.id or None,
                type=request.type,
                name=request.name,
                parent=request.parent or None,
                custom=bool(request.custom),
                remote=bool(request.remote),
                inputs=_plain(inputs),
                depends_on=tuple(sorted(deps)),
                ignore_changes=tuple(request.ignoreChanges),
                options=options_of(request),
            )
        )
        return response

    def RegisterResourceOutputs(self, request: Any) -> Any:  # engine RPC name
        self.recording.outputs_registered.add(request.urn)
        return super().RegisterResourceOutputs(request)


def options_of(request: Any) -> dict[str, Any]:
    """The lifecycle options of a RegisterResource request, as the engine reads them.

    ``deleteBeforeReplace`` is ``None`` unless set (``deleteBeforeReplaceDefined``): then the
    provider decides the replace order (pulumi/pulumi pkg/resource/deploy/step_generator.go).
    """
    timeouts = request.customTimeouts
    custom = {
        k: getattr(timeouts, k) for k in ("create", "update", "delete") if getattr(timeouts, k)
    }
    aliases = [str(a.urn) if a.urn else MessageToDict(a.spec) for a in request.aliases]
    return {
        "protect": bool(request.protect),
        "deleteBeforeReplace": bool(request.deleteBeforeReplace)
        if request.deleteBeforeReplaceDefined
        else None,
        "retainOnDelete": bool(request.retainOnDelete),
        "deletedWith": request.deletedWith or None,
        "customTimeouts": custom or None,
        "ignoreChanges": list(request.ignoreChanges),
        "aliases": [*aliases, *request.aliasURNs],
    }


def run(
    config: Mapping[str, Any],
    stack: str,
    catalog: Catalog | None = None,
    plan_catalog: Catalog | None = None,
) -> Recording:
    """Run ``infra.program.run()`` for a stack's raw config on the mock engine.

    ``catalog`` answers provider look-ups; ``plan_catalog`` is the catalog the program plans over
    (default: the vendored one; ``--old-catalog`` passes an earlier one).

    Raises:
        pulumi.RunError: the program rejected the config.
        UnmockedInvokeError: the program called a provider function with no mock answer.
    """
    # Every event loop of the run is ours and closed before returning. Pulumi's mock monitor runs on
    # the loop's executor threads and gives each thread a loop of its own (_ensure_event_loop) that
    # nobody closes; their finalizers at interpreter exit, after the loops' self-pipe sockets were
    # collected, print "Exception ignored in: BaseEventLoop.__del__ ... Invalid file descriptor".
    loop = asyncio.new_event_loop()
    thread_loops: list[asyncio.AbstractEventLoop] = []

    def give_thread_a_loop() -> None:
        thread_loops.append(asyncio.new_event_loop())
        asyncio.set_event_loop(thread_loops[-1])

    loop.set_default_executor(ThreadPoolExecutor(initializer=give_thread_a_loop))
    asyncio.set_event_loop(loop)
    try:
        return _run(config, stack, catalog, plan_catalog)
    finally:
        try:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())  # joins the threads
        finally:
            asyncio.set_event_loop(None)
            for each in (loop, *thread_loops):
                close_loop(each)


def close_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Close a loop of the run as ``asyncio.run`` closes its own: cancel what never finished.

    A task can be left unstarted at the end (an apply scheduled in the loop's last turn, the rest
    of a run that failed, an output of a resource a thread rehydrated from a reference); dropped
    later, when the next run clears the SDK's tracked outputs, it would print "coroutine ... was
    never awaited" in the middle of that run.
    """
    pending = asyncio.all_tasks(loop)
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    loop.close()


def _run(
    config: Mapping[str, Any], stack: str, catalog: Catalog | None, plan_catalog: Catalog | None
) -> Recording:
    from infra import program

    recording = Recording()
    mocks = CatalogMocks(catalog or Catalog.load(), recording)
    # set_mocks makes a root Stack only when none is set (pulumi/runtime/mocks.py): without this,
    # every later run in the process (a fleet, the tests) parents its components to the first
    # run's stack URN.
    ROOT.set(None)
    pulumi.runtime.set_mocks(
        mocks,
        project=PROJECT,
        stack=stack,
        preview=False,
        logger=_recording_logger(recording),
        monitor=RecordingMonitor(mocks, recording),
    )
    pulumi.runtime.set_all_config(encode_engine_config(config))
    _skip_source_positions()
    # The same reset pulumi.runtime.test does; SETTINGS is a context proxy pyright cannot see through.
    SETTINGS.rpc_manager.clear()  # pyright: ignore[reportAttributeAccessIssue]
    SETTINGS.outputs.clear()  # pyright: ignore[reportAttributeAccessIssue]

    def body() -> None:
        outputs = program.run(plan_catalog) if plan_catalog is not None else program.run()
        recording.outputs = _sync_await(_resolve(outputs))

    _sync_await(run_pulumi_func(body))
    return recording


def _skip_source_positions() -> None:
    """Register resources without a captured stack trace: only a real engine shows positions.

    The SDK walks the Python stack for every resource (``pulumi.runtime.resource._get_stack_trace``)
    so the engine can point at the line that created it; under mocks nothing reads it, and the walk
    is ~15 % of registering a resource. An SDK without the hook is left alone.
    """
    from pulumi.runtime import resource as runtime_resource

    if hasattr(runtime_resource, "_get_stack_trace"):
        from pulumi.runtime.proto import source_pb2

        setattr(runtime_resource, "_get_stack_trace", source_pb2.StackTrace)  # noqa: B010


class _RecordLogs(logging.Handler):
    def __init__(self, recording: Recording) -> None:
        super().__init__(logging.INFO)
        self.recording = recording

    def emit(self, record: logging.LogRecord) -> None:
        self.recording.logs.append((record.levelname.lower(), record.getMessage()))


def _recording_logger(recording: Recording) -> logging.Logger:
    """The mock engine's logger: records into ``recording.logs`` (pulumi's default is the root
    logger, whose last-resort handler would print each program warning to stderr)."""
    logger = logging.getLogger(f"{__name__}.engine")
    logger.handlers[:] = [_RecordLogs(recording)]
    logger.setLevel(logging.INFO)  # debug chatter of the SDK is not kept
    logger.propagate = False
    return logger


async def _resolve(value: Any) -> Any:
    """Await every Output inside ``value``; secrets become ``"[secret]"``.

    One after another, not gathered: the mock engine has no latency to overlap, and a task per
    dict and list was ~4 % of a 100-pool plan's CPU time.
    """
    if isinstance(value, pulumi.Output):
        if await value.is_secret():
            return SECRET
        return await _resolve(await value.future())
    if isinstance(value, dict):
        return {k: await _resolve(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [await _resolve(v) for v in value]
    return value


def state_struct(state: Mapping[str, Any]) -> struct_pb2.Struct:
    """``state`` as the engine's wire struct, as ``rpc.serialize_properties`` would give it.

    Plain JSON values are copied straight in (a top-level ``None`` is left out, as the SDK does);
    anything else (a resource reference, an asset) goes through the SDK's serializer.
    """
    if not _is_json(state):
        return _sync_await(rpc.serialize_properties(dict(state), {}))
    struct = struct_pb2.Struct()
    for key, value in state.items():
        if value is not None:
            struct[key] = value
    return struct


def _is_json(value: Any) -> bool:
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_json(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return all(_is_json(v) for v in value)
    return value is None or isinstance(value, str | int | float | bool)


def _plain(value: Any) -> Any:
    """JSON-safe copy of deserialized wire values: secrets masked, resources as URNs."""
    if rpc.is_rpc_secret(value):
        return SECRET
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, pulumi.Resource):
        return f"[resource {type(value).__name__}]"
    if isinstance(value, float) and value.is_integer():
        return int(value)  # the wire carries every number as a double; the program gave an int
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)
