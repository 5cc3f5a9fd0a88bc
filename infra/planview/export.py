"""GitOps export: the Kubernetes side of a stack as files a GitOps repository can hold.

``python -m infra.plan --stack S --export DIR`` writes, from the same mock-engine run as the plan:

- ``DIR/manifests/<kind>-<namespace>-<name>.yaml``: every Kubernetes object the stack creates,
  one per file (no ordinal: removing one renames no other), and ``DIR/manifests/kustomization.yaml``
  listing them in creation order; ``DIR/workloads/`` likewise for objects that request an
  ``nvidia.com/`` resource (GPU smoke tests), which must wait for the charts; ``DIR/unawaited/``
  the objects Pulumi does not wait for (the warm placeholders), in an Application of the last
  wave and a Flux Kustomization with ``wait: false``, so nothing waits for a GPU node to boot;
- ``DIR/helm/<release>.values.yaml``: the values of each Helm release, headed by why each is set;
- ``DIR/argocd/<release>.yaml``: an Argo CD ``Application`` per chart, version pinned, values
  inline (``spec.source.helm.valuesObject``: https://argo-cd.readthedocs.io/en/stable/user-guide/helm/),
  ``DIR/argocd/gpu-infra-manifests.yaml`` and ``gpu-infra-workloads.yaml``, the Applications of
  ``manifests/`` (a sync wave before the charts) and ``workloads/`` (a wave after), and
  ``DIR/argocd-root/gpu-infra.yaml``, their parent (app of apps), under which the waves act;
- ``DIR/flux/releases/<release>.yaml``: a Flux ``HelmRepository`` and ``HelmRelease`` per chart,
  version pinned, values inline (https://fluxcd.io/flux/components/helm/helmreleases/), and
  ``DIR/flux/gpu-infra.yaml``: Flux ``Kustomization``s for ``manifests/``, the releases and
  ``workloads/``, each depending on the one before;
- ``DIR/.gpu-infra-export.json``: the files this export wrote. The export owns ``DIR``: it refuses
  a non-empty directory without that file, and a re-export deletes the files the last one listed
  first, so an object removed from the stack leaves no file for Argo CD or Flux to keep applying.

Cloud resources (clusters, node pools, IAM) stay with Pulumi; only in-cluster objects are exported.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from infra.core.diff import HELM_RELEASE
from infra.planview.export_secrets import NOTE_FILE, holds_secret, secrets_note

# "All resources, including Application and AppProject specs, have to be installed in the Argo CD
# namespace (by default argocd)": https://argo-cd.readthedocs.io/en/stable/operator-manual/declarative-setup/
ARGOCD_NAMESPACE = "argocd"
# flux bootstrap --namespace defaults to flux-system: https://fluxcd.io/flux/cmd/flux_bootstrap/
FLUX_NAMESPACE = "flux-system"
IN_CLUSTER = (
    "https://kubernetes.default.svc"  # Argo CD's name for the cluster it runs in (same page)
)


class _Dumper(yaml.SafeDumper):
    """Block-style YAML that keeps the key order :func:`canonical` gives."""


def _str(dumper: yaml.SafeDumper, s: str) -> yaml.Node:
    style = "|" if "\n" in s else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", s, style=style)


_Dumper.add_representer(str, _str)


# Keys written first, in this order, as Kubernetes documents and kubectl show them; every other
# key follows sorted. The recording's key order is not stable from run to run (the engine passes
# inputs as protobuf Structs, whose maps have no order), and an export must be byte-identical for
# an unchanged stack or every re-export is a Git diff.
FIRST_KEYS = ("apiVersion", "kind", "metadata", "name", "namespace")


def canonical(doc: Any) -> Any:
    """``doc`` with every mapping's keys in a fixed order: :data:`FIRST_KEYS` first, the rest
    sorted; list order is kept (it is meaningful: env, containers, resources)."""
    if isinstance(doc, Mapping):
        first = [k for k in FIRST_KEYS if k in doc]
        rest = sorted((k for k in doc if k not in FIRST_KEYS), key=str)
        return {k: canonical(doc[k]) for k in first + rest}
    if isinstance(doc, list | tuple):
        return [canonical(v) for v in doc]
    return doc


def dump(doc: Any) -> str:
    """YAML text of one document, keys in :func:`canonical` order."""
    return yaml.dump(canonical(doc), Dumper=_Dumper, sort_keys=False, default_flow_style=False)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9.-]+", "-", text.lower()).strip("-")


def kubernetes_objects(resources: list[Any]) -> list[dict[str, Any]]:
    """The manifests of every plain Kubernetes object in a recording, in registration order."""
    out = []
    for r in resources:
        is_object = r.type.startswith("kubernetes:") and r.type != HELM_RELEASE and r.custom
        if is_object and "kind" in r.inputs and "apiVersion" in r.inputs:
            out.append(dict(r.inputs))
    return out


def helm_releases(resources: list[Any]) -> list[dict[str, Any]]:
    """The inputs of every Helm release in a recording."""
    return [dict(r.inputs) for r in resources if r.type == HELM_RELEASE]


def _reasons(plan: Any, release_name: str) -> Mapping[str, str]:
    op = plan.operator
    if op is not None and op.release is not None and op.release.name == release_name:
        return op.release.reasons
    return {}


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
SKIP_AWAIT = "pulumi.com/skipAwait"
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
PULUMI_ONLY = ("pulumi.com/patchForce", "pulumi.com/skipAwait", "pulumi.com/timeoutSeconds")
# The Git repository the export is committed to is the user's: a reserved example domain
# (RFC 2606) marks the value to replace.
GIT_REPO_PLACEHOLDER = "https://git.example.com/REPLACE-ME.git"
# flux bootstrap creates a GitRepository named flux-system for the repository it bootstraps
# (https://fluxcd.io/flux/cmd/flux_bootstrap/).
FLUX_GIT_SOURCE = "flux-system"
OWNER_FILE = ".gpu-infra-export.json"
MANIFESTS_APP = "gpu-infra-manifests"
WORKLOADS_APP = "gpu-infra-workloads"
RELEASES_KUSTOMIZATION = "gpu-infra-releases"
UNAWAITED_APP = "gpu-infra-unawaited"
ROOT_APP = "gpu-infra"


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


def gitops_object(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """A manifest as a GitOps tool should apply it: Pulumi-only annotations removed, sync wave set,
    Node patches never pruned."""
    m = dict(manifest)
    meta = dict(m.get("metadata") or {})
    notes = {k: v for k, v in (meta.get("annotations") or {}).items() if k not in PULUMI_ONLY}
    if m.get("kind") in FIRST_KINDS:
        notes[SYNC_WAVE] = WAVE_FIRST
    if m.get("kind") in NEVER_PRUNED:
        # Delete=false: deleting the Application leaves the Node (and its labels) in place too.
        notes[ARGO_SYNC_OPTIONS] = "Prune=false,Delete=false,ServerSideApply=true"
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
) -> dict[str, Any]:
    """An Argo CD Application installing ``rel`` (a Helm release's inputs), chart version pinned.

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
            "name": rel["name"],
            "namespace": ARGOCD_NAMESPACE,
            "annotations": {
                SYNC_WAVE: WAVE_MANIFESTS if rel["name"] in CRD_RELEASES else WAVE_CHARTS
            },
        },
        "spec": {
            "project": "default",
            "source": _argo_source(rel),
            "destination": {"server": IN_CLUSTER, "namespace": rel["namespace"]},
            # Sync on every Git change; create the release namespace; server-side apply, as Pulumi
            # and Helm 3 charts with large CRDs need (kubectl's last-applied annotation caps at
            # 256 KiB). https://argo-cd.readthedocs.io/en/stable/user-guide/auto_sync/ and
            # https://argo-cd.readthedocs.io/en/stable/user-guide/sync-options/
            "syncPolicy": policy,
        },
    }


