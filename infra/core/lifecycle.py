"""How the real Pulumi engine treats each resource gpu-infra registers: replace order, protection,
retain-on-delete, deleted-with and custom timeouts (``data/lifecycle.csv``, one sourced row per type).

Pure: the components read their resource options from here, ``--diff`` reads the replace order
from here, and docs/lifecycle.md's table is generated from the same table, so none of them can
claim an order the engine will not use.

The engine's rule (pulumi/pulumi pkg/resource/deploy/step_generator.go): a replacement deletes
first when the ``deleteBeforeReplace`` option says so; without the option, when the provider's Diff
says so. Providers: the Terraform bridge says delete-first when we set an auto-nameable name
ourselves (pkg/tfbridge/provider.go, ``nameRequiresDeleteBeforeReplace``); pulumi-kubernetes when
the object keeps its name and namespace; its Helm release never.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from infra.core.catalog.vendored import DATA_DIR, read_rows
from infra.core.platform import POSITIONAL_ACCESS_ENTRIES
from infra.core.tokens import EKS_NODE_GROUP, GKE_NODE_POOL

Order = Literal["create-first", "delete-first"]
FILE = "lifecycle.csv"
# Terraform's default operation timeouts, which custom timeouts below never undercut:
# hashicorp/terraform-provider-google google/services/container/resource_container_node_pool.go
# (Timeouts: Create/Update/Delete 30m); hashicorp/terraform-provider-aws
# internal/service/eks/node_group.go @ 012e0a32 (Timeouts: Create/Update/Delete 60m).
PROVIDER_DEFAULT_MINUTES = {GKE_NODE_POOL: 30, EKS_NODE_GROUP: 60}
# The longest a rolling update waits on one batch of nodes to drain before it moves on or fails:
# GKE respects PodDisruptionBudgets "for up to one hour" per node
# (https://cloud.google.com/kubernetes-engine/docs/concepts/node-pool-upgrade-strategies);
# EKS fails the update if pods do not leave a node "within 15 minutes" unless forced
# (https://docs.aws.amazon.com/eks/latest/userguide/managed-node-update-behavior.html).
DRAIN_MINUTES = {GKE_NODE_POOL: 60, EKS_NODE_GROUP: 15}

# The EKS add-ons an in-cluster release waits for: pod networking (vpc-cni, kube-proxy) and DNS
# (coredns), "the networking add-ons" (https://docs.aws.amazon.com/eks/latest/userguide/
# eks-networking-add-ons.html). Storage (aws-ebs-csi-driver) and node health
# (eks-node-monitoring-agent) serve no release gpu-infra installs, so releases never wait for them.
RELEASE_ADDONS = frozenset({"vpc-cni", "kube-proxy", "coredns"})
# A release whose pods assume an IAM role by EKS Pod Identity also needs its agent
# (https://docs.aws.amazon.com/eks/latest/userguide/pod-id-agent-setup.html).
POD_IDENTITY_ADDON = "eks-pod-identity-agent"


def cluster_identifier(platform: str, *parts: str) -> str:
    """A Kubernetes provider's ``clusterIdentifier``: stable per cluster, never the endpoint or CA,
    so a credential or IP rotation updates the provider instead of replacing it (and every
    in-cluster object with it). GKE follows gcloud's context name ``gke_PROJECT_LOCATION_NAME``."""
    return "_".join((platform, *parts))


@dataclass(frozen=True, slots=True)
class Lifecycle:
    """One row: how the engine and its provider treat a resource type (in a role).

    Attributes:
        type: the resource type token.
        role: "" for every resource of the type, else a narrower role (``team``, ``gpu-operator``).
        name_property: the name property the provider's replace rule looks at ("" if none).
        provider_order: the order the provider's Diff asks for when we set that name ("" for a
            component, which is never replaced itself).
        option_order: the ``deleteBeforeReplace`` option gpu-infra sets ("" for none).
        protect: the ``protect`` option.
        retain_on_delete: the ``retainOnDelete`` option: Pulumi forgets the object, Kubernetes
            keeps it (and what runs in it).
        deleted_with: ``"cluster"``: deleted with the cluster (no delete call of its own).
        timeouts: ``"rolling"`` (sized from the rolling-update plan), ``"drain"`` (a delete
            timeout sized to the drain budget: ``karpenter.pools.drain_delete_minutes``), ``"smoke-test"``, or "".
        source: where the rule comes from.
    """

    type: str
    role: str
    name_property: str
    provider_order: str
    option_order: str
    protect: bool
    retain_on_delete: bool
    deleted_with: str
    timeouts: str
    source: str

    @property
    def delete_before_replace(self) -> bool | None:
        """The ``deleteBeforeReplace`` option to register (``None``: leave it to the provider)."""
        return {"create-first": False, "delete-first": True}.get(self.option_order)


