"""Objects the GitOps export leaves to the repository's own secret management.

A Kubernetes Secret whose values are Pulumi secrets (the vGPU licensing and pull Secrets) has no
value the export may write: the mock engine records ``"[secret]"`` in their place, and a manifest
holding that text would replace the real Secret with a broken one. Such objects are left out of
``manifests/`` and listed in ``SECRETS.md`` with their keys, for Sealed Secrets, External Secrets
or ``kubectl create secret`` (https://kubernetes.io/docs/concepts/configuration/secret/).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from infra.mockengine import SECRET

NOTE_FILE = "SECRETS.md"


def holds_secret(node: Any) -> bool:
    """Whether a recorded manifest holds a masked Pulumi secret anywhere."""
    if isinstance(node, Mapping):
        return any(holds_secret(v) for v in node.values())
    if isinstance(node, list):
        return any(holds_secret(v) for v in node)
    return node == SECRET


def secrets_note(left_out: Sequence[Mapping[str, Any]], plan: Any) -> str | None:
    """``SECRETS.md``: the objects left out, each with its type and keys (from the plan)."""
    if not left_out:
        return None
    keys: dict[tuple[str, str], list[str]] = {}
    op = getattr(plan, "operator", None)
    for m in op.before_release if op is not None else ():
        meta = m.get("metadata", {})
        keys[(meta.get("namespace", ""), meta.get("name", ""))] = sorted(m.get("stringData", {}))
    lines = [
        "# Secrets this export does not write",
        "",
        "Their values are Pulumi secrets of the stack, which the export never writes out. Create",
        "each in the cluster with your secret management (Sealed Secrets, External Secrets,",
        "`kubectl create secret`) before the charts sync; `pulumi up` creates them itself.",
        "",
    ]
    for m in left_out:
        meta = m.get("metadata") or {}
        ns, name = meta.get("namespace", ""), meta.get("name", "")
        names = ", ".join(f"`{k}`" for k in keys.get((ns, name), [])) or "see the stack"
        lines.append(
            f"- `{m.get('kind')}` `{ns}/{name}` (type `{m.get('type', '')}`): keys {names}"
        )
    return "\n".join(lines) + "\n"
