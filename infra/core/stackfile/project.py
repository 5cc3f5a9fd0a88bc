"""Pulumi.yaml's project-level config for a stack file: which project file, and what it gives.

Read with the stack file's own reader (``infra.core.stackfile.reader``), checked as Pulumi checks
it (``project.go`` ``Validate``), and merged under the stack's config by
``infra.core.config.stack.with_project_config``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infra.core.errors import Issues
from infra.core.stackfile.goyaml import go_key
from infra.core.stackfile.loader import load_yaml
from infra.core.stackfile.reader import as_pulumi_reads, decode, read_bytes

# Project file names Pulumi looks for, walking up from the working directory
# (pulumi/pulumi sdk/go/common/workspace/paths.go ``DetectProjectPathFrom``).
PROJECT_FILE_NAMES = ("Pulumi.yaml", "Pulumi.yml")
# Attributes of one project-level config entry (sdk/go/common/workspace/project.go
# ``ProjectConfigType``).
PROJECT_CONFIG_ATTRS = ("type", "description", "items", "default", "value", "secret")


def project_file_of(stack_path: str | Path) -> Path | None:
    """The Pulumi.yaml whose stacks live in ``stack_path``'s folder, or ``None``.

    Pulumi uses the nearest project file above the working directory and reads stack files from
    its ``stackConfigDir`` (default: the project's own folder). A stack file elsewhere (a copy in
    another folder) belongs to no project here, so no project config applies to it.
    """
    folder = Path(stack_path).resolve().parent
    for candidate in (folder, *folder.parents):
        for name in PROJECT_FILE_NAMES:
            if (candidate / name).is_file():
                return candidate / name
    return None


@dataclass(frozen=True, slots=True)
class ProjectConfig:
    """Pulumi.yaml's project-level config: ``values`` by namespaced key (as the program receives
    them), and the project keys with neither ``value`` nor ``default`` (``required``)."""

    path: Path
    values: dict[str, Any]
    required: tuple[str, ...]


def read_project_config(stack_path: str | Path) -> ProjectConfig | None:
    """Pulumi.yaml's project-level ``config:`` for the stack at ``stack_path``; ``None`` when no
    project file holds this stack's folder.

    Sources: pulumi/pulumi sdk/go/common/workspace/project.go ``RewriteShorthandConfigValues``
    (a bare scalar or list is the ``default`` of a project key, the ``value`` of another
    namespace's key) and ``Validate``; config.go ``parseConfigKey`` (a key without ``:`` means
    ``<project>:<key>``) and ``mergeConfig`` (a stack value wins whole; a project key with neither
    ``value`` nor ``default`` must be set by the stack); project-level configuration:
    https://www.pulumi.com/docs/iac/concepts/config/#project-level-configuration

    Raises:
        ConfigErrors: the project file is not YAML, or its ``config:`` is not what Pulumi accepts.
    """
    p = project_file_of(stack_path)
    if p is None:
        return None
    issues = Issues()
    doc = load_yaml(p, decode(p, read_bytes(p, issues), issues), issues)
    if not isinstance(doc, dict):
        return None
    config_dir = doc.get("stackConfigDir")
    if not isinstance(config_dir, str) and isinstance(doc.get("config"), str):
        config_dir = doc["config"]  # the older spelling: ``config: <folder>``
    stacks = (p.parent / config_dir).resolve() if isinstance(config_dir, str) else p.parent
    if stacks != Path(stack_path).resolve().parent:
        return None
    entries = doc.get("config")
    entries = entries if isinstance(entries, dict) else {}
    project = doc.get("name")
    if not isinstance(project, str) or not project:
        issues.add(f"{p}: name", "the project file is missing a 'name' attribute")
        issues.raise_if_any()
        raise AssertionError("unreachable")
    values: dict[str, Any] = {}
    required: list[str] = []
    for key, entry in entries.items():
        name = go_key(key)
        full = name if ":" in name else f"{project}:{name}"
        given = _project_entry(p, project, name, entry, issues)
        if given is not None:
            values[full] = given
        elif full.startswith(f"{project}:"):
            required.append(full)
    issues.raise_if_any()
    return ProjectConfig(p, values, tuple(required))


def _project_entry(p: Path, project: str, key: str, entry: Any, issues: Issues) -> Any:
    """One ``config:`` entry of Pulumi.yaml: its value for stacks (``None``: none given)."""
    own = ":" not in key or key.startswith(f"{project}:")
    where = f"{p}: config.{key}"
    if not isinstance(entry, dict):  # shorthand: a project key's default, another's value
        return as_pulumi_reads(entry)
    unknown = [str(a) for a in entry if a not in PROJECT_CONFIG_ATTRS]
    if unknown:
        issues.add(
            where, f"unknown attribute {unknown[0]!r}; allowed: " + ", ".join(PROJECT_CONFIG_ATTRS)
        )
    if "default" in entry and "value" in entry:
        issues.add(where, "project config cannot have both a 'default' and 'value' attribute")
    if not own and "default" in entry:
        issues.add(where, "not namespaced by the project, so it takes 'value', not 'default'")
    elif not own and "value" not in entry:
        issues.add(where, "a key of another namespace must give its 'value'")
    if not own and "type" in entry:
        issues.add(where, "not namespaced by the project, so it cannot declare a 'type'")
    given = entry.get("default", entry.get("value"))
    return None if given is None else as_pulumi_reads(given)
