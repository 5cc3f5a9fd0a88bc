"""``python -m infra.docsgen [--write]``: check (or rewrite) every generated block of the docs."""

from __future__ import annotations

import argparse
import sys

_EPILOG = """examples:
  python -m infra.docsgen                  # list the stale blocks
  python -m infra.docsgen --write          # rewrite them, naming the pages changed
  python -m infra.docsgen --schema-only    # only the blocks made without planning the samples

exit codes: 0 every block current (or rewritten with --write); 1 some block is stale; 2 usage.
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m infra.docsgen",
        description="Check or rewrite the generated blocks of README.md and docs/: the config "
        "reference, the code layout, the lifecycle and price tables and the sample figures.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--write", action="store_true", help="rewrite the stale blocks")
    parser.add_argument(
        "--schema-only", action="store_true", help="only the blocks made without planning"
    )
    args = parser.parse_args(argv)
    import os

    from infra.core.catalog.eks_versions import TODAY_ENV, eks_support_as_of
    from infra.core.catalog.vendored import DATA_DIR

    # The figures are the samples' as of the catalog's date, not of the day the docs are built:
    # the EKS default version and extended-support fee are judged on max(today, that date).
    os.environ.setdefault(TODAY_ENV, eks_support_as_of(DATA_DIR))
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
