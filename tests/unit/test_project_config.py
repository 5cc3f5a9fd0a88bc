"""Project-level config in Pulumi.yaml and ESC environments, as the offline plan reads them.

Pulumi merges ``config:`` of Pulumi.yaml under the stack file's (pulumi/pulumi
sdk/go/common/workspace/config.go ``mergeConfig``; project.go ``RewriteShorthandConfigValues``,
``Validate``); ESC environments (``environment:``) are opened by Pulumi Cloud.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from infra import plan as plan_cli
from infra.core.config.stack import load_stack_file, parse
from infra.core.errors import ConfigErrors
from quota import check as quota_cli

STACK = """config:
  gcp:project: ml-prod-123
  gpu-infra:platform: gke
  gpu-infra:cluster:
    name: ml
    location: us-central1
"""


def project(tmp_path: Path, project_yaml: str, stack: str = STACK, config_dir: str = "stacks"):
    """A project folder: Pulumi.yaml (``stackConfigDir: stacks``) and stacks/Pulumi.t.yaml."""
    (tmp_path / "Pulumi.yaml").write_text(
        f"name: gpu-infra\nruntime: python\nstackConfigDir: {config_dir}\n" + project_yaml
    )
    (tmp_path / "stacks").mkdir()
    f = tmp_path / "stacks" / "Pulumi.t.yaml"
    f.write_text(stack)
    return f


def errors_of(f: Path) -> list[str]:
    with pytest.raises(ConfigErrors) as e:
        load_stack_file(f)
    return [str(i) for i in e.value.issues]


def test_bare_project_key_means_the_project_namespace_and_fills_a_missing_stack_key(tmp_path):
    f = project(
        tmp_path, "config:\n  gpuNamespaces:\n    default:\n      - {name: research, gpus: 4}\n"
    )
    _, raw = load_stack_file(f)
    assert raw["gpu-infra:gpuNamespaces"] == [{"name": "research", "gpus": 4}]
    assert parse(raw, "t").namespaces[0].name == "research"


def test_shorthand_of_another_namespace_is_its_value(tmp_path):
    stack = STACK.replace("  gcp:project: ml-prod-123\n", "")
    f = project(tmp_path, "config:\n  gcp:project: shared-proj-1\n", stack)
    assert load_stack_file(f)[1]["gcp:project"] == "shared-proj-1"


def test_stack_value_wins_whole_over_project_value_and_default(tmp_path):
    f = project(
        tmp_path,
        "config:\n  gcp:project:\n    value: shared-proj-1\n"
        "  cluster:\n    default:\n      name: other\n      location: europe-west4\n"
        "      releaseChannel: STABLE\n",
    )
    _, raw = load_stack_file(f)
    assert raw["gcp:project"] == "ml-prod-123"
    # Not a deep merge: the stack's cluster replaces the project default entirely.
    assert raw["gpu-infra:cluster"] == {"name": "ml", "location": "us-central1"}


def test_project_values_reach_the_program_as_pulumi_passes_them(tmp_path):
    f = project(tmp_path, "config:\n  kubernetes:enableServerSideApply:\n    value: true\n")
    assert load_stack_file(f)[1]["kubernetes:enableServerSideApply"] == "true"


def test_project_key_without_value_or_default_is_required_from_the_stack(tmp_path):
    f = project(tmp_path, "config:\n  gpuOperator:\n    type: string\n    description: x\n")
    assert errors_of(f) == [
        "gpuOperator: required by Pulumi.yaml's project config (it gives no value or default); "
        "set it under 'config:' in the stack file"
    ]


def test_project_config_cannot_have_both_default_and_value(tmp_path):
    f = project(tmp_path, "config:\n  platform:\n    default: gke\n    value: gke\n")
    (line,) = errors_of(f)
    assert line.endswith(
        "config.platform: project config cannot have both a 'default' and 'value' attribute"
    )


def test_key_of_another_namespace_takes_value_not_default(tmp_path):
    f = project(tmp_path, "config:\n  gcp:region:\n    default: us-central1\n")
    (line,) = errors_of(f)
    assert "config.gcp:region: not namespaced by the project" in line


def test_stack_file_outside_the_projects_stack_config_dir_gets_no_project_config(tmp_path):
    f = project(tmp_path, "config:\n  gcp:project: shared-proj-1\n", config_dir="elsewhere")
    assert load_stack_file(f)[1]["gcp:project"] == "ml-prod-123"
    stray = tmp_path / "stacks" / "Pulumi.u.yaml"
    stray.write_text(STACK.replace("  gcp:project: ml-prod-123\n", ""))
    assert "gcp:project" not in load_stack_file(stray)[1]


def test_repository_project_file_holds_the_sample_stacks():
    from infra.core.stackfile.project import read_project_config

    root = Path(__file__).resolve().parents[2]
    found = read_project_config(root / "stacks" / "Pulumi.gke-t4.yaml")
    assert found is not None and found.path == root / "Pulumi.yaml"


def test_esc_environment_is_refused_offline_naming_the_key(tmp_path):
    f = project(tmp_path, "", "environment:\n  - ml/dev\n" + STACK)
    (line,) = errors_of(f)
    assert line.startswith("environment: the stack imports ESC environments (['ml/dev'])")
    assert "the offline plan cannot read ESC environments" in line


@pytest.mark.parametrize(
    "project_yaml",
    ["config:\n  cluster:\n    type: object\n", "config:\n  gcp:zone:\n    default: x\n"],
    ids=["required-key", "default-of-other-namespace"],
)
def test_both_clis_exit_2_with_the_same_project_config_message(tmp_path, capsys, project_yaml):
    f = project(tmp_path, project_yaml, STACK.replace("  gpu-infra:cluster:", "  x:y:"))
    assert plan_cli.main(["--config", str(f)]) == 2
    from_plan = capsys.readouterr().err
    assert quota_cli.main(["--config", str(f), "--offline"]) == 2
    assert capsys.readouterr().err == from_plan
    assert "Traceback" not in from_plan


def test_project_config_entry_takes_only_the_attributes_pulumi_defines(tmp_path):
    f = project(tmp_path, "config:\n  cluster:\n    name: ml\n    location: us-central1\n")
    (line,) = errors_of(f)
    assert "config.cluster: unknown attribute 'name'; allowed: type, description" in line


def test_older_config_folder_spelling_locates_the_stacks_like_stack_config_dir(tmp_path):
    f = project(tmp_path, "config: stacks\n", STACK.replace("  gcp:project: ml-prod-123\n", ""))
    text = (tmp_path / "Pulumi.yaml").read_text().replace("stackConfigDir: stacks\n", "")
    (tmp_path / "Pulumi.yaml").write_text(text)
    from infra.core.stackfile.project import read_project_config

    found = read_project_config(f)
    assert found is not None and found.values == {} and found.required == ()


def test_a_dotted_project_key_fills_inside_the_stack_object_as_a_path(tmp_path):
    # config.go mergeConfig reads and writes project keys as paths (Get/Set with path=true).
    f = project(tmp_path, "config:\n  cluster.releaseChannel:\n    default: STABLE\n")
    _, raw = load_stack_file(f)
    assert raw["gpu-infra:cluster"] == {
        "name": "ml",
        "location": "us-central1",
        "releaseChannel": "STABLE",
    }
    assert "gpu-infra:cluster.releaseChannel" not in raw


def test_a_dotted_project_key_the_stack_sets_keeps_the_stack_value(tmp_path):
    stack = STACK + "    releaseChannel: RAPID\n"
    f = project(tmp_path, "config:\n  cluster.releaseChannel:\n    default: STABLE\n", stack)
    assert load_stack_file(f)[1]["gpu-infra:cluster"]["releaseChannel"] == "RAPID"
