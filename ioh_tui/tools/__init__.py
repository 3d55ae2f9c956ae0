"""Model-facing tools: files, search, commands; confined to a workspace, every act decided."""

from ioh_tui.tools.base import Decider, Deferral, Permit, Refusal, Tool, ToolContext, ToolResult
from ioh_tui.tools.registry import SINGLE_FILE_TOOLS, WORKSPACE_TOOLS, ToolSet
from ioh_tui.tools.workspace import Escape, Workspace

__all__ = [
    "SINGLE_FILE_TOOLS",
    "WORKSPACE_TOOLS",
    "Decider",
    "Deferral",
    "Escape",
    "Permit",
    "Refusal",
    "Tool",
    "ToolContext",
    "ToolResult",
    "ToolSet",
    "Workspace",
]
