"""What the EKS observe step read before planning: frozen data, JSON both ways.

Pure code. ``infra.observe.eks`` fills ``EksObserved`` from the live account; ``infra.core.eks.live``
decides over it. A field is "read, found nothing" when empty and "not read" when ``None`` (only
where the step reads it for some stacks only); ``observed`` ``None`` as a whole is an offline plan.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from infra.core.eks.autoscaler import STACK_TAG_VALUE
from infra.core.observed import access_from_json, access_to_json, failure_reason


@dataclass(frozen=True, slots=True, kw_only=True)
class EksClusterObserved:
    """The stack's cluster as DescribeCluster shows it (one this stack created, or an existing one).

    Attributes:
        endpoint: the API server URL (``https://...``).
        certificate_authority: the cluster CA, base64 PEM.
        oidc_issuer: the OIDC issuer without ``https://``.
        security_group_id: the cluster security group EKS made (``vpcConfig.clusterSecurityGroupId``).
        vpc_id: the cluster's VPC.
        subnet_az_ids: AZ IDs of the cluster's subnets (read for a cluster this stack creates).
        version: the control plane's Kubernetes version (``1.33``); ``""``: not read.
        status: DescribeCluster ``status`` (``ACTIVE``, ``CREATING``, ``UPDATING`` ...);
            ``""``: not read.
        tags: the cluster's tags (read for a cluster this stack creates: whose it is).
    """

    name: str
    endpoint: str
    certificate_authority: str
    oidc_issuer: str
    security_group_id: str
    vpc_id: str
    subnet_az_ids: tuple[str, ...] = ()
    version: str = ""
    status: str = ""
    tags: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class EksObserved:
    """Everything the EKS observe step read.

    Attributes:
        cluster: the cluster of ``cluster.name`` in the region; ``None``: there is none (yet).
        node_groups: the cluster's node groups a pool of this stack may own (``node_groups_to_read``)
            and that carry this stack's tag (``owned_by``) -> their desired size.
        node_group_limits: the same groups -> their live (min size, max size); a group without
            an entry (a value written before they were read) counts as resized.
        foreign_node_groups: node groups named like one of this stack's pools but without its
            tag: another stack's or a person's, never adopted.
        nat_az_ids: AZ IDs of the pending or available NAT gateways in the VPC this stack creates.
        oidc_provider_arn: an existing cluster with IRSA: the IAM OIDC provider of its issuer;
            ``None``: there is none.
        oidc_provider_owner: that provider's ``gpu-infra/stack`` tag (``access.OWNER_TAG``);
            ``""``: untagged (someone else's).
        pod_identity_agent: an existing cluster with Pod Identity: whether its
            eks-pod-identity-agent add-on is installed; ``None``: not read.
        addon_versions: add-on -> EKS's default version for the cluster's Kubernetes version, for
            every add-on without a pin; ``None``: not read.
        installed_addons: a cluster this stack created: add-on without a pin -> the version it
            runs (DescribeAddon; an add-on not installed has no entry); ``None``: not read.
        offerings: instance type -> the region's AZ IDs offering it now, for the types of the
            node-group pools; ``None``: not read.
    """

    cluster: EksClusterObserved | None = None
    node_groups: Mapping[str, int] = field(default_factory=dict)
    node_group_limits: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    foreign_node_groups: tuple[str, ...] = ()
    nat_az_ids: tuple[str, ...] = ()
    oidc_provider_arn: str | None = None
    oidc_provider_owner: str = ""
    pod_identity_agent: bool | None = None
    addon_versions: Mapping[str, str] | None = None
    installed_addons: Mapping[str, str] | None = None
    offerings: Mapping[str, tuple[str, ...]] | None = None

    def to_json(self) -> dict[str, Any]:
        """camelCase JSON, as ``--json`` shows it; ``from_json`` reads it back."""
        c = self.cluster
        return {
            "cluster": None
            if c is None
            else {
                **access_to_json(c),
                "oidcIssuer": c.oidc_issuer,
                "securityGroupId": c.security_group_id,
                "vpcId": c.vpc_id,
                "subnetAzIds": list(c.subnet_az_ids),
                "version": c.version,
                "status": c.status,
                "tags": dict(sorted(c.tags.items())),
            },
            "nodeGroups": dict(sorted(self.node_groups.items())),
            "nodeGroupLimits": {n: list(v) for n, v in sorted(self.node_group_limits.items())},
            "foreignNodeGroups": sorted(self.foreign_node_groups),
            "natAzIds": list(self.nat_az_ids),
            "oidcProviderArn": self.oidc_provider_arn,
            "oidcProviderOwner": self.oidc_provider_owner,
            "podIdentityAgent": self.pod_identity_agent,
            "addonVersions": None
            if self.addon_versions is None
            else dict(sorted(self.addon_versions.items())),
            "installedAddons": None
            if self.installed_addons is None
            else dict(sorted(self.installed_addons.items())),
            "offerings": None
            if self.offerings is None
            else {t: list(azs) for t, azs in sorted(self.offerings.items())},
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> EksObserved:
        """The value ``to_json`` wrote (keys it does not write are refused: a typo is no default)."""
        _known(doc, _KEYS, "eks")
        c = doc.get("cluster")
        if c is not None:
            _known(c, _CLUSTER_KEYS, "eks.cluster")
        offerings = doc.get("offerings")
        versions = doc.get("addonVersions")
        installed = doc.get("installedAddons")
        return cls(
            cluster=None
            if c is None
            else EksClusterObserved(
                **access_from_json(c),
                oidc_issuer=str(c["oidcIssuer"]),
                security_group_id=str(c["securityGroupId"]),
                vpc_id=str(c["vpcId"]),
                subnet_az_ids=tuple(c.get("subnetAzIds", ())),
                version=str(c.get("version", "")),
                status=str(c.get("status", "")),
                tags={str(k): str(v) for k, v in (c.get("tags") or {}).items()},
            ),
            node_groups={str(k): int(v) for k, v in (doc.get("nodeGroups") or {}).items()},
            node_group_limits={
                str(k): (int(v[0]), int(v[1]))
                for k, v in (doc.get("nodeGroupLimits") or {}).items()
            },
            foreign_node_groups=tuple(str(n) for n in doc.get("foreignNodeGroups") or ()),
            nat_az_ids=tuple(doc.get("natAzIds") or ()),
            oidc_provider_arn=doc.get("oidcProviderArn"),
            oidc_provider_owner=str(doc.get("oidcProviderOwner") or ""),
            pod_identity_agent=doc.get("podIdentityAgent"),
            addon_versions=None
            if versions is None
            else {str(k): str(v) for k, v in versions.items()},
            installed_addons=None
            if installed is None
            else {str(k): str(v) for k, v in installed.items()},
            offerings=None
            if offerings is None
            else {str(t): tuple(azs) for t, azs in offerings.items()},
        )


_KEYS = frozenset(
    (
        "cluster",
        "nodeGroups",
        "nodeGroupLimits",
        "foreignNodeGroups",
        "natAzIds",
        "oidcProviderArn",
        "oidcProviderOwner",
        "podIdentityAgent",
        "addonVersions",
        "installedAddons",
        "offerings",
    )
)
_CLUSTER_KEYS = frozenset(
    (
        "name",
        "endpoint",
        "certificateAuthority",
        "oidcIssuer",
        "securityGroupId",
        "vpcId",
        "subnetAzIds",
        "version",
        "status",
        "tags",
    )
)


def _known(doc: Mapping[str, Any], keys: frozenset[str], where: str) -> None:
    if unknown := sorted(set(doc) - keys):
        raise ValueError(f"observed.{where}: unknown key(s) {', '.join(unknown)}")


# A node group name: ``<pool>[-<az id>]-<8 hex>`` (lifecycle.node_group_name); an AZ ID is
# ``<region code>-az<n>`` ("AZ IDs", https://docs.aws.amazon.com/ram/latest/userguide/working-with-az-ids.html).
_HASHED = re.compile(r"^(?P<stem>.+)-[0-9a-f]{8}$")
_AZ_ID = re.compile(r"^[a-z]{3,}[0-9]+(?:-[a-z]{3,}[0-9]+)?-az[0-9]+$")  # usw2-az1, usw2-lax1-az1


def node_groups_to_read(names: Iterable[str], pools: Iterable[str]) -> list[str]:
    """The live node groups whose desired size the plan may use: those named like a group of one
    of ``pools``, ``<pool>[-<az id>]-<8 hex>`` with the pool's whole name (pool ``gpu`` reads
    ``gpu-1a2b3c4d`` and ``gpu-usw2-az1-1a2b3c4d``, not pool ``gpu-t4``'s groups). A group is
    kept under a live name or seeded from a predecessor only of its own pool
    (``lifecycle.live_name``, ``lifecycle.predecessor``), so the other groups of a shared
    cluster are not read."""
    wanted = tuple(pools)
    out = []
    for n in sorted(set(names)):
        m = _HASHED.match(n)
        if m and any(_of_pool(m["stem"], p) for p in wanted):
            out.append(n)
    return out


def owned_by(tags: Mapping[str, str] | None, stack_tag: str) -> bool:
    """Whether a node group's tags mark it as this stack's: ``<stack_tag>=owned``, the tag every
    node group the stack creates carries (``autoscaler.stack_tag``; the system group too)."""
    return (tags or {}).get(stack_tag) == STACK_TAG_VALUE


def _of_pool(stem: str, pool: str) -> bool:
    return stem == pool or (
        stem.startswith(f"{pool}-") and _AZ_ID.match(stem[len(pool) + 1 :]) is not None
    )


# What the provider says when a read finds nothing: terraform-plugin-sdk helper/retry NotFoundError
# ("couldn't find resource"), which terraform-provider-aws returns for IAM NoSuchEntity
# (internal/service/iam/openid_connect_provider_data_source.go findOpenIDConnectProviderByURL) and
# for EKS ResourceNotFoundException (internal/service/eks/addon.go findAddon).
NOT_FOUND = ("couldn't find resource", "NoSuchEntity", "ResourceNotFoundException")


def not_found(error: str) -> bool:
    """Whether a failed read failed because there is nothing to read (anything else stops)."""
    return any(marker in error for marker in NOT_FOUND)


def oidc_lookup_problem(error: str, cluster_name: str) -> str | None:
    """``None`` when the IAM OIDC provider lookup failed because there is none (IRSA then creates
    it); otherwise why the stack must stop: an unreadable provider is not a missing one."""
    if not_found(error):
        return None
    return (
        f"irsa needs cluster {cluster_name}'s IAM OIDC provider, but looking it up failed: "
        f"{failure_reason(error)} (grant "
        "iam:ListOpenIDConnectProviders and iam:GetOpenIDConnectProvider, or use pod-identity)"
    )
