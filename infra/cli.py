"""What every command-line entry point of this project shares (stdlib only: keeps start-up lean)."""

from __future__ import annotations

import argparse
import atexit
import contextlib
import gc
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

_PROJECT_ROOT = Path(__file__).resolve().parent.parent


def doc_parser(prog: str, doc: str | None, epilog: str) -> argparse.ArgumentParser:
    """A parser whose help is the module docstring ``doc``: the text after its first two
    paragraphs, up to the paragraph that starts with ``epilog`` (``examples:``); that paragraph
    and the rest are the epilog."""
    doc = doc or ""
    return argparse.ArgumentParser(
        prog=prog,
        description=doc.split("\n\n", 2)[2].split(f"\n\n{epilog}")[0],
        epilog=epilog + doc.split(epilog, 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def colour_enabled(stream: object) -> bool:
    """Colour for what goes to ``stream``: on a terminal only, never in pipes or files.

    ``NO_COLOR`` (any non-empty value) turns it off and ``FORCE_COLOR`` on
    (https://no-color.org, https://force-color.org); ``TERM=dumb`` is a terminal without colour.
    """
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty is not None and isatty()) and os.environ.get("TERM") != "dumb"


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
    """A short-lived CLI's interpreter: none of the work that only pays off in a long-running one.

    - No cyclic garbage collection. A plan builds one object graph and exits; measured with
      ``gc.callbacks``, the collector's sweeps over that graph were 16 % (gke-t4) to 30 %
      (eks-g4dn) of a plan's in-process time, plus a full sweep at exit, and grew faster than
      linearly with pools while freeing almost nothing. Memory stays bounded by the run.
      ``gc.freeze()`` on the way out moves every object to the permanent generation, so the
      interpreter's final collection has nothing to walk.
    - No pydantic plugin discovery (``PYDANTIC_DISABLE_PLUGINS=__all__``, see ``_no_plugin_scan``).
    """
    _no_plugin_scan()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()


def short_lived_process() -> None:
    """``short_lived`` for the rest of this process, for the Pulumi program under the engine.

    A context manager around the program body would not do: the SDK registers the resources and
    runs the applies after the body returns (pulumi/runtime/stack.py: run_pulumi_func, then
    wait_for_rpcs), so the collector would be back on for the work. Freezing happens at exit.
    """
    _no_plugin_scan()
    gc.disable()
    atexit.register(gc.freeze)


def _no_plugin_scan() -> None:
    """No pydantic plugin discovery: the first validator pydantic builds reads the entry points
    of every installed distribution to find plugins (~8 ms a plan; pydantic/plugin/_loader.py,
    get_plugins), and the config models use none. ``PYDANTIC_DISABLE_PLUGINS`` (pydantic#8767)
    is set only where the environment does not set it: ``PYDANTIC_DISABLE_PLUGINS=`` (empty)
    keeps a user's plugins (logfire, say) loading, and child processes inherit the setting.
    """
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")


def run(main: Callable[[], int], fast_exit: bool = False) -> None:
    """Exit with ``main()``'s code; a reader that closes the pipe early (``| head``) is not an error.

    ``fast_exit``: once the output is flushed, leave without the interpreter's teardown (module
    and object-graph finalisation, ~80 ms after a plan); for commands that own no open files,
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


def export_flags(parser: argparse.ArgumentParser) -> None:
    """``python -m infra.plan``'s ``--export`` options (GitOps manifests for Argo CD and Flux)."""
    export = parser.add_argument_group("with --export")
    export.add_argument(
        "--stack-outputs",
        metavar="FILE",
        help="the deployed stack's `pulumi stack output --json`: its real names, ARNs and "
        "endpoint replace the values the offline plan makes up",
    )
    export.add_argument(
        "--repo-url",
        metavar="URL",
        help="the Git repository the export is committed to (Argo CD Applications' repoURL)",
    )
    export.add_argument(
        "--revision", metavar="REV", help="its branch, tag or commit (default: HEAD)"
    )
    export.add_argument(
        "--destination",
        metavar="SERVER|NAME",
        help="the cluster Argo CD deploys to: an https:// API server URL or a cluster name "
        "registered in Argo CD (default: the cluster Argo CD runs in)",
    )
    export.add_argument(
        "--flux-kubeconfig-secret",
        metavar="NAME",
        help="a Secret in flux-system holding the kubeconfig of the cluster Flux deploys to "
        "(default: the cluster Flux runs in)",
    )
    export.add_argument(
        "--overwrite",
        action="store_true",
        help="replace exported files edited since the last export (refused without it)",
    )
