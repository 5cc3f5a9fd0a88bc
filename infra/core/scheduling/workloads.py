"""Every pod the plan emits or describes, as its consumer would build it, with the pools it must
land on.

- JupyterHub: KubeSpawner turns a profile's ``kubespawner_override`` into the pod
  (jupyterhub/kubespawner kubespawner/objects.py make_pod: ``node_selector``, ``tolerations``,
  ``extra_resource_limits`` -> container limits, ``mem_guarantee`` -> requests.memory,
  ``extra_pod_config`` merged into the PodSpec);
- Kubeflow: the Jupyter web app sets ``limits[limitsKey] = num``, the toleration group's
  tolerations and the affinity config's affinity (kubeflow/kubeflow
  components/crud-web-apps/jupyter/backend/apps/common/form.py set_notebook_gpus,
  set_notebook_tolerations, set_notebook_affinity);
- Flyte: flytepropeller requests ``gpu-resource-name``, adds ``resource-tolerations`` for it
  (flytek8s/pod_helper.go AddTolerationsForExtendedResources) and, for ``accelerator=``, a
  required node affinity ``gpu-device-node-label In [device]`` plus the partition requirement
  (pod_helper.go ApplyGPUNodeSelectors); a ``pod_template_name`` task starts from the template;
- the plain Kubernetes Pod and Job, the smoke-test Jobs and the warm placeholders, as emitted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from infra.core.labels import POOL_LABEL
from infra.core.operator.model import SMOKE_TEST_NAMESPACE
from infra.core.scheduling.predicates import Obj, Pod, pod_from_spec


@dataclass(frozen=True, slots=True)
class Workload:
    """A pod and where it must land: on every pool of ``pools`` (a pool, or every member of a
    ComputeClass), or with ``any_pool`` on at least one of them."""

    consumer: str
    pod: Pod
    pools: tuple[str, ...]
    any_pool: bool = False
    quota_checked: bool = False  # runs in a GPU namespace, so its quota must admit it


def target_pools(name: str, classes: Mapping[str, Sequence[str]]) -> tuple[str, ...]:
    """The pools a workload target stands for (a pool, or a ComputeClass's members)."""
    if name in classes:  # a class named after its main pool stands for every member
        return tuple(classes[name])
    return (name,)


# JupyterHub's ByteSpecification (jupyterhub/traitlets.py, the type of KubeSpawner's
# mem_guarantee): K, M, G, T are powers of 1024, and KubeSpawner sends the pod the byte count.
_BYTE_UNITS = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def byte_specification(value: object) -> int:
    """A KubeSpawner memory value (``"47249M"``, ``"1.5G"``, a number of bytes) in bytes."""
    text = str(value).strip()
    if text[-1:] in _BYTE_UNITS:
        return int(float(text[:-1]) * _BYTE_UNITS[text[-1]])
    return int(float(text))


def jupyterhub(profiles: Sequence[Obj], resolve: Any) -> list[Workload]:
    out: list[Workload] = []
    for p in profiles:
        o = p["kubespawner_override"]
        guarantee = o.get("mem_guarantee")
        container = {
            "resources": {
                "limits": dict(o.get("extra_resource_limits") or {}),
                "requests": {"memory": str(byte_specification(guarantee))} if guarantee else {},
            }
        }
        spec = {
            **(o.get("extra_pod_config") or {}),
            "nodeSelector": o.get("node_selector") or {},
            "tolerations": o.get("tolerations") or [],
            "containers": [container],
        }
        out.append(
            Workload(
                "jupyterhub", pod_from_spec(f"jupyterhub/{p['slug']}", spec), resolve(p["slug"])
            )
        )
    return out


def kubeflow(doc: Obj, resources: Mapping[str, Sequence[str]], resolve: Any) -> list[Workload]:
    """One notebook per pool option: its toleration group, its affinity, and one of each GPU
    vendor (resource) that option's pools advertise."""
    defaults = doc["spawnerFormDefaults"]
    groups = {g["groupKey"]: g["tolerations"] for g in defaults["tolerationGroup"]["options"]}
    vendors = {v["limitsKey"] for v in defaults["gpus"]["value"]["vendors"]}
    out: list[Workload] = []
    for a in defaults["affinityConfig"]["options"]:
        key = a["configKey"]
        for vendor in resources[key]:
            limits = {vendor: "1"} if vendor in vendors else {}
            spec = {
                "affinity": a["affinity"],
                "tolerations": groups[key],
                "containers": [{"resources": {"limits": limits}}],
            }
            pod = pod_from_spec(f"kubeflow/{key}/{vendor}", spec)
            if not limits:  # the form offers no such vendor: the notebook would get no GPU
                pod = replace(pod, requests={vendor: Fraction(10**9)})
            out.append(Workload("kubeflow", pod, resolve(key), quota_checked=True))
    return out


def flyte(doc: Obj, pool_names: Sequence[str]) -> list[Workload]:
    """A task per pool entry (with its accelerator and partition, or its PodTemplate) and one
    task without accelerator, which must land on one of ``pool_names`` (pools outside any
    ComputeClass)."""
    plugin = doc["pluginsK8s"]
    resource = plugin["gpu-resource-name"]
    tolerations = _resource_tolerations(plugin["resource-tolerations"], resource)
    container = {"resources": {"limits": {resource: "1"}}}
    # Without accelerator, a task lands on any pool it tolerates; a ComputeClass's pools are
    # reached only through the class's PodTemplate (the flyte document says so).
    out: list[Workload] = []
    if pool_names:
        plain = {"tolerations": tolerations, "containers": [container]}
        pod = pod_from_spec("flyte/no-accelerator", plain)
        out.append(Workload("flyte", pod, tuple(pool_names), any_pool=True))
    templates = {t["metadata"]["name"]: t["template"]["spec"] for t in doc["podTemplates"]}
    for name, entry in doc["pools"].items():
        if entry.get("podTemplateName"):
            base = templates[entry["podTemplateName"]]
            spec = {
                **base,
                "tolerations": [*base.get("tolerations", []), *tolerations],
                "containers": [container],
            }
            out.append(
                Workload("flyte", pod_from_spec(f"flyte/{name}", spec), tuple(entry["pools"]))
            )
            continue
        if entry.get("accelerator") is None:  # not selectable by accelerator (a note says so)
            continue
        exprs = [
            {
                "key": plugin["gpu-device-node-label"],
                "operator": "In",
                "values": [entry["accelerator"]],
            }
        ]
        if entry.get("partitionSize"):
            exprs.append(
                {
                    "key": plugin["gpu-partition-size-node-label"],
                    "operator": "In",
                    "values": [entry["partitionSize"]],
                }
            )
        spec = {
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": exprs}]
                    }
                }
            },
            "tolerations": tolerations,
            "containers": [container],
        }
        out.append(Workload("flyte", pod_from_spec(f"flyte/{name}", spec), (name,)))
    return out


