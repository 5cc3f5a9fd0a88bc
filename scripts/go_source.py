"""Reading Go source at a tag of a git repository (a clone or a bare git directory): the helpers
``refresh_runtime_facts.py`` reads the receivers' facts with."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path


def git(repo: str, *args: str) -> str:
    return subprocess.run(
        ["git", f"--git-dir={_git_dir(repo)}", *args], check=True, capture_output=True, text=True
    ).stdout


def _git_dir(repo: str) -> str:
    p = Path(repo)
    return str(p / ".git") if (p / ".git").exists() else str(p)


def show(repo: str, tag: str, path: str) -> str | None:
    try:
        return git(repo, "show", f"{tag}:{path}")
    except subprocess.CalledProcessError:
        return None


def commit_of(repo: str, tag: str) -> str:
    return git(repo, "rev-parse", f"{tag}^{{commit}}").strip()[:8]


def func_body(source: str, name: str) -> str:
    """The text of Go function ``name`` (from its ``func`` line to the closing brace at column 0)."""
    m = re.search(rf"^func {re.escape(name)}\(.*?^}}", source, re.MULTILINE | re.DOTALL)
    if m is None:
        raise SystemExit(f"no func {name}")
    return m.group(0)


def go_consts(source: str) -> dict[str, str]:
    return dict(re.findall(r'^\s*([A-Z][A-Za-z0-9]*)\s*=\s*"([^"]*)"', source, re.MULTILINE))


def bool_flag(source: str, name: str) -> tuple[str, str]:
    """(default, env names) of urfave/cli flag ``name``: ``Value:`` (a bool or a const), else false."""
    m = re.search(rf'Name:\s*"{re.escape(name)}",(.*?)\n\t\t}}', source, re.DOTALL)
    if m is None:
        raise SystemExit(f"no flag {name}")
    block = m.group(1)
    value = re.search(r"Value:\s*([A-Za-z0-9_]+)", block)
    default = value.group(1) if value else "false"
    if default not in ("true", "false"):
        const = re.search(rf"\b{default}\s*=\s*(true|false)", source)
        if const is None:
            raise SystemExit(f"flag {name}: default {default} unresolved")
        default = const.group(1)
    envs = re.search(r"(?:EnvVars:\s*\[\]string\{|cli\.EnvVars\()([^})]*)", block)
    names = re.findall(r'"([A-Z_]+)"', envs.group(1)) if envs else []
    return default, " ".join(names)


def block(body: str, header: str) -> str:
    """The text between the braces of the first ``header`` (ending in ``{``) in ``body``; ""."""
    start = body.find(header)
    if start < 0:
        return ""
    depth, i = 0, start + len(header) - 1
    for j in range(i, len(body)):
        depth += {"{": 1, "}": -1}.get(body[j], 0)
        if depth == 0:
            return body[i + 1 : j]
    raise SystemExit(f"unbalanced braces after {header!r}")


def _without(text: str, *parts: str) -> str:
    for part in parts:
        if part:
            text = text.replace(part, "")
    return text


def set_env(body: str, consts: dict[str, str]) -> list[str]:
    """``NAME=value`` of every ``setContainerEnv(.., NAME, "value")`` in ``body``, in order."""
    out = []
    for const, value in re.findall(
        r"setContainerEnv\([^,]+,\s*([A-Za-z0-9_]+),\s*\"([^\"]*)\"\)", body
    ):
        out.append(f"{consts.get(const, const)}={value}")
    return out
