"""``python -m infra.docsgen [--write]``: check (or rewrite) every generated block of the docs.

Without ``--write`` it lists the stale blocks and exits 1 (0 when all are current); ``--write``
rewrites them and names the pages it changed. ``--schema-only`` skips the blocks that plan the
sample stacks.
"""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m infra.docsgen", description=__doc__)
    parser.add_argument("--write", action="store_true", help="rewrite the stale blocks")
    parser.add_argument(
        "--schema-only", action="store_true", help="only the blocks made without planning"
    )
    args = parser.parse_args(argv)
    from infra.docsgen import pages

    bodies = pages.schema_blocks()
    if not args.schema_only:
        from infra.docsgen import figures

        bodies |= figures.render(figures.load())
    if args.write:
        for page in pages.write(bodies):
            print(f"wrote {page}")
        return 0
    stale = pages.stale(bodies)
    for line in stale:
        print(f"stale: {line}", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
