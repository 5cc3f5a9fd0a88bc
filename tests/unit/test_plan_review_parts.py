"""The pieces of the review: values at a path, failing changes, change notes, note ids, colour."""

from __future__ import annotations

import io

from infra.core.cost import Cost
from infra.core.diff import Change, diff, value_at
from infra.planview import review as rv
from infra.planview.notes import note_id
from infra.planview.style import colour_enabled, colour_text

NP = "gcp:container/nodePool:NodePool"
NG = "aws:eks/nodeGroup:NodeGroup"
NO_COST = Cost((), None, "2026-11-26")


def _rev(*changes: Change) -> rv.Review:
    return rv.Review(changes, {}, {}, 0, NO_COST, NO_COST, "old", "new")


def test_value_at_follows_dotted_keys_and_list_indexes_and_says_absent():
    inputs = {"nodeConfig": {"guestAccelerators": [{"count": 2}]}}
    assert value_at(inputs, "nodeConfig.guestAccelerators[0].count") == 2
    assert value_at(inputs, "nodeConfig.guestAccelerators[1].count", "x") == "x"
    assert value_at(inputs, "nodeConfig.machineType", "x") == "x"


def test_fail_on_replace_catches_replace_and_delete_not_an_update():
    update = Change("u1", NP, "a", "update", ("autoscaling.totalMaxNodeCount",))
    delete = Change("u2", NP, "b", "delete")
    assert rv.failures(_rev(update), "replace") == []
    assert len(rv.failures(_rev(update, delete), "replace")) == 1


def test_fail_on_disruptive_catches_a_rolling_update_and_never_passes_an_unknown():
    rolling = Change("u1", NP, "a", "update", ("nodeConfig.machineType",), disruptive="drained")
    unknown = Change("u2", "x:y:Z", "b", "unknown", ("p",))
    assert len(rv.failures(_rev(rolling), "disruptive")) == 1
    assert len(rv.failures(_rev(unknown), "disruptive")) == 1
    assert rv.failures(_rev(rolling, unknown), None) == []


def test_an_eks_node_group_replace_is_create_before_delete():
    c = Change("u", NG, "g", "replace", ("nodeGroupName",))
    assert "create-before-delete" in rv.change_notes(c)[0]


def test_two_long_strings_are_shown_around_their_first_difference():
    a, b = "x" * 200 + "20 max", "x" * 200 + "40 max"
    old, new = rv.show_pair(a, b)
    assert "20 max" in old and "40 max" in new and old.startswith("\u2026")


def test_a_note_id_is_its_subject_and_a_hash_stable_for_the_same_text():
    text = "gpuOperator.toolkitEnv.X: not applied"
    assert note_id(text) == note_id(text) and note_id(text).startswith("gpuoperator.toolkitenv.x-")
    assert note_id(text) != note_id(text + " now")


