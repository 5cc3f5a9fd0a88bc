"""The vGPU driver mode (vSphere VMs with an NVIDIA vGPU): the guest driver image the user builds,
its licensing and pull Secrets, and the chart keys that point the operator's driver at them.

NVIDIA's vGPU install (https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/
install-gpu-operator-vgpu.html): build the driver container from NVIDIA's driver-container sources
with the vGPU guest driver and ``DRIVER_TYPE=vgpu``, push it to a private registry as
``<repository>/driver:<version>-<os>``, create the licensing Secret (``gridd.conf`` and
``client_configuration_token.tok``) and the registry's pull Secret in the operator's namespace,
and install the chart with ``driver.repository``, ``driver.version``, ``driver.imagePullSecrets``
and ``driver.licensingConfig.secretName``. The operator mounts the Secret's two keys into the driver
container (gpu-operator ``controllers/object_controls.go`` ``applyLicensingConfig``; the token only
with ``nlsEnabled``). gpu-infra creates both Secrets from Pulumi secrets before the release (or
names existing ones), so the driver pods never wait on a hand-made Secret.
"""

from __future__ import annotations

from collections.abc import Sequence

from infra.core.config.stack import StackConfig
from infra.core.errors import Issues, join_path
from infra.core.operator.helm_values import Setting, version_tuple
from infra.core.operator.model import MANAGED_BY, ConfigSecret, Manifest, RegistryAuth
from infra.core.pools import PoolHints, PoolSpecs, spec_of

VGPU = "vgpu"
LICENSING_SECRET = "gpu-infra-vgpu-licensing"
PULL_SECRET = "gpu-infra-vgpu-registry"
# The keys the operator mounts from the licensing Secret (gpu-operator internal/consts/consts.go
# VGPULicensingFileName, NLSClientTokenFileName).
GRIDD_CONF, CLIENT_TOKEN = "gridd.conf", "client_configuration_token.tok"
LICENSE_CONFIG_KEY, LICENSE_TOKEN_KEY, REGISTRY_PASSWORD_KEY = (
    "vgpuLicenseConfig",
    "vgpuLicenseToken",
    "vgpuRegistryPassword",
)
# driver.licensingConfig.secretName first exists in chart v25.10.0 (ClusterPolicy
# DriverLicensingConfigSpec.SecretName; v25.3's has configMapName only, which would put the NLS
# token in a ConfigMap, readable to anyone who may read ConfigMaps there).
SECRET_LICENSING_FROM = (25, 10, 0)
# Docker Hub's registry name in a dockerconfigjson (docker/cli config: IndexServer).
DOCKER_HUB = "https://index.docker.io/v1/"


def vgpu_pools(pools: Sequence[PoolHints]) -> list[PoolHints]:
    return [h for h in pools if h.driver == VGPU]


def check_vgpu(
    config: StackConfig, pools: Sequence[PoolHints], specs: PoolSpecs, issues: Issues
) -> None:
    """The vGPU block, its pools and its Pulumi secrets agree (each problem at its key)."""
    spec = config.operator.vgpu
    given = set(config.secrets)
    wanted: set[str] = set()
    if not config.operator.enabled:  # the pools and the block are reported elsewhere
        for key in sorted(given):
            issues.add(key, "would not apply: gpuOperator.enabled is false; remove it")
        return
    if spec is None:
        for h in vgpu_pools(pools):
            i, _ = spec_of(specs, h)
            issues.add(
                join_path("gpuPools", i, "driver"),
                "'vgpu' needs gpuOperator.vgpu: the guest driver image you built and its "
                "licensing and pull Secrets",
            )
    else:
        if not vgpu_pools(pools):
            issues.add("gpuOperator.vgpu", "would not apply: no gpuPools entry has driver: vgpu")
        if version_tuple(config.operator.chart_version) < SECRET_LICENSING_FROM:
            issues.add(
                "gpuOperator.version",
                f"{config.operator.chart_version} reads the vGPU licence from a ConfigMap only "
                "(driver.licensingConfig.configMapName), which would hold the NLS token in clear; "
                "the vGPU mode needs v25.10.0 or later (driver.licensingConfig.secretName)",
            )
        wanted = _wanted_secrets(config, issues)
    for key in sorted(wanted - given):
        issues.add(
            key, f"required: the Pulumi secret {_USES[key]} (`pulumi config set --secret {key}`)"
        )
    for key in sorted(given - wanted):
        issues.add(key, f"would not apply: {_unused_why(config, key)}; remove it")


_USES = {
    LICENSE_CONFIG_KEY: f"gpu-infra puts into the licensing Secret as {GRIDD_CONF}",
    LICENSE_TOKEN_KEY: f"gpu-infra puts into the licensing Secret as {CLIENT_TOKEN}",
    REGISTRY_PASSWORD_KEY: "of gpuOperator.vgpu.pullSecret.username for the pull Secret",
}


