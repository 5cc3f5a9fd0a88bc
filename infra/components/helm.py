"""The one way this project installs a Helm chart: ``helm.v3.Release`` from a pinned repository chart."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import pulumi
import pulumi_kubernetes as k8s


class PinnedChart(Protocol):
    """A plan's pinned chart: the release name, the chart at its version, from where, and where."""

    @property
    def release(self) -> str: ...
    @property
    def chart(self) -> str: ...
    @property
    def version(self) -> str: ...
    @property
    def repo(self) -> str: ...
    @property
    def namespace(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Chart:
    """A ``PinnedChart`` for a plan that names its parts otherwise."""

    release: str
    chart: str
    version: str
    repo: str
    namespace: str


def helm_release(
    name: str,
    pinned: PinnedChart,
    *,
    values: Mapping[str, Any],
    opts: pulumi.ResourceOptions,
    **settings: Any,
) -> k8s.helm.v3.Release:
    """A Helm release of ``pinned``'s chart at its version from its repository.

    helm.v3.Release (not helm.v4.Chart) because it runs chart hooks and rolls back a failed
    install as a unit. ``settings`` are further ``ReleaseArgs`` fields (``timeout``, ...).
    An OCI chart (``chart`` ``oci://...``) is pulled by that reference and ``repo`` is empty: an
    ``oci://`` repository is refused ("is not a valid chart repository", pulumi/pulumi-kubernetes
    #2334; Release takes the reference as its chart).
    """
    return k8s.helm.v3.Release(
        name,
        k8s.helm.v3.ReleaseArgs(
            name=pinned.release,
            chart=pinned.chart,
            version=pinned.version,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=pinned.repo)
            if pinned.repo
            else None,
            namespace=pinned.namespace,
            values=dict(values),
            **settings,
        ),
        opts=opts,
    )
