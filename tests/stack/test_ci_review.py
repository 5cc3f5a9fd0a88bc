"""The CI review (``python -m infra.ci_review``, docs/ci/gpu-infra-review.yml) in a scratch git
repository, one pull request at a time: a stack added, a stack deleted, an EKS version bumped."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from infra import ci_review
from tests.stack.harness import EKS_G4DN_VERSION

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository whose main branch holds Pulumi.yaml and the eks-g4dn and gke-t4 stacks."""
    for key, value in {
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "ci",
        "GIT_AUTHOR_EMAIL": "ci@example.com",
        "GIT_COMMITTER_NAME": "ci",
        "GIT_COMMITTER_EMAIL": "ci@example.com",
    }.items():
        monkeypatch.setenv(key, value)
    (tmp_path / "stacks").mkdir()
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    for stack in ("eks-g4dn", "gke-t4"):
        shutil.copy(ROOT / f"stacks/Pulumi.{stack}.yaml", tmp_path / f"stacks/Pulumi.{stack}.yaml")
    _git(tmp_path, "init", "-q", "-b", "main")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "base")
    _git(tmp_path, "checkout", "-q", "-b", "pr")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _pr(repo: Path) -> tuple[int, str]:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "pr")
    out = repo / "review.md"
    code = ci_review.main(["--base", "main", "--output", str(out)])
    return code, out.read_text(encoding="utf-8")


def test_a_pull_request_adding_a_stack_is_an_all_create_review_with_its_cost_exit_0(repo):
    gke_t4 = (ROOT / "stacks/Pulumi.gke-t4.yaml").read_text(encoding="utf-8")
    new = gke_t4.replace("    name: ml\n", "    name: ml-new\n", 1)  # its own cluster
    assert new != gke_t4
    (repo / "stacks/Pulumi.gke-new.yaml").write_text(new, encoding="utf-8")
    code, text = _pr(repo)
    assert code == 0, text
    assert text.startswith(ci_review.MARKER + "\n")
    assert "A new stack" in text and ", 0 to update, 0 to replace, 0 to delete, 0 unchanged" in text
    # gke-t4 at minimum: its system pool, control plane and disks (test_plan_view's figures)
    assert "| at minimum, per hour | $0.00 | $" in text and "| create | `gcp:container" in text
    assert "eks-g4dn" not in text and "Pulumi.gke-t4" not in text  # only the changed files
    assert "Change from " in text and "NVIDIA_T4_GPUS" in text  # the quota delta, 0 -> new


def test_a_pull_request_adding_a_stack_that_creates_a_taken_cluster_exits_2_naming_the_other(repo):
    # gke-t4 already creates GKE cluster ml in demo-project/us-central1: a second create of it
    # is refused (409 alreadyExists), which only the review beside gke-t4 can know.
    shutil.copy(ROOT / "stacks/Pulumi.gke-t4.yaml", repo / "stacks/Pulumi.gke-new.yaml")
    code, text = _pr(repo)
    assert code == 2, text
    assert "Reviewed beside `stacks/Pulumi.gke-t4.yaml` (same cluster)" in text
    assert "cluster.name: 'ml': stack gke-t4" in text and "409 alreadyExists" in text


def test_a_pull_request_adding_team_b_beside_team_a_on_one_eks_cluster_reviews_with_it(repo):
    case = ROOT / "tests/day2/eks-existing-second-stack-same-pool"
    _git(repo, "checkout", "-q", "main")
    shutil.copy(case / "Pulumi.team-a.yaml", repo / "stacks/Pulumi.team-a.yaml")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "team-a")
    _git(repo, "checkout", "-q", "-B", "pr")
    assert ci_review.same_cluster("stacks/Pulumi.team-a.yaml", "stacks") == []
    shutil.copy(case / "step2.yaml", repo / "stacks/Pulumi.team-b.yaml")
    assert ci_review.same_cluster("stacks/Pulumi.team-b.yaml", "stacks") == [
        "stacks/Pulumi.team-a.yaml"  # same region and cluster name; eks-g4dn's ml is another
    ]
    code, text = _pr(repo)
    assert code == 0, text
    assert "Reviewed beside `stacks/Pulumi.team-a.yaml` (same cluster)" in text
    assert "eks-g4dn" not in text


def test_a_pull_request_deleting_a_stack_is_an_all_delete_review(repo):
    (repo / "stacks/Pulumi.gke-t4.yaml").unlink()
    code, text = _pr(repo)
    assert "0 to create, 0 to update, 0 to replace, 14 to delete, 0 unchanged" in text
    assert "`pulumi destroy`" in text
    assert "| delete | `gcp:container/cluster:Cluster` | `ml-cluster` |" in text
    assert code == 3  # deleting the cluster is disruptive: --fail-on disruptive (the default)


def test_a_pull_request_bumping_the_eks_version_exits_3_with_the_reason_in_the_markdown(repo):
    path = repo / "stacks/Pulumi.eks-g4dn.yaml"
    text = path.read_text(encoding="utf-8")
    sample = EKS_G4DN_VERSION
    assert sample in text
    # main runs 1.33; the pull request moves it to 1.34
    _git(repo, "checkout", "-q", "main")
    path.write_text(text.replace(sample, 'kubernetesVersion: "1.33"'))
    _git(repo, "commit", "-q", "-am", "main on 1.33")
    _git(repo, "checkout", "-q", "-B", "pr")
    path.write_text(text.replace(sample, 'kubernetesVersion: "1.34"'))
    code, text = _pr(repo)
    assert code == 3
    row = next(r for r in text.splitlines() if r.startswith("| update | `aws:eks/nodeGroup"))
    assert "| `version` | 1.33 | 1.34 | ⚠️ update in place, but version re-creates every node" in row
    assert "**Blocked by `--fail-on disruptive`:**" in text


def test_a_broken_stack_file_in_a_pull_request_exits_2_and_says_why(repo):
    path = repo / "stacks/Pulumi.eks-g4dn.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("minNodes: 0", "minNodes: -1", 1))
    code, text = _pr(repo)
    assert code == 2
    assert "The review failed (exit 2)" in text and "minNodes" in text


def test_a_review_too_long_for_one_comment_is_cut_at_a_line_and_says_so():
    text = ci_review.MARKER + "\n" + "| row |\n" * 20_000
    cut = ci_review.fit(text)
    assert len(cut) <= ci_review.MAX_COMMENT and cut.startswith(ci_review.MARKER)
    assert cut.endswith("the job's log holds the whole review)*\n")
    assert ci_review.fit("short\n") == "short\n"


def test_a_project_file_change_reviews_every_stack(repo):
    (repo / "Pulumi.yaml").write_text((repo / "Pulumi.yaml").read_text() + "\n# changed\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "project")
    assert ci_review.changed_stack_files("main", "stacks") == [
        "stacks/Pulumi.eks-g4dn.yaml",
        "stacks/Pulumi.gke-t4.yaml",
    ]
