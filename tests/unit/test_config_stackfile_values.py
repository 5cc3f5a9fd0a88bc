"""Config values as Pulumi's reader (go-yaml v3, Pulumi's config `object.go`) resolves them, and as
the engine hands them over: what YAML 1.1 or the program would read otherwise is refused.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infra.core.config.stack import load_stack_file, parse
from infra.core.errors import ConfigErrors
from infra.core.stackfile.goyaml import go_yaml_tag
from infra.core.stackfile.reader import read_stack_file
from tests.unit.stackfile_fixtures import ROOT, problems


@pytest.mark.parametrize(("head", "where"), [("%YAML 1.2\n", "1:1"), ("# c\n%YAML 1.3\n", "2:1")])
def test_yaml_version_other_than_1_1_is_refused_as_yaml_v3_refuses_it(tmp_path, head, where):
    """go-yaml/yaml v3 parserc.go yaml_parser_process_directives: "found incompatible YAML
    document" unless major and minor are 1.1 (libyaml takes 1.2)."""
    (line,) = problems(tmp_path, head + "---\nconfig: {}\n")
    assert line.startswith(f"<file>:{where}: found incompatible YAML document")


def test_yaml_1_1_directive_is_read(tmp_path):
    f = tmp_path / "Pulumi.t.yaml"
    f.write_text("%YAML 1.1\n---\nconfig:\n  a:b: c\n")
    assert load_stack_file(f)[1] == {"a:b": "c"}


# PyYAML's int() on more than 4300 digits raises ValueError; the APIs take int64.
@pytest.mark.parametrize(
    "value", ["9" * 5000, "0x" + "f" * 4000, "0b" + "1" * 70, "9223372036854775808"]
)
def test_integer_outside_int64_is_refused_while_composing_naming_its_key_path(tmp_path, value):
    (line,) = problems(tmp_path, f"config:\n  gpu-infra:gpuPools:\n    - maxNodes: {value}\n")
    assert line.startswith("<file>:3:17: gpuPools[0].maxNodes: integer ")
    assert "outside the 64-bit range" in line


def test_integer_at_int64_bounds_is_read(tmp_path):
    f = tmp_path / "Pulumi.t.yaml"
    f.write_text(
        "config:\n  a:b: [9223372036854775807, -9223372036854775808, 0x7fffffffffffffff]\n"
    )
    assert read_stack_file(f, "gpu-infra")["config"]["a:b"] == [2**63 - 1, -(2**63), 2**63 - 1]


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("2001-12-14", "timestamp"),
        ("2001-12-14t21:59:43.10-05:00", "timestamp"),
        ("!!binary aGVsbG8=", "binary"),
        ("!!set {a, b}", "set"),
        ("!!omap [a: 1]", "omap"),
        ("!!pairs [a: 1]", "pairs"),
    ],
)
def test_gpu_operator_values_take_only_json_types(tmp_path, value, kind):
    (line,) = problems(
        tmp_path,
        f"config:\n  gpu-infra:gpuOperator:\n    values:\n      driver:\n        version: {value}\n",
    )
    assert f"gpuOperator.values.driver.version: a YAML {kind} is not a JSON value" in line


@pytest.mark.parametrize("value", [".nan", ".inf", "-.Inf", ".NaN", "1.0e+400", "-2.5e+999"])
def test_non_finite_floats_are_refused(tmp_path, value):
    (line,) = problems(tmp_path, f"config:\n  gpu-infra:gpuOperator:\n    values: {{x: {value}}}\n")
    assert "gpuOperator.values.x: " in line and "is not a finite number" in line


@pytest.mark.parametrize("key", ["on", "true", "Yes", "OFF"])
def test_yaml11_boolean_key_is_refused_as_read_as_boolean_with_quote_hint(tmp_path, key):
    (line,) = problems(tmp_path, f"config:\n  gpu-infra:gpuOperator:\n    {key}: 1\n")
    assert f"gpuOperator: key '{key}' is read as boolean (YAML 1.1); quote it" in line


def test_sexagesimal_number_is_refused_with_a_quote_hint(tmp_path):
    (line,) = problems(tmp_path, "config:\n  gpu-infra:gpuPools:\n    - maxNodes: 1:20\n")
    assert "gpuPools[0].maxNodes: '1:20' is read as a base-60 number" in line and "quote it" in line


def test_constructor_value_error_is_a_clean_problem(tmp_path):
    (line,) = problems(tmp_path, "config:\n  a:b: !!int 12abc\n")
    assert line.startswith("<file>")


