"""`pulumi install` builds a working virtualenv from Pulumi.yaml as the Python language host reads it.

pulumi/pulumi sdk/python/toolchain/pip.go: ``InstallDependencies`` runs ``python -m pip install -r
requirements.txt`` with the working directory set to the *program* directory (``main``;
``pulumi-language-python`` passes ``req.Info.ProgramDirectory``), and skips the step silently when
that file is missing; the ``virtualenv`` option resolves against the project root
(``resolveVirtualEnvironmentPath(root, virtualenv)``).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def project() -> dict[str, object]:
    return yaml.safe_load((ROOT / "Pulumi.yaml").read_text())


def requirement_lines(path: Path) -> list[str]:
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return [line for line in lines if line]


def test_the_program_directory_has_the_requirements_file_pip_is_run_with():
    program = ROOT / str(project()["main"])
    assert (program / "requirements.txt").is_file()


def test_program_requirements_pin_the_runtime_dependencies_and_install_the_project():
    program = ROOT / str(project()["main"])
    lines = requirement_lines(program / "requirements.txt")
    # pip resolves -r against the file that names it, and a local path against its working
    # directory, which the language host sets to the program directory.
    included = [
        (program / line.removeprefix("-r").strip()).resolve()
        for line in lines
        if line.startswith("-r")
    ]
    assert included == [(ROOT / "requirements.txt").resolve()]
    editable = [
        (program / line.removeprefix("-e").strip()).resolve()
        for line in lines
        if line.startswith("-e")
    ]
    assert len(editable) == 1
    meta = tomllib.loads((editable[0] / "pyproject.toml").read_text())
    assert meta["project"]["name"] == "gpu-infra"


def test_the_virtualenv_option_is_the_one_scripts_setup_builds():
    options = project()["runtime"]["options"]  # type: ignore[index]
    assert options["virtualenv"] == ".venv"
    assert "-m venv .venv" in (ROOT / "scripts" / "setup").read_text()
