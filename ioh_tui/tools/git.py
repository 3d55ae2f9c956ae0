"""The git tools (interface.md §8): typed arguments, structured output, every act decided.

Reads (`git_status`, `git_diff`, `git_log`, `git_show`, listing branches) are `read` acts on the
path they look at (the root when none). Paths the policy hides are left out of what they show, and
a diff shows only files whose content may be read without asking: `git_diff` must not be a way
round a `read` deny. Changes are `write` acts: staging on the paths staged, a commit or a new
branch on `.git`, a switch on `.git` and on every file it would rewrite. Nothing fetches or pushes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ioh_tui.core.acts import Act
from ioh_tui.tools.base import (
    ArgumentError,
    Deferral,
    Permit,
    Refusal,
    ToolContext,
    ToolResult,
    arg_bool,
    arg_int,
    arg_str,
    cap,
    check_text,
)
from ioh_tui.tools.gitrun import (
    NotARepository,
    check_rev,
    failed,
    git,
    identity,
    paths_arg,
    top_level,
    z_fields,
)

REPOSITORY = ".git"
"""The target of the acts that change the repository itself (a commit, a branch)."""

_LOG_DEFAULT, _LOG_MAX = 20, 200
_FORMAT = "%H%x1f%an%x1f%aI%x1f%s"


async def git_status(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    """The branch and the staged, unstaged and untracked paths."""
    path = _path(args, ctx, "path")
    if (stop := await _decided(ctx, Act.READ, path or "", "git_status")) is not None:
        return stop
    if (stop := await _repository(ctx, "git_status")) is not None:
        return stop
    done = await git(ctx, "status", "--porcelain=v2", "--branch", "-z", *paths_arg(_in(path)))
    if not done.ok:
        return ToolResult(failed("git_status", done), ok=False)
    branch, groups = _parse_status(done.stdout)
    lines = [f"[git_status] {branch}"]
    hidden = 0
    for title, entries in groups.items():
        shown = [(code, name) for code, name in entries if ctx.visible(name)]
        hidden += len(entries) - len(shown)
        if shown:
            lines.append(f"{title}:")
            lines.extend(f"  {code} {name}" for code, name in shown)
    if len(lines) == 1:
        lines.append("clean: nothing to commit")
    if hidden:
        lines.append(f"({hidden} paths the policy hides are not shown)")
    return ToolResult(cap("\n".join(lines), ctx.entry_cap), meta={"branch": branch})


async def git_diff(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    """The patch of the work tree against the index, the index against HEAD, or a revision."""
    staged = arg_bool(args, "staged")
    rev = args.get("rev")
    path = _path(args, ctx, "path")
    base = ["--cached"] if staged else []
    if rev is not None:
        base.append(check_rev("rev", arg_str(args, "rev")))
    if (stop := await _decided(ctx, Act.READ, path or "", "git_diff")) is not None:
        return stop
    if (stop := await _repository(ctx, "git_diff")) is not None:
        return stop
    return await _patch(ctx, "git_diff", ["diff", *base], _in(path))


async def git_log(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    """The latest commits (hash, author, date, subject), optionally those touching a path."""
    path = _path(args, ctx, "path")
    count = arg_int(args, "max_count") or _LOG_DEFAULT
    if count > _LOG_MAX:
        raise ArgumentError(f"max_count must be at most {_LOG_MAX}")
    if (stop := await _decided(ctx, Act.READ, path or "", "git_log")) is not None:
        return stop
    if (stop := await _repository(ctx, "git_log")) is not None:
        return stop
    done = await git(
        ctx, "log", f"--max-count={count}", f"--format={_FORMAT}", *paths_arg(_in(path))
    )
    if not done.ok:
        if "does not have any commits" in done.stderr:
            return ToolResult("[git_log] no commits yet")
        return ToolResult(failed("git_log", done), ok=False)
    commits = [line.split("\x1f") for line in done.stdout.splitlines() if line]
    lines = [f"[git_log] {len(commits)} commits"]
    lines += [f"{c[0][:12]} {c[2][:10]} {c[1]}: {c[3]}" for c in commits if len(c) == 4]
    return ToolResult(cap("\n".join(lines), ctx.entry_cap), meta={"commits": len(commits)})


async def git_show(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    """One commit: its header and message, and the patch of the files the policy lets be read."""
    rev = check_rev("rev", arg_str(args, "rev"))
    if (stop := await _decided(ctx, Act.READ, "", "git_show")) is not None:
        return stop
    if (stop := await _repository(ctx, "git_show")) is not None:
        return stop
    head = await git(
        ctx, "show", "-s", "--format=commit %H%nAuthor: %an <%ae>%nDate: %aI%n%n%B", rev
    )
    if not head.ok:
        return ToolResult(failed("git_show", head), ok=False)
    patch = await _patch(ctx, "git_show", ["show", "--format=", rev], [])
    return ToolResult(cap(head.stdout.rstrip() + "\n\n" + patch.output, ctx.entry_cap), ok=patch.ok)


async def git_add(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    """Stage the given paths (a `write` act on each)."""
    paths = _paths(args, ctx)
    if (stop := await _repository(ctx, "git_add")) is not None:
        return stop
    answer = await ctx.decide(Act.WRITE, paths[0], also=tuple(paths[1:]))
    if (stop := _stopped(answer, "git_add")) is not None:
        return stop
    done = await git(ctx, "add", "--", *paths)
    if not done.ok:
        return ToolResult(failed("git_add", done), ok=False)
    return ToolResult(f"[git_add] staged {', '.join(paths)}", changed=True)


async def git_commit(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    """Commit what is staged; the person asked sees what the commit will contain."""
    message = arg_str(args, "message", text=True).strip()
    if not message:
        raise ArgumentError("message must not be empty")
    if (stop := await _repository(ctx, "git_commit")) is not None:
        return stop
    staged = await git(ctx, "diff", "--cached", "--name-status", "-z")
    if not staged.ok:
        return ToolResult(failed("git_commit", staged), ok=False)
    entries = _name_status(staged.stdout)
    if not entries:
        return ToolResult(
            "[git_commit] nothing is staged: stage paths with git_add first", ok=False
        )
    contents = "\n".join(f"  {code} {name}" for code, name in entries)
    preview = f"commit {len(entries)} staged paths with the message:\n{message}\n\n{contents}"
    answer = await ctx.decide(Act.WRITE, REPOSITORY, content=message, preview=preview)
    if (stop := _stopped(answer, "git_commit")) is not None:
        return stop
    assert isinstance(answer, Permit)  # _stopped returned the refusal or deferral
    message = answer.content if answer.content is not None else message
    done = await git(ctx, "commit", "--quiet", "-m", message, env=identity(ctx.workspace.root))
    if not done.ok:
        return ToolResult(failed("git_commit", done), ok=False)
    head = await git(ctx, "rev-parse", "--short=12", "HEAD")
    note = f"\n{answer.note}" if answer.note else ""
    return ToolResult(
        f"[git_commit] {head.stdout.strip()} {message.splitlines()[0]} "
        f"({len(entries)} paths){note}",
        changed=True,
        meta={"paths": [name for _, name in entries]},
    )


async def git_branch(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    """List the branches, or create one at HEAD (a `write` act on `.git`)."""
    name = args.get("name")
    if name is None or arg_bool(args, "list"):
        if name is not None:
            raise ArgumentError("give either name (to create a branch) or list, not both")
        if (stop := await _decided(ctx, Act.READ, "", "git_branch")) is not None:
            return stop
        if (stop := await _repository(ctx, "git_branch")) is not None:
            return stop
        done = await git(ctx, "branch", "--list", "--format=%(HEAD) %(refname:short)")
        if not done.ok:
            return ToolResult(failed("git_branch", done), ok=False)
        return ToolResult("[git_branch]\n" + (done.stdout.rstrip() or "(no branches yet)"))
    branch = check_rev("name", arg_str(args, "name"))
    if (stop := await _repository(ctx, "git_branch")) is not None:
        return stop
    answer = await ctx.decide(Act.WRITE, REPOSITORY, preview=f"create branch {branch} at HEAD")
    if (stop := _stopped(answer, "git_branch")) is not None:
        return stop
    done = await git(ctx, "branch", "--end-of-options", branch)
    if not done.ok:
        return ToolResult(failed("git_branch", done), ok=False)
    return ToolResult(f"[git_branch] created {branch}", changed=True)


async def git_switch(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    """Switch to a branch: a `write` act on `.git` and on every file the switch rewrites."""
    branch = check_rev("name", arg_str(args, "name"))
    if (stop := await _repository(ctx, "git_switch")) is not None:
        return stop
    changed = await git(ctx, "diff", "--name-only", "-z", "HEAD", branch, "--")
    if not changed.ok:
        return ToolResult(failed("git_switch", changed), ok=False)
    files = z_fields(changed.stdout)
    answer = await ctx.decide(
        Act.WRITE,
        REPOSITORY,
        also=tuple(files),
        preview=f"switch to {branch}, rewriting {len(files)} files",
    )
    if (stop := _stopped(answer, "git_switch")) is not None:
        return stop
    done = await git(ctx, "switch", "--no-guess", branch, "--")
    if not done.ok:
        return ToolResult(failed("git_switch", done), ok=False)
    return ToolResult(f"[git_switch] on {branch} ({len(files)} files rewritten)", changed=True)


async def _patch(ctx: ToolContext, verb: str, command: list[str], paths: list[str]) -> ToolResult:
    """The patch of `command`, limited to the files whose content may be read without asking."""
    names = await git(ctx, *command, "--name-only", "-z", *paths_arg(paths))
    if not names.ok:
        return ToolResult(failed(verb, names), ok=False)
    readable = ctx.readable or ctx.visible
    files = z_fields(names.stdout)
    shown = [name for name in files if readable(name)]
    withheld = len(files) - len(shown)
    if not shown:
        text = "(no changes)" if not files else ""
    else:
        done = await git(
            ctx, *command, "--no-ext-diff", "--no-textconv", "--no-color", "--", *shown
        )
        if not done.ok:
            return ToolResult(failed(verb, done), ok=False)
        text = done.stdout.rstrip()
    if withheld:
        text += f"\n({withheld} files whose content the policy does not let be read are left out)"
    header = f"[{verb}] {len(shown)} files"
    return ToolResult(cap(f"{header}\n{text.strip()}", ctx.entry_cap, keep="head"))


async def _repository(ctx: ToolContext, verb: str) -> ToolResult | None:
    try:
        await top_level(ctx)
    except NotARepository as exc:
        return ToolResult(f"[{verb}] {exc}", ok=False)
    return None


async def _decided(ctx: ToolContext, act: Act, target: str, verb: str) -> ToolResult | None:
    return _stopped(await ctx.decide(act, target), verb)


def _stopped(answer: object, verb: str) -> ToolResult | None:
    if isinstance(answer, Refusal):
        return ToolResult(answer.observation, ok=False, refused=True)
    if isinstance(answer, Deferral):
        return ToolResult(f"[{verb} deferred]", ok=False, deferred=answer.request_id)
    return None


def _path(args: Mapping[str, Any], ctx: ToolContext, name: str) -> str | None:
    value = args.get(name)
    if value is None:
        return None
    rel = ctx.workspace.normalise(arg_str(args, name))
    return rel or None


def _in(path: str | None) -> list[str]:
    return [path] if path else []


def _paths(args: Mapping[str, Any], ctx: ToolContext) -> list[str]:
    raw = args.get("paths")
    if not isinstance(raw, list) or not raw or not all(isinstance(p, str) for p in raw):
        raise ArgumentError("paths must be a non-empty list of workspace-relative paths")
    out = []
    for i, path in enumerate(raw):
        check_text(f"paths[{i}]", path)
        rel = ctx.workspace.normalise(path)
        if not rel:
            raise ArgumentError(
                "name the paths to stage; the whole workspace is not staged at once"
            )
        out.append(rel)
    return out


def _parse_status(text: str) -> tuple[str, dict[str, list[tuple[str, str]]]]:
    """The branch line and the staged / not staged / untracked / conflicted entries."""
    branch, ahead = "no branch", ""
    groups: dict[str, list[tuple[str, str]]] = {
        "staged": [],
        "not staged": [],
        "untracked": [],
        "conflicted": [],
    }
    fields = text.split("\0")
    i = 0
    while i < len(fields):
        entry = fields[i]
        i += 1
        if entry.startswith("# branch.head "):
            branch = f"on branch {entry.removeprefix('# branch.head ')}"
        elif entry.startswith("# branch.ab "):
            ahead = entry.removeprefix("# branch.ab ")
        elif entry.startswith(("1 ", "2 ")):
            parts = entry.split(" ", 8)
            xy, name = parts[1], parts[-1]
            if entry.startswith("2 "):
                i += 1  # a rename's original path follows as its own field
            if xy[0] != ".":
                groups["staged"].append((xy[0], name))
            if xy[1] != ".":
                groups["not staged"].append((xy[1], name))
        elif entry.startswith("u "):
            groups["conflicted"].append(("U", entry.split(" ", 10)[-1]))
        elif entry.startswith("? "):
            groups["untracked"].append(("?", entry[2:]))
    if ahead:
        branch += f" ({ahead.replace('+', 'ahead ').replace('-', 'behind ')})"
    return branch, groups


def _name_status(text: str) -> list[tuple[str, str]]:
    """(status letter, path) pairs of `--name-status -z` (a rename or copy names its new path)."""
    fields = z_fields(text)
    out = []
    i = 0
    while i < len(fields):
        code = fields[i][:1]
        step = 3 if code in ("R", "C") else 2
        if i + step - 1 < len(fields):
            out.append((code, fields[i + step - 1]))
        i += step
    return out
