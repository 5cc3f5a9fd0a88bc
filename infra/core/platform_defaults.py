"""Default answers of the platform seam (``infra.core.platform``): what a platform with nothing of
its own to say answers, and what every planned stack answers alike from its config, inherited by
each implementation and overridden where it has one."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from infra.core.catalog.pricing import Prices
    from infra.core.catalog.vendored import Catalog
    from infra.core.config.base import ClusterBase, PoolBase
    from infra.core.config.stack import StackConfig
    from infra.core.errors import ConfigIssue, Issues
    from infra.core.platform import (
        Features,
        NativeSharing,
        NodeMarks,
        NodeRuntime,
        Platform,
        PricedPool,
        ServiceRole,
    )
    from infra.core.platform_cost import Line
    from infra.core.pools import PoolHints
    from infra.core.sent import Claim
    from infra.core.sizing import NodeGroupSizing


class PlatformDefaults:
    """The answers of a platform that has none of its own to give (no cloud objects of its own, no
    autoscaler flags, no cost, no quotas), which each implementation overrides where it has: as
    karpenter-provider-aws's ``DefaultFamily`` gives every AMI family its defaults."""

    __slots__ = ()

    @property
    def offline_assumptions(self) -> tuple[str, ...]:
        return ()

    def deployed_names(self, outputs: Mapping[str, Any] | None) -> Mapping[str, str | None]:
        return {}

    @property
    def kubernetes_version(self) -> str | None:
        return None

    def request_only(self, h: PoolHints) -> str | None:
        return None

    def listed_nodes(self, pool: str) -> tuple[str, ...]:
        return ()

    def native_sharing(self, h: PoolHints, pool: PoolBase) -> NativeSharing | None:
        return None

    def warm_note(self, pools: str) -> str | None:
        return None

    def node_runtime(self, h: PoolHints) -> NodeRuntime | None:
        return None

    def receiver_issues(self) -> Iterator[ConfigIssue]:
        return iter(())

    def namespace_claims(self) -> Iterator[Claim]:
        return iter(())

    def claims(self) -> Iterator[Claim]:
        return iter(())

    def pod_documents(self) -> Iterator[tuple[str, Any]]:
        return iter(())

    @property
    def expendable_cutoff(self) -> int | None:
        return None

    def transition_issues(self, old: StackConfig, issues: Issues) -> None:
        return None

    def legacy_state_issues(self, old: Platform, legacy: frozenset[str], issues: Issues) -> None:
        return None

    def pool_outputs(self, per_pool: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
        return {name: dict(v) for name, v in per_pool.items()}

    @property
    def outputs(self) -> dict[str, Any]:
        return {}

    def priced_pools(self) -> tuple[tuple[PricedPool, ...], PricedPool | None]:
        return (), None

    def cost_lines(self, warm: Mapping[str, int], prices: Prices) -> list[Line]:
        return []

    @property
    def cluster_limits(self) -> tuple[tuple[str, int], ...]:
        return ()

    @property
    def usage_based(self) -> str:
        return ""

    @property
    def system_machine(self) -> str:
        return "-"

    @property
    def system_fixed(self) -> bool:
        return False

    def table_notes(self) -> list[str]:
        return []

    def pool_lines(self) -> list[str]:
        return []

    @property
    def zones_widen(self) -> str | None:
        return None

    def quota_sizings(self, catalog: Catalog, issues: Issues) -> list[NodeGroupSizing]:
        return []

    def limit_groups(self) -> tuple[tuple[str, str, int], ...]:
        return ()

    def node_group_pools(self) -> dict[str, str]:
        return {}

    def node_marks(self) -> tuple[NodeMarks, ...]:
        return ()

    def service_roles(self) -> tuple[ServiceRole, ...]:
        return ()


C = TypeVar("C", bound="ClusterBase")
P = TypeVar("P")
T = TypeVar("T", bound="PlannedPlatform[Any, Any]")


@dataclass(frozen=True, slots=True)
class PlannedPlatform(PlatformDefaults, Generic[C, P]):
    """A stack planned on one platform: its config (whose cluster block is a ``C``), that
    platform's plan of it (``P``), the catalog it was planned against (with the stack's declared
    shapes) and what the platform does for its pools (``features``)."""

    config: StackConfig
    plan: P
    catalog: Catalog = field(compare=False, repr=False)
    features: Features

    @property
    def cluster(self) -> C:
        return self.config.cluster

    @property
    def cluster_name(self) -> str:
        return self.cluster.name

    @property
    def existing(self) -> bool:
        return self.cluster.existing

    def unpinned_zones(self) -> dict[int, tuple[str, ...]]:
        chosen = self.chosen_zones()
        return {
            i: chosen[spec.name]
            for i, spec in enumerate(self.config.pools)
            if spec.zones is None and chosen.get(spec.name)
        }

    def chosen_zones(self) -> dict[str, tuple[str, ...]]:
        """Pool name -> the zones the plan placed it in (none: the platform places nothing)."""
        return {}


def planned_as(platform: Platform, kind: type[T], name: str) -> T:
    """``platform`` as the implementation ``kind`` (platform ``name``) whose components read its
    own plan; any other platform's plan is a TypeError."""
    if not isinstance(platform, kind):
        raise TypeError(f"a {platform.name} plan, not a {name} one")
    return platform
