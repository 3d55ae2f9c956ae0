"""Running git for the git tools: in the sandbox, without the network, hooks or outside config.

Each git tool runs the git command line through the run's sandbox, like `exec`, but with settings
that keep git from running anything the policy did not see:

- `core.hooksPath=/dev/null`: a hook is a program the agent may have written (a repository can
  point `core.hooksPath` into the work tree); running one through `git_commit` would be an `exec`
  that no `exec` rule allowed. Hooks run through `exec` of git, where the policy decides.
- `core.fsmonitor=false`, `--no-ext-diff`, `--no-textconv`: other programs git would start.
- no system or global configuration, and discovery stops at the workspace: a repository above
  the workspace is not this run's to change.
- no network: git tools never fetch or push (a push is an `exec` of git needing a `net` rule).
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from ioh_tui.sandbox.base import EXEC_LIMITS, ExecResult
from ioh_tui.tools.base import ArgumentError, ToolContext

GIT_WALL_S = 60.0
"""A git tool's wall-clock cap (at most the run's time left)."""

_SAFETY = (
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.quotePath=false",
    "-c",
    "color.ui=false",
    "-c",
    "safe.directory=*",
)

_REV = re.compile(r"[A-Za-z0-9_./~^@{}:+-]{1,200}")
_FALLBACK_NAME = "ioh-tui agent"
_FALLBACK_EMAIL = "agent@ioh-tui.invalid"


class NotARepository(Exception):
    """The workspace root is not the top of a git work tree."""


def check_rev(name: str, value: str) -> str:
    """A revision or branch name the model gave, refused when git could read it as an option."""
    if not _REV.fullmatch(value) or value.startswith("-"):
        raise ArgumentError(
            f"{name} must be a revision or branch name (letters, digits and _./~^@{{}}:+-, "
            "not starting with -)"
        )
    return value


async def git(ctx: ToolContext, *args: str, env: dict[str, str] | None = None) -> ExecResult:
    """Run `git ARGS` in the workspace root through the sandbox, without the network."""
    root = ctx.workspace.root
    wall = min(GIT_WALL_S, ctx.wall_s())
    limits = dataclasses.replace(EXEC_LIMITS, wall_s=max(wall, 0.001))
    return await ctx.sandbox.run(
        ["git", *_SAFETY, *args],
        root,
        limits=limits,
        network=False,
        env={**_env(root), **(env or {})},
    )


async def top_level(ctx: ToolContext) -> None:
    """Check that the workspace root is a repository's top level.

    Raises:
        NotARepository: it is not (no repository, or the workspace is a folder inside one).
    """
    # The prefix is the root's path inside the repository: empty at its top. (Compared as a
    # prefix, not as paths: inside the sandbox the root may be mounted elsewhere.)
    done = await git(ctx, "rev-parse", "--show-prefix")
    if not done.ok:
        raise NotARepository("the workspace is not a git repository")
    if done.stdout.strip():
        raise NotARepository("the workspace is a folder inside a git repository, not its top")


def failed(verb: str, done: ExecResult) -> str:
    """An observation for a git command that did not succeed."""
    if done.unavailable:
        return f"[{verb} error] git is not installed where commands run"
    if done.cap_hit is not None:
        return f"[{verb} error] git was stopped (its {done.cap_hit} cap)"
    why = (done.stderr.strip() or done.stdout.strip() or f"exit {done.exit_code}").splitlines()
    return f"[{verb} error] " + " / ".join(line.strip() for line in why[:4])


def identity(root: Path) -> dict[str, str]:
    """The author and committer of a commit: the repository's or user's git identity, else ours.

    Read on the host (the sandbox hides the user's global configuration): `git config --get`
    reads files and runs nothing.
    """
    env: dict[str, str] = {}
    for key, fallback, names in (
        ("user.name", _FALLBACK_NAME, ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME")),
        ("user.email", _FALLBACK_EMAIL, ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL")),
    ):
        value = _host_config(root, key) or fallback
        for name in names:
            env[name] = value
    return env


def _host_config(root: Path, key: str) -> str:
    exe = shutil.which("git")
    if exe is None:
        return ""
    try:
        done = subprocess.run(
            [exe, "-C", str(root), "config", "--get", key],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
            env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1"},
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def _env(root: Path) -> dict[str, str]:
    return {
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CEILING_DIRECTORIES": str(root.parent),
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_PAGER": "cat",
        "LC_ALL": "C",
    }


def z_fields(text: str) -> list[str]:
    """The NUL-separated fields of git's `-z` output."""
    return [f for f in text.split("\0") if f]


def paths_arg(paths: Sequence[str]) -> list[str]:
    """`--` and the paths, so that none is read as a revision or an option."""
    return ["--", *paths] if paths else []