def test_colour_only_on_a_terminal_and_never_with_no_color(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert colour_enabled(Tty()) and not colour_enabled(io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not colour_enabled(Tty())


def test_colour_adds_only_ansi_codes_the_text_stays_the_same():
    text = " ~ update  T n\n      DISRUPTIVE: x\ncost: $1/h\nplain"
    painted = colour_text(text)
    assert painted != text and "\033[" in painted
    assert __import__("re").sub(r"\033\[[0-9;]*m", "", painted) == text


def _reviewed(change: Change, old_inputs: dict, new_inputs: dict | None) -> rv.Review:
    old = [{"urn": change.urn, "inputs": old_inputs}]
    new = [] if new_inputs is None else [{"urn": change.urn, "inputs": new_inputs}]
    return rv.review(old, new, [change], (NO_COST, NO_COST), ("old", "new"))


def test_fail_on_disruptive_catches_a_deleted_namespace_and_everything_in_it():
    c = Change("u", "kubernetes:core/v1:Namespace", "ns-training", "delete")
    rev = _reviewed(c, {"metadata": {"name": "training"}}, None)
    (hit,) = rv.failures(rev, "disruptive")
    # Named as Kubernetes knows it (metadata.name), not by its Pulumi resource name.
    assert "namespace training:" in hit and "deleted" in hit
    assert rv.review_json(rev)["changes"][0]["disruptive"]


def test_a_diff_ref_starting_with_a_dash_is_refused_never_passed_to_git_as_an_option(tmp_path):
    import pytest

    from infra.core.errors import ConfigErrors

    target = tmp_path / "written"
    with pytest.raises(ConfigErrors) as e, rv.old_stack_file(f"--output={target}:y"):
        pass
    assert "start with '-'" in str(e.value) and not target.exists()


def test_hide_note_with_an_id_no_note_has_is_reported(capsys):
    from infra.planview import notes

    text = "eks: something worth knowing"
    assert notes.shown(text, frozenset())
    assert notes.unknown_ids([note_id(text), "nope-0000", "all"]) == ["nope-0000"]
    notes.warn_unknown(["nope-0000"])
    assert "--hide-note nope-0000: no note has this id" in capsys.readouterr().err


def test_markdown_rows_carry_the_type_a_disruptive_marker_on_every_row_and_short_names():
    urn = "urn:pulumi:s::gpu-infra::gpu-infra:gcp:Cluster$gcp:container/cluster:Cluster::ml"
    pool = Change(
        "u1",
        NP,
        "ml-gpu",
        "replace",
        ("nodeConfig.machineType", "nodeConfig.diskSizeGb"),
        disruptive="replace of a GPU pool: its nodes are deleted",
    )
    dependent = Change("u2", "x:y:Z", "dep", "unknown", because=f"may be replaced: {urn} is")
    values = {
        "u1": (
            rv.Value("nodeConfig.machineType", "a", "b"),
            rv.Value("nodeConfig.diskSizeGb", 1, 2),
        )
    }
    rev = rv.Review((pool, dependent), values, {}, 0, NO_COST, NO_COST, "old", "new")
    lines: list[str] = []
    rv.print_markdown(rev, lines.append)
    rows = [r for r in lines if r.startswith("| replace") or r.startswith("| | |")]
    assert rows[0].startswith(f"| replace | `{NP}` | `ml-gpu` | `nodeConfig.machineType` |")
    assert "⚠️ replace of a GPU pool: its nodes are deleted" in rows[0]
    assert "⚠️ (same change)" in rows[1]
    (unknown,) = [r for r in lines if r.startswith("| unknown")]
    assert "may be replaced: ml is" in unknown and "urn:pulumi" not in unknown


def test_markdown_marks_a_partial_total_and_lists_what_it_leaves_out():
    from infra.core.platform_cost import Line

    partial = Cost((), None, "2026-11-26", lines=(Line("NAT", 0.0, 0.0, None, "NAT gateway"),))
    rev = rv.Review((), {}, {}, 3, NO_COST, partial, "old", "new")
    lines: list[str] = []
    rv.print_markdown(rev, lines.append)
    assert "| at minimum, per hour | $0.00 | $0.00 (partial) | +$0.00 |" in lines
    assert "(partial): not in the totals: NAT gateway" in lines


def test_a_review_whose_new_side_is_priced_from_a_disputed_row_says_so_in_text_markdown_and_json():
    from infra.core.catalog.pricing import Disagreement
    from infra.core.cost import PoolCost

    # price_disagreements.csv: g2-standard-8 Spot in us-central1, catalog 0.34057, the dataset's
    # 0.479872 (pricing.yml generated 2026-07-30)
    d = Disagreement("g2-standard-8", "us-central1", "spot", "vCPUs, memory and 1 nvidia-l4",
                     0.34057, 0.479872, "https://example.test/pricing.yml", "2026-07-30")  # fmt: skip
    new = Cost((PoolCost("l4", 0.34057, 0, 4, True, disagreements=(d,)),), None, "2026-11-26")
    rev = rv.Review((), {}, {}, 0, NO_COST, new, "old", "new")
    assert rv.cost_lines(rev)[-1] == (
        "cost: node prices not verified, a second source disagrees (after: l4; see the plan)"
    )
    md: list[str] = []
    rv.print_markdown(rev, md.append)
    assert "Node prices not verified, a second source disagrees (after: l4; see the plan)" in md
    assert rv.review_json(rev)["cost"]["unverified"] == {"old": [], "new": ["l4"]}
    assert not any("not verified" in line for line in rv.cost_lines(_rev()))


CC = "kubernetes:cloud.google.com/v1:ComputeClass"


def _compute_class(name: str, zones: tuple[str, ...] = ("us-central1-a",)) -> dict:
    spec = {"priorities": [{"machineType": "g2-standard-8", "location": {"zones": list(zones)}}]}
    return {
        "urn": "urn:pulumi:s::gpu-infra::gpu-infra:gcp:GpuNodePools$" + CC + "::c-l4-auto-class",
        "type": CC,
        "name": "c-l4-auto-class",
        "custom": True,
        "inputs": {
            "apiVersion": "cloud.google.com/v1",
            "kind": "ComputeClass",
            "metadata": {"name": name},
            "spec": spec,
        },
    }


def _class_change(old: list[dict], new: list[dict]) -> Change:
    (c,) = rv.review(old, new, diff(old, new), (NO_COST, NO_COST), ("old", "new")).changes
    return c


def test_a_compute_class_renamed_or_deleted_is_disruptive_and_one_changed_in_place_is_not():
    # "Given ComputeClass affects only workloads using workload separation label equal to CCs
    # name" (the CRD's description): pods selecting l4-auto get no node from a class of
    # another name.
    was = _compute_class("l4-auto")
    renamed = _class_change([was], [_compute_class("l4-auto-ef2ecf")])
    assert renamed.op == "replace"
    assert "ComputeClass l4-auto: pods that select it (cloud.google.com/compute-class=l4-auto" in (
        renamed.disruptive
    )
    assert "ComputeClass l4-auto" in _class_change([was], []).disruptive
    widened = _class_change([was], [_compute_class("l4-auto", ("us-central1-a", "us-central1-b"))])
    assert widened.op == "update" and widened.disruptive == ""
