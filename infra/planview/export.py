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

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from infra.core.tokens import HELM_RELEASE
from infra.planview.export_secrets import NOTE_FILE, holds_secret, secrets_note
from infra.planview.gitops import (
    CRD_RELEASES,
    MANIFESTS_APP,
    ROOT_APP,
    UNAWAITED_APP,
    WAVE_MANIFESTS,
    WAVE_UNAWAITED,
    WAVE_WORKLOADS,
    WORKLOADS_APP,
    Target,
    argocd_application,
    chart_source,
    flux_documents,
    flux_kustomizations,
    gitops_object,
    manifests_application,
    needs_charts,
    not_awaited,
    root_application,
    slug,
)
from infra.planview.placeholders import (
    autonamed,
    filled,
    filled_object,
    fills,
    placeholder_header,
)


@dataclass(frozen=True, slots=True)
class ExportOptions:
    """How ``--export`` fills what only the user or the deploy knows.

    ``target``: names per stack, Git repository and revision, destination (``gitops.Target``).
    ``stack_outputs``: the deployed stack's ``pulumi stack output --json``, whose values replace
    the offline run's made-up ones (``placeholders.fills``). ``overwrite``: replace files edited
    since the last export (else refused).
    """

    target: Target = field(default_factory=Target)
    stack_outputs: Mapping[str, Any] | None = None
    overwrite: bool = False


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


def kubernetes_objects(resources: list[Any]) -> list[dict[str, Any]]:
    """The manifests of every plain Kubernetes object in a recording, in registration order."""
    out = []
    for r in resources:
        is_object = r.type.startswith("kubernetes:") and r.type != HELM_RELEASE and r.custom
        if is_object and "kind" in r.inputs and "apiVersion" in r.inputs:
            out.append(dict(r.inputs))
    return out