def manifests_application(
    path: str, name: str = MANIFESTS_APP, wave: str = WAVE_MANIFESTS
) -> dict[str, Any]:
    """The Argo CD Application of a directory of manifests (``path`` in the Git repository):
    ``manifests/`` a wave before the charts, ``workloads/`` a wave after them; pruning on, except
    for objects annotated ``Prune=false``."""
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": name, "namespace": ARGOCD_NAMESPACE, "annotations": {SYNC_WAVE: wave}},
        "spec": {
            "project": "default",
            "source": {"repoURL": GIT_REPO_PLACEHOLDER, "targetRevision": "HEAD", "path": path},
            "destination": {"server": IN_CLUSTER},
            "syncPolicy": {
                "automated": {"prune": True, "selfHeal": True},
                "syncOptions": ["ServerSideApply=true"],
            },
        },
    }


def root_application(path: str) -> dict[str, Any]:
    """The parent Application of ``argocd/`` (app of apps): under it the children's sync waves
    order them (https://argo-cd.readthedocs.io/en/stable/user-guide/sync-waves/)."""
    app = manifests_application(path, ROOT_APP)
    del app["metadata"]["annotations"]
    return app


def flux_kustomizations(
    manifests: str | None,
    releases: str | None,
    workloads: str | None = None,
    unawaited: str | None = None,
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
        }
        if previous:
            spec["dependsOn"] = [{"name": previous}]
        previous = name
        docs.append(_kustomization(name, spec))
    if unawaited is not None:
        # After the charts (or manifests), beside the workloads; never waited for.
        after = RELEASES_KUSTOMIZATION if releases else MANIFESTS_APP if manifests else None
        spec = {
            "interval": "10m",
            "path": unawaited,
            "prune": True,
            "sourceRef": {"kind": "GitRepository", "name": FLUX_GIT_SOURCE},
            "wait": False,
            **({"dependsOn": [{"name": after}]} if after else {}),
        }
        docs.append(_kustomization(UNAWAITED_APP, spec))
    return docs


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
    rel: Mapping[str, Any], namespace_exported: bool = False, depends_on: Sequence[str] = ()
) -> list[dict[str, Any]]:
    """A Flux HelmRepository and HelmRelease installing ``rel``, chart version pinned (creating
    the release namespace unless the exported manifests own it), after the HelmReleases named in
    ``depends_on``."""
    repo, chart, oci = chart_source(rel)
    repo_name = _slug(repo.split("://", 1)[-1])[:63].strip("-.")
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
            "metadata": {"name": rel["name"], "namespace": FLUX_NAMESPACE},
            "spec": {
                "interval": "10m",
                "releaseName": rel["name"],
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
                **({"dependsOn": [{"name": n} for n in depends_on]} if depends_on else {}),
            },
        },
    ]


