"""One resource as Pulumi's stack state records it (the shape `pulumi stack export` writes), for
the change-preview tests."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def state_resource(
    inputs: dict[str, Any],
    type_: str,
    name: str = "x",
    *,
    deps: dict[str, list[str]] | None = None,
    options: dict[str, Any] | None = None,
    depends_on: Iterable[str] = (),
) -> dict[str, Any]:
    return {
        "urn": f"urn:pulumi:s::p::{type_}::{name}",
        "id": f"{name}_id",
        "type": type_,
        "name": name,
        "custom": True,
        "inputs": inputs,
        "dependsOn": list(depends_on),
        "propertyDependencies": deps or {},
        "options": options or {},
    }
