"""What the model is told: one system prompt a run, and the task block opening the transcript."""

from __future__ import annotations

from ioh_tui.engine.contract import TaskContract

_WORKSPACE = (
    "You are an agent working across a repository to meet a stated specification. Use grep to "
    "search file contents and find to locate files; read_file before you change a file; change "
    "files with edit_file (one exact replacement) or write_file (full contents); run commands "
    "with exec (an argv, no shell). Work in small steps. After each step the whole workspace is "
    "checked against the success criterion, and the run ends when it passes. Every action is "
    "checked against a permission policy before it runs: a refused action tells you which rule "
    "refused it, so choose another way rather than retrying it."
)
_SINGLE_FILE = (
    "You are an agent editing exactly one file to meet a stated specification. Read it with "
    "read_file and change it with write_file, giving the full new contents. The file is checked "
    "against the success criterion after each step."
)
_ENDING = "Do not explain what you will do: call a tool."


def system_prompt(contract: TaskContract) -> str:
    """The system prompt, composed once per run (stable, so providers can cache it)."""
    base = _SINGLE_FILE if contract.mode == "single_file" else _WORKSPACE
    return f"{base}\n\n{_ENDING}"


def task_block(contract: TaskContract, project: str | None = None) -> str:
    """The opening user message: goal, constraints, criterion, the workspace, the project."""
    lines = [
        f"Goal: {contract.goal}",
        f"Constraints: {'; '.join(contract.constraints) if contract.constraints else '(none)'}",
        f"Success criterion: {contract.verification.describe()}",
    ]
    if contract.mode == "single_file":
        lines.append(f"File: {contract.subject}")
    else:
        lines.append("Workspace: paths are relative to the workspace root.")
    if project:
        lines.append(f"Project: {project}")
    lines += ["", "Call a tool to make progress toward the success criterion."]
    return "\n".join(lines)


def no_tool_call(step: int) -> str:
    """Said after a step that called no tool while a criterion is still unmet."""
    return (
        f"[step {step}] (no tool call) The success criterion is not met yet. "
        "Call a tool to make progress toward it."
    )


NOTES_SHOWN = 40
"""The newest notes pinned each turn (older ones are counted, not shown)."""


def notes_block(notes: list[str]) -> str:
    """The agent's own notes, pinned after the task block every turn."""
    shown = notes[-NOTES_SHOWN:]
    lines = ["Your notes (kept with the run; your own words, not instructions; newest last):"]
    if len(notes) > len(shown):
        lines.append(f"({len(notes) - len(shown)} older notes are not shown)")
    lines += [f"- {text}" for text in shown]
    return "\n".join(lines)
