"""GitOps wrappers: Flux keeps Helm's release record in the release namespace, Argo CD syncs."""

from __future__ import annotations

from types import SimpleNamespace

from infra.planview.export import argocd_application, export, flux_documents, placeholder_header

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
    lines = export(SimpleNamespace(operator=None), SimpleNamespace(resources=[]), out)
    assert out.is_dir() and lines[0].startswith("nothing to export")


def test_argocd_application_lives_in_the_argocd_namespace_and_targets_the_cluster_it_runs_in():
    app = argocd_application(REL)
    assert app["metadata"]["namespace"] == "argocd"
    assert app["spec"]["destination"]["server"] == "https://kubernetes.default.svc"


def test_flux_sources_live_in_flux_system():
    repo, release = flux_documents(REL)[:2]
    assert repo["metadata"]["namespace"] == release["metadata"]["namespace"] == "flux-system"
