"""``--beside FILE[@REF]``: plan the new side of ``--diff`` over an account where FILE's stack runs.

A stack added to a cluster another stack already uses (``cluster.existing``) meets that stack's
node groups, node pools and their labels in its observe step. ``--beside`` deploys each file's
stack, under the name its file gives it, into the fake account the new side is planned over
(``infra.mocklive.after``, merged by ``infra.mocklive.beside``), so the review is the one
`pulumi up` of the new side would get: a name the other stack holds is refused, a running pool
of its is never taken for this stack's. ``FILE@REF`` deploys it as the gpu-infra of catalog
``REF`` did (a git ref or a directory, as ``--old-catalog`` takes): a neighbour still running
under an older gpu-infra's names.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path

from infra.core.config.stack import StackConfig
from infra.core.errors import ConfigErrors, ConfigIssue
from infra.mocklive import LiveAccount, after, beside

FLAG = "--beside"


def split_spec(spec: str) -> tuple[str, str | None]:
    """``FILE`` or ``FILE@REF`` -> (file, ref); a file whose own name holds ``@`` is a file."""
    if Path(spec).exists() or "@" not in spec:
        return spec, None
    file, ref = spec.rsplit("@", 1)
    return file, ref or None


def beside_account(live: LiveAccount, files: Sequence[str], new: StackConfig) -> LiveAccount:
    """``live`` with the deploys of ``files`` (stack files, each its own stack, ``@REF``: by the
    gpu-infra of that catalog) in it.

    Raises:
        ConfigErrors: a file is the new side's own stack, or fails to plan (its problems, each
            naming the file), or ``REF`` is no catalog (``old_catalog_dir``).
    """
    for spec in files:
        live = beside(live, _deployed(spec, new))
    return live


def _deployed(spec: str, new: StackConfig) -> LiveAccount:
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
        return after(plan, mockengine.run(raw, config.stack, plan.catalog, catalog))
