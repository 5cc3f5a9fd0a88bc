"""Resource options from the lifecycle model (``infra.core.lifecycle``): thin, decides nothing."""

from __future__ import annotations

import pulumi

from infra.core import lifecycle as model


def deletion_owner(
    cluster: pulumi.Resource, type_token: str, *, protect: bool | None = None
) -> pulumi.Resource | None:
    """The cluster as the ``deletedWith`` target of what runs in it, or ``None`` while it is
    protected (``protect``: the row's own, unless the stack overrides it), so that a destroy of a
    protected cluster deletes or keeps every object for real (``model.deleted_with_allowed``)."""
    row = model.lookup(type_token)
    protected = (row.protect if row else False) if protect is None else protect
    return cluster if model.deleted_with_allowed(protected) else None


def with_lifecycle(
    opts: pulumi.ResourceOptions,
    type_token: str,
    role: str = "",
    *,
    cluster: pulumi.Resource | None = None,
    timeout_minutes: int | None = None,
    retain_on_delete: bool | None = None,
) -> pulumi.ResourceOptions:
    """``opts`` merged with the lifecycle row's options for one resource.

    ``cluster``: the cluster this stack created, unprotected (``deletedWith`` targets it; ``None``
    for an existing or a protected cluster, whose objects are deleted one by one:
    ``deletion_owner``). ``timeout_minutes``: the
    rolling-update budget of a ``rolling`` row, the delete budget of a ``drain`` row. ``retain_on_delete``: the stack's choice over the
    row's (``gpuNamespaces[].deleteWithStack``), ``None`` for the row's.
    """
    row = model.lookup(type_token, role)
    if row is None:
        raise KeyError(f"{type_token} has no row in infra/core/data/lifecycle.csv")
    timeouts = None
    if row.timeouts == "rolling" and timeout_minutes is not None:
        budget = f"{timeout_minutes}m"
        timeouts = pulumi.CustomTimeouts(create=budget, update=budget, delete=budget)
    elif row.timeouts == "drain" and timeout_minutes is not None:
        timeouts = pulumi.CustomTimeouts(delete=f"{timeout_minutes}m")
    retain = row.retain_on_delete if retain_on_delete is None else retain_on_delete
    extra = pulumi.ResourceOptions(
        protect=row.protect or None,
        delete_before_replace=row.delete_before_replace,
        retain_on_delete=retain or None,
        deleted_with=cluster if row.deleted_with == "cluster" else None,
        custom_timeouts=timeouts,
    )
    return pulumi.ResourceOptions.merge(opts, extra)
