"""Every cluster / gpuOperator key a sample stack sets has its own row in the README config table."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def _table_keys() -> set[str]:
    """Keys named in a table row's first cell; a row for a mapping alone (``| `gpuOperator` |``)
    names its sub-keys in the second cell."""
    keys: set[str] = set()
    for ln in (ROOT / "README.md").read_text(encoding="utf-8").splitlines():
        if not ln.startswith("| `"):
            continue
        cells = ln.split("|")
        named = re.findall(r"`([\w.]+)`", cells[1])
        keys.update(named)
        if len(named) == 1 and cells[1].strip() == f"`{named[0]}`":
            keys.update(f"{named[0]}.{k}" for k in re.findall(r"`(\w+)`", cells[2]))
    return keys


def _documented(key: str, keys: set[str]) -> bool:
    return key in keys or any(k.startswith(f"{key}.") for k in keys)


def test_every_cluster_and_gpu_operator_key_of_every_sample_stack_is_in_the_readme_config_table():
    keys = _table_keys()
    missing: list[str] = []
    for path in sorted((ROOT / "stacks").glob("Pulumi.*.yaml")):
        config = yaml.safe_load(path.read_text(encoding="utf-8"))["config"]
        for top in ("cluster", "gpuOperator"):
            for key in config.get(f"gpu-infra:{top}") or {}:
                if not _documented(f"{top}.{key}", keys):
                    missing.append(f"{path.name}: {top}.{key}")
    assert missing == []
