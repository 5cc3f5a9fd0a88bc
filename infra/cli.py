"""What every command-line entry point of this project shares (stdlib only: keeps start-up lean)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable


def run(main: Callable[[], int]) -> None:
    """Exit with ``main()``'s code; a reader that closes the pipe early (``| head``) is not an error."""
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:
        # Point stdout at /dev/null so the interpreter's final flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 0
    sys.exit(code)
