"""The change preview knows every resource type the sample stacks register."""

from __future__ import annotations

from pathlib import Path

from infra.core.diff import forcing_rules
from tests.stack.harness import sample, sample_stacks

ROOT = Path(__file__).resolve().parents[2]
STACKS = sample_stacks()
# Types the table deliberately leaves out: a change there is reported "unknown", never "update".
# pulumi-kubernetes' provider replaces itself when its kubeconfig targets another cluster, which a
# plan cannot tell from a secret kubeconfig; its dependents are marked through propagation.
NO_TABLE = frozenset({"pulumi:providers:kubernetes"})


def test_every_type_a_sample_stack_registers_has_a_replace_forcing_row_or_is_known_to_have_none():
    known = {r.type for r in forcing_rules()}
    packages = {t.split(":", 1)[0] for t in known if t.endswith(":*")}
    missing = sorted(
        {
            r.type
            for s in STACKS
            for r in sample(s).resources
            if r.custom
            and r.type not in known
            and r.type.split(":", 1)[0] not in packages
            and r.type not in NO_TABLE
        }
    )
    assert missing == []
