"""Whether the GPUs the device plugin allocates reach the pod, for the mode the nvidia runtime runs.

The device plugin hands allocated GPUs over in the ways its ``DEVICE_LIST_STRATEGY`` names
(k8s-device-plugin ``internal/plugin/server.go`` ``getAllocateResponse``): ``envvar``
(``NVIDIA_VISIBLE_DEVICES=<ids>``), ``volume-mounts`` (``/dev/null`` mounted at
``/var/run/nvidia-container-devices/<id>``), ``cdi-annotations`` (fully-qualified CDI names under
its ``CDI_ANNOTATION_PREFIX``) and ``cdi-cri`` (the CRI ``CDIDevices`` field). Who reads each
(facts in ``data/gpu_runtime_facts.csv``):

- ``cdi-cri``, and annotations under ``cdi.k8s.io/``: containerd itself, once CDI is on in its
  config (the operator's ``cdi.enabled``: the toolkit's ``CDI_ENABLED=true``), whatever runtime
  runs the pod (container-device-interface ``pkg/cdi`` ``AnnotationPrefix``).
- annotations under another prefix (the operator's v25.3 ``nvidia.cdi.k8s.io/``), mounts and the
  env var: only the nvidia runtime, so only where it runs the pod. In a CDI mode (``cdi``, or
  ``jit-cdi``, the toolkit's ``auto`` default from 1.18) it reads annotations first, then mounts if
  accepted (1.17 only ``cdi/<vendor>/<class>/<device>`` names: fact ``cdi-mount-forms``), then the
  env var if accepted or privileged (toolkit ``internal/modifier/cdi.go`` ``getDevicesFromSpec``
  1.17, ``internal/config/image/cuda_image.go`` ``VisibleDevices`` 1.18+). In ``legacy`` mode (1.17's
  ``auto`` for device IDs: fact ``auto-mode``) it reads mounts (plain IDs) if accepted, then the env
  var, never annotations.

An unknown fact is not a refusal: only a handover every one of whose ways is known to be refused
is reported, and that is an error of the plan, not a guess.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

CDI_MODES = ("cdi", "jit-cdi")
# The annotation prefix containerd's CDI support reads (container-device-interface
# pkg/cdi/annotations.go AnnotationPrefix).
CONTAINERD_PREFIX = "cdi.k8s.io/"
KNOWN_WAYS = frozenset({"envvar", "volume-mounts", "cdi-annotations", "cdi-cri"})


@dataclass(frozen=True, slots=True)
class Decided:
    """One thing that decides visibility: its value (``None``: unknown), who set it, the source."""

    value: Any
    by: str
    source: str

    def to_json(self) -> dict[str, Any]:
        return {"value": self.value, "by": self.by, "source": self.source}


UNKNOWN = Decided(None, "unknown", "")


@dataclass(frozen=True, slots=True, kw_only=True)
class Handover:
    """What decides whether allocated GPUs arrive.

    Attributes:
        strategy: the device plugin's ``DEVICE_LIST_STRATEGY``.
        mode: the mode the nvidia runtime runs for the plugin's requests (``None``: unknown).
        mount_forms: the mount names it reads in a CDI mode (``cdi``, ``cdi plain``).
        prefix: the plugin's CDI annotation prefix.
        accept_envvar, accept_mounts: the toolkit's gates for unprivileged containers.
        nvidia: the nvidia runtime runs the pod (containerd's default, or may be).
        containerd_cdi: containerd injects CDI devices (the operator's ``cdi.enabled``).
    """

    strategy: Decided
    mode: Decided
    mount_forms: Decided
    prefix: Decided
    accept_envvar: Decided
    accept_mounts: Decided
    nvidia: bool
    containerd_cdi: bool


def refusals(h: Handover) -> list[str]:
    """Why each of the plugin's ways fails; empty when one may deliver (or nothing is known)."""
    if h.strategy.value is None:
        return []
    ways = set(str(h.strategy.value).split(","))
    if ways - KNOWN_WAYS:
        return []  # a strategy gpu-infra has no facts on is not gpu-infra's to refuse
    out = [why for way in sorted(ways) if (why := _refused(way, h))]
    return out if len(out) == len(ways) else []


def _refused(way: str, h: Handover) -> str:
    """Why ``way`` does not reach the pod, "" when it may."""
    mode = h.mode.value
    if way == "cdi-cri" or (way == "cdi-annotations" and h.prefix.value == CONTAINERD_PREFIX):
        return "" if h.containerd_cdi else f"{way}: containerd's CDI is off (cdi.enabled false)"
    if not h.nvidia:
        return f"{way}: only the nvidia runtime reads it, and containerd's default is runc"
    if way == "cdi-annotations":
        if mode is None or mode in CDI_MODES:
            return ""
        return (
            f"cdi-annotations under {h.prefix.value}: the nvidia runtime reads them only in CDI "
            f"mode, and it runs {mode} ({h.mode.by}: {h.mode.source})"
        )
    if way == "volume-mounts":
        if h.accept_mounts.value is False:
            return f"volume-mounts: not accepted ({h.accept_mounts.source})"
        forms = str(h.mount_forms.value).split()
        if mode in CDI_MODES and h.mount_forms.value is not None and "plain" not in forms:
            return (
                f"volume-mounts: in {mode} mode the runtime reads only cdi/<vendor>/<class>/"
                f"<device> mounts, the plugin mounts plain device IDs ({h.mount_forms.source})"
            )
        return ""
    if h.accept_envvar.value is False:
        return f"envvar: refused from unprivileged containers ({h.accept_envvar.source})"
    return ""


# Toolkit nri/plugin.go parseCDIDevices: 1.19 serves only pods in NRI_NAMESPACE (the operator
# sets it to the toolkit pod's own namespace: assets/state-container-toolkit/0500_daemonset.yaml).
NRI_OWN_NAMESPACE = "nri-namespace"


def nri_open(scope: Decided) -> str | None:
    """Who gets what through the NRI plugin's annotation, or ``None`` when only the operator's
    namespace (privileged, no team workloads) is served."""
    if scope.value is None or scope.value == NRI_OWN_NAMESPACE:
        return None
    return (
        "a pod in any namespace annotated nvidia.cdi.k8s.io/container.<name>: nvidia.com/gpu=all "
        "(no GPU request, no privilege; Pod Security does not restrict annotations) gets every GPU "
        f"of its node: the toolkit's NRI plugin injects the CDI devices it names ({scope.source})"
    )
