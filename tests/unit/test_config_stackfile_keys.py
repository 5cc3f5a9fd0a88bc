"""Config keys as Pulumi reads them: a bare key is the project's, `namespace:config:name` is
`namespace:name`, and a key that reaches nobody (another namespace, a provider's) is refused.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from infra.core.config.stack import load_stack_file, parse
from infra.core.errors import ConfigErrors
from tests.unit.stackfile_fixtures import ROOT, problems


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