# Kinds whose physical name Pulumi derives from the logical name plus a random suffix when the
# name input is absent ("Pulumi auto-names most resources by default, using the logical name and a
# random suffix", https://www.pulumi.com/docs/iac/concepts/resources/names/#autonaming): token ->
# the inputs that name it explicitly.
AUTONAMED_KINDS: dict[str, tuple[str, ...]] = {
    "aws:iam/role:Role": ("name", "namePrefix"),
    "aws:iam/policy:Policy": ("name", "namePrefix"),
    "aws:iam/instanceProfile:InstanceProfile": ("name", "namePrefix"),
    "aws:ec2/launchTemplate:LaunchTemplate": ("name", "namePrefix"),
    "aws:ec2/securityGroup:SecurityGroup": ("name", "namePrefix"),
    "aws:ec2/placementGroup:PlacementGroup": ("name",),
    "aws:sqs/queue:Queue": ("name", "namePrefix"),
    "aws:cloudwatch/eventRule:EventRule": ("name", "namePrefix"),
    "aws:eks/nodeGroup:NodeGroup": ("nodeGroupName", "nodeGroupNamePrefix"),
}


def autonamed(resources: list[Any]) -> dict[str, str]:
    """Logical name -> kind of every resource registered without a name input of an autonamed
    kind: the real name is that logical name plus ``-`` and 7 random characters."""
    found: dict[str, str] = {}
    for r in resources:
        keys = AUTONAMED_KINDS.get(r.type)
        name = getattr(r, "name", None)
        if keys is not None and name and not any(r.inputs.get(k) for k in keys):
            found[name] = r.type.rsplit(":", 1)[-1]
    return found


def autonamed_in(text: str, names: Mapping[str, str]) -> list[str]:
    """The autonamed logical names ``text`` holds as a whole value (not inside a longer name)."""
    return sorted(
        n for n in names if re.search(r"(?<![\w.-])" + re.escape(n) + r"(?![\w.-])", text)
    )


