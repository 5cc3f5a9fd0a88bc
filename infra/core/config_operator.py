"""Stack-config schema for ``gpuOperator`` and ``gpuNamespaces``.

Owned by the GPU Operator work (issue 4).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.core.config_base import Model, NamespaceName


class GpuOperatorSpec(Model):
    """The NVIDIA GPU Operator Helm release."""

    enabled: bool = True
    version: str | None = None  # default: the pinned chart version
    preset: str | None = None  # default: chosen from platform and pools
    values: dict[str, Any] = Field(default_factory=dict)


class GpuNamespaceSpec(Model):
    """A namespace with a GPU ResourceQuota."""

    name: NamespaceName
    gpus: int = Field(ge=0)
