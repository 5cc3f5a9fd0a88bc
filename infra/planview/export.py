"""GitOps export: the Kubernetes side of a stack as files a GitOps repository can hold.

``python -m infra.plan --stack S --export DIR`` writes, from the same mock-engine run as the plan:

- ``DIR/manifests/NN-<kind>-<namespace>-<name>.yaml``: every Kubernetes object the stack creates,
  one per file, numbered in the order the program creates them (namespaces before their contents);
- ``DIR/helm/<release>.values.yaml``: the values of each Helm release, headed by why each is set;
- ``DIR/argocd/<release>.yaml``: an Argo CD ``Application`` per chart, version pinned, values
  inline (``spec.source.helm.valuesObject``: https://argo-cd.readthedocs.io/en/stable/user-guide/helm/);
- ``DIR/flux/<release>.yaml``: a Flux ``HelmRepository`` and ``HelmRelease`` per chart, version
  pinned, values inline (https://fluxcd.io/flux/components/helm/helmreleases/).

Cloud resources (clusters, node pools, IAM) stay with Pulumi; only in-cluster objects are exported.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from infra.core.diff import HELM_RELEASE

# "All resources, including Application and AppProject specs, have to be installed in the Argo CD
# namespace (by default argocd)": https://argo-cd.readthedocs.io/en/stable/operator-manual/declarative-setup/
ARGOCD_NAMESPACE = "argocd"
# flux bootstrap --namespace defaults to flux-system: https://fluxcd.io/flux/cmd/flux_bootstrap/
FLUX_NAMESPACE = "flux-system"
IN_CLUSTER = (
    "https://kubernetes.default.svc"  # Argo CD's name for the cluster it runs in (same page)
)


class _Dumper(yaml.SafeDumper):
    """Block-style YAML that keeps key order (as the program wrote it)."""


def _str(dumper: yaml.SafeDumper, s: str) -> yaml.Node:
    style = "|" if "\n" in s else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", s, style=style)


_Dumper.add_representer(str, _str)


def dump(doc: Any) -> str:
    """YAML text of one document."""
    return yaml.dump(doc, Dumper=_Dumper, sort_keys=False, default_flow_style=False)


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


def argocd_application(rel: Mapping[str, Any]) -> dict[str, Any]:
    """An Argo CD Application installing ``rel`` (a Helm release's inputs), chart version pinned."""
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": rel["name"], "namespace": ARGOCD_NAMESPACE},
        "spec": {
            "project": "default",
            "source": {
                "repoURL": rel["repositoryOpts"]["repo"],
                "chart": rel["chart"],
                "targetRevision": rel["version"],
                "helm": {"releaseName": rel["name"], "valuesObject": rel.get("values") or {}},
            },
            "destination": {"server": IN_CLUSTER, "namespace": rel["namespace"]},
            # Sync on every Git change; create the release namespace; server-side apply, as Pulumi
            # and Helm 3 charts with large CRDs need (kubectl's last-applied annotation caps at
            # 256 KiB). https://argo-cd.readthedocs.io/en/stable/user-guide/auto_sync/ and
            # https://argo-cd.readthedocs.io/en/stable/user-guide/sync-options/
            "syncPolicy": {
                "automated": {"prune": True, "selfHeal": True},
                "syncOptions": ["CreateNamespace=true", "ServerSideApply=true"],
            },
        },
    }


def flux_documents(rel: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A Flux HelmRepository and HelmRelease installing ``rel``, chart version pinned."""
    repo_name = _slug(rel["repositoryOpts"]["repo"].split("://", 1)[-1])[:63].strip("-.")
    return [
        {
            "apiVersion": "source.toolkit.fluxcd.io/v1",
            "kind": "HelmRepository",
            "metadata": {"name": repo_name, "namespace": FLUX_NAMESPACE},
            "spec": {"url": rel["repositoryOpts"]["repo"], "interval": "1h"},
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
                "install": {"createNamespace": True},
                "chart": {
                    "spec": {
                        "chart": rel["chart"],
                        "version": rel["version"],
                        "sourceRef": {
                            "kind": "HelmRepository",
                            "name": repo_name,
                            "namespace": FLUX_NAMESPACE,
                        },
                    }
                },
                "values": rel.get("values") or {},
            },
        },
    ]


def placeholder_header(text: str) -> str:
    """A warning header when ``text`` holds values only the mock engine made up (ARNs, endpoints)."""
    from infra.mockengine import MOCK_ACCOUNT, MOCK_ENDPOINT

    found = [m for m in (MOCK_ACCOUNT, MOCK_ENDPOINT, "MOCK000") if m in text]
    if not found:
        return ""
    return (
        "# PLACEHOLDERS: this file holds values the offline plan's mock engine made up ("
        + ", ".join(found)
        + "); take the real ones from `pulumi stack output` / the cloud before committing it.\n"
    )


def export(plan: Any, recording: Any, out_dir: Path) -> list[str]:
    """Write the export under ``out_dir``; returns one line per file written (for the user)."""
    written: list[str] = []
    out_dir.mkdir(parents=True, exist_ok=True)

    def write(rel_path: str, text: str) -> None:
        path = out_dir / rel_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(placeholder_header(text) + text, encoding="utf-8")
        written.append(f"wrote {path}")

    for i, m in enumerate(kubernetes_objects(recording.resources), start=1):
        meta = m.get("metadata") or {}
        parts = [m["kind"], meta.get("namespace") or "", meta.get("name") or "object"]
        write(f"manifests/{i:02d}-{_slug('-'.join(p for p in parts if p))}.yaml", dump(m))
    for rel in helm_releases(recording.resources):
        name = rel["name"]
        reasons = _reasons(plan, name)
        head = [
            f"# Helm values for release {name}: chart {rel['chart']} {rel['version']} from "
            f"{rel['repositoryOpts']['repo']}, namespace {rel['namespace']}.",
            f"# helm upgrade --install {name} {rel['chart']} --repo {rel['repositoryOpts']['repo']}"
            f" --version {rel['version']} --namespace {rel['namespace']} -f {name}.values.yaml",
        ]
        if reasons:
            head.append("# Why each value is set:")
            head.extend(f"#   {path}: {why}" for path, why in reasons.items())
        else:
            head.append(
                "# Why each value is set: see the planner that renders this chart's values."
            )
        write(f"helm/{name}.values.yaml", "\n".join(head) + "\n" + dump(rel.get("values") or {}))
        write(f"argocd/{name}.yaml", dump(argocd_application(rel)))
        write(f"flux/{name}.yaml", "---\n".join(dump(d) for d in flux_documents(rel)))
    if not written:
        written.append(f"nothing to export: the stack creates no Kubernetes objects ({out_dir})")
    return written
