"""Pod Security on team namespaces: the level that keeps out the pods no runtime setting stops.

Privileged containers and ``CAP_SYS_ADMIN`` get ``NVIDIA_VISIBLE_DEVICES`` honoured whatever the
toolkit's gate says, and a ``hostPath`` ``/dev/null`` mounted at
``/var/run/nvidia-container-devices/all`` is a volume-mount request for every GPU where mounts are
accepted (toolkit ``internal/config/image/cuda_image.go`` ``requestsFromMounts``). Pod Security
``baseline`` refuses all three (https://kubernetes.io/docs/concepts/security/pod-security-standards/#baseline),
so gpu-infra enforces it on every team namespace it creates; a Kubeflow Profile's namespace is
labelled by Kubeflow's profile controller, so gpu-infra cannot vouch for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from infra.core.config.stack import StackConfig

_ENFORCE = "pod-security.kubernetes.io/enforce"
# The label Pod Security Admission enforces a level with (see the module docstring for why
# baseline): https://kubernetes.io/docs/concepts/security/pod-security-admission/
TEAM_POD_SECURITY = {_ENFORCE: "baseline"}
HOLDING_LEVELS = ("baseline", "restricted")


@dataclass(frozen=True, slots=True)
class NamespaceGuard:
    """The Pod Security level enforced on one team namespace (``None``: not gpu-infra's)."""

    name: str
    level: str | None
    by: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "podSecurityEnforce": self.level, "by": self.by}


KUBEFLOW_PSS = (
    "the Kubeflow profile controller labels this namespace, not gpu-infra (kubeflow/manifests "
    "applications/profiles/pss enforces baseline)"
)


def namespace_guards(config: StackConfig) -> tuple[NamespaceGuard, ...]:
    """Per ``gpuNamespaces`` entry, the Pod Security level that keeps privileged, CAP_SYS_ADMIN
    and hostPath pods out (users cannot set ``pod-security.kubernetes.io/*`` there:
    ``rules.kubernetes.check_gpu_namespace_labels``)."""
    return tuple(
        NamespaceGuard(ns.name, None, KUBEFLOW_PSS)
        if ns.kubeflow_profile is not None
        else NamespaceGuard(ns.name, TEAM_POD_SECURITY[_ENFORCE], "gpu-infra")
        for ns in config.namespaces
    )


def guard_gaps(guards: Sequence[NamespaceGuard]) -> list[str]:
    """One line per team namespace whose Pod Security gpu-infra cannot vouch for."""
    return [
        f"{g.name}: {g.by}; without at least baseline a privileged pod there sees every GPU of "
        "its node"
        for g in guards
        if g.level not in HOLDING_LEVELS
    ]