def options_from_args(args: Any, stack: str) -> ExportOptions:
    """``python -m infra.plan --export``'s names (per stack), Git source, destination and fills from the flags.

    Raises:
        ConfigErrors: ``--stack-outputs`` cannot be read or is not a JSON object, or a flag's
            value is not usable.
    """
    from infra.core.errors import ConfigErrors, ConfigIssue
    from infra.planview.gitops import GIT_REPO_PLACEHOLDER, IN_CLUSTER

    outputs = None
    if args.stack_outputs:
        try:
            outputs = json.loads(Path(args.stack_outputs).read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            reason = f"{args.stack_outputs}: cannot read it as JSON ({e})"
            raise ConfigErrors([ConfigIssue("--stack-outputs", reason)]) from e
        if not isinstance(outputs, dict):
            reason = f"{args.stack_outputs}: not the object `pulumi stack output --json` prints"
            raise ConfigErrors([ConfigIssue("--stack-outputs", reason)])
    for flag, value in (("--repo-url", args.repo_url), ("--destination", args.destination)):
        if value is not None and (not value.strip() or any(c.isspace() for c in value)):
            raise ConfigErrors([ConfigIssue(flag, f"{value!r}: empty or holds whitespace")])
    target = Target(
        stack,
        args.repo_url or GIT_REPO_PLACEHOLDER,
        args.revision or "HEAD",
        args.destination or IN_CLUSTER,
        args.flux_kubeconfig_secret,
    )
    return ExportOptions(target, outputs, args.overwrite)


def _identity(manifest: Mapping[str, Any]) -> tuple[str, str, str]:
    meta = manifest.get("metadata") or {}
    return str(manifest.get("kind")), str(meta.get("namespace") or ""), str(meta.get("name"))


def retained_objects(resources: list[Any]) -> set[tuple[str, str, str]]:
    """(kind, namespace, name) of every Kubernetes object Pulumi keeps when it leaves the stack
    (the ``retainOnDelete`` option: team namespaces, Kubeflow Profiles)."""
    return {
        _identity(r.inputs)
        for r in resources
        if (getattr(r, "options", None) or {}).get("retainOnDelete") and "kind" in r.inputs
    }


def helm_releases(resources: list[Any]) -> list[dict[str, Any]]:
    """The inputs of every Helm release in a recording."""
    return [dict(r.inputs) for r in resources if r.type == HELM_RELEASE]


def _reasons(plan: Any, release_name: str) -> Mapping[str, str]:
    op = plan.operator
    if op is not None and op.release is not None and op.release.name == release_name:
        return op.release.reasons
    return {}


OWNER_FILE = ".gpu-infra-export.json"


def manifest_file_name(manifest: Mapping[str, Any]) -> str:
    """``<kind>-<namespace>-<name>.yaml``: the object's identity, no ordinal, so removing one object
    renames no other file (the order lives in kustomization.yaml and the sync waves)."""
    meta = manifest.get("metadata") or {}
    parts = [manifest["kind"], meta.get("namespace") or "", meta.get("name") or "object"]
    return f"{slug('-'.join(p for p in parts if p))}.yaml"


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


def export_files(
    plan: Any, recording: Any, repo_path: str, options: ExportOptions | None = None
) -> dict[str, str]:
    """Every file of the export: path under the directory -> text (``repo_path``: the directory's
    path in the Git repository, for the Argo CD and Flux objects that point at it)."""
    options = options or ExportOptions()
    target = options.target
    files: dict[str, str] = {}
    # Names the deployed stack runs under where the offline plan assumed a first deploy's, put in
    # before the objects are named into files; ``None``: unknown, headed as a placeholder.
    deployed = plan.platform.deployed_names(options.stack_outputs)
    renames = [(a, b) for a, b in deployed.items() if b is not None and b != a]
    assumed = sorted(a for a, b in deployed.items() if b is None)
    raw = [filled_object(m, renames) for m in kubernetes_objects(recording.resources)]
    left_out = [m for m in raw if holds_secret(m)]  # Pulumi-secret values: never written out
    raw = [m for m in raw if not holds_secret(m)]
    if (note := secrets_note(left_out, plan)) is not None:
        files[NOTE_FILE] = note
    kept = retained_objects(recording.resources)
    unawaited = [gitops_object(m, _identity(m) in kept) for m in raw if not_awaited(m)]
    objects = [gitops_object(m, _identity(m) in kept) for m in raw if not not_awaited(m)]
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
            app = manifests_application(f"{repo_path}/{directory}", name, wave, target)
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
        exported = ns in namespaces
        app = argocd_application(rel, namespaces.get(ns), exported, target)
        files[f"argocd/{name}.yaml"] = dump(app)
        crds = (
            [r["name"] for r in releases if r["name"] in CRD_RELEASES]
            if rel.get("skipCrds")
            else []
        )
        flux = flux_documents(rel, exported, crds, target)
        files[f"flux/releases/{name}.yaml"] = "---\n".join(dump(d) for d in flux)
    if any(f.startswith("argocd/") for f in files):
        root = dump(root_application(f"{repo_path}/argocd", target))
        files[f"argocd-root/{ROOT_APP}.yaml"] = _argo_minimum(releases) + root
    flux = flux_kustomizations(
        f"./{repo_path}/manifests" if early else None,
        f"./{repo_path}/flux/releases" if releases else None,
        f"./{repo_path}/workloads" if late else None,
        f"./{repo_path}/unawaited" if unawaited else None,
        target,
    )
    if flux:
        files["flux/gpu-infra.yaml"] = FLUX_MINIMUM + "---\n".join(dump(d) for d in flux)
    pairs = fills(recording.outputs, options.stack_outputs) if options.stack_outputs else []
    files = {path: filled(text, [*renames, *pairs]) for path, text in files.items()}
    names = autonamed(recording.resources)
    return {path: placeholder_header(text, names, assumed) + text for path, text in files.items()}


# Argo CD reads a chart from an OCI registry as a native OCI source from v3.1.0 (docs/user-guide/
# oci.md, added in argoproj/argo-cd 18c4d9d, first tagged v3.1.0), inline Helm values
# (spec.source.helm.valuesObject) from v2.8.0 (pkg/apis/application/v1alpha1/types.go, first
# tagged v2.8.0). Flux: kustomize.toolkit.fluxcd.io/v1 from kustomize-controller v1.0.0 (Flux
# v2.0.0, CHANGELOG "1.0.0"), helm.toolkit.fluxcd.io/v2 and source.toolkit.fluxcd.io/v1
# HelmRepository (OCI included) from Flux v2.3.0 (https://fluxcd.io/blog/2024/05/flux-v2.3.0/).
ARGOCD_MIN_OCI, ARGOCD_MIN = "3.1", "2.8"
FLUX_MIN = "2.3"
FLUX_MINIMUM = f"# Needs Flux {FLUX_MIN} or later (HelmRelease v2, HelmRepository v1).\n"


def _argo_minimum(releases: list[dict[str, Any]]) -> str:
    """The header naming the oldest Argo CD that syncs these Applications."""
    if any(chart_source(r)[2] for r in releases):
        return f"# Needs Argo CD {ARGOCD_MIN_OCI} or later (charts from OCI registries).\n"
    return f"# Needs Argo CD {ARGOCD_MIN} or later (inline Helm values, valuesObject).\n"


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


def _owned(out_dir: Path) -> tuple[list[str], dict[str, str]]:
    """The files the last export into ``out_dir`` wrote, and the SHA-256 of each as written (none
    for an export manifest from before hashes were recorded).

    Raises:
        ConfigErrors: ``out_dir`` holds files and no export manifest (not ours to replace).
    """
    from infra.core.errors import ConfigErrors, ConfigIssue

    owner = out_dir / OWNER_FILE
    if owner.is_file():
        doc = json.loads(owner.read_text(encoding="utf-8"))
        files = [f for f in doc.get("files", []) if isinstance(f, str)]
        # Only paths inside the directory: a hand-edited list never deletes outside it.
        inside = [f for f in files if not Path(f).is_absolute() and ".." not in Path(f).parts]
        hashes = doc.get("sha256") if isinstance(doc.get("sha256"), dict) else {}
        return inside, {k: str(v) for k, v in hashes.items() if k in inside}
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
    return [], {}


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _refuse_edited(
    out_dir: Path, hashes: Mapping[str, str], files: Mapping[str, str], overwrite: bool
) -> None:
    """Refuse (before touching anything) to replace or delete a file changed since the export
    wrote it, unless the new export writes exactly what it holds now.

    Raises:
        ConfigErrors: one line per edited file.
    """
    from infra.core.errors import ConfigErrors, ConfigIssue

    if overwrite:
        return
    edited = []
    for rel, digest in hashes.items():
        path = out_dir / rel
        if not path.is_file():
            continue
        now = path.read_text(encoding="utf-8")
        if _sha256(now) != digest and files.get(rel) != now:
            edited.append(rel)
    if edited:
        raise ConfigErrors(
            ConfigIssue(
                "--export",
                f"{out_dir / rel}: edited since the last export (a placeholder filled by hand?); "
                "the export would overwrite it: fill values with --stack-outputs FILE, --repo-url "
                "and --revision instead, or pass --overwrite to replace it",
            )
            for rel in edited
        )


def export(
    plan: Any, recording: Any, out_dir: Path, options: ExportOptions | None = None
) -> list[str]:
    """Write the export under ``out_dir``; returns one line per file written or removed.

    Raises:
        ConfigErrors: ``out_dir`` is not empty and was not written by an export, or a file it
            wrote was edited since (``_refuse_edited``).
    """
    options = options or ExportOptions()
    out_dir.mkdir(parents=True, exist_ok=True)
    previous, hashes = _owned(out_dir)
    files = export_files(plan, recording, repo_path_of(out_dir), options)
    _refuse_edited(out_dir, hashes, files, options.overwrite)
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
    owner = {
        "writtenBy": "python -m infra.plan --export",
        "files": sorted(files),
        "sha256": {rel: _sha256(files[rel]) for rel in sorted(files)},
    }
    (out_dir / OWNER_FILE).write_text(json.dumps(owner, indent=2) + "\n", encoding="utf-8")
    if not files:
        lines.insert(0, f"nothing to export: the stack creates no Kubernetes objects ({out_dir})")
    left = sorted(p for p, t in files.items() if t.startswith("# PLACEHOLDERS"))
    if options.stack_outputs is not None and left:
        lines.append("still holding placeholders (see each file's header): " + ", ".join(left))
    return lines


def _prune_empty_dirs(out_dir: Path, files: list[str]) -> None:
    dirs = {p for f in files for p in (out_dir / f).parents if out_dir in p.parents}
    for d in sorted(dirs, key=lambda p: len(p.parts), reverse=True):
        if d.is_dir() and not any(d.iterdir()):
            d.rmdir()
