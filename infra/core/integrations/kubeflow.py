"""Kubeflow: the Jupyter web app's ``spawnerFormDefaults`` GPU options, per pool, and
Kubeflow ``Profile`` objects for GPU namespaces that Kubeflow must own.

Shapes: kubeflow/kubeflow components/crud-web-apps/jupyter/manifests/base/configs/
spawner_ui_config.yaml (``gpus.value.{num, vendors[{limitsKey, uiName}], vendor}``,
``tolerationGroup.options[{groupKey, displayName, tolerations}]``,
``affinityConfig.options[{configKey, displayName, affinity}]``) and the Profile CRD
(kubeflow/kubeflow components/profile-controller, ``kubeflow.org/v1`` ``spec.owner``,
``spec.resourceQuotaSpec``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from infra.core.pools import GPU_RESOURCE

PROFILE_API_VERSION = "kubeflow.org/v1"
# Kubeflow's own namespace: its platform components run there (kubeflow/manifests
# common/kubeflow-namespace/base/namespace.yaml, Namespace "kubeflow"); a Profile is a user's.
KUBEFLOW_NAMESPACE = "kubeflow"


def _ui_name(resource: str) -> str:
    if resource == GPU_RESOURCE:
        return "NVIDIA"
    if resource.startswith("nvidia.com/mig-"):
        return f"NVIDIA MIG {resource.removeprefix('nvidia.com/mig-')}"
    if resource == f"{GPU_RESOURCE}.shared":
        return "NVIDIA (time-sliced)"
    return resource


def spawner_form_defaults(
    scheduling: Mapping[str, Mapping[str, Any]], warm: Mapping[str, int] | None = None
) -> dict[str, Any]:
    """The GPU part of ``spawnerFormDefaults``: one vendor per GPU resource any pool advertises
    (MIG resources included), and per pool a toleration group and a node-affinity config (its
    name says how many warm nodes the pool keeps ready, ``gpuPools[].warm``)."""
    resources: dict[str, None] = {}
    for hints in scheduling.values():
        resources.update(dict.fromkeys(hints["resourceNames"]))
    tolerations = []
    affinities = []
    for pool, hints in scheduling.items():
        label = f"{pool}: NVIDIA {hints['gpuModel']}"
        if n := (warm or {}).get(pool, 0):
            label += f" ({n} warm node{'s' if n > 1 else ''})"
        tolerations.append(
            {
                "groupKey": pool,
                "displayName": label,
                "tolerations": [dict(t) for t in hints["tolerations"]],
            }
        )
        terms = [
            {"key": k, "operator": "In", "values": [v]}
            for k, v in sorted(hints["nodeSelector"].items())
        ]
        affinities.append(
            {
                "configKey": pool,
                "displayName": label,
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [{"matchExpressions": terms}]
                        }
                    }
                },
            }
        )
    return {
        "gpus": {
            "readOnly": False,
            "value": {
                "num": "none",
                "vendors": [{"limitsKey": r, "uiName": _ui_name(r)} for r in resources],
                "vendor": "",
            },
        },
        "tolerationGroup": {"readOnly": False, "value": "", "options": tolerations},
        "affinityConfig": {"readOnly": False, "value": "", "options": affinities},
    }


def profile(name: str, owner: str, hard: Mapping[str, str]) -> dict[str, Any]:
    """A Kubeflow ``Profile``: the controller creates the namespace, its RBAC and a ResourceQuota
    from ``resourceQuotaSpec``; Kubeflow's apps refuse namespaces no Profile owns."""
    return {
        "apiVersion": PROFILE_API_VERSION,
        "kind": "Profile",
        "metadata": {"name": name},
        "spec": {
            "owner": {"kind": "User", "name": owner},
            "resourceQuotaSpec": {"hard": dict(hard)},
        },
    }


def kubeflow(
    scheduling: Mapping[str, Mapping[str, Any]],
    profiles: Sequence[Mapping[str, Any]],
    warm: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """The ``kubeflow`` integration document (stack output)."""
    return {
        "spawnerFormDefaults": spawner_form_defaults(scheduling, warm),
        "profiles": [dict(p) for p in profiles],
    }
