"""Reading a stack file ends in a mapping or in clean ``<file>:<line>:<column>: <problem>`` lines."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from infra.core.config.stack import load_stack_file, parse
from infra.core.errors import ConfigErrors
from infra.core.stackfile.loader import MAX_DEPTH, MAX_NODES
from infra.core.stackfile.reader import MAX_BYTES
from tests.unit.stackfile_fixtures import ROOT, problems


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
