"""Names a GKE stack creates: node service account, Cloud Router, Cloud NAT, fallback pools.

Pure code. A service account id is unique in the project, and routers are unique per project and
region, so a name derived from the cluster name alone collides when a second stack (another region,
a zonal twin, or a second stack adding pools to one cluster) uses the same cluster name; destroying
either stack would then delete what the other's nodes run as. Every name here carries a short hash of
(stack, location, cluster): deterministic for one stack, different for its copies.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from infra.core.config.gke import FallbackSpec, GkeGpuSpec, ReservationSpec
from infra.core.gke.series import has_built_in_gpus

# Router and RouterNat names: RFC 1035, 1-63 characters (Compute API routers.insert, RouterNat.name).
MAX_GCE_NAME = 63
_HASH_CHARS = 6


@dataclass(frozen=True, slots=True)
class ProjectNames:
    """The names of the project- or region-scoped resources one stack creates."""

    node_sa_id: str
    router: str
    nat: str


def stack_hash(stack: str, location: str, cluster: str) -> str:
    """Six hex digits that tell this stack's resources from another stack's in one project."""
    key = f"{stack}\n{location}\n{cluster}".encode()
    return hashlib.sha256(key).hexdigest()[:_HASH_CHARS]


def project_names(stack: str, location: str, cluster: str) -> ProjectNames:
    """``<cluster[:16]>-<hash>-nodes`` (at most 29 characters), ``<cluster>-<hash>-router``,
    ``<cluster>-<hash>-nat`` (at most 54; cluster names are at most 40)."""
    h = stack_hash(stack, location, cluster)
    base = cluster[:16].rstrip("-")
    return ProjectNames(
        node_sa_id=f"{base}-{h}-nodes",
        router=f"{cluster}-{h}-router",
        nat=f"{cluster}-{h}-nat",
    )


# A user-managed service account's email: "SA_NAME@PROJECT_ID.iam.gserviceaccount.com"
# (https://cloud.google.com/iam/docs/service-account-types#user-managed).
SA_EMAIL_DOMAIN = "iam.gserviceaccount.com"


def node_sa_email(sa_id: str, project: str) -> str:
    """The email of the node service account ``sa_id`` a stack creates in ``project``."""
    return f"{sa_id}@{project}.{SA_EMAIL_DOMAIN}"


def stack_node_account(email: str, cluster: str, project: str) -> bool:
    """Whether ``email`` is the node service account a GKE stack of ``cluster`` creates in
    ``project`` (``project_names``: ``<cluster[:16]>-<6 hex>-nodes``), some stack's or this one's."""
    local, _, domain = email.partition("@")
    base = f"{cluster[:16].rstrip('-')}-"
    h = local.removeprefix(base).removesuffix("-nodes")
    return (
        domain == f"{project}.{SA_EMAIL_DOMAIN}"
        and local == f"{base}{h}-nodes"
        and len(h) == _HASH_CHARS
        and all(c in "0123456789abcdef" for c in h)
    )


# The fallback-pool shape: only properties whose change replaces a node pool anyway
# (hashicorp/terraform-provider-google-beta google-beta/services/container/node_config.go
# schemaNodeConfig guest_accelerator, spot, reservation_affinity, flex_start: ForceNew; see
# infra/core/data/replace_forcing_properties.csv) plus the machine type, which names the shape
# (updated in place since terraform-provider-google 5.10.0, by recreating every node).
# maxNodes and zones update in place and stay out, so editing them never renames a pool.
def fallback_shape(fb: FallbackSpec, data_dir: Path) -> str:
    """A canonical text of a fallback entry's replace-forcing shape (``data_dir``: the plan's
    catalog, whose machine series say which types carry their GPUs built in)."""
    gpu = (fb.gpu or GkeGpuSpec()).model_dump(mode="json", exclude={"driver"})
    # Spelled-out defaults name the same pool: a built-in GPU's type and count follow from the
    # machine type (checked equal when given), an attached GPU's count defaults to 1.
    if has_built_in_gpus(fb.machine_type, data_dir):
        gpu.update(type=None, count=None)
    elif gpu["type"] is not None:
        gpu["count"] = gpu["count"] or 1
    shape = {
        "machineType": fb.machine_type,
        "gpu": gpu,
        "spot": fb.spot,
        "reservation": (fb.reservation or ReservationSpec()).model_dump(mode="json"),
        "flexStart": fb.flex_start.model_dump(mode="json") if fb.flex_start else None,
    }
    return json.dumps(shape, sort_keys=True, separators=(",", ":"))


def fallback_pool_name(pool: str, fb: FallbackSpec, data_dir: Path) -> str:
    """``<pool>-<6 hex of the shape>``: removing or reordering other fallbacks keeps the name,
    so an unchanged pool is never replaced; a changed shape is a new pool (created first)."""
    digest = hashlib.sha256(fallback_shape(fb, data_dir).encode()).hexdigest()[:_HASH_CHARS]
    return f"{pool}-{digest}"


# ComputeClass names GKE owns (about-custom-compute-classes, https://cloud.google.com/kubernetes-
# engine/docs/concepts/about-custom-compute-classes): the built-in classes `autopilot` and
# `autopilot-spot`; names starting with `gke` or `autopilot` are reserved for GKE's own; a class
# named `default` is the cluster's default class, applied to every Pod that selects none
# (https://cloud.google.com/kubernetes-engine/docs/how-to/default-compute-classes).
COMPUTE_CLASS_RESERVED_PREFIXES = ("gke", "autopilot")
COMPUTE_CLASS_CLUSTER_DEFAULT = "default"


def compute_class_name_problem(name: str) -> str | None:
    """Why a pool's ComputeClass (named after the pool) may not be called ``name``, or ``None``."""
    if name == COMPUTE_CLASS_CLUSTER_DEFAULT:
        return (
            f"{name!r} would name the pool's ComputeClass 'default', which GKE applies to every "
            "Pod of the cluster that selects no class; rename the pool"
        )
    prefix = next((p for p in COMPUTE_CLASS_RESERVED_PREFIXES if name.startswith(p)), None)
    if prefix is not None:
        builtin = " (a built-in class)" if name in ("autopilot", "autopilot-spot") else ""
        return (
            f"{name!r} would name the pool's ComputeClass{builtin}: GKE reserves ComputeClass "
            f"names starting with {' or '.join(repr(p) for p in COMPUTE_CLASS_RESERVED_PREFIXES)}; "
            "rename the pool"
        )
    return None