@functools.cache
def table(data_dir: Path = DATA_DIR) -> dict[tuple[str, str], Lifecycle]:
    """Every row, by (type, role)."""
    return {
        (r["type"], r["role"]): Lifecycle(
            type=r["type"],
            role=r["role"],
            name_property=r["name_property"],
            provider_order=r["provider_order"],
            option_order=r["option_order"],
            protect=r["protect"] == "true",
            retain_on_delete=r["retain_on_delete"] == "true",
            deleted_with=r["deleted_with"],
            timeouts=r["timeouts"],
            source=r["source"],
        )
        for r in read_rows(FILE, data_dir)
    }


def deleted_with_allowed(cluster_protected: bool) -> bool:
    """Whether objects may be ``deletedWith`` a cluster: only when it is not ``protect``ed.

    The engine checks ``protect`` only when the cluster's own delete step runs and the executor
    carries on past that error (pulumi/pulumi pkg/resource/deploy/step.go DeleteStep.Apply:
    ``deleteProtectedError``), while every object deleted with it has already been dropped from
    the state without a Delete call (step.go ``isDeletedWith``: the target is among the step
    generator's deletions). A non-interactive destroy would then forget live pools, releases and
    namespaces, and the next ``pulumi up`` fail with ``AlreadyExists``.
    """
    return not cluster_protected


# Remote components whose own ``protect`` every child would inherit (pulumi/pulumi
# sdk/nodejs/resource.ts: ``if (opts.protect === undefined) opts.protect = parent.__protect``),
# so a routine change of an access entry or the OIDC provider would fail ``pulumi up``:
# gpu-infra protects only the child that needs it, by a transform on the component ("Transforms
# support modifying child resources of packaged components (such as those in awsx and eks)",
# https://www.pulumi.com/docs/iac/concepts/resources/options/transformations/).
PROTECTED_CHILD = {"eks:index:Cluster": "aws:eks/cluster:Cluster"}


def legacy_formats(data_dir: Path) -> frozenset[str]:
    """The legacy resource-name formats of a stack deployed by the gpu-infra whose catalog is
    ``data_dir`` (``--old-catalog REF``). Its lifecycle.csv without a row for a protected child
    predates principal-keyed access entries (both came in one change), so that stack still has
    pulumi-eks entries keyed ``entry<j>`` by list position."""
    rows = table(data_dir)
    if any((child, "") not in rows for child in PROTECTED_CHILD.values()):
        return frozenset({POSITIONAL_ACCESS_ENTRIES})
    return frozenset()


def lookup(type_token: str, role: str = "") -> Lifecycle | None:
    """The row for a type in a role (falling back to the type's own row), or ``None``."""
    rows = table()
    return rows.get((type_token, role)) or rows.get((type_token, ""))


def protected(resource: Mapping[str, Any] | None) -> bool:
    """Whether the engine holds ``resource`` (the plan's ``--json`` shape) as protected: its
    ``protect`` option, or the protected child a remote component stands for."""
    if resource is None:
        return False
    if (resource.get("options") or {}).get("protect"):
        return True
    child = PROTECTED_CHILD.get(str(resource.get("type")))
    row = lookup(child) if child else None
    return bool(row and row.protect)