# --- Pulumi's reader: go-yaml/yaml v3 resolve.go / decode.go, Pulumi config object.go -----------
def _read(tmp_path: Path, text: str) -> dict:
    f = tmp_path / "Pulumi.t.yaml"
    f.write_text(text)
    return load_stack_file(f)[1]


@pytest.mark.parametrize(
    ("text", "tag"),
    [
        # resolve.go resolveMapList: only true/True/TRUE and false/False/FALSE are booleans.
        ("yes", "str"),
        ("No", "str"),
        ("on", "str"),
        ("OFF", "str"),
        ("y", "str"),
        ("True", "bool"),
        ("FALSE", "bool"),
        ("~", "null"),
        ("Null", "null"),
        # resolve.go: strconv.ParseInt(plain, 0, 64) after removing '_', then yamlStyleFloat.
        ("0o17", "int"),
        ("0x1F", "int"),
        ("0777", "int"),
        ("1_000", "int"),
        ("+12", "int"),
        ("08", "float"),
        ("1e3", "float"),
        (".5", "float"),
        # strconv.ParseFloat takes '_' between digits (golang atof_test.go "1_23.50_0_0e+1_2").
        (".5_0", "float"),
        ("._5", "str"),
        (".5_", "str"),
        ("1.", "float"),
        # "Base 60 floats are a bad idea, were dropped in YAML 1.2, and are purposefully unsupported"
        ("1:20", "str"),
        ("2025-01-01", "timestamp"),
        ("2025-13-01", "str"),
    ],
)
def test_plain_scalars_resolve_as_yaml_v3_resolve_go_does(text, tag):
    assert go_yaml_tag(text) == f"tag:yaml.org,2002:{tag}"


def test_yes_no_on_off_values_reach_the_program_as_strings(tmp_path):
    raw = _read(tmp_path, "config:\n  a:b: {x: yes, y: off, z: true, w: 0o17, v: 1e3}\n")
    assert raw["a:b"] == {"x": "yes", "y": "off", "z": True, "w": 15, "v": 1000}


def test_integral_float_in_an_object_reaches_the_program_as_an_int_through_json(tmp_path):
    # Go's encoding/json writes float64 200 as "200"; Config.get_object's json.loads reads an int.
    raw = _read(tmp_path, "config:\n  a:b: {d: 200.0, e: 1.5, f: [2.0]}\n")
    assert raw["a:b"] == {"d": 200, "e": 1.5, "f": [2]}
    assert type(raw["a:b"]["d"]) is int


def test_top_level_scalars_reach_the_program_as_their_text(tmp_path):
    raw = _read(tmp_path, "config:\n  a:b: 3\n  a:c: true\n  a:d: 2.0\n")
    assert raw == {"a:b": "3", "a:c": "true", "a:d": "2"}


def test_non_string_keys_are_named_as_go_fmt_prints_them(tmp_path):
    assert _read(tmp_path, "config:\n  a:b: {1: x, 0x10: y}\n")["a:b"] == {"1": "x", "16": "y"}


def test_two_merge_keys_in_one_mapping_are_refused_with_file_line_col(tmp_path):
    # decode.go mapping(): '<<' twice is 'mapping key "<<" already defined at line N'.
    text = "config:\n  a:x: &a {k: 1}\n  a:y: &b {j: 2}\n  a:z:\n    <<: *a\n    <<: *b\n"
    (line,) = problems(tmp_path, text)
    assert line.startswith("<file>:6:5: duplicate key a:z.<< (first on line 5)")
    assert "two '<<' merge keys" in line


def test_one_merge_key_with_a_list_merges_first_wins_as_yaml_v3(tmp_path):
    text = "config:\n  a:x: &a {k: 1}\n  a:y: &b {k: 2, j: 2}\n  a:z: {<<: [*a, *b], j: 3}\n"
    assert _read(tmp_path, text)["a:z"] == {"k": 1, "j": 3}


def test_int_key_and_quoted_key_with_the_same_text_collide_as_in_yaml_v3(tmp_path):
    # decode_test.go: "line 4: mapping key \"9\" already defined at line 2" (compared by text).
    (line,) = problems(tmp_path, "config:\n  a:b:\n    9: x\n    '9': y\n")
    assert line.startswith("<file>:4:5: duplicate key a:b.9 (first on line 3)")


