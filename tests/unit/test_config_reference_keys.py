"""Every key a sample stack sets has its own entry in the generated config reference."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from infra.core.config.secrets import is_secure
from infra.docsgen import config_ref

ROOT = Path(__file__).resolve().parents[2]


def _paths(value: Any, path: str) -> list[str]:
    """``path`` and every key path under ``value`` as the reference spells them
    (``gpuPools[].gpu.type``, ``gpuPools[].taints[].key``)."""
    found = [path]
    if isinstance(value, dict):
        for key, sub in value.items():
            found += _paths(sub, f"{path}.{key}")
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, dict):
                for key, sub in item.items():
                    found += _paths(sub, f"{path}[].{key}")
    return found


def _documented(path: str, keys: set[str]) -> bool:
    """``path`` is listed, or sits under a listed free-form mapping (``gpuPools[].labels.x``)."""
    parts = path.split(".")
    return any(".".join(parts[:n]) in keys for n in range(len(parts), 0, -1))


def test_every_key_of_every_sample_stack_is_in_the_config_reference():
    keys = config_ref.keys()
    missing: list[str] = []
    for path in sorted((ROOT / "stacks").glob("Pulumi.*.yaml")):
        config = yaml.safe_load(path.read_text(encoding="utf-8"))["config"]
        for top, value in config.items():
            if not top.startswith("gpu-infra:"):
                assert top in keys, f"{path.name}: {top}"
                continue
            assert top in keys, f"{path.name}: {top}"
            if is_secure(value):  # Pulumi's stored form of a secret, not a key of ours
                continue
            subs = _paths(value, top.removeprefix("gpu-infra:"))[1:]
            missing += [f"{path.name}: {p}" for p in subs if not _documented(p, keys)]
    assert missing == []


def test_a_key_the_reference_lacks_is_reported():
    assert not _documented("cluster.noSuchKey", config_ref.keys())
    assert _documented("gpuPools[].labels.team", {"gpuPools[].labels"})
