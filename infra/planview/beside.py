"""``--beside FILE[@REF]``: plan the new side of ``--diff`` over an account where FILE's stack runs.

A stack added to a cluster another stack already uses (``cluster.existing``) meets that stack's
node groups, node pools and their labels in its observe step. ``--beside`` deploys each file's
stack, under the name its file gives it, into the fake account the new side is planned over
(``infra.mocklive.after``, merged by ``infra.mocklive.beside``), so the review is the one
`pulumi up` of the new side would get: a name the other stack holds is refused, a running pool
of its is never taken for this stack's. ``FILE@REF`` deploys it as the gpu-infra of catalog
``REF`` did (a git ref or a directory, as ``--old-catalog`` takes): a neighbour still running
under an older gpu-infra's names.

What the account holds is not all `pulumi up` would meet, so on the same cluster
(``StackConfig.cluster_identity``) two more refusals are checked from the configs and the planned
resources: a cluster this stack creates that a neighbour created or runs on, and a Helm release
(namespace and name) both stacks install. Any other Kubernetes object both would create under one
name is not modelled: it is named on stderr, never passed over in silence.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from infra.core.config.stack import StackConfig
from infra.core.errors import ConfigErrors, ConfigIssue
from infra.core.tokens import HELM_RELEASE
from infra.mocklive import LiveAccount, after, beside

if TYPE_CHECKING:
    from infra.mockengine import Recording

FLAG = "--beside"


def split_spec(spec: str) -> tuple[str, str | None]:
    """``FILE`` or ``FILE@REF`` -> (file, ref); a file whose own name holds ``@`` is a file."""
    if Path(spec).exists() or "@" not in spec:
        return spec, None
    file, ref = spec.rsplit("@", 1)
    return file, ref or None


@dataclass(frozen=True, slots=True)
class Neighbour:
    """One ``--beside`` file deployed: its stack, what it leaves in the account, what it made."""

    file: str
    config: StackConfig
    account: LiveAccount
    recording: Recording


def neighbours(
    files: Sequence[str], new: StackConfig, own: StackConfig | None = None
) -> list[Neighbour]:
    """The deploys of ``files`` (stack files, each its own stack, ``@REF``: by the gpu-infra of
    that catalog) beside ``new``, whose running side (``--diff``'s old one) is ``own``.

    Raises:
        ConfigErrors: a file is the new side's own stack, or fails to plan (its problems, each
            naming the file), or ``REF`` is no catalog (``old_catalog_dir``), or ``new`` creates
            a cluster a neighbour created or runs on.
    """
    found = [_deployed(spec, new) for spec in files]
    _refuse_second_cluster(found, new, own)
    return found


def beside_account(live: LiveAccount, found: Sequence[Neighbour]) -> LiveAccount:
    """``live`` with the neighbours' deploys in it."""
    for n in found:
        live = beside(live, n.account)
    return live


def _same_cluster(found: Sequence[Neighbour], new: StackConfig) -> list[Neighbour]:
    mine = new.cluster_identity()
    return [
        n
        for n in found
        if n.config.platform == new.platform and n.config.cluster_identity().where == mine.where
    ]


def _refuse_second_cluster(
    found: Sequence[Neighbour], new: StackConfig, own: StackConfig | None
) -> None:
    """A cluster ``new`` creates that a neighbour made or attaches to already runs: its create is
    refused (unless the running side ``own`` is the stack that created it)."""
    me = new.cluster_identity()
    if new.cluster.existing or (
        own is not None and not own.cluster.existing and own.cluster_identity() == me
    ):
        return
    issues = [
        ConfigIssue(
            me.key,
            f"{me.value!r}: stack {n.config.stack} ({n.file}) "
            f"{'runs on' if n.config.cluster.existing else 'creates'} {me.where}, so creating "
            f"it again is refused ({me.refusal}); give this stack another {me.key}, or set "
            "cluster.existing: true to add GPU pools to it",
        )
        for n in _same_cluster(found, new)
    ]
    if issues:
        raise ConfigErrors(issues)


def check_beside(found: Sequence[Neighbour], new: StackConfig, recording: Recording) -> None:
    """After the new side is planned: a Helm release a neighbour on its cluster installs under
    the same namespace and name is refused; any other Kubernetes object both create under one
    name is named on stderr as not modelled.

    Raises:
        ConfigErrors: a release of the new side is a neighbour's.
    """
    me, issues = new.cluster_identity(), []
    mine = _objects(recording)
    for n in _same_cluster(found, new):
        theirs = _objects(n.recording)
        for key in sorted(mine.keys() & theirs.keys()):
            token, namespace, name = key
            if token == HELM_RELEASE:
                issues.append(
                    ConfigIssue(
                        me.key,
                        f"{me.value!r}: stack {n.config.stack} ({n.file}) installs Helm "
                        f"release {namespace}/{name} on this cluster too; Helm refuses a second "
                        'release of a name in a namespace ("cannot re-use a name that is still '
                        'in use", helm/helm pkg/action/install.go availableName): install it '
                        "from one stack only",
                    )
                )
            else:
                print(
                    f"not modelled beside {n.file}: both stacks create {token.rsplit(':', 1)[-1]} "
                    f"{'/'.join(p for p in (namespace, name) if p)} on {me.where} (this stack's "
                    f"{mine[key]}); what `pulumi up` does with an object another stack made is "
                    "not checked",
                    file=sys.stderr,
                )
    if issues:
        raise ConfigErrors(issues)


def _objects(recording: Recording) -> dict[tuple[str, str, str], str]:
    """The Kubernetes objects and Helm releases ``recording`` made, by (type, namespace, name)
    as the cluster names them -> their Pulumi name."""
    out: dict[tuple[str, str, str], str] = {}
    for r in recording.resources:
        if not r.type.startswith("kubernetes:"):
            continue
        if r.type == HELM_RELEASE:
            name, namespace = r.inputs.get("name"), r.inputs.get("namespace") or "default"
        else:
            meta = r.inputs.get("metadata") or {}
            name, namespace = meta.get("name"), meta.get("namespace") or ""
        if isinstance(name, str) and name:
            out[(r.type, str(namespace), name)] = r.name
    return out


def _deployed(spec: str, new: StackConfig) -> Neighbour:
    """What deploying ``spec``'s stack (over its catalog, when ``@REF`` names one) leaves."""
    from infra import mockengine
    from infra.core.catalog.vendored import Catalog
    from infra.plan import load_path
    from infra.planview.catalogs import old_catalog_dir
    from infra.planview.review import in_file

    f, ref = split_spec(spec)
    with ExitStack() as scope:
        catalog = Catalog(scope.enter_context(old_catalog_dir(ref, flag=FLAG))) if ref else None
        try:
            raw, config, plan = load_path(Path(f), None, catalog)
        except ConfigErrors as e:
            raise in_file(f, e) from e
        if config.stack == new.stack:
            raise ConfigErrors(
                [
                    ConfigIssue(
                        FLAG,
                        f"{f} is stack {config.stack}, the stack this diff plans: --beside takes "
                        "another stack's file (its name comes from the file: Pulumi.<stack>.yaml)",
                    )
                ]
            )
        recording = mockengine.run(raw, config.stack, plan.catalog, catalog)
        return Neighbour(f, config, after(plan, recording), recording)