def _resource_tolerations(value: Any, resource: str) -> list[Obj]:
    """``resource-tolerations`` in either spelling flytepropeller's config loader accepts: a
    list of one-key maps (Flyte's documented form) or a map."""
    items = value if isinstance(value, list) else [value]
    out: list[Obj] = []
    for item in items:
        out.extend(item.get(resource, []))
    return out


def kubernetes(doc: Obj, resolve: Any) -> list[Workload]:
    out: list[Workload] = []
    for target, manifests in doc.items():
        specs = {
            "pod": manifests["pod"]["spec"],
            "job": manifests["job"]["spec"]["template"]["spec"],
        }
        for kind, spec in specs.items():
            pod = pod_from_spec(f"{kind}/{target}", spec)
            out.append(Workload("kubernetes", pod, resolve(target), quota_checked=True))
    return out


def smoke_tests(after_release: Sequence[Obj]) -> list[Workload]:
    out: list[Workload] = []
    for m in after_release:
        if m["kind"] == "Job" and m["metadata"].get("namespace") == SMOKE_TEST_NAMESPACE:
            pool = m["metadata"]["labels"][POOL_LABEL]
            spec = m["spec"]["template"]["spec"]
            out.append(Workload("smoke-test", pod_from_spec(m["metadata"]["name"], spec), (pool,)))
    return out


def warm(plan: Any) -> list[Workload]:
    """The warm placeholder of each pool (``infra.core.warm``), on every pool it may land on."""
    if plan is None:
        return []
    out: list[Workload] = []
    for t in plan.targets:
        spec = t.deployment["spec"]["template"]["spec"]
        out.append(Workload("warm", pod_from_spec(f"warm/{t.pool}", spec), tuple(t.members)))
    return out
