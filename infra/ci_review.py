"""``python -m infra.ci_review``: one pull-request comment reviewing every stack file a change adds,
edits or deletes.

usage: python -m infra.ci_review --base REF [--stacks-dir DIR] [--fail-on replace|disruptive|any]
                                 [--output FILE] [STACK_FILE ...]

For each stack file that differs between the merge base of REF and HEAD (every one when
Pulumi.yaml does; or each STACK_FILE given), runs ``python -m infra.plan --diff BASE:path --format
markdown`` with ``--beside`` each other stack file of the stacks directory on the same cluster (a
stack the change adds is an all-create review with its cost, one it deletes an all-delete review) and ``python -m quota.check --offline --diff BASE:path`` (each quota's demand
old -> new), and writes one Markdown comment to FILE (cut to GitHub's 65,536 characters) and the
whole review to stdout. The comment starts with the line ``<!-- gpu-infra-review -->``, so a CI
step can find the comment it posted before and update it (docs/review.md, "In CI"). The tool
never posts anything itself and reads no token.

exit codes: 0 every review passed; 2 a stack file (either side) is invalid, or a usage error;
3 a change --fail-on refuses (the comment names it and why); 1 any other failure.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from infra.cli import doc_parser

MARKER = "<!-- gpu-infra-review -->"
# GitHub refuses a comment body over 65,536 characters ("Body is too long (maximum is 65536
# characters)", the REST API's validation error): a longer review is cut, the whole one printed.
MAX_COMMENT = 65_536
EXIT_OK, EXIT_FAILURE, EXIT_CONFIG, EXIT_FAIL_ON = 0, 1, 2, 3


@dataclass(frozen=True, slots=True)
class Section:
    """One stack file's part of the comment and its exit code."""

    path: str
    text: str
    code: int


def _parser() -> argparse.ArgumentParser:
    parser = doc_parser("python -m infra.ci_review", __doc__, "exit codes:")
    parser.add_argument("--base", required=True, metavar="REF", help="the branch merged into")
    parser.add_argument(
        "--stacks-dir",
        default="stacks",
        metavar="DIR",
        help="where the stack files are (default: stacks, of the working directory)",
    )
    parser.add_argument(
        "--fail-on",
        choices=("replace", "disruptive", "any"),
        default="disruptive",
        help="the changes that make the review fail (exit 3; default: disruptive)",
    )
    parser.add_argument("--output", metavar="FILE", help="write the comment here, not to stdout")
    parser.add_argument("files", nargs="*", metavar="STACK_FILE", help="review only these")
    return parser


class GitError(Exception):
    """A git command failed; ``str()`` is one line naming ``--base``."""


def _git(*args: str) -> str:
    try:
        proc = subprocess.run(["git", *args], capture_output=True, text=True, check=False)
    except OSError as e:
        raise GitError(f"--base: cannot run git: {e}") from e
    if proc.returncode != 0:
        why = (proc.stderr.strip().splitlines() or ["git failed"])[-1]
        raise GitError(f"--base: git {' '.join(args)}: {why}")
    return proc.stdout


def changed_stack_files(base: str, stacks_dir: str) -> list[str]:
    """Stack files under ``stacks_dir`` that HEAD adds, edits or deletes since its merge base with
    ``base`` (``git diff base...HEAD``: the pull request's own changes), sorted; every stack file
    when the project file changes (its ``config:`` applies to every stack)."""
    names = _git(
        "diff", "--name-only", "--no-renames", f"{base}...HEAD", "--", stacks_dir, "Pulumi.yaml"
    ).splitlines()
    stacks = {
        n for n in names if Path(n).name.startswith("Pulumi.") and n.endswith((".yaml", ".yml"))
    }
    if "Pulumi.yaml" in names:
        stacks.discard("Pulumi.yaml")
        stacks |= {str(p) for p in Path(stacks_dir).glob("Pulumi.*.yaml")}
    return sorted(stacks)