def protect_refusal(op: str, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> str:
    """Why the engine refuses this step for ``protect``; "" when it goes ahead.

    pulumi/pulumi pkg/resource/deploy/step_generator.go: a replace is refused only when the old
    and the new resource are both protected ("we do allow unprotecting and replacing to happen in
    a single update cycle, we don't look at old.Protect here" / ``new.Protect && old.Protect``);
    step.go ``DeleteStep.Apply``: a delete is refused when the old one is (``deleteProtectedError``).
    """
    if op == "replace" and protected(old) and protected(new):
        return "refused while it is protected on both sides (unprotect it in one `pulumi up` first)"
    if op == "delete" and protected(old):
        return "refused while it is protected (`pulumi state unprotect` or drop `protect` first)"
    return ""


def _value(inputs: Mapping[str, Any], dotted: str) -> Any:
    node: Any = inputs
    for key in dotted.split("."):
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def replace_order(
    old: Mapping[str, Any] | None, new: Mapping[str, Any]
) -> tuple[Order, str] | None:
    """The order the engine replaces ``new`` in (resources in the plan's ``--json`` shape), and why.

    ``None`` when the type has no row (a component, or a type the table does not know).
    """
    row = lookup(str(new["type"]))
    if row is None or not row.provider_order:
        return None
    options = new.get("options") or {}
    explicit = options.get("deleteBeforeReplace")
    if explicit is not None:  # the option wins over the provider (step_generator.go)
        order: Order = "delete-first" if explicit else "create-first"
        return order, f"deleteBeforeReplace={str(explicit).lower()} is set"
    inputs = new.get("inputs") or {}
    name = _value(inputs, row.name_property) if row.name_property else None
    if new["type"].startswith("kubernetes:") and new["type"] != "kubernetes:helm.sh/v3:Release":
        before = (old or {}).get("inputs") or {}
        same = all(
            _value(before, p) == _value(inputs, p) for p in ("metadata.name", "metadata.namespace")
        )
        if not same:
            return "create-first", "its name or namespace changes (pulumi-kubernetes Diff)"
    if row.provider_order == "delete-first" and name:
        why = f"{row.name_property} is set by gpu-infra ({row.source.split(' (')[0]})"
        if ((old or {}).get("options") or {}).get("retainOnDelete"):
            return "delete-first", f"{why}; {KEPT_THEN_CREATED}"
        return "delete-first", why
    return "create-first", "the provider's Diff asks for no delete-first"


# The delete half of a replace of a retained resource makes no Delete call: "Deleting a "drop on
# delete" is a no-op" (pulumi/pulumi pkg/resource/deploy/step.go DeleteStep.Apply, on the old
# state's RetainOnDelete, replacing or not), so a delete-first replace keeps the old object and
# then creates one of the same name.
KEPT_THEN_CREATED = (
    "retainOnDelete in the state: the old one is kept, not deleted (the engine makes no Delete "
    "call), then created"
)


def name_collides(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """A create-first replace that keeps a name the provider would have replaced delete-first
    (``provider_order`` delete-first, overridden by gpu-infra's ``deleteBeforeReplace: false``
    because the name hashes every replace cause, infra/core/eks/lifecycle.py): a cause outside the
    hash, such as a replaced node role (``nodeRoleArn``) or launch template (``launchTemplate.id``,
    both ForceNew: hashicorp/terraform-provider-aws internal/service/eks/node_group.go), creates
    the new group under the old one's name, and EKS refuses it ("ResourceInUseException",
    https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateNodegroup.html)."""
    row = lookup(str(new["type"]))
    if row is None or row.provider_order != "delete-first" or not row.name_property:
        return False
    name = _value(new.get("inputs") or {}, row.name_property)
    return name is not None and name == _value(old.get("inputs") or {}, row.name_property)


def replace_phrase(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> str:
    """`` (deleted before its replacement is created: ...)`` or the create-first twin, or ""."""
    found = replace_order(old, new)
    if found is None:
        return ""
    order, why = found
    if KEPT_THEN_CREATED in why:
        return f" (kept, then created: {why})"
    if order == "delete-first":
        return f" (deleted before its replacement is created: {why})"
    return f" (replacement created before the old one is deleted: {why})"


def rolling_timeout_minutes(type_token: str, nodes: int, batch: int) -> int:
    """Custom timeout for a pool's update: one drain budget per batch of nodes, never below the
    provider's default (``PROVIDER_DEFAULT_MINUTES``, ``DRAIN_MINUTES``)."""
    batches = math.ceil(max(nodes, 1) / max(batch, 1))
    return max(PROVIDER_DEFAULT_MINUTES[type_token], batches * DRAIN_MINUTES[type_token])


_ORDER_TEXT = {"create-first": "replacement created first", "delete-first": "deleted first"}


def markdown_table() -> str:
    """The lifecycle table of docs/lifecycle.md: every custom resource type's replace order and options."""
    lines = [
        "| resource type | replaced | protected | on delete |",
        "|---|---|---|---|",
    ]
    for row in table().values():
        if not row.provider_order:
            continue  # components are never replaced themselves
        order = _ORDER_TEXT[row.option_order or row.provider_order]
        if row.option_order and row.option_order != row.provider_order:
            order += " (`deleteBeforeReplace` set)"
        elif row.type.startswith("kubernetes:") and row.name_property == "metadata.name":
            order += " (same name and namespace; created first when either changes)"
        elif row.name_property == "clusterIdentifier":
            order = "only when `clusterIdentifier` changes"
        elif row.name_property and row.provider_order == "delete-first":
            order += f" (`{row.name_property}` is ours)"
        on_delete = "kept (`retainOnDelete`)" if row.retain_on_delete else "deleted"
        if row.role == "team":  # the stack's opt-in: gpuNamespaces[].deleteWithStack
            on_delete += ", deleted with `deleteWithStack: true`"
        if row.deleted_with:
            on_delete += "; with the cluster, when this stack made it unprotected"
        who = f"`{row.type}`" + (f" ({row.role})" if row.role else "")
        lines.append(f"| {who} | {order} | {'yes' if row.protect else 'no'} | {on_delete} |")
    return "\n".join(lines) + "\n"


def provider_replaced(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Whether the engine replaces a Kubernetes provider going from ``old`` to ``new`` inputs.

    As pulumi-kubernetes provider/pkg/provider/provider.go DiffConfig decides: a changed
    ``clusterIdentifier`` replaces; an unchanged one never does; adding or removing it falls back
    to the kubeconfig heuristic ("We don't do this when adding or removing the identifier in order
    to make on- and off-boarding less risky"), approximated here as any change of the kubeconfig,
    context or cluster.
    """
    key = "clusterIdentifier"
    if old.get(key) and new.get(key):
        return old[key] != new[key]
    return any(old.get(k) != new.get(k) for k in ("kubeconfig", "context", "cluster"))