def test_duplicate_key_reached_through_an_alias_is_refused(tmp_path):
    text = "config:\n  a:b:\n    &k name: x\n    *k : y\n"
    (line,) = problems(tmp_path, text)
    # reported where the duplicate (the alias) stands, as yaml.v3 names the repeated key's line
    assert line.startswith(
        "<file>:4:5: duplicate key a:b.name (first on line 3, repeated through an alias)"
    )


def test_explicit_tag_yaml_v3_cannot_decode_is_refused(tmp_path):
    (line,) = problems(tmp_path, "config:\n  a:b: {x: !!bool yes}\n")
    assert line.startswith(
        "<file>:2:12: a:b.x: Pulumi's YAML reader cannot decode !!str `yes` as a !!bool"
    )


def test_unquoted_date_anywhere_is_refused_naming_what_pulumi_reads(tmp_path):
    (line,) = problems(tmp_path, "config:\n  gpu-infra:cluster: {name: 2025-01-01}\n")
    assert line.startswith("<file>:2:29: cluster.name: a YAML timestamp is not a JSON value")
    assert "'2025-01-01 00:00:00 +0000 UTC'" in line


def _gke(extra_cluster: str = "", extra_pool: str = "") -> str:
    return (
        "config:\n  gcp:project: demo-project\n  gpu-infra:platform: gke\n"
        f"  gpu-infra:cluster:\n    name: ml\n    location: us-central1\n{extra_cluster}"
        "  gpu-infra:gpuPools:\n    - name: gpu\n      machineType: n1-highmem-8\n"
        f"      gpu: {{type: nvidia-tesla-t4, count: 1}}\n      maxNodes: 2\n{extra_pool}"
    )


def test_spot_yes_and_deletion_protection_off_are_refused_saying_pulumi_reads_a_string(tmp_path):
    raw = _read(tmp_path, _gke("    deletionProtection: off\n", "      spot: yes\n"))
    with pytest.raises(ConfigErrors) as e:
        parse(raw, "t")
    lines = str(e.value).splitlines()
    assert any(
        ln.startswith("cluster.deletionProtection: 'off' is a string to Pulumi") for ln in lines
    )
    assert any(ln.startswith("gpuPools[0].spot: 'yes' is a string to Pulumi") for ln in lines)


def test_disk_size_200_0_plans_as_200(tmp_path):
    cfg = parse(_read(tmp_path, _gke(extra_pool="      diskSizeGb: 200.0\n")), "t")
    assert cfg.pools[0].disk_size_gb == 200


def _through_the_engine(monkeypatch, handed: dict[str, str]) -> dict:
    """``infra.program.engine_config`` as ``pulumi up`` runs it: the CLI hands the program its
    config as the JSON object in ``PULUMI_CONFIG`` (key -> text)."""
    import contextvars

    from pulumi.runtime import config as runtime_config

    from infra import program

    monkeypatch.setenv("PULUMI_CONFIG", json.dumps(handed))

    def read() -> dict:
        runtime_config.CONFIG.set({})
        return program.engine_config()

    return contextvars.copy_context().run(read)


@pytest.mark.parametrize(
    "stack", sorted((ROOT / "stacks").glob("Pulumi.*.yaml")), ids=lambda p: p.stem
)
def test_every_sample_stack_reads_the_same_offline_and_through_the_engine(stack, monkeypatch):
    """What the plan reads equals what ``pulumi up`` hands the program (object values as JSON)."""
    from infra.core.config.stack import encode_engine_config

    handed = encode_engine_config(read_stack_file(stack, "gpu-infra")["config"])
    assert all(isinstance(v, str) for v in handed.values())
    assert load_stack_file(stack)[1] == _through_the_engine(monkeypatch, handed)


def test_a_string_holding_a_json_object_reads_as_the_object_offline_as_through_the_engine(
    tmp_path, monkeypatch
):
    text = '{"name":"ml","location":"us-central1"}'
    f = tmp_path / "Pulumi.t.yaml"
    f.write_text(f"config:\n  gpu-infra:cluster: '{text}'\n  gpu-infra:note: '[oops'\n")
    # A stack-file string is handed over verbatim (Pulumi object.go MarshalString of a string).
    engine = _through_the_engine(
        monkeypatch, {"gpu-infra:cluster": text, "gpu-infra:note": "[oops"}
    )
    assert engine["gpu-infra:cluster"] == {"name": "ml", "location": "us-central1"}
    assert load_stack_file(f)[1] == engine


