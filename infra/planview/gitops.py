"""The Argo CD and Flux objects of a GitOps export, and how each exported manifest is applied.

Argo CD Applications (one per chart, one per directory of manifests, their app-of-apps parent)
and Flux HelmRepository / HelmRelease / Kustomization documents, ordered by sync waves and
``dependsOn``: namespaces and ConfigMaps first, then CRD-only releases, the charts, the workloads
that need them, and last the objects Pulumi does not wait for. ``infra.planview.export`` writes
them.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from infra.core.labels import SKIP_AWAIT

# "All resources, including Application and AppProject specs, have to be installed in the Argo CD
# namespace (by default argocd)": https://argo-cd.readthedocs.io/en/stable/operator-manual/declarative-setup/
ARGOCD_NAMESPACE = "argocd"
# flux bootstrap --namespace defaults to flux-system: https://fluxcd.io/flux/cmd/flux_bootstrap/
FLUX_NAMESPACE = "flux-system"
IN_CLUSTER = (
    "https://kubernetes.default.svc"  # Argo CD's name for the cluster it runs in (same page)
)


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9.-]+", "-", text.lower()).strip("-")


# Sync order. Argo CD applies lower sync waves first and waits for them to be healthy
# (https://argo-cd.readthedocs.io/en/stable/user-guide/sync-waves/); Flux applies a Kustomization
# after those in its dependsOn are ready
# (https://fluxcd.io/flux/components/kustomize/kustomizations/#dependencies). Namespaces and
# ConfigMaps (the device plugin's config) go before the charts that use them.
# Waves order the Applications only under a parent Application that holds them (app of apps), and
# the parent waits for a child only if argocd-cm restores the Application health check
# (resource.customizations.health.argoproj.io_Application: "The health assessment of
# argoproj.io/Application CRD has been removed in argocd 1.8",
# https://argo-cd.readthedocs.io/en/stable/operator-manual/health/#argocd-app): the export writes
# the parent (argocd-root/) and docs/review.md shows the setting.
SYNC_WAVE = "argocd.argoproj.io/sync-wave"
WAVE_FIRST, WAVE_MANIFESTS, WAVE_CHARTS, WAVE_WORKLOADS = "-1", "0", "1", "2"
# Objects Pulumi does not wait for (pulumi.com/skipAwait: the warm placeholders, Ready only once a
# GPU node boots, maybe never in a Spot stockout) go in unawaited/, their own Application in the
# last wave, so no other one waits for its health (Argo CD's Deployment health needs the updated
# replicas available: https://argo-cd.readthedocs.io/en/stable/operator-manual/health/), and
# their own Flux Kustomization with wait false and no healthChecks: Ready once applied
# (https://fluxcd.io/flux/components/kustomize/kustomizations/#wait, #health-checks).
WAVE_UNAWAITED = "3"
FIRST_KINDS = ("Namespace", "ConfigMap")
# Workloads that request a resource only the charts bring (nvidia.com/gpu, advertised by the device
# plugin the GPU Operator installs) stay Pending until the charts are up: they go in workloads/, a
# wave after the charts (Flux: a Kustomization that dependsOn the releases).
AFTER_CHARTS_PREFIX = "nvidia.com/"
# Objects the export must never delete when they leave Git or their Application is deleted: Node
# patches label nodes the cluster owns. Argo CD: "argocd.argoproj.io/sync-options: Prune=false"
# and "Delete=false", comma-separated in one annotation
# (https://argo-cd.readthedocs.io/en/stable/user-guide/sync-options/#no-prune-resources and
# #no-resource-deletion); Flux:
# "kustomize.toolkit.fluxcd.io/prune: disabled"
# (https://fluxcd.io/flux/components/kustomize/kustomizations/#prune). Server-side apply, so only
# the labels are owned, not the whole Node (same Argo CD page, "Server-Side Apply").
ARGO_SYNC_OPTIONS = "argocd.argoproj.io/sync-options"
FLUX_PRUNE = "kustomize.toolkit.fluxcd.io/prune"
NEVER_PRUNED = ("Node",)
# Annotations only Pulumi reads (pulumi-kubernetes' Patch resources): meaningless to GitOps tools.
PULUMI_ONLY = ("pulumi.com/patchForce", SKIP_AWAIT, "pulumi.com/timeoutSeconds")
# The Git repository the export is committed to is the user's: a reserved example domain
# (RFC 2606) marks the value to replace.
GIT_REPO_PLACEHOLDER = "https://git.example.com/REPLACE-ME.git"
# flux bootstrap creates a GitRepository named flux-system for the repository it bootstraps
# (https://fluxcd.io/flux/cmd/flux_bootstrap/).
FLUX_GIT_SOURCE = "flux-system"


MANIFESTS_APP = "gpu-infra-manifests"  # file names under argocd/ (the objects: Target.name)
WORKLOADS_APP = "gpu-infra-workloads"
RELEASES_KUSTOMIZATION = "gpu-infra-releases"
UNAWAITED_APP = "gpu-infra-unawaited"
ROOT_APP = "gpu-infra"
# Objects Pulumi keeps when they leave the stack (retainOnDelete: team namespaces, Kubeflow
# Profiles): GitOps must not delete them either when their file leaves Git or their Application is
# deleted. Argo CD and Flux read these annotations from the live object, so once synced with them
# a later export without the object leaves it in place (same sources as NEVER_PRUNED below).
RETAINED_SYNC_OPTIONS = "Prune=false,Delete=false"
# Object names are DNS labels of at most 63 characters where Flux and Argo CD use them as label
# values (Argo CD's app.kubernetes.io/instance tracking label; Flux's kustomize.toolkit.fluxcd.io/
# name): https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#dns-label-names
NAME_LIMIT = 63


@dataclass(frozen=True, slots=True)
class Target:
    """Where an export's Argo CD and Flux objects point and what they are called.

    ``stack`` names every Application, Kustomization, HelmRelease and HelmRepository
    (``gpu-infra-<stack>-<part>``), so the exports of several stacks live in one Argo CD or Flux
    without overwriting each other. ``repo_url`` / ``revision``: the Git repository (and branch,
    tag or commit) the export is committed to. ``destination``: the cluster the Applications
    deploy to, an ``https://`` API server URL (``spec.destination.server``) or a cluster name
    registered in Argo CD (``spec.destination.name``,
    https://argo-cd.readthedocs.io/en/stable/user-guide/application-specification/).
    ``flux_kubeconfig``: a Secret in flux-system holding the target cluster's kubeconfig, for a
    Flux that reconciles a remote cluster (``spec.kubeConfig.secretRef``,
    https://fluxcd.io/flux/components/kustomize/kustomizations/#kubeconfig-remote-clusters).
    """

    stack: str = ""
    repo_url: str = GIT_REPO_PLACEHOLDER
    revision: str = "HEAD"
    destination: str = IN_CLUSTER
    flux_kubeconfig: str | None = None

    def name(self, part: str = "") -> str:
        """``gpu-infra-<stack>-<part>``, cut to 63 characters with a hash of the whole when
        longer, so two long names stay apart."""
        full = slug("-".join(x for x in ("gpu-infra", self.stack, part) if x))
        if len(full) <= NAME_LIMIT:
            return full
        digest = hashlib.sha256(full.encode()).hexdigest()[:8]
        return f"{full[: NAME_LIMIT - 9].rstrip('-.')}-{digest}"

    def argo_destination(self, namespace: str | None = None) -> dict[str, Any]:
        """``spec.destination``: the server URL or the cluster name, and the namespace."""
        key = "server" if self.destination.startswith("https://") else "name"
        return {key: self.destination, **({"namespace": namespace} if namespace else {})}

    def flux_remote(self) -> dict[str, Any]:
        """``spec.kubeConfig`` of a Kustomization or HelmRelease for a remote cluster, or nothing."""
        if not self.flux_kubeconfig:
            return {}
        return {"kubeConfig": {"secretRef": {"name": self.flux_kubeconfig}}}


LOCAL = Target()


# API groups whose CRDs a chart installs: Karpenter's NodePool and EC2NodeClass exist only once the
# karpenter-crd chart is in (aws/karpenter-provider-aws charts/karpenter-crd/templates).
CHART_CRD_GROUPS = ("karpenter.sh/", "karpenter.k8s.aws/")
# Releases that only install the CRDs another release's chart skips (``skipCrds``): they sync
# first, Argo CD a wave before the charts (with the manifests), Flux as the skipping release's
# dependsOn ("install/upgrade in a specific order, taking into account the depends-on
# relationship", https://fluxcd.io/flux/components/helm/helmreleases/#dependencies).
CRD_RELEASES = ("karpenter-crd",)


def needs_charts(manifest: Mapping[str, Any]) -> bool:
    """Whether ``manifest`` requests a resource only the charts provide (``nvidia.com/...``) or is
    of a kind whose CRD a chart installs (``CHART_CRD_GROUPS``)."""
    if str(manifest.get("apiVersion", "")).startswith(CHART_CRD_GROUPS):
        return True

    def walk(node: Any) -> bool:
        if isinstance(node, Mapping):
            for k, v in node.items():
                if k in ("limits", "requests") and isinstance(v, Mapping):
                    if any(str(r).startswith(AFTER_CHARTS_PREFIX) for r in v):
                        return True
                elif walk(v):
                    return True
        elif isinstance(node, list):
            return any(walk(v) for v in node)
        return False

    return walk(manifest.get("spec"))


def not_awaited(manifest: Mapping[str, Any]) -> bool:
    """Whether Pulumi skips waiting for ``manifest`` (so a GitOps tool must not wait either)."""
    notes = (manifest.get("metadata") or {}).get("annotations") or {}
    return str(notes.get(SKIP_AWAIT, "")).lower() == "true"


def gitops_object(manifest: Mapping[str, Any], retained: bool = False) -> dict[str, Any]:
    """A manifest as a GitOps tool should apply it: Pulumi-only annotations removed, sync wave set,
    Node patches never pruned, and an object Pulumi retains (``retained``) never pruned or
    deleted either."""
    m = dict(manifest)
    meta = dict(m.get("metadata") or {})
    notes = {k: v for k, v in (meta.get("annotations") or {}).items() if k not in PULUMI_ONLY}
    if m.get("kind") in FIRST_KINDS:
        notes[SYNC_WAVE] = WAVE_FIRST
    if m.get("kind") in NEVER_PRUNED:
        # Delete=false: deleting the Application leaves the Node (and its labels) in place too.
        notes[ARGO_SYNC_OPTIONS] = "Prune=false,Delete=false,ServerSideApply=true"
        notes[FLUX_PRUNE] = "disabled"
    elif retained:
        notes[ARGO_SYNC_OPTIONS] = RETAINED_SYNC_OPTIONS
        notes[FLUX_PRUNE] = "disabled"
    if notes:
        meta["annotations"] = notes
    else:
        meta.pop("annotations", None)
    m["metadata"] = meta
    return m


def argocd_application(
    rel: Mapping[str, Any],
    namespace_labels: Mapping[str, str] | None = None,
    namespace_exported: bool = False,
    target: Target = LOCAL,
) -> dict[str, Any]:
    """An Argo CD Application installing ``rel`` (a Helm release's inputs), chart version pinned,
    named for ``target``'s stack and deploying to its destination.

    ``namespace_exported``: the release namespace is one of the exported manifests, whose
    Application owns it (labels included): this one then neither creates nor labels it, so one
    Application owns the Namespace. Otherwise ``namespace_labels`` (the Pod Security Admission
    ``privileged`` labels the GPU Operator needs) go in ``managedNamespaceMetadata``, since
    CreateNamespace creates a bare namespace
    (https://argo-cd.readthedocs.io/en/stable/user-guide/sync-options/#namespace-auto-creation).
    """
    options = ["ServerSideApply=true"] if namespace_exported else ["CreateNamespace=true",
                                                                   "ServerSideApply=true"]  # fmt: skip
    policy: dict[str, Any] = {
        "automated": {"prune": True, "selfHeal": True},
        "syncOptions": options,
    }
    if namespace_labels and not namespace_exported:
        policy["managedNamespaceMetadata"] = {"labels": dict(namespace_labels)}
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {
            "name": target.name(rel["name"]),
            "namespace": ARGOCD_NAMESPACE,
            "annotations": {
                SYNC_WAVE: WAVE_MANIFESTS if rel["name"] in CRD_RELEASES else WAVE_CHARTS
            },
        },
        "spec": {
            "project": "default",
            "source": _argo_source(rel),
            "destination": target.argo_destination(rel["namespace"]),
            # Sync on every Git change; create the release namespace; server-side apply, as Pulumi
            # and Helm 3 charts with large CRDs need (kubectl's last-applied annotation caps at
            # 256 KiB). https://argo-cd.readthedocs.io/en/stable/user-guide/auto_sync/ and
            # https://argo-cd.readthedocs.io/en/stable/user-guide/sync-options/
            "syncPolicy": policy,
        },
    }


def manifests_application(
    path: str, name: str = MANIFESTS_APP, wave: str = WAVE_MANIFESTS, target: Target = LOCAL
) -> dict[str, Any]:
    """The Argo CD Application of a directory of manifests (``path`` in the Git repository):
    ``manifests/`` a wave before the charts, ``workloads/`` a wave after them; pruning on, except
    for objects annotated ``Prune=false``. ``name``: the part after ``gpu-infra-<stack>-``."""
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {
            "name": target.name(name.removeprefix("gpu-infra").strip("-")),
            "namespace": ARGOCD_NAMESPACE,
            "annotations": {SYNC_WAVE: wave},
        },
        "spec": {
            "project": "default",
            "source": {"repoURL": target.repo_url, "targetRevision": target.revision, "path": path},
            "destination": target.argo_destination(),
            "syncPolicy": {
                "automated": {"prune": True, "selfHeal": True},
                "syncOptions": ["ServerSideApply=true"],
            },
        },
    }


def root_application(path: str, target: Target = LOCAL) -> dict[str, Any]:
    """The parent Application of ``argocd/`` (app of apps): under it the children's sync waves
    order them (https://argo-cd.readthedocs.io/en/stable/user-guide/sync-waves/). It applies the
    child Applications where Argo CD runs (they live in its namespace), whatever the children's
    destination."""
    app = manifests_application(path, ROOT_APP, target=target)
    del app["metadata"]["annotations"]
    app["spec"]["destination"] = {"server": IN_CLUSTER, "namespace": ARGOCD_NAMESPACE}
    return app


def flux_kustomizations(
    manifests: str | None,
    releases: str | None,
    workloads: str | None = None,
    unawaited: str | None = None,
    target: Target = LOCAL,
) -> list[dict[str, Any]]:
    """Flux Kustomizations for ``manifests/``, the releases and ``workloads/``, each after the one
    before (``dependsOn``); paths in the Git repository of the ``flux-system`` source. Each waits
    for its objects to be ready ("spec.wait ... will wait for all the reconciled resources to be
    ready", https://fluxcd.io/flux/components/kustomize/kustomizations/#wait), so ``dependsOn``
    means the HelmReleases are installed and ready before the workloads apply."""
    docs: list[dict[str, Any]] = []
    previous: str | None = None
    for name, path in (
        (MANIFESTS_APP, manifests),
        (RELEASES_KUSTOMIZATION, releases),
        (WORKLOADS_APP, workloads),
    ):
        if path is None:
            continue
        spec: dict[str, Any] = {
            "interval": "10m",
            "path": path,
            "prune": True,
            "sourceRef": {"kind": "GitRepository", "name": FLUX_GIT_SOURCE},
            "wait": True,
            **target.flux_remote(),
        }
        if previous:
            spec["dependsOn"] = [{"name": previous}]
        previous = _part_name(target, name)
        docs.append(_kustomization(previous, spec))
    if unawaited is not None:
        # After the charts (or manifests), beside the workloads; never waited for.
        after = RELEASES_KUSTOMIZATION if releases else MANIFESTS_APP if manifests else None
        spec = {
            "interval": "10m",
            "path": unawaited,
            "prune": True,
            "sourceRef": {"kind": "GitRepository", "name": FLUX_GIT_SOURCE},
            "wait": False,
            **target.flux_remote(),
            **({"dependsOn": [{"name": _part_name(target, after)}]} if after else {}),
        }
        docs.append(_kustomization(_part_name(target, UNAWAITED_APP), spec))
    return docs


def _part_name(target: Target, constant: str) -> str:
    """``gpu-infra-<stack>-manifests`` for ``MANIFESTS_APP`` (``gpu-infra-manifests``)."""
    return target.name(constant.removeprefix("gpu-infra").strip("-"))


def _kustomization(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": {"name": name, "namespace": FLUX_NAMESPACE},
        "spec": spec,
    }


def chart_source(rel: Mapping[str, Any]) -> tuple[str, str, bool]:
    """``(repository, chart name, is OCI)`` of a release: its ``repositoryOpts.repo`` and chart,
    or, for an OCI chart (``oci://<registry>/<path>/<name>``, no repository: Helm pulls it by
    reference), the reference's parent and last segment."""
    repo = (rel.get("repositoryOpts") or {}).get("repo")
    if repo:
        return repo, rel["chart"], False
    parent, _, chart = rel["chart"].rpartition("/")
    return parent, chart, True


def _argo_source(rel: Mapping[str, Any]) -> dict[str, Any]:
    """The Application's source; an OCI chart as Argo CD's OCI source (``repoURL`` the chart's
    ``oci://`` reference, ``path`` ``.``: https://argo-cd.readthedocs.io/en/stable/user-guide/oci/)."""
    helm: dict[str, Any] = {"releaseName": rel["name"], "valuesObject": rel.get("values") or {}}
    if rel.get("skipCrds"):
        # Another release owns the chart's CRDs (karpenter-crd): Argo CD's helm.skipCrds
        # (https://argo-cd.readthedocs.io/en/stable/user-guide/helm/#helm-skip-crds).
        helm["skipCrds"] = True
    repo, chart, oci = chart_source(rel)
    if oci:
        return {
            "repoURL": rel["chart"],
            "path": ".",
            "targetRevision": rel["version"],
            "helm": helm,
        }
    return {"repoURL": repo, "chart": chart, "targetRevision": rel["version"], "helm": helm}


def flux_documents(
    rel: Mapping[str, Any],
    namespace_exported: bool = False,
    depends_on: Sequence[str] = (),
    target: Target = LOCAL,
) -> list[dict[str, Any]]:
    """A Flux HelmRepository and HelmRelease installing ``rel``, chart version pinned (creating
    the release namespace unless the exported manifests own it), after the releases named in
    ``depends_on``; both named for ``target``'s stack."""
    repo, chart, oci = chart_source(rel)
    repo_name = target.name(slug(repo.split("://", 1)[-1]))
    # An OCI registry is a HelmRepository of type oci
    # (https://fluxcd.io/flux/components/source/helmrepositories/#helm-oci-repository).
    source = {"url": repo, "interval": "1h", **({"type": "oci"} if oci else {})}
    return [
        {
            "apiVersion": "source.toolkit.fluxcd.io/v1",
            "kind": "HelmRepository",
            "metadata": {"name": repo_name, "namespace": FLUX_NAMESPACE},
            "spec": source,
        },
        {
            "apiVersion": "helm.toolkit.fluxcd.io/v2",
            "kind": "HelmRelease",
            "metadata": {"name": target.name(rel["name"]), "namespace": FLUX_NAMESPACE},
            "spec": {
                "interval": "10m",
                "releaseName": rel["name"],
                **target.flux_remote(),
                "targetNamespace": rel["namespace"],
                # Helm's release record defaults to the HelmRelease's own namespace (flux-system),
                # not targetNamespace: keep it beside the release as `helm install -n` does
                # (https://fluxcd.io/flux/components/helm/helmreleases/#storage-namespace).
                "storageNamespace": rel["namespace"],
                "install": {
                    "createNamespace": not namespace_exported,
                    # CRD policy Skip when another release owns the chart's CRDs (karpenter-crd):
                    # https://fluxcd.io/flux/components/helm/helmreleases/#crds
                    **({"crds": "Skip"} if rel.get("skipCrds") else {}),
                },
                **({"upgrade": {"crds": "Skip"}} if rel.get("skipCrds") else {}),
                "chart": {
                    "spec": {
                        "chart": chart,
                        "version": rel["version"],
                        "sourceRef": {
                            "kind": "HelmRepository",
                            "name": repo_name,
                            "namespace": FLUX_NAMESPACE,
                        },
                    }
                },
                "values": rel.get("values") or {},
                **(
                    {"dependsOn": [{"name": target.name(n)} for n in depends_on]}
                    if depends_on
                    else {}
                ),
            },
        },
    ]
