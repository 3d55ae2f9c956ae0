"""The model-facing tool set (interface.md §6): specs for the provider, dispatch by name."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from ioh_tui.core.transcript import ToolSpec
from ioh_tui.tools.base import ArgumentError, Tool, ToolContext, ToolResult
from ioh_tui.tools.command import exec_asked, exec_command
from ioh_tui.tools.families import (
    DOCUMENT_TOOLS,
    GIT_TOOLS,
    SCAN_TOOLS,
    VIEW_IMAGE,
    wants_documents,
    wants_images,
    wants_scans,
)
from ioh_tui.tools.files import edit_file, list_dir, read_file, write_file
from ioh_tui.tools.note import MAX_NOTE_CHARS, NOTE, note
from ioh_tui.tools.search import find, grep
from ioh_tui.tools.specs import POSITIVE, STRING, spec
from ioh_tui.tools.vision import Vision
from ioh_tui.tools.workspace import Escape

# Short names: the specs below are read as a table.
_spec, _S, _I = spec, STRING, POSITIVE

READ_FILE = Tool(
    _spec(
        "read_file",
        "Read a text file: the whole file, or a line range (1-based, inclusive). Files over the "
        "size ceiling are refused, never cut: read a range instead.",
        {"path": _S, "start_line": _I, "end_line": _I},
        ["path"],
    ),
    read_file,
)
WRITE_FILE = Tool(
    _spec(
        "write_file",
        "Create or replace a file with the full new content.",
        {"path": _S, "content": _S},
        ["path", "content"],
    ),
    write_file,
    mutating=True,
)
EDIT_FILE = Tool(
    _spec(
        "edit_file",
        "Replace old_text with new_text in a file; old_text must occur exactly once.",
        {"path": _S, "old_text": _S, "new_text": _S},
        ["path", "old_text", "new_text"],
    ),
    edit_file,
    mutating=True,
)
GREP = Tool(
    _spec(
        "grep",
        "Search file contents for a substring (or a regular expression with regex=true); "
        "optionally under a path. Shows up to 50 matching lines.",
        {"pattern": _S, "path": _S, "regex": {"type": "boolean"}},
        ["pattern"],
    ),
    grep,
)
FIND = Tool(
    _spec(
        "find",
        "List files whose workspace-relative path matches a glob (* within a name, ** across "
        "directories; a pattern without / also matches file names at any depth).",
        {"pattern": _S},
        ["pattern"],
    ),
    find,
)
LIST_DIR = Tool(
    _spec(
        "list_dir", "List one directory level (path omitted: the workspace root).", {"path": _S}, []
    ),
    list_dir,
)
EXEC = Tool(
    _spec(
        "exec",
        "Run a command in the workspace root: argv is the program and its arguments (no shell: "
        "no pipes, redirects or variables). Runs in a sandbox with no network unless the "
        "policy grants this command the network.",
        {"argv": {"type": "array", "items": _S, "minItems": 1}, "timeout_s": {"type": "number"}},
        ["argv"],
    ),
    exec_command,
    mutating=True,
    cut_ask=exec_asked,
)

SPAWN_AGENT = "spawn_agent"


async def _tree_only(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    """The engine runs spawns itself; reaching this means the run is not a tree."""
    return ToolResult("[spawn error] this run cannot spawn sub-agents", ok=False)


SPAWN = Tool(
    _spec(
        SPAWN_AGENT,
        "Start a sub-agent on a smaller, independent part of the goal, over the same workspace. "
        "It inherits your permissions and can only be narrowed. With wait=true (the default) its "
        "report is this call's result; with wait=false it works in the background and its report "
        "arrives at a later step. Spawns in one step run at the same time.",
        {
            "goal": _S,
            "max_steps": _I,
            "token_budget": _I,
            "wait": {"type": "boolean"},
        },
        ["goal"],
    ),
    _tree_only,
    mutating=True,
)

NOTE_TOOL = Tool(
    _spec(
        NOTE,
        "Keep a short note for yourself (what you learned, what is left to do). Your notes are "
        "shown to you at every later step, even after older steps are summarised; keep each one "
        f"short (at most {MAX_NOTE_CHARS} characters).",
        {"text": _S},
        ["text"],
    ),
    note,
)

WORKSPACE_TOOLS = (
    READ_FILE,
    WRITE_FILE,
    EDIT_FILE,
    GREP,
    FIND,
    LIST_DIR,
    EXEC,
    NOTE_TOOL,
)
SINGLE_FILE_TOOLS = (READ_FILE, WRITE_FILE)
TREE_TOOLS = (*WORKSPACE_TOOLS, SPAWN)


def offered(
    mode: str,
    *,
    tree: bool,
    root: Path,
    hints: str = "",
    vision: Vision | None = None,
) -> tuple[Tool, ...]:
    """The tools a run offers the model (decided when a drive starts, and again at a resume).

    Every spec is sent with every request, so a family comes only where it can be of use:
    the git tools where the workspace root is a repository's top level (`.git` there: a
    directory, or a file for a linked worktree); the document tools where the task (`hints`:
    its goal and criterion) names a document or the workspace holds one; the scan tools (OCR,
    barcodes) where the task names them; `view_image` where the model takes images (`vision`)
    or the task names an image, where it says the model cannot see it. A tool whose libraries
    are missing is still offered there, and says which extra to install.
    """
    if mode == "single_file":
        return SINGLE_FILE_TOOLS
    tools = TREE_TOOLS if tree else WORKSPACE_TOOLS
    if (root / ".git").exists():
        tools = (*tools, *GIT_TOOLS)
    if wants_documents(root, hints):
        tools = (*tools, *DOCUMENT_TOOLS)
    if wants_scans(hints):
        tools = (*tools, *SCAN_TOOLS)
    if vision is not None or wants_images(hints):
        tools = (*tools, VIEW_IMAGE)
    return tools


class ToolSource(Protocol):
    """Tools that come and go during a run (an MCP server's, refreshed when it says so)."""

    def tools(self) -> tuple[Tool, ...]:
        """The tools offered now."""
        ...


class ToolSet:
    """Tools by name; dispatch turns every tool failure into an observation.

    The fixed tools come first; attached sources add theirs, read again at every step, and never
    replace a fixed tool of the same name.
    """

    def __init__(self, tools: tuple[Tool, ...]) -> None:
        self._tools = {t.spec.name: t for t in tools}
        self._sources: list[ToolSource] = []

    def attach(self, source: ToolSource) -> None:
        """Offer `source`'s tools too, as they are at each step."""
        self._sources.append(source)

    def detach(self, source: ToolSource) -> None:
        """Stop offering `source`'s tools."""
        if source in self._sources:
            self._sources.remove(source)

    @property
    def sources(self) -> tuple[ToolSource, ...]:
        """The attached sources."""
        return tuple(self._sources)

    def fixed(self) -> ToolSet:
        """The fixed tools alone (a source's tools hold a live connection: they do not travel)."""
        return ToolSet(tuple(self._tools.values()))

    def _all(self) -> dict[str, Tool]:
        if not self._sources:
            return self._tools
        tools = dict(self._tools)
        for source in self._sources:
            for tool in source.tools():
                tools.setdefault(tool.spec.name, tool)
        return tools

    @property
    def specs(self) -> tuple[ToolSpec, ...]:
        """What the provider offers the model."""
        return tuple(t.spec for t in self._all().values())

    def get(self, name: str) -> Tool | None:
        """The tool called `name`, if offered."""
        return self._all().get(name)

    async def dispatch(self, name: str, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        """Run one call; unknown tools, bad arguments and escapes come back as observations."""
        tools = self._all()
        tool = tools.get(name)
        if tool is None:
            return ToolResult(f"[unknown tool {name}] available: {', '.join(tools)}", ok=False)
        try:
            return await tool.run(args, ctx)
        except ArgumentError as exc:
            return ToolResult(f"[{name} error] {exc}", ok=False)
        except Escape as exc:
            return ToolResult(f"[{name} refused] {exc}", ok=False, refused=True)
        except OSError as exc:
            return ToolResult(f"[{name} error] {exc.strerror or exc}", ok=False)
        except (ValueError, RecursionError) as exc:
            # Arguments no check foresaw (a value the OS or a codec rejects) are still the
            # model's to read, never a traceback that ends the run.
            return ToolResult(f"[{name} error] {type(exc).__name__}: {exc}", ok=False)
