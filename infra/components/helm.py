"""The one way this project installs a Helm chart: ``helm.v3.Release`` from a pinned repository chart."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

import pulumi
import pulumi_kubernetes as k8s


def helm_release(
    name: str,
    *,
    release: str,
    chart: str,
    version: str,
    repo: str,
    namespace: str,
    values: Mapping[str, Any],
    opts: pulumi.ResourceOptions,
    **settings: Any,
) -> k8s.helm.v3.Release:
    """A Helm release of ``chart`` at ``version`` from ``repo``.

    helm.v3.Release (not helm.v4.Chart) because it runs chart hooks and rolls back a failed
    install as a unit. ``settings`` are further ``ReleaseArgs`` fields (``timeout``, ...).
    An OCI chart (``chart`` ``oci://...``) is pulled by that reference and ``repo`` is empty: an
    ``oci://`` repository is refused ("is not a valid chart repository", pulumi/pulumi-kubernetes
    #2334; Release takes the reference as its chart).
    """
    return k8s.helm.v3.Release(
        name,
        k8s.helm.v3.ReleaseArgs(
            name=release,
            chart=chart,
            version=version,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=repo) if repo else None,
            namespace=namespace,
            values=dict(values),
            **settings,
        ),
        opts=opts,
    )


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


def chart_release(
    name: str,
    pinned: PinnedChart,
    *,
    values: Mapping[str, Any],
    opts: pulumi.ResourceOptions,
    **settings: Any,
) -> k8s.helm.v3.Release:
    """``helm_release`` of a plan's ``pinned`` chart."""
    return helm_release(
        name,
        release=pinned.release,
        chart=pinned.chart,
        version=pinned.version,
        repo=pinned.repo,
        namespace=pinned.namespace,
        values=values,
        opts=opts,
        **settings,
    )