def _captured(main: Callable[[list[str]], int], argv: list[str]) -> tuple[int, str, str]:
    """Run a CLI's ``main(argv)`` in this process; its exit code, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as e:  # argparse's usage errors
            code = e.code if isinstance(e.code, int) else EXIT_CONFIG
    return int(code), out.getvalue(), err.getvalue()


def same_cluster(path: str, stacks_dir: str) -> list[str]:
    """The other stack files of ``stacks_dir`` (as HEAD has them) whose stack plans on the
    cluster ``path``'s does (``StackConfig.cluster_identity``), sorted: its neighbours, which
    ``--beside`` deploys beside it. A file that does not parse is no neighbour (its own review
    reports it); a deleted ``path`` has none."""
    from infra.core.config.stack import parse_file
    from infra.core.errors import ConfigErrors

    def identity(file: Path) -> tuple[str, str] | None:
        try:
            config = parse_file(file)
        except ConfigErrors:
            return None
        return config.platform, config.cluster_identity().where

    me = Path(path)
    mine = identity(me) if me.exists() else None
    if mine is None:
        return []
    others = (
        p for p in sorted(Path(stacks_dir).glob("Pulumi.*.yaml")) if p.resolve() != me.resolve()
    )
    return [str(p) for p in others if identity(p) == mine]


def review_one(path: str, base: str, fail_on: str, beside: list[str] | None = None) -> Section:
    """The comment section of one stack file: the markdown review (with ``--beside`` each of
    ``beside``), what ``--fail-on`` refuses, the quota demand's change, or the errors that
    stopped it."""
    from infra import plan as plan_cli
    from quota import check as quota_cli

    old = f"{base}:{path}"
    argv = ["--stack", path, "--diff", old, "--fail-on", fail_on, "--format", "markdown"]
    argv += [a for f in beside or () for a in ("--beside", f)]
    code, out, err = _captured(plan_cli.main, argv)
    lines = [out.rstrip()] if out.strip() else [f"### `{old}` → `{path}`"]
    if beside:
        lines += ["", "Reviewed beside " + ", ".join(f"`{f}`" for f in beside) + " (same cluster)."]
    lines += [f"- {e}" for e in err.splitlines() if e.startswith("not modelled beside ")]
    refused = [e for e in err.splitlines() if e.startswith("--fail-on ")]
    if code == EXIT_FAIL_ON:
        lines += ["", f"**Blocked by `--fail-on {fail_on}`:**", ""]
        lines += [f"- {r.removeprefix(f'--fail-on {fail_on}: ')}" for r in refused]
    elif code != EXIT_OK:
        lines += ["", f"**The review failed (exit {code}):**", "", "```", err.strip(), "```"]
    if code in (EXIT_OK, EXIT_FAIL_ON) and Path(path).exists():
        q_out, q_err = io.StringIO(), io.StringIO()
        q_code = quota_cli.main(["--config", path, "--offline", "--diff", old], q_out, q_err)
        text = q_out.getvalue().split("Change from ", 1)
        shown = f"Change from {text[1]}" if len(text) > 1 else q_err.getvalue()
        lines += ["", "<details><summary>quota demand</summary>", "", "```"]
        lines += [shown.strip(), "```", "", "</details>"]
        if q_code == EXIT_CONFIG:
            code = EXIT_CONFIG
    return Section(path, "\n".join(lines), code)


def verdict(codes: list[int]) -> int:
    """A broken file (2) before a refused change (3) before any other failure (1)."""
    for code in (EXIT_CONFIG, EXIT_FAIL_ON, EXIT_FAILURE):
        if code in codes:
            return code
    return max(codes, default=EXIT_OK)


def comment(sections: list[Section], base: str) -> str:
    """The whole comment: the marker, a heading, then each stack's section."""
    head = [MARKER, "## gpu-infra review", ""]
    if not sections:
        head.append(f"No stack file changes against `{base}`.")
    parts = [s.text for s in sections]
    return "\n".join(head) + "\n" + "\n\n---\n\n".join(parts) + "\n"


def fit(text: str, limit: int = MAX_COMMENT) -> str:
    """``text`` cut to fit one comment, at a line, saying so (the job log has all of it)."""
    if len(text) <= limit:
        return text
    note = "\n\n*(cut to fit one comment: the job's log holds the whole review)*\n"
    head = text[: limit - len(note)]
    return head[: head.rfind("\n")] + note


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; returns the exit code."""
    args = _parser().parse_args(argv)
    if args.base.startswith("-"):
        print("--base: a git ref cannot start with '-'", file=sys.stderr)
        return EXIT_CONFIG
    try:
        # The merge base, as a pull request diffs: what the branch changed, not what the base
        # branch gained since (git diff A...B).
        base = _git("rev-parse", "--short=12", _git("merge-base", args.base, "HEAD").strip())
        base = base.strip()
        files = args.files or changed_stack_files(base, args.stacks_dir)
    except GitError as e:
        print(e, file=sys.stderr)
        return EXIT_CONFIG
    sections = [review_one(f, base, args.fail_on, same_cluster(f, args.stacks_dir)) for f in files]
    text = comment(sections, args.base)
    if args.output:
        Path(args.output).write_text(fit(text), encoding="utf-8")
    sys.stdout.write(text)  # the whole review in the job's log
    return verdict([s.code for s in sections])


if __name__ == "__main__":
    from infra.cli import run, short_lived

    with short_lived():
        run(main)