def placeholder_header(text: str, names: Mapping[str, str] | None = None) -> str:
    """A warning header when ``text`` holds values only the mock engine made up (ARNs, endpoints)
    or the logical name of a resource Pulumi autonames (``names``: logical name -> kind)."""
    from infra.mockengine import MOCK_ACCOUNT, MOCK_ENDPOINT

    found = [m for m in (MOCK_ACCOUNT, MOCK_ENDPOINT, "MOCK000") if m in text]
    head = ""
    if found:
        head = (
            "# PLACEHOLDERS: this file holds values the offline plan's mock engine made up ("
            + ", ".join(found)
            + "); take the real ones from `pulumi stack output` / the cloud before committing "
            "it.\n"
        )
    for n in autonamed_in(text, names or {}):
        head += (
            f"# PLACEHOLDERS: {n} is the logical name of a {(names or {})[n]} Pulumi autonames: "
            "Pulumi adds a random 7-character suffix; take the real name from the stack "
            "(`pulumi stack export`) or the console.\n"
        )
    if GIT_REPO_PLACEHOLDER in text:
        head += (
            f"# PLACEHOLDERS: set {GIT_REPO_PLACEHOLDER} to the URL of the Git repository this "
            "directory is committed to, and the path to the directory's path in it.\n"
        )
    return head


def manifest_file_name(manifest: Mapping[str, Any]) -> str:
    """``<kind>-<namespace>-<name>.yaml``: the object's identity, no ordinal, so removing one object
    renames no other file (the order lives in kustomization.yaml and the sync waves)."""
    meta = manifest.get("metadata") or {}
    parts = [manifest["kind"], meta.get("namespace") or "", meta.get("name") or "object"]
    return f"{_slug('-'.join(p for p in parts if p))}.yaml"


def _manifest_dir(files: dict[str, str], directory: str, objects: list[dict[str, Any]]) -> None:
    """``directory/<object>.yaml`` per object and ``directory/kustomization.yaml`` listing them in
    creation order (https://kubectl.docs.kubernetes.io/references/kustomize/kustomization/resource/)."""
    names: list[str] = []
    for m in objects:
        name = manifest_file_name(m)
        stem, n = name.removesuffix(".yaml"), 2
        while name in names:  # same kind, namespace and slugged name: keep both, stably
            name, n = f"{stem}-{n}.yaml", n + 1
        names.append(name)
        files[f"{directory}/{name}"] = dump(m)
    kustomization = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": names,
    }
    files[f"{directory}/kustomization.yaml"] = dump(kustomization)


def export_files(plan: Any, recording: Any, repo_path: str) -> dict[str, str]:
    """Every file of the export: path under the directory -> text (``repo_path``: the directory's
    path in the Git repository, for the Argo CD and Flux objects that point at it)."""
    files: dict[str, str] = {}
    raw = kubernetes_objects(recording.resources)
    left_out = [m for m in raw if holds_secret(m)]  # Pulumi-secret values: never written out
    raw = [m for m in raw if not holds_secret(m)]
    if (note := secrets_note(left_out, plan)) is not None:
        files[NOTE_FILE] = note
    unawaited = [gitops_object(m) for m in raw if not_awaited(m)]
    objects = [gitops_object(m) for m in raw if not not_awaited(m)]
    early = [m for m in objects if not needs_charts(m)]
    late = [m for m in objects if needs_charts(m)]
    dirs = {"manifests": early, "workloads": late, "unawaited": unawaited}
    apps = {
        "manifests": (MANIFESTS_APP, WAVE_MANIFESTS),
        "workloads": (WORKLOADS_APP, WAVE_WORKLOADS),
        "unawaited": (UNAWAITED_APP, WAVE_UNAWAITED),
    }
    for directory, found in dirs.items():
        if found:
            _manifest_dir(files, directory, found)
            name, wave = apps[directory]
            app = manifests_application(f"{repo_path}/{directory}", name, wave)
            files[f"argocd/{name}.yaml"] = dump(app)
    namespaces = {
        (m.get("metadata") or {}).get("name"): (m.get("metadata") or {}).get("labels") or {}
        for m in early
        if m.get("kind") == "Namespace"
    }
    releases = helm_releases(recording.resources)
    for rel in releases:
        name, ns = rel["name"], rel["namespace"]
        files[f"helm/{name}.values.yaml"] = _values_file(plan, rel)
        app = argocd_application(rel, namespaces.get(ns), namespace_exported=ns in namespaces)
        files[f"argocd/{name}.yaml"] = dump(app)
        crds = (
            [r["name"] for r in releases if r["name"] in CRD_RELEASES]
            if rel.get("skipCrds")
            else []
        )
        flux = flux_documents(rel, namespace_exported=ns in namespaces, depends_on=crds)
        files[f"flux/releases/{name}.yaml"] = "---\n".join(dump(d) for d in flux)
    if any(f.startswith("argocd/") for f in files):
        files[f"argocd-root/{ROOT_APP}.yaml"] = dump(root_application(f"{repo_path}/argocd"))
    flux = flux_kustomizations(
        f"./{repo_path}/manifests" if early else None,
        f"./{repo_path}/flux/releases" if releases else None,
        f"./{repo_path}/workloads" if late else None,
        f"./{repo_path}/unawaited" if unawaited else None,
    )
    if flux:
        files["flux/gpu-infra.yaml"] = "---\n".join(dump(d) for d in flux)
    names = autonamed(recording.resources)
    return {path: placeholder_header(text, names) + text for path, text in files.items()}


