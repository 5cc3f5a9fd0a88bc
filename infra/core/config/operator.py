"""Stack-config schema for ``gpuOperator`` and ``gpuNamespaces``.

Shapes only; rules that need the pools or the pinned
chart's values live in ``infra.core.operator`` and ``infra.core.operator.helm_values``.
"""

from __future__ import annotations

import re
from typing import Any, Literal, TypeVar

from pydantic import Field, field_validator

from infra.core import rules
from infra.core.config.base import Model, NamespaceName

# What a stack that names none gets is decided against the catalog the plan is built with
# (``infra.core.pinned_defaults``): the chart version of pins.csv row gpu-operator (its values
# file is vendored under infra/core/data/gpu-operator/ for key validation), the CUDA base image of
# row cuda-smoke-test (the toolkit refuses images whose NVIDIA_REQUIRE_CUDA the node's driver
# cannot satisfy) and the notebook images of rows jupyter-notebook.

T = TypeVar("T")
GkePreset = Literal["gke-google-driver", "gke-operator-driver"]
EksPreset = Literal["eks-al2023", "eks-bottlerocket"]
# Which Kubernetes distribution runs containerd on the nodes; it decides where the toolkit finds the
# containerd config and socket (NVIDIA gpu-operator getting-started.html, "Specifying Configuration
# Options for containerd": k3s/RKE2/MicroK8s paths).
Distribution = Literal["containerd", "k3s", "rke2", "microk8s"]
# On-prem presets are the distributions themselves (nested Literals flatten).
Preset = Literal[GkePreset, EksPreset, Distribution]

# Environment variable names as the container runtime reads them (POSIX portable names).
_ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"


# A registry host as image references name it (distribution/reference domain: host[:port]).
_REGISTRY = r"^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::[0-9]+)?$"


class VgpuLicensingSpec(Model):
    """Where the vGPU guest driver finds its licence (``driver.licensingConfig``).

    Attributes:
        existing_secret: a Secret already in the operator's namespace holding ``gridd.conf`` and
            ``client_configuration_token.tok``; ``None``: gpu-infra creates one from the
            ``vgpuLicenseConfig`` and ``vgpuLicenseToken`` Pulumi secrets.
        nls: the NVIDIA License System (``driver.licensingConfig.nlsEnabled``): the token is
            mounted only with it.
    """

    existing_secret: rules.Dns1123Subdomain | None = Field(
        default=None,
        description=(
            "A Secret already in the operator's namespace with keys `gridd.conf` and "
            "`client_configuration_token.tok`; unset: gpu-infra creates one from the "
            "`vgpuLicenseConfig` and `vgpuLicenseToken` Pulumi secrets."
        ),
    )
    nls: bool = Field(
        default=True,
        description=(
            "Licence from the NVIDIA License System (`driver.licensingConfig.nlsEnabled`); the "
            "client configuration token is needed and mounted only with it."
        ),
    )


class VgpuPullSecretSpec(Model):
    """The pull Secret of the private registry holding the guest driver image.

    Attributes:
        existing_secret: a ``kubernetes.io/dockerconfigjson`` Secret already in the operator's
            namespace; ``None``: gpu-infra creates one for ``username`` and the
            ``vgpuRegistryPassword`` Pulumi secret.
        server: the registry host; default: the host of ``driverRepository``.
        username: the registry user.
    """

    existing_secret: rules.Dns1123Subdomain | None = Field(
        default=None,
        description=(
            "A `kubernetes.io/dockerconfigjson` Secret already in the operator's namespace; "
            "unset: gpu-infra creates one for `username` and the `vgpuRegistryPassword` Pulumi "
            "secret."
        ),
    )
    server: str | None = Field(
        default=None,
        pattern=_REGISTRY,
        max_length=253,
        description="The registry host (`host[:port]`); default: the host of `driverRepository`.",
    )
    username: str | None = Field(
        default=None,
        min_length=1,
        max_length=255,
        description="The registry user the created pull Secret logs in as.",
    )


