"""``--beside FILE``: plan the new side of ``--diff`` over an account where FILE's stack runs too.

A stack added to a cluster another stack already uses (``cluster.existing``) meets that stack's
node groups, node pools and their labels in its observe step. ``--beside`` deploys each file's
stack, under the name its file gives it, into the fake account the new side is planned over
(``infra.mocklive.after``, merged by ``infra.mocklive.beside``), so the review is the one
`pulumi up` of the new side would get: a name the other stack holds is refused, a running pool
of its is never taken for this stack's.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from infra.core.config.stack import StackConfig
from infra.core.errors import ConfigErrors, ConfigIssue
from infra.mocklive import LiveAccount, after, beside

FLAG = "--beside"


def beside_account(live: LiveAccount, files: Sequence[str], new: StackConfig) -> LiveAccount:
    """``live`` with the deploys of ``files`` (stack files, each its own stack) in it.

    Raises:
        ConfigErrors: a file is the new side's own stack, or fails to plan (its problems, each
            naming the file).
    """
    from infra import mockengine
    from infra.plan import load_path
    from infra.planview.review import in_file

    for f in files:
        try:
            raw, config, plan = load_path(Path(f))
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
        recording = mockengine.run(raw, config.stack, plan.catalog)
        live = beside(live, after(plan, recording))
    return live
