"""``python -m infra.plan`` for review in CI: --diff values, counts, cost, --fail-on, markdown,
git refs; the compact default output; notes by id; a fleet in one process."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from infra import plan as plan_cli
from infra.planview.notes import note_id
from tests.stack.harness import gke_t4_variant, sample_stacks

ROOT = Path(__file__).resolve().parents[2]
T4 = ROOT / "stacks" / "Pulumi.gke-t4.yaml"
STACKS = sample_stacks()


@pytest.fixture(scope="module")
def max40(tmp_path_factory) -> Path:
    return gke_t4_variant(tmp_path_factory.mktemp("max40"), "maxNodes: 20", "maxNodes: 40")


def test_diff_prints_each_property_old_and_new_the_counts_and_the_cost_change(max40, capsys):
    assert plan_cli.main(["--stack", str(max40), "--diff", "gke-t4"]) == 0
    out = capsys.readouterr().out
    assert "autoscaling.totalMaxNodeCount: 20 => 40" in out
    assert "0 to create, 2 to update, 0 to replace, 0 to delete, 12 unchanged" in out
    # 20 more n1-highmem-8 + T4 nodes at 0.82321/h (test_plan_view) and their 100 GB pd-balanced
    # boot disks at $0.10/GB-month and their external IPv4 addresses at $0.005/h: +16.84/h,
    # x 730 h a month
    assert "cost at maximum:" in out and "(+$16.84/h)" in out and "(+$12,291.87/month)" in out


def test_diff_json_carries_old_and_new_per_property_counts_and_cost_change(max40, capsys):
    assert plan_cli.main(["--stack", str(max40), "--diff", str(T4), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (pool,) = [c for c in doc["changes"] if c["urn"].endswith("::ml-gpu-gpu-t4")]
    assert pool["old"] == {"autoscaling.totalMaxNodeCount": 20}
    assert pool["new"] == {"autoscaling.totalMaxNodeCount": 40}
    assert doc["summary"] == {"create": 0, "update": 2, "replace": 0, "delete": 0, "unchanged": 12}
    disks = 20 * 100 * 0.10 / 730  # 20 boot disks of 100 GB at $0.10 per GB-month
    addresses = 20 * 0.005  # 20 public nodes' external IPv4 addresses
    change = 20 * 0.82321 + disks + addresses
    assert doc["cost"]["atMaxPerHour"]["change"] == pytest.approx(change, abs=1e-4)
    assert doc["cost"]["atMinPerHour"]["change"] == 0


def test_fail_on_disruptive_exits_3_on_a_gpu_count_change_naming_it(tmp_path, capsys):
    new = gke_t4_variant(tmp_path, "count: 1", "count: 2")
    assert plan_cli.main(["--stack", str(new), "--diff", "gke-t4", "--fail-on", "disruptive"]) == 3
    err = capsys.readouterr().err
    assert "--fail-on disruptive: replace" in err and "ml-gpu-gpu-t4" in err


def test_fail_on_replace_passes_an_in_place_update_and_any_fails_it(max40, capsys):
    assert plan_cli.main(["--stack", str(max40), "--diff", "gke-t4", "--fail-on", "replace"]) == 0
    assert plan_cli.main(["--stack", str(max40), "--diff", "gke-t4", "--fail-on", "any"]) == 3


@pytest.mark.skipif(
    shutil.which("git") is None
    or subprocess.run(["git", "-C", str(ROOT), "rev-parse"], capture_output=True).returncode != 0,
    reason="not a git checkout",
)
def test_diff_reads_the_old_file_from_a_git_ref(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert plan_cli.main(["--stack", "gke-t4", "--diff", "HEAD:stacks/Pulumi.gke-t4.yaml"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("diff: HEAD:stacks/Pulumi.gke-t4.yaml => ")


def test_a_git_ref_that_does_not_exist_exits_2_naming_it(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    spec = "no-such-ref-x:stacks/Pulumi.gke-t4.yaml"
    assert plan_cli.main(["--stack", "gke-t4", "--diff", spec]) == 2
    assert spec in capsys.readouterr().err


def test_diff_from_dev_null_is_an_all_create_review_with_the_new_cost(capsys):
    assert plan_cli.main(["--stack", "gke-t4", "--diff", "/dev/null", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {c["op"] for c in doc["changes"]} == {"create"}
    assert doc["summary"]["create"] == 14 and doc["summary"]["unchanged"] == 0
    assert doc["absent"] == "old"
    assert doc["cost"]["atMaxPerHour"]["old"] == 0
    assert doc["cost"]["atMaxPerHour"]["change"] == doc["cost"]["atMaxPerHour"]["new"] > 0


def test_diff_of_a_deleted_stack_file_is_an_all_delete_review_and_fail_on_still_exits_3(
    tmp_path, capsys
):
    gone = tmp_path / "Pulumi.gke-t4.yaml"  # not there: the change deletes the file
    argv = ["--stack", str(gone), "--diff", str(T4), "--format", "markdown"]
    assert plan_cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "0 to create, 0 to update, 0 to replace, 14 to delete, 0 unchanged" in out
    assert plan_cli.main([*argv, "--fail-on", "disruptive"]) == 3
    assert "--fail-on disruptive: delete gcp:container/cluster:Cluster" in capsys.readouterr().err


def test_a_path_missing_in_an_existing_ref_is_a_new_stack_but_a_bad_file_stays_exit_2(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(ROOT)
    assert plan_cli.main(["--stack", "gke-t4", "--diff", "HEAD:stacks/Pulumi.none.yaml"]) == 0
    assert "(absent)" in capsys.readouterr().out
    bad = gke_t4_variant(tmp_path, "maxNodes: 20", "maxNodes: -1")
    assert plan_cli.main(["--stack", str(bad), "--diff", "/dev/null"]) == 2


def test_diff_across_platforms_is_refused_with_exit_2(capsys):
    assert plan_cli.main(["--stack", "gke-t4", "--diff", "eks-g4dn"]) == 2
    err = capsys.readouterr().err
    assert "platform eks" in err and "platform gke" in err


def test_an_error_in_the_old_file_names_that_file(tmp_path, capsys):
    old = gke_t4_variant(tmp_path, "maxNodes: 20", "maxNodes: -1")
    assert plan_cli.main(["--stack", "gke-t4", "--diff", str(old)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err and all(line.startswith(str(old)) for line in err), err


def test_markdown_diff_has_the_summary_cost_table_and_a_row_per_property(max40, capsys):
    argv = ["--stack", str(max40), "--diff", "gke-t4", "--format", "markdown"]
    assert plan_cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "**0 to create, 2 to update" in out
    assert "| at maximum, per month | $12,699.32 |" in out  # incl. 23 node addresses
    assert (
        "| update | `gcp:container/nodePool:NodePool` | `ml-gpu-gpu-t4` "
        "| `autoscaling.totalMaxNodeCount` | 20 | 40 |"
    ) in out


def test_fail_on_without_diff_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as e:
        plan_cli.main(["--stack", "gke-t4", "--fail-on", "any"])
    assert e.value.code == 2


def test_default_output_is_the_table_totals_cost_and_a_resource_count(capsys):
    assert plan_cli.main(["--stack", "gke-t4"]) == 0
    out = capsys.readouterr().out
    assert "totals:" in out and "cost:" in out and "14 resources (--resources" in out
    assert "TYPE" not in out and "outputs:" not in out
    assert len(out.splitlines()) < 20
    assert plan_cli.main(["--stack", "gke-t4", "--resources", "--outputs"]) == 0
    full = capsys.readouterr().out
    assert "TYPE" in full and "gcp:container/nodePool:NodePool" in full and "outputs:" in full


def test_a_note_is_silenced_by_its_id_and_only_that_note(capsys, monkeypatch):
    assert plan_cli.main(["--stack", "onprem-containerd"]) == 0
    (line,) = capsys.readouterr().err.splitlines()
    nid = line.rsplit("[", 1)[1].rstrip("]")
    assert nid == note_id(line.removeprefix("note: ").rsplit(" [", 1)[0])
    assert plan_cli.main(["--stack", "onprem-containerd", "--hide-note", nid]) == 0
    assert capsys.readouterr().err == ""
    monkeypatch.setenv("GPU_INFRA_HIDE_NOTES", "some-other-0000")
    assert plan_cli.main(["--stack", "onprem-containerd"]) == 0
    assert capsys.readouterr().err.startswith("note: ")


def test_all_plans_every_sample_stack_in_one_table_with_totals(capsys):
    assert plan_cli.main(["--all", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert sorted(doc["stacks"]) == STACKS
    assert doc["totals"]["stacks"] == len(STACKS)
    assert doc["totals"]["gpusAtMax"] >= 20 and doc["stacks"]["gke-t4"]["cost"]["atMaxPerHour"]
    t4 = doc["stacks"]["gke-t4"]
    assert set(t4) == {"project", "stack", "observed", "assumed", "cost", "resources", "outputs"}


def test_fleet_table_has_a_row_per_stack_and_a_total(capsys):
    assert plan_cli.main(["--stack", "gke-t4", "--stack", "gke-a100-mig"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["STACK", "PLATFORM", "REGION"]
    assert [ln.split()[0] for ln in lines[1:4]] == ["gke-t4", "gke-a100-mig", "TOTAL"]


def test_fleet_counts_a_stack_named_twice_once_by_name_or_by_path(capsys):
    t4_path = str(ROOT / "stacks" / "Pulumi.gke-t4.yaml")
    args = ["--stack", "gke-t4", "--stack", "gke-t4", "--stack", t4_path, "--json"]
    assert plan_cli.main(args) == 0
    out, err = capsys.readouterr()
    doc = json.loads(out)
    assert doc["totals"]["stacks"] == 1 and doc["totals"]["gpusAtMax"] == 20
    assert err.count("the same stack file as gke-t4; planned once") == 2


def test_fleet_refuses_two_files_of_the_same_stack_name(tmp_path, capsys):
    copy = tmp_path / "Pulumi.gke-t4.yaml"
    copy.write_text((ROOT / "stacks" / "Pulumi.gke-t4.yaml").read_text())
    assert plan_cli.main(["--stack", "gke-t4", "--stack", str(copy), "--json"]) == 2
    out, err = capsys.readouterr()
    assert json.loads(out)["totals"]["gpusAtMax"] == 20 and "already in the fleet" in err


def test_fleet_with_an_invalid_stack_exits_2_naming_it_and_plans_the_rest(capsys):
    assert plan_cli.main(["--stack", "gke-t4", "--stack", "nope"]) == 2
    out, err = capsys.readouterr()
    assert "gke-t4" in out and err.startswith("nope: --stack: no stack 'nope'")


def test_exporting_again_after_removing_a_namespace_leaves_no_file_for_it(tmp_path, capsys):
    src = ROOT / "stacks" / "Pulumi.onprem-k3s-timeslicing.yaml"
    text = src.read_text()
    removed = "    - name: notebooks\n      gpus: 8\n"
    assert removed in text
    stack = tmp_path / "Pulumi.onprem-k3s-timeslicing.yaml"
    stack.write_text(text)
    out = tmp_path / "gitops"
    assert plan_cli.main(["--stack", str(stack), "--export", str(out)]) == 0
    assert list((out / "manifests").glob("*notebooks*"))
    stack.write_text(text.replace(removed, ""))
    assert plan_cli.main(["--stack", str(stack), "--export", str(out)]) == 0
    assert not [f for f in out.rglob("*") if "notebooks" in f.name], list(out.rglob("*"))
    assert "removed " in capsys.readouterr().out


def test_export_into_a_directory_it_did_not_write_exits_2(tmp_path, capsys):
    (tmp_path / "mine.txt").write_text("x")
    assert plan_cli.main(["--stack", "gke-t4", "--export", str(tmp_path)]) == 2
    assert "not empty" in capsys.readouterr().err


def test_diff_against_a_stack_that_does_not_exist_names_diff_and_the_stacks(capsys):
    assert plan_cli.main(["--stack", "gke-t4", "--diff", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("--diff: no stack 'nope'") and "gke-t4" in err


def _attached(directory: Path, stack: str, old: str, new: str) -> Path:
    """Sample ``stack`` (same file name, so the same stack) with ``old`` -> ``new``."""
    text = (ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text()
    assert old in text
    directory.mkdir()
    f = directory / f"Pulumi.{stack}.yaml"
    f.write_text(text.replace(old, new))
    return f


# gke-t4 attached to a running cluster (its operator then cluster-wide) under the name ``{}``.
GKE_ATTACHED = (
    "    name: {}\n    location: us-central1\n    existing: true\n    cpuNodes: 3\n",
    "    enabled: true\n    clusterWide: true\n",
)


@pytest.mark.parametrize("stack", ["eks-existing", "gke-t4"])
def test_diff_re_pointing_an_existing_cluster_stack_plans_over_the_cluster_it_names(
    stack, tmp_path, capsys
):
    # Day 2: the account runs both clusters, and the new side attaches to the one it names, as
    # `pulumi up` over the running stack would: not "no cluster of that name".
    if stack == "eks-existing":
        old = ROOT / "stacks" / "Pulumi.eks-existing.yaml"
        new = _attached(tmp_path / "new", stack, "    name: shared\n", "    name: shared-b\n")
    else:
        cluster, operator = GKE_ATTACHED
        here = "    name: ml\n    location: us-central1\n"
        old = _attached(tmp_path / "old", stack, here, cluster.format("ml-a"))
        old.write_text(old.read_text().replace("    enabled: true\n", operator))
        new = _attached(tmp_path / "new", stack, here, cluster.format("ml-b"))
        new.write_text(new.read_text().replace("    enabled: true\n", operator))
    assert plan_cli.main(["--stack", str(new), "--diff", str(old)]) == 0
    out, err = capsys.readouterr()
    assert "cluster of that name" not in err
    assert " - delete " in out and " + create " in out


def test_export_flags_without_export_are_a_usage_error_and_bad_stack_outputs_exit_2(
    tmp_path, capsys
):
    with pytest.raises(SystemExit) as e:
        plan_cli.main(["--stack", "gke-t4", "--repo-url", "https://git.example.org/x.git"])
    assert e.value.code == 2 and "--repo-url: only with --export" in capsys.readouterr().err
    bad = tmp_path / "outputs.json"
    bad.write_text("[]")
    argv = ["--stack", "gke-t4", "--export", str(tmp_path / "out"), "--stack-outputs", str(bad)]
    assert plan_cli.main(argv) == 2
    assert capsys.readouterr().err.startswith("--stack-outputs: ")


def test_all_plans_only_the_stacks_of_stacks_dir(tmp_path, capsys):
    mine = tmp_path / "ops"
    mine.mkdir()
    (mine / "Pulumi.my-gpus.yaml").write_text(T4.read_text())
    assert plan_cli.main(["--all", "--stacks-dir", str(mine), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert sorted(doc["stacks"]) == ["my-gpus"] and doc["totals"]["stacks"] == 1


def test_all_defaults_to_the_stacks_of_the_working_directory_not_the_samples(
    tmp_path, capsys, monkeypatch
):
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.my-gpus.yaml").write_text(T4.read_text())
    monkeypatch.chdir(tmp_path)
    assert plan_cli.main(["--all", "--json"]) == 0
    assert sorted(json.loads(capsys.readouterr().out)["stacks"]) == ["my-gpus"]
    (tmp_path / "stacks" / "Pulumi.my-gpus.yaml").unlink()
    assert plan_cli.main(["--all"]) == 2
    assert "--stacks-dir: " in capsys.readouterr().err


def test_fleet_marks_a_stack_priced_from_a_disputed_node_price_and_names_it(capsys):
    # gke-l4-spot's Spot g2-standard-8 in us-central1: price_disagreements.csv lists it (catalog
    # 0.34057, the dataset 0.479872); gke-t4's on-demand rows are not listed.
    assert plan_cli.main(["--stack", "gke-l4-spot", "--stack", "gke-t4"]) == 0
    out = capsys.readouterr().out
    rows = {ln.split()[0]: ln for ln in out.splitlines()[1:3]}
    assert "!" in rows["gke-l4-spot"] and "!" not in rows["gke-t4"]
    assert "! node prices not verified, a second source disagrees: gke-l4-spot" in out
    assert plan_cli.main(["--stack", "gke-l4-spot", "--stack", "gke-t4", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["totals"]["unverified"] == ["gke-l4-spot"]