def _wanted_secrets(config: StackConfig, issues: Issues) -> set[str]:
    spec = config.operator.vgpu
    assert spec is not None
    wanted: set[str] = set()
    if spec.licensing.existing_secret is None:
        wanted.add(LICENSE_CONFIG_KEY)
        if spec.licensing.nls:
            wanted.add(LICENSE_TOKEN_KEY)
    pull = spec.pull_secret
    if pull is not None and pull.existing_secret is None:
        wanted.add(REGISTRY_PASSWORD_KEY)
        if pull.username is None:
            issues.add(
                "gpuOperator.vgpu.pullSecret.username",
                "required for the pull Secret gpu-infra creates (or name an existingSecret)",
            )
    if pull is not None and pull.existing_secret is not None:
        for key in ("server", "username"):
            if getattr(pull, key) is not None:
                issues.add(
                    f"gpuOperator.vgpu.pullSecret.{key}",
                    "would not apply: pullSecret.existingSecret names the Secret to use; remove it",
                )
    return wanted


def _unused_why(config: StackConfig, key: str) -> str:
    spec = config.operator.vgpu
    if spec is None:
        return "gpuOperator.vgpu is not set"
    if key == REGISTRY_PASSWORD_KEY:
        return "gpuOperator.vgpu.pullSecret is unset or names an existingSecret"
    if key == LICENSE_TOKEN_KEY and spec.licensing.existing_secret is None:
        return "gpuOperator.vgpu.licensing.nls is false, so no client token is mounted"
    return "gpuOperator.vgpu.licensing.existingSecret names the Secret to use"


def vgpu_settings(config: StackConfig) -> list[Setting]:
    """The chart's vGPU keys (checked against the pinned chart's values like every setting)."""
    spec = config.operator.vgpu
    if spec is None:
        return []
    why = "vGPU: the guest driver image you built (NVIDIA install-gpu-operator-vgpu.html)"
    out = [
        Setting("driver.repository", spec.driver_repository, why),
        Setting("driver.version", spec.driver_version, why),
    ]
    if spec.driver_image is not None:
        out.append(Setting("driver.image", spec.driver_image, why))
    licensing = spec.licensing.existing_secret or LICENSING_SECRET
    out.append(
        Setting(
            "driver.licensingConfig.secretName",
            licensing,
            f"vGPU: {GRIDD_CONF} and {CLIENT_TOKEN} for the guest driver ("
            + ("an existing Secret" if spec.licensing.existing_secret else "created by gpu-infra")
            + ")",
        )
    )
    out.append(
        Setting(
            "driver.licensingConfig.nlsEnabled",
            spec.licensing.nls,
            "vGPU: the NVIDIA License System (the client token is mounted only with it)",
        )
    )
    if spec.pull_secret is not None:
        name = spec.pull_secret.existing_secret or PULL_SECRET
        out.append(
            Setting("driver.imagePullSecrets", [name], "vGPU: the private registry's pull Secret")
        )
    return out


def registry_host(repository: str) -> str:
    """The registry a repository names (distribution/reference: a first component with a '.' or
    ':' or ``localhost`` is a host), as a dockerconfigjson keys it."""
    first, _, rest = repository.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        return first
    return DOCKER_HUB


def vgpu_secrets(config: StackConfig, namespace: str) -> list[Manifest]:
    """The Secrets gpu-infra creates in the operator's namespace before the release."""
    spec = config.operator.vgpu
    if spec is None:
        return []
    out: list[Manifest] = []
    meta = {"namespace": namespace, "labels": dict(MANAGED_BY)}
    if spec.licensing.existing_secret is None:
        data: dict[str, object] = {GRIDD_CONF: ConfigSecret(LICENSE_CONFIG_KEY)}
        if spec.licensing.nls:
            data[CLIENT_TOKEN] = ConfigSecret(LICENSE_TOKEN_KEY)
        out.append(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": LICENSING_SECRET, **meta},
                "type": "Opaque",
                "stringData": data,
            }
        )
    pull = spec.pull_secret
    if pull is not None and pull.existing_secret is None and pull.username is not None:
        server = pull.server or registry_host(spec.driver_repository)
        out.append(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": PULL_SECRET, **meta},
                # https://kubernetes.io/docs/concepts/configuration/secret/#docker-config-secrets
                "type": "kubernetes.io/dockerconfigjson",
                "stringData": {
                    ".dockerconfigjson": RegistryAuth(server, pull.username, REGISTRY_PASSWORD_KEY)
                },
            }
        )
    return out
