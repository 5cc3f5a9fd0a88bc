"""The NVIDIA GPU Operator and the in-cluster GPU setup workloads need.

Thin: every value and object comes from ``OperatorPlan`` (``infra.core.operator``). Order:
namespace -> objects the operator's pods need at install (GKE driver installer DaemonSet,
critical-pod quota, device-plugin config) -> Helm release -> GPU namespaces, quotas and opt-in
smoke-test Jobs. The release waits for the cluster's ``ready`` resources and never for GPU node
pools, so it installs while pools sit at zero nodes.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from infra.components.handles import ClusterHandle
from infra.components.helm import Chart, helm_release
from infra.components.lifecycle import with_lifecycle
from infra.core.config.stack import PROJECT
from infra.core.labels import POOL_LABEL
from infra.core.operator import (
    DEVICE_PLUGIN_CONFIGMAP,
    SMOKE_TEST_DEADLINE_SECONDS,
    Manifest,
    NodeLabels,
    OperatorPlan,
)
from infra.core.operator.isolation import summary as isolation_summary
from infra.core.operator.model import SMOKE_TEST_NAMESPACE, ConfigSecret, RegistryAuth
from infra.core.operator.objects import LICENSE_CHECK_LABEL
from infra.core.plan import Plan


class GpuOperator(pulumi.ComponentResource):
    """The operator's namespace and Helm release, plus GPU namespaces and smoke tests.

    Attributes:
        release: the Helm release (``None`` when the plan disables the operator).
        objects: every Kubernetes object created, by ``<kind>/<namespace>/<name>``.
    """

    def __init__(
        self,
        name: str,
        plan: OperatorPlan,
        provider: k8s.Provider,
        ready: Sequence[pulumi.Resource],
        opts: pulumi.ResourceOptions | None = None,
        *,
        owner: pulumi.Resource | None = None,
        pools: Mapping[str, pulumi.Resource] | None = None,
    ) -> None:
        super().__init__("gpu-infra:k8s:GpuOperator", name, None, opts)
        self._owner = owner  # in-cluster objects are deleted with the cluster this stack made
        ours = plan.namespace_object["metadata"]["name"] if plan.namespace_object else ""
        self._own_namespaces = {ours, SMOKE_TEST_NAMESPACE}  # the rest are the teams' ones
        self._deleted_with_stack = plan.deleted_with_stack
        for note in plan.notes:  # config values deliberately not applied, with why
            pulumi.log.warn(note, resource=self)
        self.objects: dict[str, pulumi.CustomResource] = {}
        self.release: k8s.helm.v3.Release | None = None
        base = list(ready)

        def child(
            deps: Sequence[pulumi.Resource], timeouts: pulumi.CustomTimeouts | None = None
        ) -> pulumi.ResourceOptions:
            return pulumi.ResourceOptions(
                parent=self, provider=provider, depends_on=list(deps), custom_timeouts=timeouts
            )

        after_deps: list[pulumi.Resource] = base
        if plan.release is not None and plan.namespace_object is not None:
            ns = self._object(name, plan.namespace_object, child(base))
            before = [self._object(name, m, child([*base, ns])) for m in plan.before_release]
            r = plan.release
            self.release = helm_release(
                f"{name}-release",
                Chart(r.name, r.chart, r.version, r.repository, r.namespace),
                values=r.values,
                create_namespace=False,  # created above with privileged pod security
                timeout=r.timeout,
                # Wait for the operator and NFD pods; the chart's CRD upgrade and cleanup
                # hooks run (helm.v3 keeps hooks, helm.v4.Chart drops them).
                skip_await=False,
                wait_for_jobs=True,
                max_history=5,
                cleanup_on_fail=True,
                # Delete-first: a second install collides on the chart's cluster-scoped objects.
                opts=with_lifecycle(
                    child([*base, ns, *before]),
                    "kubernetes:helm.sh/v3:Release",
                    "gpu-operator",
                    cluster=owner,
                ),
            )
            after_deps = [*base, self.release]
        labelled = [self._label_nodes(name, nl, child(base)) for nl in plan.node_labels]
        self._after_release(name, plan, child, base, after_deps, labelled, pools or {})
        self.register_outputs(
            {
                "release": self.release.name if self.release is not None else None,
                "objects": sorted(self.objects),
            }
        )

    def _after_release(
        self,
        name: str,
        plan: OperatorPlan,
        child: Any,
        base: Sequence[pulumi.Resource],
        after_deps: Sequence[pulumi.Resource],
        labelled: Sequence[Sequence[pulumi.Resource]],
        pools: Mapping[str, pulumi.Resource],
    ) -> None:
        """GPU namespaces and quotas, Kubeflow Profiles and the smoke-test Jobs."""
        # Pulumi waits for the test Job: its deadline plus 10 minutes to see the Job's final state.
        job_timeouts = pulumi.CustomTimeouts(create=f"{SMOKE_TEST_DEADLINE_SECONDS // 60 + 10}m")
        created_ns: dict[str, pulumi.Resource] = {}
        licensed: list[pulumi.Resource] = []  # smoke Jobs proving a licensed vGPU driver
        for m in plan.after_release:
            own_ns = created_ns.get(m["metadata"].get("namespace", ""))
            deps = [*base, *([own_ns] if own_ns is not None else [])]
            if m["kind"] == "Job":
                deps += self._job_deps(m, after_deps, labelled, pools)
                job = self._object(name, m, child(deps, job_timeouts))
                if LICENSE_CHECK_LABEL in m["metadata"].get("labels", {}):
                    licensed.append(job)
            elif m["kind"] == "Profile":  # notebooks land there: after the licensed driver
                self._object(name, m, child([*deps, *licensed]))
            else:
                res = self._object(name, m, child(deps))
                if m["kind"] == "Namespace":
                    created_ns[m["metadata"]["name"]] = res

    @staticmethod
    def _job_deps(
        m: Manifest,
        after_deps: Sequence[pulumi.Resource],
        labelled: Sequence[Sequence[pulumi.Resource]],
        pools: Mapping[str, pulumi.Resource],
    ) -> list[pulumi.Resource]:
        """The test Job needs the operator, scales its GPU pool up and, on operator drivers,
        waits for the build; on-prem it also needs the node labels that select its sharing/MIG
        config. Namespaces and quotas wait for none of these."""
        pool = pools.get(m["metadata"].get("labels", {}).get(POOL_LABEL, ""))
        labels = [p for group in labelled for p in group]
        return [*after_deps, *([pool] if pool is not None else []), *labels]

    def _object(
        self, name: str, m: Manifest, opts: pulumi.ResourceOptions
    ) -> pulumi.CustomResource:
        meta: Mapping[str, Any] = m["metadata"]
        kind = m["kind"]
        opts = self._lifecycle(m, opts)
        key = "/".join(x for x in (kind, meta.get("namespace", ""), meta["name"]) if x)
        # The device-plugin ConfigMap's name carries a hash of its data; its resource name does
        # not, so a sharing change is a create-first replacement of one resource.
        logical = (
            DEVICE_PLUGIN_CONFIGMAP
            if kind == "ConfigMap" and meta["name"].startswith(f"{DEVICE_PLUGIN_CONFIGMAP}-")
            else meta["name"]
        )
        suffix = "-".join(x for x in (_SHORT[kind], meta.get("namespace"), logical) if x)
        rname = f"{name}-{suffix}"
        res: pulumi.CustomResource
        # Manifest metadata keys (name, namespace, labels, annotations) are the same in both spellings.
        if kind == "Job":  # see _lifecycle
            notes = {**meta.get("annotations", {}), REPLACE_UNREADY: "true"}
            meta = {**meta, "annotations": notes}
        metadata = k8s.meta.v1.ObjectMetaArgs(**meta)
        if kind == "Namespace":
            res = k8s.core.v1.Namespace(rname, metadata=metadata, opts=opts)
        elif kind == "ResourceQuota":
            res = k8s.core.v1.ResourceQuota(rname, metadata=metadata, spec=m["spec"], opts=opts)
        elif kind == "ConfigMap":
            res = k8s.core.v1.ConfigMap(rname, metadata=metadata, data=m["data"], opts=opts)
        elif kind == "Secret":  # the vGPU licensing and pull Secrets, values as secret outputs
            data = {k: _secret_value(v) for k, v in m["stringData"].items()}
            res = k8s.core.v1.Secret(
                rname, metadata=metadata, type=m["type"], string_data=data, opts=opts
            )
        elif kind == "DaemonSet":  # Google's GKE driver installer (kube-system)
            res = k8s.apps.v1.DaemonSet(rname, metadata=metadata, spec=m["spec"], opts=opts)
        elif kind == "Job":
            res = k8s.batch.v1.Job(rname, metadata=metadata, spec=m["spec"], opts=opts)
        elif kind == "Profile":  # Kubeflow's CRD: Kubeflow must be installed
            res = k8s.apiextensions.CustomResource(
                rname,
                api_version=m["apiVersion"],
                kind=kind,
                metadata=metadata,
                spec=m["spec"],
                opts=opts,
            )
        else:  # the plan only emits the kinds above
            raise ValueError(f"no mapping for kind {kind}")
        self.objects[key] = res
        return res

    def _lifecycle(self, m: Manifest, opts: pulumi.ResourceOptions) -> pulumi.ResourceOptions:
        """The lifecycle model's options for one object: team namespaces (and the Kubeflow
        Profiles that own theirs) are retained unless their entry sets ``deleteWithStack``; a failed smoke-test Job is replaced on the next
        ``pulumi up`` instead of failing it (``pulumi.com/replaceUnready``, pulumi-kubernetes
        provider.go Diff)."""
        kind = m["kind"]
        team = kind == "Profile" or (
            kind == "Namespace" and m["metadata"]["name"] not in self._own_namespaces
        )
        token = f"kubernetes:{_API[kind]}:{kind}"
        if not team:
            return with_lifecycle(opts, token, cluster=self._owner)
        deleted = m["metadata"]["name"] in self._deleted_with_stack
        return with_lifecycle(
            opts, token, "team", cluster=self._owner, retain_on_delete=False if deleted else None
        )

    def _label_nodes(
        self, name: str, nl: NodeLabels, opts: pulumi.ResourceOptions
    ) -> list[k8s.core.v1.NodePatch]:
        # Server-side apply of labels only. Forced: the operator also writes some of these keys
        # (nvidia.com/mig.config defaults to all-disabled on MIG-capable nodes), and an unforced
        # patch fails on the field-manager conflict ("Conflicts will result in an error by default,
        # but can be forced using the pulumi.com/patchForce annotation": pulumi-kubernetes
        # NodePatch API docs).
        return [
            k8s.core.v1.NodePatch(
                f"{name}-node-{node}",
                metadata=k8s.meta.v1.ObjectMetaPatchArgs(
                    name=node, labels=dict(nl.labels), annotations={PATCH_FORCE: "true"}
                ),
                opts=opts,
            )
            for node in nl.nodes
        ]


def _secret_value(value: Any) -> pulumi.Output[str]:
    """A Secret's value from the stack's Pulumi config secrets: always a secret output, so the
    state keeps it encrypted and ``python -m infra.plan`` shows ``[secret]``."""
    config = pulumi.Config(PROJECT)
    if isinstance(value, ConfigSecret):
        return config.require_secret(value.key)
    if isinstance(value, RegistryAuth):
        user, server = value.username, value.server

        def docker_config(password: str) -> str:
            auth = base64.b64encode(f"{user}:{password}".encode()).decode()
            entry = {"username": user, "password": password, "auth": auth}
            return json.dumps({"auths": {server: entry}}, sort_keys=True)

        return config.require_secret(value.password_key).apply(docker_config)
    raise TypeError(f"a Secret value the plan does not emit: {type(value).__name__}")


PATCH_FORCE = "pulumi.com/patchForce"
REPLACE_UNREADY = "pulumi.com/replaceUnready"
# Type token prefix of each kind (``kubernetes:<apiVersion>:<Kind>``), for the lifecycle model.
_API = {
    "Namespace": "core/v1",
    "ResourceQuota": "core/v1",
    "ConfigMap": "core/v1",
    "Secret": "core/v1",
    "DaemonSet": "apps/v1",
    "Job": "batch/v1",
    "Profile": "kubeflow.org/v1",
}
_SHORT = {
    "Namespace": "ns",
    "ResourceQuota": "quota",
    "ConfigMap": "cm",
    "Secret": "secret",
    "DaemonSet": "ds",
    "Job": "job",
    "Profile": "kfprofile",
}


def build_operator(plan: Plan, cluster: ClusterHandle) -> dict[str, Any]:
    """Install the operator and workload helpers; returns extra stack outputs.

    Outputs: ``gpuOperator`` (release name, chart version, preset, namespace, notes),
    ``gpuIsolation`` (per set of pools, what decides whether a pod sees a GPU it did not request),
    ``jupyterhubProfiles`` (per pool: a ``singleuser.profileList`` entry), ``kubeflow`` (Jupyter
    web app ``spawnerFormDefaults`` and Profiles) and ``flyte`` (``plugins.k8s`` and node labels).
    The operator's per-pool scheduling hints go into the program's ``gpuPools`` output.
    """
    op = plan.operator
    if op is None:
        return {}
    GpuOperator(
        "gpu-operator",
        op,
        provider=cluster.provider,
        ready=cluster.ready,
        owner=cluster.owner,
        pools=cluster.pools,
    )
    outputs: dict[str, Any] = {
        "gpuIsolation": isolation_summary(op.isolation, op.pod_security),
        "jupyterhubProfiles": {k: dict(v) for k, v in op.jupyterhub_profiles.items()},
        "kubeflow": op.integrations.get("kubeflow", {}),
        "flyte": op.integrations.get("flyte", {}),
    }
    if op.release is not None:
        outputs["gpuOperator"] = {
            "release": op.release.name,
            "version": op.release.version,
            "preset": op.preset,
            "namespace": op.release.namespace,
            "notes": list(op.notes),
        }
    return outputs
