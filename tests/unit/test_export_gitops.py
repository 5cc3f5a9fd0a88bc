"""GitOps wrappers: Flux keeps Helm's release record in the release namespace, Argo CD syncs."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
import yaml

from infra.core.errors import ConfigErrors
from infra.planview.export import OWNER_FILE, export
from infra.planview.gitops import (
    argocd_application,
    flux_documents,
    flux_kustomizations,
    gitops_object,
)
from infra.planview.placeholders import placeholder_header

REL = {
    "name": "gpu-operator",
    "namespace": "gpu-operator",
    "chart": "gpu-operator",
    "version": "v26.7.0",
    "repositoryOpts": {"repo": "https://helm.ngc.nvidia.com/nvidia"},
    "values": {},
}


def test_flux_helm_release_storage_namespace_is_the_release_namespace_not_flux_system():
    hr = flux_documents(REL)[1]["spec"]
    assert hr["storageNamespace"] == hr["targetNamespace"] == "gpu-operator"


def test_argocd_application_syncs_automatically_server_side_and_creates_the_namespace():
    policy = argocd_application(REL)["spec"]["syncPolicy"]
    assert "automated" in policy
    assert set(policy["syncOptions"]) == {"CreateNamespace=true", "ServerSideApply=true"}


def test_files_with_mock_engine_values_are_headed_as_placeholders():
    assert placeholder_header("role-arn: arn:aws:iam::123456789012:role/x").startswith(
        "# PLACEHOLDERS"
    )
    assert placeholder_header("role-arn: none") == ""


def test_empty_export_says_nothing_to_export_and_still_creates_the_directory(tmp_path):
    out = tmp_path / "gitops"
    lines = export(NO_OP, SimpleNamespace(resources=[]), out)
    assert out.is_dir() and lines[0].startswith("nothing to export")


def test_argocd_application_lives_in_the_argocd_namespace_and_targets_the_cluster_it_runs_in():
    app = argocd_application(REL)
    assert app["metadata"]["namespace"] == "argocd"
    assert app["spec"]["destination"]["server"] == "https://kubernetes.default.svc"


def test_flux_sources_live_in_flux_system():
    repo, release = flux_documents(REL)[:2]
    assert repo["metadata"]["namespace"] == release["metadata"]["namespace"] == "flux-system"


# --- an export that owns its directory; GitOps order, pruning and namespace labels -------------


def _rec(*manifests):
    return SimpleNamespace(
        resources=[
            SimpleNamespace(type="kubernetes:core/v1:" + m["kind"], custom=True, inputs=m)
            for m in manifests
        ]
    )


def _ns(name, **labels):
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


# A plan without an operator on a platform whose names assume nothing (Platform.deployed_names).
NO_OP = SimpleNamespace(operator=None, platform=SimpleNamespace(deployed_names=lambda _: {}))


def test_re_export_after_removing_a_namespace_leaves_no_file_for_it(tmp_path):
    export(NO_OP, _rec(_ns("a"), _ns("b")), tmp_path)
    assert (tmp_path / "manifests" / "namespace-b.yaml").exists()
    lines = export(NO_OP, _rec(_ns("a")), tmp_path)
    assert not (tmp_path / "manifests" / "namespace-b.yaml").exists()
    assert any(line.startswith("removed ") and "namespace-b" in line for line in lines)
    kustomization = yaml.safe_load((tmp_path / "manifests" / "kustomization.yaml").read_text())
    assert kustomization["resources"] == ["namespace-a.yaml"]


def test_removing_an_object_renames_no_other_file_and_reports_only_the_removal(tmp_path):
    export(NO_OP, _rec(_ns("a"), _ns("b"), _ns("c")), tmp_path)
    before = sorted(p.name for p in (tmp_path / "manifests").iterdir())
    lines = export(NO_OP, _rec(_ns("a"), _ns("c")), tmp_path)
    after = sorted(p.name for p in (tmp_path / "manifests").iterdir())
    assert set(before) - set(after) == {"namespace-b.yaml"} and set(after) <= set(before)
    assert [line for line in lines if line.startswith("removed ")] == [
        f"removed {tmp_path / 'manifests' / 'namespace-b.yaml'}"
    ]


def test_export_refuses_a_non_empty_directory_it_did_not_write(tmp_path):
    (tmp_path / "README.md").write_text("mine")
    with pytest.raises(ConfigErrors) as e:
        export(NO_OP, _rec(_ns("a")), tmp_path)
    assert "not empty" in str(e.value) and (tmp_path / "README.md").read_text() == "mine"


def test_export_keeps_files_it_did_not_write_beside_its_own(tmp_path):
    export(NO_OP, _rec(_ns("a")), tmp_path)
    (tmp_path / "manifests" / "mine.yaml").write_text("x")
    export(NO_OP, _rec(_ns("b")), tmp_path)
    assert (tmp_path / "manifests" / "mine.yaml").read_text() == "x"


def test_an_export_manifest_never_deletes_outside_its_directory(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim.yaml"
    victim.write_text("x")
    (out / OWNER_FILE).write_text(json.dumps({"files": ["../victim.yaml", str(victim)]}))
    export(NO_OP, _rec(_ns("a")), out)
    assert victim.exists()


def test_node_patches_are_never_pruned_and_lose_pulumi_only_annotations():
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1", "annotations": {"pulumi.com/patchForce": "true"}},
    }
    notes = gitops_object(node)["metadata"]["annotations"]
    assert "pulumi.com/patchForce" not in notes
    options = notes["argocd.argoproj.io/sync-options"].split(",")
    # Prune=false: leaving Git does not delete it; Delete=false: nor does deleting the Application.
    assert "Prune=false" in options and "Delete=false" in options
    assert notes["kustomize.toolkit.fluxcd.io/prune"] == "disabled"


def test_namespaces_and_configmaps_sync_a_wave_before_the_charts():
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "n"}}
    wave = "argocd.argoproj.io/sync-wave"
    assert gitops_object(cm)["metadata"]["annotations"][wave] == "-1"
    assert gitops_object(_ns("n"))["metadata"]["annotations"][wave] == "-1"
    assert int(argocd_application(REL)["metadata"]["annotations"][wave]) > 0


def test_flux_releases_depend_on_the_manifests_kustomization():
    manifests, releases = flux_kustomizations("./x/manifests", "./x/flux/releases")
    assert releases["spec"]["dependsOn"] == [{"name": manifests["metadata"]["name"]}]
    assert manifests["spec"]["prune"] is True


def test_created_release_namespace_carries_the_psa_labels_through_managed_namespace_metadata():
    labels = {"pod-security.kubernetes.io/enforce": "privileged"}
    policy = argocd_application(REL, labels)["spec"]["syncPolicy"]
    assert policy["managedNamespaceMetadata"] == {"labels": labels}
    assert "CreateNamespace=true" in policy["syncOptions"]


def _with_release(rec):
    rec.resources.append(
        SimpleNamespace(type="kubernetes:helm.sh/v3:Release", custom=True, inputs=REL)
    )
    return rec


def test_an_exported_release_namespace_has_one_owner_the_manifests_application(tmp_path):
    psa = {"pod-security.kubernetes.io/enforce": "privileged"}
    export(NO_OP, _with_release(_rec(_ns("gpu-operator", **psa))), tmp_path)
    ns = yaml.safe_load((tmp_path / "manifests" / "namespace-gpu-operator.yaml").read_text())
    assert ns["metadata"]["labels"] == psa  # the manifests Application creates and labels it
    policy = yaml.safe_load((tmp_path / "argocd" / "gpu-operator.yaml").read_text())["spec"][
        "syncPolicy"
    ]
    assert "CreateNamespace=true" not in policy["syncOptions"]
    assert "managedNamespaceMetadata" not in policy
    _, release = yaml.safe_load_all(
        (tmp_path / "flux" / "releases" / "gpu-operator.yaml").read_text()
    )
    assert release["spec"]["install"]["createNamespace"] is False
    values = (tmp_path / "helm" / "gpu-operator.values.yaml").read_text()
    assert "--create-namespace" in values  # plain helm has no manifests Application


def _gpu_job():
    container = {"name": "t", "image": "x", "resources": {"limits": {"nvidia.com/gpu": 1}}}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "smoke", "namespace": "s"},
        "spec": {"template": {"spec": {"containers": [container]}}},
    }


def test_gpu_jobs_sync_after_the_charts_that_provide_nvidia_gpu(tmp_path):
    export(NO_OP, _with_release(_rec(_ns("s"), _gpu_job())), tmp_path)
    assert (tmp_path / "workloads" / "job-s-smoke.yaml").exists()
    assert not (tmp_path / "manifests" / "job-s-smoke.yaml").exists()
    wave = "argocd.argoproj.io/sync-wave"

    def wave_of(name):
        app = yaml.safe_load((tmp_path / "argocd" / f"{name}.yaml").read_text())
        return int(app["metadata"]["annotations"][wave])

    assert wave_of("gpu-infra-manifests") < wave_of("gpu-operator") < wave_of("gpu-infra-workloads")
    flux = list(yaml.safe_load_all((tmp_path / "flux" / "gpu-infra.yaml").read_text()))
    by_name = {d["metadata"]["name"]: d["spec"] for d in flux}
    assert by_name["gpu-infra-workloads"]["dependsOn"] == [{"name": "gpu-infra-releases"}]
    assert by_name["gpu-infra-releases"]["wait"] is True  # ready releases, not just applied


def test_waves_act_under_a_parent_application_of_the_argocd_directory(tmp_path):
    export(NO_OP, _with_release(_rec(_ns("a"))), tmp_path / "gitops")
    root = yaml.safe_load((tmp_path / "gitops" / "argocd-root" / "gpu-infra.yaml").read_text())
    assert root["kind"] == "Application" and root["spec"]["source"]["path"] == "gitops/argocd"
    assert not (tmp_path / "gitops" / "argocd" / "gpu-infra.yaml").exists()  # not its own child


def test_karpenter_objects_apply_after_the_chart_that_installs_their_crds():
    from infra.planview.gitops import needs_charts

    assert needs_charts({"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "spec": {}})
    assert needs_charts({"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "spec": {}})
    assert not needs_charts({"apiVersion": "v1", "kind": "ConfigMap", "data": {}})


def test_a_release_that_skips_its_crds_skips_them_in_argo_cd_and_flux_too():
    # The karpenter release leaves its CRDs to the karpenter-crd release: exported wrappers must
    # not install the crds/ copy (Argo CD helm.skipCrds; Flux install/upgrade crds: Skip).
    rel = {**REL, "skipCrds": True}
    assert argocd_application(rel)["spec"]["source"]["helm"]["skipCrds"] is True
    spec = flux_documents(rel)[1]["spec"]
    assert spec["install"]["crds"] == "Skip" and spec["upgrade"]["crds"] == "Skip"
    assert "skipCrds" not in argocd_application(REL)["spec"]["source"]["helm"]
    assert "crds" not in flux_documents(REL)[1]["spec"]["install"]


def test_karpenter_crd_release_syncs_before_the_karpenter_release_wave_and_depends_on(tmp_path):
    oci = "oci://public.ecr.aws/karpenter/"
    crd = {
        **REL,
        "name": "karpenter-crd",
        "namespace": "kube-system",
        "chart": f"{oci}karpenter-crd",
    }
    ctl = {**crd, "name": "karpenter", "chart": f"{oci}karpenter", "skipCrds": True}
    rec = _rec(_ns("a"))
    for rel in (ctl, crd):  # plan order must not matter
        rec.resources.append(
            SimpleNamespace(type="kubernetes:helm.sh/v3:Release", custom=True, inputs=rel)
        )
    export(NO_OP, rec, tmp_path)

    def wave_of(name):
        app = yaml.safe_load((tmp_path / "argocd" / f"{name}.yaml").read_text())
        return int(app["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"])

    assert wave_of("gpu-infra-manifests") == wave_of("karpenter-crd") < wave_of("karpenter")
    _, karpenter = yaml.safe_load_all(
        (tmp_path / "flux" / "releases" / "karpenter.yaml").read_text()
    )
    assert karpenter["spec"]["dependsOn"] == [{"name": "gpu-infra-karpenter-crd"}]
    _, crds = yaml.safe_load_all(
        (tmp_path / "flux" / "releases" / "karpenter-crd.yaml").read_text()
    )
    assert "dependsOn" not in crds["spec"]


# --- objects Pulumi retains, names per stack, edits kept, placeholders filled ------------------


def _retained(m):
    return SimpleNamespace(
        type="kubernetes:core/v1:" + m["kind"],
        custom=True,
        inputs=m,
        options={"retainOnDelete": True},
    )


def test_a_namespace_pulumi_retains_is_never_pruned_or_deleted_by_argo_cd_or_flux(tmp_path):
    # Argo CD sync-options.md "No Prune Resources" / "No Resource Deletion"; Flux
    # kustomizations.md "#prune": the live object's annotation keeps it when its file leaves Git.
    rec = SimpleNamespace(
        resources=[_retained(_ns("team-a")), *_rec(_ns("gpu-operator")).resources]
    )
    export(NO_OP, rec, tmp_path)
    team = yaml.safe_load((tmp_path / "manifests" / "namespace-team-a.yaml").read_text())
    notes = team["metadata"]["annotations"]
    assert notes["argocd.argoproj.io/sync-options"] == "Prune=false,Delete=false"
    assert notes["kustomize.toolkit.fluxcd.io/prune"] == "disabled"
    other = yaml.safe_load((tmp_path / "manifests" / "namespace-gpu-operator.yaml").read_text())
    assert "argocd.argoproj.io/sync-options" not in other["metadata"]["annotations"]


def test_two_stacks_exports_share_no_application_kustomization_or_release_name(tmp_path):
    from infra.planview.export import ExportOptions
    from infra.planview.gitops import Target

    rel = SimpleNamespace(type="kubernetes:helm.sh/v3:Release", custom=True, inputs=REL)
    names = []
    for stack in ("prod", "dev"):
        out = tmp_path / stack
        export(
            NO_OP,
            SimpleNamespace(resources=[*_rec(_ns("a")).resources, rel]),
            out,
            ExportOptions(Target(stack)),
        )
        found = set()
        for path in out.rglob("*.yaml"):
            for doc in yaml.safe_load_all(path.read_text()):
                if doc and doc.get("kind") in (
                    "Application",
                    "Kustomization",
                    "HelmRelease",
                    "HelmRepository",
                ):
                    if doc["apiVersion"].startswith("kustomize.config"):
                        continue  # kustomization.yaml lists files, it has no name
                    found.add((doc["kind"], doc["metadata"]["name"]))
        assert found and all(stack in name for _, name in found)
        names.append(found)
    assert not names[0] & names[1]


def test_a_destination_by_name_or_server_and_the_repo_and_revision_reach_every_application(
    tmp_path,
):
    from infra.planview.export import ExportOptions
    from infra.planview.gitops import Target

    target = Target("prod", "https://git.example.org/ops.git", "v1.2", "gpu-east")
    rel = SimpleNamespace(type="kubernetes:helm.sh/v3:Release", custom=True, inputs=REL)
    export(
        NO_OP,
        SimpleNamespace(resources=[*_rec(_ns("a")).resources, rel]),
        tmp_path,
        ExportOptions(target),
    )
    manifests = yaml.safe_load((tmp_path / "argocd" / "gpu-infra-manifests.yaml").read_text())
    assert manifests["spec"]["destination"] == {"name": "gpu-east"}
    assert manifests["spec"]["source"]["repoURL"] == "https://git.example.org/ops.git"
    assert manifests["spec"]["source"]["targetRevision"] == "v1.2"
    chart = yaml.safe_load((tmp_path / "argocd" / "gpu-operator.yaml").read_text())
    assert chart["spec"]["destination"] == {"name": "gpu-east", "namespace": "gpu-operator"}
    root = yaml.safe_load(
        (tmp_path / "argocd-root" / "gpu-infra.yaml").read_text().split("\n", 1)[1]
    )
    assert root["spec"]["destination"]["server"] == "https://kubernetes.default.svc"  # Argo's own
    assert "PLACEHOLDERS" not in (tmp_path / "argocd-root" / "gpu-infra.yaml").read_text()


def test_a_re_export_refuses_to_overwrite_a_file_the_user_edited_and_touches_nothing(tmp_path):
    from infra.planview.export import ExportOptions

    export(NO_OP, _rec(_ns("a"), _ns("b")), tmp_path)
    app = tmp_path / "argocd" / "gpu-infra-manifests.yaml"
    edited = app.read_text().replace(
        "https://git.example.com/REPLACE-ME.git", "https://git.example.org/x.git"
    )
    app.write_text(edited)
    with pytest.raises(ConfigErrors) as e:
        export(NO_OP, _rec(_ns("a")), tmp_path)
    assert "gpu-infra-manifests.yaml: edited since the last export" in str(e.value)
    assert app.read_text() == edited and (tmp_path / "manifests" / "namespace-b.yaml").exists()
    export(NO_OP, _rec(_ns("a")), tmp_path, ExportOptions(overwrite=True))
    assert "REPLACE-ME" in app.read_text()


def test_an_edit_the_new_export_writes_the_same_way_is_not_refused(tmp_path):
    from infra.planview.export import ExportOptions
    from infra.planview.gitops import Target

    export(NO_OP, _rec(_ns("a")), tmp_path)
    app = tmp_path / "argocd" / "gpu-infra-manifests.yaml"
    url = "https://git.example.org/x.git"
    options = ExportOptions(Target(repo_url=url))
    expected = export_files_text(options, tmp_path)
    app.write_text(expected)  # the user filled in what --repo-url now fills
    export(NO_OP, _rec(_ns("a")), tmp_path, options)
    assert app.read_text() == expected


def export_files_text(options, out):
    from infra.planview.export import export_files, repo_path_of

    files = export_files(NO_OP, _rec(_ns("a")), repo_path_of(out), options)
    return files["argocd/gpu-infra-manifests.yaml"]


def test_stack_outputs_replace_the_made_up_arn_name_and_endpoint_as_whole_values():
    from infra.planview.placeholders import filled, fills

    mock = {
        "clusterEndpoint": "https://203.0.113.10",
        "deployedNames": {
            "ml-nodes": {"name": "ml-nodes", "arn": "arn:aws:iam::123456789012:role/ml-nodes"}
        },
    }
    real = {
        "clusterEndpoint": "https://A1.gr7.us-west-2.eks.amazonaws.com",
        "deployedNames": {
            "ml-nodes": {
                "name": "ml-nodes-abc1234",
                "arn": "arn:aws:iam::111122223333:role/ml-nodes-abc1234",
            }
        },
    }
    text = (
        "role: ml-nodes\nother: ml-nodes-extra\narn: arn:aws:iam::123456789012:role/ml-nodes\n"
        "queue: arn:aws:sqs:us-west-2:123456789012:q\nendpoint: https://203.0.113.10\n"
    )
    out = filled(text, fills(mock, real))
    assert "role: ml-nodes-abc1234\n" in out and "other: ml-nodes-extra\n" in out
    assert "arn: arn:aws:iam::111122223333:role/ml-nodes-abc1234\n" in out
    assert "arn:aws:sqs:us-west-2:111122223333:q" in out  # the account, wherever it is left
    assert "endpoint: https://A1.gr7.us-west-2.eks.amazonaws.com" in out
    assert placeholder_header(out) == ""


def test_the_export_states_the_oldest_argo_cd_and_flux_it_needs():
    from infra.planview.export import export_files

    oci = {**REL, "chart": "oci://public.ecr.aws/karpenter/karpenter", "repositoryOpts": {}}
    for rel, argo in ((REL, "2.8"), (oci, "3.1")):
        rec = SimpleNamespace(
            resources=[
                SimpleNamespace(type="kubernetes:helm.sh/v3:Release", custom=True, inputs=rel)
            ]
        )
        files = export_files(NO_OP, rec, "gitops")
        assert f"# Needs Argo CD {argo} or later" in files["argocd-root/gpu-infra.yaml"]
        assert files["flux/gpu-infra.yaml"].startswith("# Needs Flux 2.3 or later")
