"""Keys that would not apply with the other keys as given: an error naming both, not a silent no-op.

One row per case, each citing the planner that never reads the keys in that case: the rows of every
platform here, each platform's own in its config entry (``PlatformConfig.inert``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, NamedTuple

from pydantic import BaseModel

from infra.core.errors import Issues, join_path


class Inert(NamedTuple):
    """Keys of ``block`` that would not apply when its key ``when`` is ``value`` (``"*"``: any
    value given): what the planner named beside the row does, it never reads ``keys`` then."""

    block: str
    when: str
    value: Any
    keys: tuple[str, ...]
    why: str


# Rows of every platform, checked before the platform's own (``PlatformConfig.inert``).
# infra.core.operator.planner.plan_operator returns before reading them.
EVERY_PLATFORM = (
    Inert(
        "gpuOperator",
        "enabled",
        False,
        ("version", "preset", "namespace", "toolkitEnv", "values", "timeout", "vgpu"),
        "the GPU Operator is not installed",
    ),
)
# A row of the platforms that create a system pool with a cluster they create (gke.planner,
# eks.system.plan_system: the system pool is planned for created clusters only).
EXISTING_KEEPS_SYSTEM_POOL = Inert(
    "cluster", "existing", True, ("systemPool",), "an existing cluster keeps its own system nodes"
)


def created_cluster_only(*keys: str) -> Inert:
    """The row of ``cluster`` keys that only a cluster this stack creates reads (its
    components pass them to the cluster resource only)."""
    return Inert(
        "cluster", "existing", True, keys, "they are settings of a cluster this stack creates"
    )


def check_inert(
    rows: tuple[Inert, ...],
    own: Mapping[str, Any],
    models: Mapping[str, BaseModel],
    issues: Issues,
) -> None:
    """A key that would not apply with the other keys as given is an error naming both.

    The condition is read on the validated model (``models``: block -> its model), so a
    condition key left at its default counts as its default value: ``terminationGracePeriod``
    without ``kind`` is a cluster-autoscaler setting. The inert keys are the ones written. ``rows``
    are the stack's platform's own, checked after those of every platform.
    """
    for block, when, value, keys, why in (*EVERY_PLATFORM, *rows):
        written: Any = own
        for part in block.split("."):
            written = written.get(part) if isinstance(written, Mapping) else None
        given = [k for k in keys if isinstance(written, Mapping) and k in written]
        model = _model_at(models, block)
        if not given or model is None:
            continue
        actual = _by_alias(model, when)
        if (actual is None) if value == "*" else actual != value:
            continue
        defaulted = not (isinstance(written, Mapping) and when in written)
        shown_when = "given" if value == "*" else json.dumps(actual)
        if defaulted:
            shown_when += " (its default)"
        for key in given:
            issues.add(
                join_path(block, key),
                f"would not apply: {block}.{when} is {shown_when} and {why}; remove it",
            )


def _model_at(models: Mapping[str, BaseModel], block: str) -> BaseModel | None:
    first, *rest = block.split(".")
    node: Any = models.get(first)
    for part in rest:
        node = _by_alias(node, part) if isinstance(node, BaseModel) else None
    return node if isinstance(node, BaseModel) else None


def _by_alias(model: BaseModel, alias: str) -> Any:
    """The value of the field spelt ``alias`` in the stack file (its camelCase name)."""
    for name, f in type(model).model_fields.items():
        if (f.alias or name) == alias:
            return getattr(model, name)
    raise KeyError(f"{type(model).__name__} has no field {alias!r}")
