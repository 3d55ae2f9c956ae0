"""`skill`: one skill's instructions and the list of its files, or one of those files.

The skills themselves are found once per drive (`ioh_tui/skills`); their names and descriptions
are pinned in every request, and this tool hands over the rest when the model chooses a skill.
A file is read only if the skill lists it, through a `read` decision like any read: on its path in
the workspace for a project's skill, on its absolute path for the user's (outside the workspace).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ioh_tui.core.acts import Act
from ioh_tui.core.transcript import ToolSpec
from ioh_tui.skills import MAX_FILE_CHARS, Skill, Skills, read_bounded
from ioh_tui.tools.base import Deferral, Refusal, Tool, ToolContext, ToolResult, arg_str, cap

SKILL = "skill"


def skill_tool(skills: Skills) -> Tool:
    """The `skill` tool over the run's skills."""

    async def run(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        name = arg_str(args, "name")
        skill = skills.get(name)
        if skill is None:
            known = ", ".join(s.name for s in skills.skills)
            return ToolResult(
                f"[skill error] no skill named {name!r} (there are: {known})", ok=False
            )
        file = arg_str(args, "file", required=False)
        if not file:
            return ToolResult(_instructions(skill), meta={"skill": name, "path": str(skill.path)})
        return await _file(skill, file, ctx)

    spec = ToolSpec(
        SKILL,
        "Load a skill named in the skills list: its instructions and the files it comes with. "
        "Give `file` (a path the skill lists) to read one of those files.",
        {
            "type": "object",
            "properties": {"name": {"type": "string"}, "file": {"type": "string"}},
            "required": ["name"],
            "additionalProperties": False,
        },
    )
    return Tool(spec, run)


def _instructions(skill: Skill) -> str:
    lines = [f"[skill {skill.name}] from {skill.path}", skill.body or "(no instructions)"]
    if skill.files:
        lines.append(
            f"Files of this skill (read one with skill name={skill.name!r} file=PATH): "
            + ", ".join(skill.files)
        )
    return "\n".join(lines)


async def _file(skill: Skill, file: str, ctx: ToolContext) -> ToolResult:
    if file not in skill.files:
        return ToolResult(
            f"[skill error] {skill.name} has no file {file!r}; its files: "
            f"{', '.join(skill.files) or 'none'}",
            ok=False,
        )
    path = skill.folder / file
    if not _inside(path, skill.folder):
        return ToolResult(f"[skill refused] {file} is not inside the skill's folder", ok=False)
    answer = await ctx.decide(Act.READ, _target(path, ctx.workspace.root))
    if isinstance(answer, Refusal):
        return ToolResult(answer.observation, ok=False, refused=True)
    if isinstance(answer, Deferral):
        return ToolResult("[skill deferred]", ok=False, deferred=answer.request_id)
    raw = read_bounded(path)
    if raw is None:
        return ToolResult(f"[skill error] {file} is not a readable regular file", ok=False)
    text = raw.decode("utf-8", errors="replace").replace("\x00", "")
    return ToolResult(
        f"[skill {skill.name} file {file}]\n{cap(text, MAX_FILE_CHARS)}",
        meta={"skill": skill.name, "path": str(skill.path), "file": file},
    )


def _inside(path: Path, folder: Path) -> bool:
    """Whether `path`'s directory really is within the skill's folder (no link in between)."""
    real, top = os.path.realpath(path.parent), os.path.realpath(folder)
    return real == top or real.startswith(top + os.sep)


def _target(path: Path, root: Path) -> str:
    """The read's target: workspace-relative inside the workspace, else the absolute path."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)