class VgpuSpec(Model):
    """The vGPU driver mode (vSphere VMs with an NVIDIA vGPU): the guest driver image the user
    builds, and its licensing and pull Secrets.

    Attributes:
        driver_repository: registry path of the image (``driver.repository``).
        driver_image: the image name (``driver.image``); default: the chart's (``driver``).
        driver_version: the tag before the OS suffix the operator appends (``driver.version``).
        licensing: where the licence comes from.
        pull_secret: the registry's pull Secret; ``None``: the nodes pull without one.
    """

    driver_repository: rules.ImageRepository = Field(
        description=(
            "Registry path of the vGPU guest driver image you build and push "
            "(`driver.repository`), such as `registry.example.com/nvidia`."
        ),
    )
    driver_image: rules.ImageReference | None = Field(
        default=None,
        description="The image's name (`driver.image`); default: the chart's, `driver`.",
    )
    driver_version: rules.ImageTag = Field(
        description=(
            "The image tag without its OS suffix (`driver.version`): the operator pulls "
            "`<driverRepository>/<driverImage>:<driverVersion>-<os>`, e.g. `-ubuntu22.04`."
        ),
    )
    licensing: VgpuLicensingSpec = Field(
        default_factory=VgpuLicensingSpec,
        description="Where the guest driver's licence comes from.",
    )
    pull_secret: VgpuPullSecretSpec | None = Field(
        default=None,
        description=(
            "The private registry's pull Secret (`driver.imagePullSecrets`); unset: the nodes "
            "pull the image without one."
        ),
    )


class GpuOperatorSpec(Model):
    """The NVIDIA GPU Operator Helm release.

    Attributes:
        enabled: install the operator.
        version: chart version with its ``v`` prefix; ``None``: the catalog's pin (planner).
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
        vgpu: the vGPU driver mode's image and Secrets (pools with ``driver: vgpu``).
    """

    enabled: bool = Field(
        default=True,
        description=(
            "Install NVIDIA's GPU Operator chart; with `false` every other `gpuOperator` key is an "
            "error (it would not apply). EKS without it gets NVIDIA's device plugin chart."
        ),
    )
    version: str | None = Field(
        default=None,
        pattern=r"^v[0-9]+\.[0-9]+\.[0-9]+$",
        description=(
            "Chart version with its `v`: any chart whose `values.yaml` is vendored "
            "(`infra/core/data/gpu-operator/`). Omitted: the version `infra/core/data/pins.csv` "
            "pins (row `gpu-operator`), which a gpu-infra update may move."
        ),
    )
    preset: Preset | None = Field(
        default=None,
        description=(
            "Override the preset chosen from the platform and the pools; one that contradicts "
            "the pools' driver mode is an error."
        ),
    )
    namespace: rules.OperatorNamespace = Field(
        default="gpu-operator",
        description=(
            "The operator's namespace, labelled privileged: never one others share (`default`, "
            "`kube-system`, `kube-public`, `kube-node-lease`)."
        ),
    )
    toolkit_env: dict[str, str | bool | int] = Field(
        default_factory=dict,
        description=(
            "The container toolkit's environment (chart `toolkit.env`) as a mapping: "
            "`CONTAINERD_CONFIG`, `CONTAINERD_SOCKET` (absolute paths), "
            "`CONTAINERD_RUNTIME_CLASS` (becomes `operator.runtimeClass`), "
            "`CONTAINERD_SET_AS_DEFAULT` (not applied on charts from v25.10); only variables "
            "the toolkit installer (`nvidia-ctk-installer`) reads, the others passed as strings; "
            "a config path names a TOML file (`.toml`, `.toml.tmpl`), a socket a `.sock`. "
            "Default: the preset's."
        ),
    )
    values: dict[str, Any] = Field(
        default_factory=dict,
        description=(
            "Helm values for keys gpu-infra does not manage, merged last. A key the pinned chart "
            "lacks, or a path a preset, the pools or `toolkitEnv` set, is an error naming its "
            "owner; a boolean or number default of the chart takes only a boolean or number."
        ),
    )
    # Helm waits for the operator and NFD pods; image pulls on a fresh cluster take minutes.
    timeout: int = Field(
        default=900,
        ge=60,
        le=3600,
        description="Seconds the operator's Helm install or upgrade may take.",
    )
    smoke_test_image: rules.ImageReference | None = Field(
        default=None,
        description=(
            "Image of the `smokeTest` Job. Omitted: the image `pins.csv` pins (row "
            "`cuda-smoke-test`, a CUDA 12.2 base: the newest runtime GKE's default driver R535 "
            "accepts)."
        ),
    )
    # On an existing GKE/EKS cluster: this stack may manage every NVIDIA GPU node of the cluster
    # (the operator is cluster-wide); without it the operator is refused there.
    cluster_wide: bool = Field(
        default=False,
        description=(
            "On an existing GKE/EKS cluster, accept that the operator manages every NVIDIA GPU "
            "node of the cluster, other stacks' included; without it the operator is refused "
            "there (on a shared cluster set `enabled: false` instead)."
        ),
    )

    vgpu: VgpuSpec | None = Field(
        default=None,
        description=(
            "vSphere vGPU: the guest driver image and its licensing and pull Secrets, for pools "
            "with `driver: vgpu` (chart v25.10.0 or later)."
        ),
    )

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

    @property
    def chart_version(self) -> str:
        """``version`` as planned: the stack's, or the catalog's pin (``pinned_defaults``)."""
        return _decided(self.version, "gpuOperator.version")

    @property
    def smoke_image(self) -> str:
        """``smokeTestImage`` as planned: the stack's, or the catalog's pin."""
        return _decided(self.smoke_test_image, "gpuOperator.smokeTestImage")