def test_the_engine_hands_an_integral_float_in_an_object_over_as_an_int():
    from infra.core.config.stack import decode_engine_config, encode_engine_config

    raw = {"a:b": {"d": 200.0, "e": [1.5]}, "a:c": 2.0, "a:d": True}
    assert decode_engine_config(encode_engine_config(raw)) == {
        "a:b": {"d": 200, "e": [1.5]},
        "a:c": "2",
        "a:d": "true",
    }


def test_leading_zeros_do_not_make_an_integer_long(tmp_path):
    raw = _read(tmp_path, "config:\n  a:b: [0b" + "0" * 90 + "1, -0x" + "0" * 90 + "f]\n")
    assert raw["a:b"] == [1, -15]


@pytest.mark.parametrize("value", ["-" + "9" * 5000, "-0x" + "f" * 100, "-9223372036854775809"])
def test_negative_integer_below_int64_is_refused(tmp_path, value):
    (line,) = problems(tmp_path, f"config:\n  gpu-infra:gpuPools:\n    - maxNodes: {value}\n")
    assert "outside the 64-bit range" in line


@pytest.mark.parametrize(
    ("value", "reads"),
    [
        # yaml.v3 decode.go scalar(): a !!binary value is base64-decoded, `resolved = string(data)`.
        ("!!binary Z2tl", "a YAML binary is not a JSON value; Pulumi would read the text 'gke'"),
        ("!!set {gke, eks}", "a YAML set is not a JSON value; Pulumi would read a mapping"),
        ("!!omap [a: 1]", "a YAML omap is not a JSON value; Pulumi would read a list"),
        ("!custom gke", "a YAML !custom is not a JSON value; Pulumi would read the text 'gke'"),
    ],
)
def test_tags_outside_json_are_refused_anywhere_naming_the_key_and_what_pulumi_reads(
    tmp_path, value, reads
):
    (line,) = problems(tmp_path, f"config:\n  gpu-infra:platform: {value}\n")
    assert line.startswith(f"<file>:2:23: platform: {reads}")


@pytest.mark.parametrize(
    ("value", "where"),
    [("{team: {secure: v1}}", "2:28: labels.team"), ("[{secure: v1}]", "2:22: labels[0]")],
)
def test_a_one_key_secure_mapping_inside_a_value_is_refused_as_pulumi_reads_it_as_ciphertext(
    tmp_path, value, where
):
    # pulumi/pulumi sdk/go/common/resource/config/object.go isSecureValue: a map of length one
    # with a string "secure" value, at any depth.
    (line,) = problems(tmp_path, f"config:\n  gpu-infra:labels: {value}\n")
    assert line.startswith(f"<file>:{where}: a mapping whose one key is 'secure' is how Pulumi")


@pytest.mark.parametrize("value", ["{secure: 1}", "{secure: v1, team: ml}"])
def test_a_secure_key_that_is_not_a_pulumi_secret_reads_as_a_plain_mapping(tmp_path, value):
    f = tmp_path / "Pulumi.t.yaml"
    f.write_text(f"config:\n  gpu-infra:labels: {value}\n  secure: text\n")
    assert "secure" in read_stack_file(f, "gpu-infra")["config"]["gpu-infra:labels"]


def test_a_whole_config_value_may_be_a_pulumi_secret(tmp_path):
    f = tmp_path / "Pulumi.t.yaml"
    f.write_text("config:\n  aws:secretKey: {secure: AAABADx}\n")
    assert read_stack_file(f, "gpu-infra")["config"]["aws:secretKey"] == {"secure": "AAABADx"}


def test_a_float_with_underscores_after_the_point_reads_as_yaml_v3_reads_it(tmp_path):
    assert _read(tmp_path, "config:\n  a:b: [.5_0]\n")["a:b"] == [0.5]


def test_an_alias_placing_a_deep_node_past_the_depth_limit_is_refused_at_the_alias(tmp_path):
    """The limit holds for the expanded tree: the anchored node's depth counts where the alias
    stands, not where the anchor was written."""
    deep = "{a: " * 30 + "1" + "}" * 30
    text = f"config:\n  x: &d {deep}\n  gpu-infra:values: {'{b: ' * 20}*d{'}' * 20}\n"
    (line,) = problems(tmp_path, text)
    assert line.startswith("<file>:3:") and "through alias *d" in line


def test_an_alias_within_the_depth_limit_is_read(tmp_path):
    f = tmp_path / "Pulumi.t.yaml"
    f.write_text("config:\n  x: &d {a: {b: 1}}\n  y: {c: *d}\n")
    assert load_stack_file(f)[1]["gpu-infra:y"] == {"c": {"a": {"b": 1}}}
