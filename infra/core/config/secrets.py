"""Stack secrets: top-level config values Pulumi stores encrypted, which the plan holds by name only.

``pulumi config set --secret gpu-infra:<key> ...`` writes ``gpu-infra:<key>: {secure: <ciphertext>}``
into the stack file (pulumi/pulumi ``sdk/go/common/resource/config/object.go`` ``isSecureValue``: a
map of one ``secure`` string); the offline plan reads that mapping and cannot decrypt it, and under
``pulumi up`` the engine hands the program the plaintext with the key listed among the config's
secret keys (``pulumi.runtime.is_config_secret``). Either way the parsed config keeps only a
``SecretRef``: the text reaches nothing but the component that creates the Kubernetes Secret, as a
Pulumi secret output (``pulumi.Config.require_secret``), so ``--json`` and ``--export`` show
``[secret]`` and the state holds it encrypted. A plain value for one of these keys is an error.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

# Key (in the project's namespace) -> what it holds, for the config reference.
SECRET_KEYS: dict[str, str] = {
    "vgpuLicenseConfig": (
        "Pulumi secret: the vGPU guest driver's `gridd.conf` (NVIDIA License System client "
        "settings), for the licensing Secret gpu-infra creates "
        '(`pulumi config set --secret vgpuLicenseConfig -- "$(cat gridd.conf)"`).'
    ),
    "vgpuLicenseToken": (
        "Pulumi secret: the NLS `client_configuration_token.tok`, for the same Secret "
        '(`pulumi config set --secret vgpuLicenseToken -- "$(cat client_configuration_token.tok)"`).'
    ),
    "vgpuRegistryPassword": (
        "Pulumi secret: the password or token of `gpuOperator.vgpu.pullSecret.username` on the "
        "private registry holding the guest driver image, for the pull Secret gpu-infra creates."
    ),
}
# What ``infra.program.engine_config`` puts in place of a secret the engine decrypted: the shape
# the stack file stores, so both routes parse alike and the plaintext never reaches the parser.
FROM_ENGINE = {"secure": "(decrypted by the Pulumi engine)"}


@dataclass(frozen=True, slots=True)
class SecretRef:
    """A config secret by name; its value is read by the component, as a Pulumi secret.

    Attributes:
        key: the config key in the project's namespace (``vgpuLicenseToken``).
    """

    key: str


def is_secure(value: Any) -> bool:
    """Pulumi's stored form of a secret: a mapping of one ``secure`` string."""
    return (
        isinstance(value, Mapping) and set(value) == {"secure"} and isinstance(value["secure"], str)
    )


def secret_refs(given: Mapping[str, Any], add: Callable[[str, str], None]) -> dict[str, SecretRef]:
    """``SecretRef`` per secret key given; a plain value is reported through ``add(key, reason)``
    without repeating it."""
    out: dict[str, SecretRef] = {}
    for key, value in given.items():
        if is_secure(value):
            out[key] = SecretRef(key)
        else:
            add(
                key,
                "must be a Pulumi secret (`pulumi config set --secret "
                f"{key} ...`): a plain value sits in the stack file, the plan and the state in clear",
            )
    return out


def masked(
    config: Mapping[str, Any], is_secret: Callable[[str], bool], project: str
) -> dict[str, Any]:
    """``config`` with every secret key the engine decrypted replaced by ``FROM_ENGINE``."""
    out = dict(config)
    for key in SECRET_KEYS:
        full = f"{project}:{key}"
        if full in out and is_secret(full):
            out[full] = dict(FROM_ENGINE)
    return out
