"""GPU Operator planning: preset, Helm values with reasons, sharing/MIG, tolerations, GPU namespaces,
smoke tests, GPU isolation, the vGPU mode and the per-pool hints workloads need.

Everything is decided here from the stack config, the platform's ``PoolHints`` and what the
platform answers (``infra.core.platform``: presets, features, selectors, node runtimes); the
component (``infra.components.gpu_operator``) only maps the plan onto resources. Modules by concern:
``model`` (types, chart coordinates), ``presets`` (which of the platform's ``Preset`` values serves
the pools; each platform's presets live in its package), ``toolkit``, ``gpu_sharing`` (operator
side of time-slicing/MIG; the neutral facts are ``infra.core.sharing``), ``isolation`` (what decides whether
a pod sees a GPU it did not request, and the settings that close it), ``isolation_table`` (every
supported combination planned, for the docs and tests), ``vgpu`` (guest driver image and Secrets),
``removal`` (what an uninstall does, for ``--diff``), ``values``, ``objects``, ``planner``.
May import: `config`, `catalog` (the runtime facts), `integrations`, `platform`, `platforms` (the
isolation table plans its cases), `observed`, the cross-platform modules (`pools`, `labels`,
`sharing`, `errors`); no platform package, Pulumi or a cloud SDK.
"""

from infra.core.operator.model import (
    PRIVILEGED_PSA,
    SMOKE_TEST_DEADLINE_SECONDS,
    HelmRelease,
    Manifest,
    NodeLabels,
    OperatorPlan,
)
from infra.core.operator.planner import plan_operator
from infra.core.operator.presets import preset_settings
from infra.core.operator.values import render_helm_values
from infra.core.sharing import (
    DEVICE_PLUGIN_CONFIG_LABEL,
    DEVICE_PLUGIN_CONFIGMAP,
    MIG_CONFIG_LABEL,
    nvidia_mig_profiles,
    operator_node_labels,
)

__all__ = [
    "DEVICE_PLUGIN_CONFIGMAP",
    "DEVICE_PLUGIN_CONFIG_LABEL",
    "MIG_CONFIG_LABEL",
    "PRIVILEGED_PSA",
    "SMOKE_TEST_DEADLINE_SECONDS",
    "HelmRelease",
    "Manifest",
    "NodeLabels",
    "OperatorPlan",
    "nvidia_mig_profiles",
    "operator_node_labels",
    "plan_operator",
    "preset_settings",
    "render_helm_values",
]
