"""The one way this project installs a Helm chart: ``helm.v3.Release`` from a pinned repository chart."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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
