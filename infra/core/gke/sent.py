"""What a GKE plan sends Google Cloud, checked as its receivers check it (``infra.core.sent``), and
the GKE names it creates (owned once, ``infra.core.receivers``)."""

from __future__ import annotations

from collections.abc import Iterator

from infra.core.config.stack import StackConfig
from infra.core.errors import ConfigIssue, join_path
from infra.core.gke.model import GkePlan
from infra.core.rules.limits import limit
from infra.core.sent import Claim, labels_issues, length_issues, pool_key, taint_issues


def receiver_issues(config: StackConfig, gke: GkePlan) -> Iterator[ConfigIssue]:
    """The node service account ID, and every pool's name, labels and taints."""
    if not gke.cluster.existing:
        sa = gke.cluster.node_sa_id
        if not 6 <= len(sa) <= limit("gcp.service_account_id"):
            yield ConfigIssue(
                "cluster.name",
                f"node service account ID {sa!r} is {len(sa)} characters; Google Cloud IAM takes "
                f"6-{limit('gcp.service_account_id')}",
            )
    for p in gke.pools:
        key = pool_key(config, p.name)
        yield from length_issues(
            join_path(key, "name"), p.node_pool, "gke.node_pool_name", "node pool name"
        )
        yield from labels_issues(key, p.labels, config)
        yield from taint_issues(
            join_path(key, "taints"), [(t.key, t.value, t.effect) for t in p.taints]
        )


def claims(config: StackConfig, gke: GkePlan) -> Iterator[Claim]:
    """The node pools the stack creates (one project-wide name space per cluster)."""
    if not gke.cluster.existing:  # infra/components/gke.py: NodePool "system"
        yield Claim("GKE node pool", "system", "cluster.systemPool")
    for p in gke.pools:
        yield Claim("GKE node pool", p.node_pool, pool_key(config, p.name))
