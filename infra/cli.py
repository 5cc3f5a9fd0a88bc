"""What every command-line entry point of this project shares (stdlib only: keeps start-up lean)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

_PROJECT_ROOT = Path(__file__).resolve().parent.parent


def stack_path(stack: str) -> Path:
    """``stacks/Pulumi.<stack>.yaml`` under the working directory, else under the project root.

    When neither exists, the working-directory path is returned, so "not found" names it.
    """
    name = Path("stacks") / f"Pulumi.{stack}.yaml"
    for base in (Path.cwd(), _PROJECT_ROOT):
        if (base / name).exists():
            return base / name
    return Path.cwd() / name


def run(main: Callable[[], int]) -> None:
    """Exit with ``main()``'s code; a reader that closes the pipe early (``| head``) is not an error."""
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:
        # Nothing more can be shown: leave at once, so neither the final flush of stdout nor the
        # finalizers of half-closed event loops print noise on the way out.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.stderr.flush()
        os._exit(0)
    sys.exit(code)
