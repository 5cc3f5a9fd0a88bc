"""Reading a stack file ends in a mapping or in clean ``<file>:<line>:<column>: <problem>`` lines."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from infra.core.config.stack import load_stack_file, parse
from infra.core.errors import ConfigErrors
from infra.core.stackfile.goyaml import go_yaml_tag
from infra.core.stackfile.loader import MAX_DEPTH, MAX_NODES
from infra.core.stackfile.reader import MAX_BYTES, read_stack_file

ROOT = Path(__file__).resolve().parents[2]


def problems(tmp_path: Path, content: bytes | str) -> list[str]:
    f = tmp_path / "Pulumi.t.yaml"
    f.write_bytes(content.encode() if isinstance(content, str) else content)
    with pytest.raises(ConfigErrors) as e:
        load_stack_file(f)
    return [str(i).replace(str(f), "<file>") for i in e.value.issues]


def test_invalid_utf8_byte_is_named_with_its_byte_offset_line_and_column(tmp_path):
    (line,) = problems(tmp_path, b"config:\n  gpu-infra:platform: g\xe9ke\n")
    assert line.startswith("<file>:2:24: not UTF-8: byte 0xe9 at byte offset 31")


def test_utf8_bom_is_tolerated_and_offsets_count_it(tmp_path):
    (line,) = problems(tmp_path, b"\xef\xbb\xbfconfig:\n  x: \xff\n")
    assert "byte offset 16" in line


@pytest.mark.parametrize(("bom", "codec"), [(b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be")])
def test_utf16_with_a_bom_reads_as_yaml_v3_reads_it(tmp_path, bom, codec):
    """go-yaml/yaml v3 readerc.go yaml_parser_determine_encoding: a UTF-16 BOM picks UTF-16."""
    sample = ROOT / "stacks" / "Pulumi.gke-t4.yaml"
    f = tmp_path / "Pulumi.gke-t4.yaml"
    f.write_bytes(bom + sample.read_text(encoding="utf-8").encode(codec))
    assert load_stack_file(f) == load_stack_file(sample)


def test_utf16_without_a_bom_is_read_as_utf8_as_yaml_v3_reads_it(tmp_path):
    (line,) = problems(tmp_path, "config: {}\n".encode("utf-16-le"))
    assert (
        line == "<file>:1:2: character U+0000 is not allowed in YAML (control characters are not)"
    )


def test_utf16_lone_surrogate_is_named_with_its_offset(tmp_path):
    (line,) = problems(tmp_path, b"\xff\xfe" + "config:\n".encode("utf-16-le") + b"\x00\xd8a\x00")
    assert line.startswith("<file>:2:1: not UTF-16LE: ") and "byte offset 18" in line


def test_control_character_is_refused_with_its_position(tmp_path):
    (line,) = problems(tmp_path, "config:\n  x: '\x01'\n")
    assert (
        line == "<file>:2:7: character U+0001 is not allowed in YAML (control characters are not)"
    )


def test_yaml_syntax_error_names_file_line_and_column_not_unicode_string(tmp_path):
    (line,) = problems(tmp_path, "config:\n  a: [1, 2\n  b: 3\n")
    assert line.startswith("<file>:3:")
    assert "<unicode string>" not in line


def test_duplicate_key_names_the_key_path_and_both_lines(tmp_path):
    text = "config:\n  gpu-infra:cluster:\n    name: a\n    location: x\n    name: b\n"
    (line,) = problems(tmp_path, text)
    assert line.startswith("<file>:5:5: duplicate key cluster.name (first on line 3)")


def test_duplicate_top_level_config_key_is_refused(tmp_path):
    (line,) = problems(tmp_path, "config:\n  gcp:project: a\n  gcp:project: b\n")
    assert "duplicate key gcp:project (first on line 2)" in line


def test_a_merge_key_is_overridden_by_the_mappings_own_keys(tmp_path):
    f = tmp_path / "Pulumi.t.yaml"
    f.write_text("config:\n  x: &a {k: 1}\n  y: {<<: *a, k: 2}\n")
    assert load_stack_file(f)[1]["gpu-infra:y"] == {"k": 2}


def test_alias_bomb_is_refused_before_expansion(tmp_path):
    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    levels += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    (line,) = problems(tmp_path, "\n".join(levels) + "\n")
    assert f"expands to more than {MAX_NODES} values" in line


def test_recursive_alias_is_refused(tmp_path):
    (line,) = problems(tmp_path, "config: &c\n  x: *c\n")
    assert "refers to a node containing itself" in line


def test_nesting_depth_is_bounded(tmp_path):
    (line,) = problems(tmp_path, "config: " + "[" * 100 + "]" * 100 + "\n")
    assert line.startswith(f"<file>:1:{9 + MAX_DEPTH - 1}: nested deeper than")


def test_nesting_5000_deep_is_a_clean_error_not_a_recursion_error(tmp_path):
    (line,) = problems(tmp_path, "config: " + "[" * 5000 + "]" * 5000 + "\n")
    assert line.startswith("<file>:1:")


def test_file_size_is_bounded(tmp_path):
    (line,) = problems(tmp_path, "# " + "x" * MAX_BYTES + "\n")
    assert line.startswith(f"<file>: larger than {MAX_BYTES // 1024} KiB")


def test_multi_document_file_is_explained(tmp_path):
    (line,) = problems(tmp_path, "config: {}\n---\nconfig: {}\n")
    assert line.startswith("<file>:2:1: a stack file holds one YAML document")


@pytest.mark.parametrize(
    ("text", "kind"), [("- a\n", "a list"), ("hello\n", "a string"), ("", "empty")]
)
def test_non_mapping_root_is_explained(tmp_path, text, kind):
    (line,) = problems(tmp_path, text)
    assert line.endswith(f"must be a mapping with a 'config:' mapping; it is {kind}")


def test_python_tags_are_refused_before_anything_is_constructed(tmp_path):
    (line,) = problems(tmp_path, "config:\n  x: !!python/object/apply:os.system [id]\n")
    assert line.startswith("<file>:2:6: x: a YAML python/object/apply:os.system is not a JSON")


def test_misspelt_root_key_gets_did_you_mean(tmp_path):
    assert problems(tmp_path, "confg:\n  gpu-infra:platform: gke\n") == [
        "confg: not a stack file key; did you mean 'config'?"
    ]


def test_unknown_root_key_with_no_close_match_lists_the_stack_file_keys(tmp_path):
    assert problems(tmp_path, "config: {}\nbackend: s3\n") == [
        "backend: not a stack file key; allowed: config, secretsprovider, encryptedkey, "
        "encryptionsalt, environment"
    ]


def test_missing_config_wrapper_is_named(tmp_path):
    (line,) = problems(tmp_path, "gpu-infra:platform: gke\ngcp:project: p\n")
    assert line.startswith("gpu-infra:platform: config keys belong under 'config:'")


def test_pulumi_stack_settings_keys_are_accepted(tmp_path):
    f = tmp_path / "Pulumi.t.yaml"
    f.write_text("secretsprovider: passphrase\nencryptionsalt: v1:x\nconfig: {a:b: 1}\n")
    # A top-level scalar reaches the program as its text (Pulumi config object.go MarshalString).
    assert load_stack_file(f) == ("t", {"a:b": "1"})


def test_misspelt_project_namespace_gets_did_you_mean():
    with pytest.raises(ConfigErrors) as e:
        parse({"gpu_infra:platform": "gke"}, "s")
    assert (
        "gpu_infra:platform: namespace 'gpu_infra' is not this project's; "
        "did you mean 'gpu-infra:platform'?"
    ) in str(e.value).splitlines()


def test_block_under_project_like_key_is_not_silently_ignored():
    with pytest.raises(ConfigErrors) as e:
        parse({"gpu-infra:gpu_infra": {"platform": "gke", "cluster": {}}}, "s")
    assert "did you mean 'gpu-infra:platform', 'gpu-infra:cluster'?" in str(e.value)


def test_project_key_under_another_projects_namespace_is_named():
    with pytest.raises(ConfigErrors) as e:
        parse({"myproj:gpuPools": []}, "s")
    assert "myproj:gpuPools: 'myproj:' is another project's namespace" in str(e.value)


def test_unknown_project_key_gets_did_you_mean():
    with pytest.raises(ConfigErrors) as e:
        parse({"gpu-infra:gpuPool": []}, "s")
    assert "gpuPool: unknown key; did you mean 'gpuPools'?" in str(e.value).splitlines()


# Peak resident memory of this process image: VmHWM belongs to the address space exec created, while
# getrusage's ru_maxrss would also count the (large) pytest parent it was forked from.
BOMB_SCRIPT = """
import re, sys, time
t = time.perf_counter()
from {module} import main
code = main(["--config", sys.argv[1]{extra}])
sys.stderr.flush()
hwm_kb = int(re.search(r"VmHWM:\\s+([0-9]+)", open("/proc/self/status").read()).group(1))
print(f"{{code}} {{time.perf_counter() - t:.3f}} {{hwm_kb / 1024:.0f}}", file=sys.__stdout__)
"""


def _bomb(tmp_path: Path, where: str) -> Path:
    # 10^9 values when expanded; the anchors sit where a user could put them (free-form values).
    lines = ["config:", "  gpu-infra:platform: kubernetes", f"  {where}:"]
    lines.append("    l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]")
    for i in range(1, 10):
        lines.append(f"    l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]")
    f = tmp_path / "Pulumi.bomb.yaml"
    f.write_text("\n".join(lines) + "\n")
    return f


@pytest.mark.parametrize(
    ("module", "extra"), [("infra.plan", ""), ("quota.check", ', "--offline"')]
)
def test_alias_bomb_in_helm_values_costs_under_5s_and_300mb_in_both_clis(tmp_path, module, extra):
    bomb = _bomb(tmp_path, "gpu-infra:gpuOperator")
    out = subprocess.run(
        [sys.executable, "-c", BOMB_SCRIPT.format(module=module, extra=extra), str(bomb)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
        timeout=30,
    )
    code, seconds, peak_mb = out.stdout.split()
    assert int(code) == 2, out.stderr
    assert "expands to more than" in out.stderr
    assert float(seconds) < 5
    assert float(peak_mb) < 300


def test_both_clis_print_the_same_problems_for_the_same_file(tmp_path, capsys):
    from infra import plan
    from quota import check

    bad = tmp_path / "Pulumi.bad.yaml"
    bad.write_text("config:\n  gpu-infra:platform: gke\n  gpu-infra:platform: eks\n  x: 1\n")
    assert plan.main(["--config", str(bad)]) == 2
    from_plan = capsys.readouterr().err
    assert check.main(["--config", str(bad), "--offline"]) == 2
    from_quota = capsys.readouterr().err
    assert from_plan == from_quota
    assert from_plan.startswith(f"{bad}:3:3: duplicate key platform (first on line 2)")


_MUTATIONS = [b"*a", b"&a ", b"- ", b": ", b"{", b"}", b"[", b"]", b"\t", b"\n", b"'", b'"']
_MUTATIONS += [b"!!python/object ", b"---\n", b"<<: ", b"? ", b"\xff", b"\xe9", b"\x00", b"~"]
_MUTATIONS += [b"null", b"1e9", b"-1", b"true", b"[]", b"{}", b"0x10"]


def test_mutated_sample_stacks_end_in_a_plan_or_config_errors(tmp_path):
    """Any bytes: a few hundred seeded mutations of the sample stacks never raise anything else."""
    import random

    from infra.core.plan import build_plan

    rng = random.Random(12)
    stacks = sorted((ROOT / "stacks").glob("Pulumi.*.yaml"))
    f = tmp_path / "Pulumi.fuzz.yaml"
    for _ in range(400):
        data = bytearray(rng.choice(stacks).read_bytes())
        for _ in range(rng.randint(1, 4)):
            pos = rng.randrange(len(data))
            op = rng.random()
            if op < 0.3:
                data[pos : pos + rng.randint(1, 20)] = b""
            elif op < 0.7:
                data[pos:pos] = rng.choice(_MUTATIONS)
            else:
                data[pos] = rng.randrange(256)
        f.write_bytes(bytes(data))
        try:
            name, raw = load_stack_file(f)
            build_plan(parse(raw, name))
        except ConfigErrors as e:
            assert all(len(str(i)) <= 400 and "\n" not in str(i) for i in e.issues)


def parse_problems(tmp_path: Path, text: str) -> list[str]:
    f = tmp_path / "Pulumi.t.yaml"
    f.write_text(text)
    with pytest.raises(ConfigErrors) as e:
        parse(load_stack_file(f)[1], "t")
    return [str(i) for i in e.value.issues]


def _bare_twin(sample: Path, into: Path) -> Path:
    """``sample`` with every ``gpu-infra:`` key written bare, under the same file name."""
    into.mkdir()
    twin = into / sample.name
    twin.write_text(sample.read_text(encoding="utf-8").replace("  gpu-infra:", "  "))
    return twin


@pytest.mark.parametrize(
    "sample", sorted((ROOT / "stacks").glob("Pulumi.*.yaml")), ids=lambda p: p.stem
)
def test_bare_keys_are_the_projects_as_pulumis_loader_namespaces_them(tmp_path, sample):
    """pulumi/pulumi sdk/go/common/workspace/loaders.go stackConfigNamespacedWithProject: a key
    without ':' is '<project name>:<key>', so a bare-key file is its namespaced twin."""
    twin = _bare_twin(sample, tmp_path / "bare")
    assert (
        "gpu-infra:" not in twin.read_text().split("config:", 1)[1].split("\n  gpuOperator")[0][:40]
    )
    assert load_stack_file(twin) == load_stack_file(sample)


def test_bare_key_beside_its_namespaced_twin_is_refused_naming_both(tmp_path):
    (line,) = problems(tmp_path, "config:\n  platform: gke\n  gpu-infra:platform: eks\n")
    assert line.startswith(
        "platform: given twice: as 'platform' and as 'gpu-infra:platform'; Pulumi reads the bare key"
    )


def _old_form_twin(sample: Path, into: Path) -> Path:
    """``sample`` with every ``gpu-infra:<name>`` key written ``gpu-infra:config:<name>``."""
    into.mkdir()
    twin = into / sample.name
    text = sample.read_text(encoding="utf-8")
    twin.write_text(text.replace("\n  gpu-infra:", "\n  gpu-infra:config:"))
    return twin


def test_namespace_config_name_keys_are_read_as_namespace_name_as_pulumis_parse_key(tmp_path):
    """pulumi/pulumi sdk/go/common/resource/config/key.go ParseKey: `<namespace>:config:<name>`
    (compat with the old `config` module) is the key `<namespace>:<name>`."""
    sample = ROOT / "stacks" / "Pulumi.gke-t4.yaml"
    twin = _old_form_twin(sample, tmp_path / "old")
    assert "gpu-infra:config:gpuPools" in twin.read_text()
    assert load_stack_file(twin) == load_stack_file(sample)


def test_old_form_key_beside_its_plain_twin_is_refused_naming_both(tmp_path):
    text = "config:\n  gpu-infra:config:platform: gke\n  gpu-infra:platform: eks\n"
    (line,) = problems(tmp_path, text)
    assert line.startswith(
        "gpu-infra:config:platform: given twice: as 'gpu-infra:config:platform' and as "
        "'gpu-infra:platform'; Pulumi reads the old form"
    )


@pytest.mark.parametrize("key", ["gpu-infra:cluster:name", "gcp:project:id", "a:config:b:c"])
def test_a_key_of_two_or_more_colons_is_refused_with_pulumis_parse_key_message(tmp_path, key):
    (line,) = problems(tmp_path, f"config:\n  gpu-infra:platform: gke\n  {key}: x\n")
    # ParseKey: "could not parse %s as a configuration key (configuration keys should be of the
    # form `<namespace>:<name>`)".
    assert line == (
        f"{key}: could not parse {key} as a configuration key (configuration keys should be of "
        "the form `<namespace>:<name>`)"
    )


@pytest.mark.parametrize(("key", "meant"), [("gpupool", "gpuPools"), ("gpuPool", "gpuPools")])
def test_bare_unknown_key_is_the_projects_and_gets_did_you_mean(tmp_path, key, meant):
    (line, *_) = parse_problems(tmp_path, f"config:\n  {key}: gke\n")
    assert line == f"{key}: unknown key; did you mean '{meant}'?"


def test_bare_region_names_both_providers_region_keys(tmp_path):
    lines = parse_problems(tmp_path, "config:\n  region: us-west-2\n")
    assert any(
        line.endswith("the provider's key is 'gcp:region' or 'aws:region'") for line in lines
    )


def test_bare_provider_key_names_the_key_pulumi_reads_and_the_providers(tmp_path):
    lines = parse_problems(tmp_path, "config:\n  project: demo-project\n")
    assert (
        "project: unknown key: Pulumi reads a key without a namespace as 'gpu-infra:project'; "
        "the provider's key is 'gcp:project'"
    ) in lines


@pytest.mark.parametrize("key", ["gcp:gpuPools", "aws:cluster", "kubernetes:gpuOperator"])
def test_project_key_under_a_provider_namespace_is_refused_naming_it(key):
    with pytest.raises(ConfigErrors) as e:
        parse({key: []}, "s")
    assert any(str(i).startswith(f"{key}: '") and "ignores it" in str(i) for i in e.value.issues)


def test_provider_key_sharing_a_name_with_ours_is_the_providers():
    """The Kubernetes provider has its own `cluster` key (its provider inputs)."""
    with pytest.raises(ConfigErrors) as e:
        parse({"kubernetes:cluster": "ml"}, "s")
    assert not any(str(i).startswith("kubernetes:cluster") for i in e.value.issues)


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