class KubeflowProfileSpec(Model):
    """Make the namespace a Kubeflow ``Profile`` (Kubeflow only serves namespaces it owns).

    Attributes:
        owner: the owner's user id as Kubeflow's auth sees it (an email address).
    """

    owner: str = Field(
        pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$",
        max_length=254,
        description="The owner's user id as Kubeflow's auth sees it: an email address.",
    )


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

    name: NamespaceName = Field(
        description=(
            "Namespace name (a DNS-1123 label), created if absent; none the cluster or the plan "
            "owns (`default`, `kube-*`, the operator's, `gpu-smoke-test`)."
        )
    )
    gpus: int = Field(
        ge=0,
        le=100000,
        description=(
            "The most GPUs, or slices (MIG instances, time-sliced replicas), its pods may request "
            "at once, per GPU resource name: N of each name the pools may advertise, not N in "
            "total."
        ),
    )
    labels: rules.GpuNamespaceLabels = Field(
        default_factory=dict,
        description="Extra namespace labels; no `pod-security.kubernetes.io/*`.",
    )
    kubeflow_profile: KubeflowProfileSpec | None = Field(
        default=None,
        description=(
            "Create a Kubeflow `Profile` (the quota as its `resourceQuotaSpec`) instead of a bare "
            "namespace: Kubeflow refuses namespaces it does not own."
        ),
    )
    delete_with_stack: bool = Field(
        default=False,
        description=(
            "Delete the namespace (or Profile) and its workloads when the entry is removed or "
            "renamed or the stack destroyed; off: kept (`retainOnDelete`). Switch it in a "
            "`pulumi up` of its own before one that removes or renames the entry."
        ),
    )


# Notebook images offered per JupyterHub profile when a stack names none: CUDA variants of the
# Jupyter Docker Stacks, pinned to a dated build (pins.csv rows jupyter-notebook, by key).
DEFAULT_JUPYTER_CHOICES: tuple[tuple[str, str], ...] = (
    ("pytorch", "PyTorch (CUDA 12)"),
    ("tensorflow", "TensorFlow (CUDA)"),
)


class JupyterImageSpec(Model):
    """One notebook image choice.

    Attributes:
        name: the choice's slug.
        display_name: what the spawn page shows; default: the name.
        image: image reference pinned to a tag other than ``latest`` or to a digest.
    """

    name: NamespaceName = Field(description="The choice's slug, unique in the list.")
    display_name: str | None = Field(
        default=None,
        min_length=1,
        max_length=100,
        description="What the spawn page shows; default: the name.",
    )
    image: rules.ImageReference = Field(
        description="Image reference pinned to a tag other than `latest`, or to a digest."
    )

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

    images: list[JupyterImageSpec] | None = Field(
        default=None,
        min_length=1,
        description=(
            "Notebook image choices of every JupyterHub profile (`profile_options.image`). "
            "Omitted: Jupyter Docker Stacks CUDA images pinned to a dated build (`pins.csv` rows "
            "`jupyter-notebook`)."
        ),
    )

    @field_validator("images")
    @classmethod
    def _unique(cls, v: list[JupyterImageSpec] | None) -> list[JupyterImageSpec] | None:
        names = [i.name for i in v or ()]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"image names must be unique: {', '.join(dup)} repeated")
        return v

    @property
    def choices(self) -> list[JupyterImageSpec]:
        """``images`` as planned: the stack's, or the catalog's pins (``pinned_defaults``)."""
        return _decided(self.images, "integrations.jupyterhub.images")


def _decided(value: T | None, key: str) -> T:
    """A default the planner decides from its catalog, read after that decision."""
    if value is None:
        raise ValueError(f"{key}: asked before the planner decided it")
    return value


class FlyteSpec(Model):
    """Where the generated Flyte objects go."""

    # FlytePropeller looks a runtime PodTemplate up in the execution's namespace, then in its own
    # (flyteorg/flyte docs "Runtime PodTemplates"): the namespace flytepropeller runs in.
    namespace: NamespaceName = Field(
        default="flyte",
        description=(
            "Namespace of the generated Flyte `PodTemplate`s: the one flytepropeller runs in."
        ),
    )


class IntegrationsSpec(Model):
    """Settings of the generated workload integrations (``integrations``)."""

    jupyterhub: JupyterHubSpec = Field(
        default_factory=JupyterHubSpec, description="The generated JupyterHub `profileList`."
    )
    flyte: FlyteSpec = Field(default_factory=FlyteSpec, description="The generated Flyte objects.")
