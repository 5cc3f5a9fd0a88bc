"""What every command-line entry point of this project shares (stdlib only: keeps start-up lean)."""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

_PROJECT_ROOT = Path(__file__).resolve().parent.parent


def stack_path(stack: str) -> Path:
    """``stacks/Pulumi.<stack>.yaml`` under the working directory, else under the project root.

    ``stack`` may also be a stack file's path (it contains ``/`` or ends in ``.yaml``). When
    nothing exists, the working-directory path is returned, so "not found" names it.
    """
    if "/" in stack or stack.endswith((".yaml", ".yml")):
        return Path(stack)
    name = Path("stacks") / f"Pulumi.{stack}.yaml"
    for base in (Path.cwd(), _PROJECT_ROOT):
        if (base / name).exists():
            return base / name
    return Path.cwd() / name


def known_stacks() -> list[str]:
    """Stack names with a file under ``stacks/`` (working directory and project root), sorted."""
    found: set[str] = set()
    for base in (Path.cwd(), _PROJECT_ROOT):
        for p in (base / "stacks").glob("Pulumi.*.yaml"):
            found.add(p.name.removeprefix("Pulumi.").removesuffix(".yaml"))
    return sorted(found)


def stack_file(stack: str) -> Path:
    """The stack file for ``--stack`` (a name or a path).

    Raises:
        ConfigErrors: no such stack; the message lists the stacks that exist.
    """
    path = stack_path(stack)
    if path.exists():
        return path
    from infra.core.errors import ConfigErrors, ConfigIssue

    stacks = ", ".join(known_stacks()) or "none under stacks/"
    raise ConfigErrors(
        [ConfigIssue("--stack", f"no stack {stack!r} ({path} does not exist); stacks: {stacks}")]
    )


@contextlib.contextmanager
def short_lived() -> Iterator[None]:
    """The interpreter set up for a short-lived CLI or Pulumi program: no work that only pays off
    in a long-running one.

    - No cyclic garbage collection. These processes build one object graph and exit; measured
      (scripts/bench_plan.py), the collector's generation sweeps over that graph were 40-55 % of a
      plan's time and grew faster than linearly with pools, while freeing almost nothing. Memory
      stays bounded by the run. ``gc.freeze()`` on the way out moves every object to the
      permanent generation, so the interpreter's final collection has nothing to walk.
    - No pydantic plugin discovery. The first validator pydantic builds reads the entry points of
      every installed distribution to find plugins (~8 ms a plan; pydantic/plugin/_loader.py,
      get_plugins); the config models use none. ``PYDANTIC_DISABLE_PLUGINS`` (pydantic#8767)
      is set only where the environment does not already set it.
    """
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()


def run(main: Callable[[], int], fast_exit: bool = False) -> None:
    """Exit with ``main()``'s code; a reader that closes the pipe early (``| head``) is not an error.

    ``fast_exit``: once the output is flushed, leave without the interpreter's teardown (module
    and object-graph finalisation, ~0.1 s after a plan); for commands that own no open files,
    child processes or atexit work.
    """
    try:
        code = main()
        sys.stdout.flush()
        if fast_exit:
            sys.stderr.flush()
            os._exit(code)
    except BrokenPipeError:
        # Nothing more can be shown: leave at once, so neither the final flush of stdout nor the
        # finalizers of half-closed event loops print noise on the way out.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.stderr.flush()
        os._exit(0)
    sys.exit(code)
