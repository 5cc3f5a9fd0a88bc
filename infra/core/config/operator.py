"""Stack-config schema for ``gpuOperator`` and ``gpuNamespaces``.

Shapes only; rules that need the pools or the pinned
chart's values live in ``infra.core.operator`` and ``infra.core.operator.helm_values``.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator

from infra.core import rules
from infra.core.catalog.pins import pin, pins
from infra.core.config.base import Model, NamespaceName
from infra.core.config.kubernetes import Distribution

# The chart version used when a stack does not name one: pins.csv row gpu-operator (its values
# file is vendored under infra/core/data/gpu-operator/ for key validation).
DEFAULT_OPERATOR_VERSION = pin("gpu-operator").version

# CUDA base image for the nvidia-smi smoke test (pins.csv row cuda-smoke-test): the toolkit refuses
# images whose NVIDIA_REQUIRE_CUDA the node's driver cannot satisfy.
DEFAULT_SMOKE_TEST_IMAGE = pin("cuda-smoke-test").image

GkePreset = Literal["gke-google-driver", "gke-operator-driver"]
EksPreset = Literal["eks-al2023", "eks-bottlerocket"]
# On-prem presets are the distributions themselves (nested Literals flatten).
Preset = Literal[GkePreset, EksPreset, Distribution]

# Environment variable names as the container runtime reads them (POSIX portable names).
_ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"


class GpuOperatorSpec(Model):
    """The NVIDIA GPU Operator Helm release.

    Attributes:
        enabled: install the operator.
        version: chart version with its ``v`` prefix; default ``DEFAULT_OPERATOR_VERSION``.
        preset: platform preset; default chosen from the platform and the pools.
        namespace: the operator's namespace (privileged pod security).
        toolkit_env: ``toolkit.env`` as a mapping, e.g. ``CONTAINERD_CONFIG``,
            ``CONTAINERD_SOCKET``, ``CONTAINERD_RUNTIME_CLASS``, ``CONTAINERD_SET_AS_DEFAULT``; the
            plan maps these onto what the pinned chart honours and passes the rest through.
        values: extra Helm values, merged last; every key must exist in the pinned chart's values.
        timeout: Helm install/upgrade timeout in seconds.
        smoke_test_image: image of the per-pool ``nvidia-smi`` Job (pools opt in with ``smokeTest``).
        cluster_wide: on an existing GKE/EKS cluster, accept that the operator manages every
            NVIDIA GPU node of the cluster, other stacks' and teams' included.
    """

    enabled: bool = True
    version: str = Field(default=DEFAULT_OPERATOR_VERSION, pattern=r"^v[0-9]+\.[0-9]+\.[0-9]+$")
    preset: Preset | None = None
    namespace: rules.OperatorNamespace = "gpu-operator"
    toolkit_env: dict[str, str | bool | int] = Field(default_factory=dict)
    values: dict[str, Any] = Field(default_factory=dict)
    # Helm waits for the operator and NFD pods; image pulls on a fresh cluster take minutes.
    timeout: int = Field(default=900, ge=60, le=3600)
    smoke_test_image: rules.ImageReference = DEFAULT_SMOKE_TEST_IMAGE
    # On an existing GKE/EKS cluster: this stack may manage every NVIDIA GPU node of the cluster
    # (the operator is cluster-wide); without it the operator is refused there.
    cluster_wide: bool = False

    @field_validator("toolkit_env")
    @classmethod
    def _env_names(cls, v: dict[str, str | bool | int]) -> dict[str, str | bool | int]:
        bad = [k for k in v if not re.fullmatch(_ENV_NAME, k)]
        if bad:
            verb = "is not an environment variable name" if len(bad) == 1 else "are not env names"
            raise ValueError(f"{', '.join(map(repr, bad))} {verb} (letters, digits, _)")
        rules.check_toolkit_env(v)
        return v

    @field_validator("values")
    @classmethod
    def _image_values(cls, v: dict[str, Any]) -> dict[str, Any]:
        rules.check_operator_values(v)
        return v


class KubeflowProfileSpec(Model):
    """Make the namespace a Kubeflow ``Profile`` (Kubeflow only serves namespaces it owns).

    Attributes:
        owner: the owner's user id as Kubeflow's auth sees it (an email address).
    """

    owner: str = Field(pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$", max_length=254)


class GpuNamespaceSpec(Model):
    """A namespace for GPU workloads with a GPU ResourceQuota.

    Attributes:
        name: namespace name (created if absent).
        gpus: the most GPUs (or GPU slices: MIG instances, time-sliced replicas) pods in the
            namespace may request at once, per GPU resource name.
        labels: extra namespace labels.
        kubeflow_profile: create a Kubeflow ``Profile`` (with the quota as its
            ``resourceQuotaSpec``) instead of a bare namespace.
        delete_with_stack: delete the namespace (or Profile), and every workload in it, when
            the entry is removed or renamed or the stack destroyed; off: ``retainOnDelete``
            (https://www.pulumi.com/docs/iac/concepts/options/retainondelete/).
    """

    name: NamespaceName
    gpus: int = Field(ge=0, le=100000)
    labels: rules.GpuNamespaceLabels = Field(default_factory=dict)
    kubeflow_profile: KubeflowProfileSpec | None = None
    delete_with_stack: bool = False


# Notebook images offered per JupyterHub profile: CUDA variants of the Jupyter Docker Stacks, pinned
# to a dated build (pins.csv rows jupyter-notebook).
_NOTEBOOKS = pins("jupyter-notebook")
DEFAULT_JUPYTER_IMAGES: tuple[tuple[str, str, str], ...] = (
    ("pytorch", "PyTorch (CUDA 12)", _NOTEBOOKS["pytorch"].image),
    ("tensorflow", "TensorFlow (CUDA)", _NOTEBOOKS["tensorflow"].image),
)


class JupyterImageSpec(Model):
    """One notebook image choice.

    Attributes:
        name: the choice's slug.
        display_name: what the spawn page shows; default: the name.
        image: image reference pinned to a tag other than ``latest`` or to a digest.
    """

    name: NamespaceName
    display_name: str | None = Field(default=None, min_length=1, max_length=100)
    image: rules.ImageReference

    @field_validator("image")
    @classmethod
    def _pinned(cls, v: str) -> str:
        last = v.rsplit("/", 1)[-1]
        if "@sha256:" in v:
            return v
        if ":" not in last or last.endswith(":latest"):
            raise ValueError(
                f"{v!r} is not pinned: give a tag other than latest (or a digest), so every "
                "notebook of a profile runs the same image"
            )
        return v


class JupyterHubSpec(Model):
    """What the generated JupyterHub ``profileList`` offers."""

    images: list[JupyterImageSpec] = Field(
        default_factory=lambda: [
            JupyterImageSpec(name=n, display_name=d, image=i) for n, d, i in DEFAULT_JUPYTER_IMAGES
        ],
        min_length=1,
    )

    @field_validator("images")
    @classmethod
    def _unique(cls, v: list[JupyterImageSpec]) -> list[JupyterImageSpec]:
        names = [i.name for i in v]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"image names must be unique: {', '.join(dup)} repeated")
        return v


class FlyteSpec(Model):
    """Where the generated Flyte objects go."""

    # FlytePropeller looks a runtime PodTemplate up in the execution's namespace, then in its own
    # (flyteorg/flyte docs "Runtime PodTemplates"): the namespace flytepropeller runs in.
    namespace: NamespaceName = "flyte"


class IntegrationsSpec(Model):
    """Settings of the generated workload integrations (``integrations``)."""

    jupyterhub: JupyterHubSpec = Field(default_factory=JupyterHubSpec)
    flyte: FlyteSpec = Field(default_factory=FlyteSpec)