def _values_file(plan: Any, rel: Mapping[str, Any]) -> str:
    name = rel["name"]
    reasons = _reasons(plan, name)
    # --create-namespace: "if --install is set, create the release namespace if not present"
    # (https://helm.sh/docs/helm/helm_upgrade/).
    repo, chart, oci = chart_source(rel)
    where = rel["chart"] if oci else f"{chart} --repo {repo}"
    head = [
        f"# Helm values for release {name}: chart {chart} {rel['version']} from "
        f"{repo}, namespace {rel['namespace']}.",
        f"# helm upgrade --install {name} {where}"
        f" --version {rel['version']} --namespace {rel['namespace']} --create-namespace"
        f" -f {name}.values.yaml",
    ]
    if reasons:
        head.append("# Why each value is set:")
        head.extend(f"#   {path}: {why}" for path, why in reasons.items())
    else:
        head.append("# Every value is the chart's default or set from the stack file.")
    return "\n".join(head) + "\n" + dump(rel.get("values") or {})


def repo_path_of(out_dir: Path) -> str:
    """The export directory's path as the Argo CD / Flux objects name it: as given when relative
    (run from the repository's root), else its name."""
    text = out_dir.as_posix().removeprefix("./").rstrip("/")
    return text if not out_dir.is_absolute() and text not in ("", ".") else out_dir.name or "."


def _owned(out_dir: Path) -> list[str]:
    """The files the last export into ``out_dir`` wrote.

    Raises:
        ConfigErrors: ``out_dir`` holds files and no export manifest (not ours to replace).
    """
    from infra.core.errors import ConfigErrors, ConfigIssue

    owner = out_dir / OWNER_FILE
    if owner.is_file():
        doc = json.loads(owner.read_text(encoding="utf-8"))
        files = [f for f in doc.get("files", []) if isinstance(f, str)]
        # Only paths inside the directory: a hand-edited list never deletes outside it.
        return [f for f in files if not Path(f).is_absolute() and ".." not in Path(f).parts]
    if any(out_dir.iterdir()):
        raise ConfigErrors(
            [
                ConfigIssue(
                    "--export",
                    f"{out_dir} is not empty and has no {OWNER_FILE}: the export owns its "
                    "directory (it deletes what its last run wrote); choose a new or empty one",
                )
            ]
        )
    return []


def export(plan: Any, recording: Any, out_dir: Path) -> list[str]:
    """Write the export under ``out_dir``; returns one line per file written or removed.

    Raises:
        ConfigErrors: ``out_dir`` is not empty and was not written by an export.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    previous = _owned(out_dir)
    files = export_files(plan, recording, repo_path_of(out_dir))
    lines: list[str] = []
    for rel in previous:
        path = out_dir / rel
        if path.is_file():
            path.unlink()
            if rel not in files:
                lines.append(f"removed {path}")
    _prune_empty_dirs(out_dir, previous)
    for rel, text in files.items():
        path = out_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        lines.append(f"wrote {path}")
    owner = {"writtenBy": "python -m infra.plan --export", "files": sorted(files)}
    (out_dir / OWNER_FILE).write_text(json.dumps(owner, indent=2) + "\n", encoding="utf-8")
    if not files:
        lines.insert(0, f"nothing to export: the stack creates no Kubernetes objects ({out_dir})")
    return lines


def _prune_empty_dirs(out_dir: Path, files: list[str]) -> None:
    dirs = {p for f in files for p in (out_dir / f).parents if out_dir in p.parents}
    for d in sorted(dirs, key=lambda p: len(p.parts), reverse=True):
        if d.is_dir() and not any(d.iterdir()):
            d.rmdir()
