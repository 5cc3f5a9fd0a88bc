"""What the stack-file modules share: a stack file's problems as its reader reports them."""

from __future__ import annotations

from pathlib import Path

import pytest

from infra.core.config.stack import load_stack_file
from infra.core.errors import ConfigErrors

ROOT = Path(__file__).resolve().parents[2]


def problems(tmp_path: Path, content: bytes | str) -> list[str]:
    f = tmp_path / "Pulumi.t.yaml"
    f.write_bytes(content.encode() if isinstance(content, str) else content)
    with pytest.raises(ConfigErrors) as e:
        load_stack_file(f)
    return [str(i).replace(str(f), "<file>") for i in e.value.issues]
