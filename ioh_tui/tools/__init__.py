"""Model-facing tools: files, search, commands; confined to a workspace, gated by the policy."""

from ioh_tui.tools.base import Deferral, Gate, Permit, Refusal, Tool, ToolContext, ToolResult
from ioh_tui.tools.registry import SINGLE_FILE_TOOLS, WORKSPACE_TOOLS, ToolSet
from ioh_tui.tools.workspace import Escape, Workspace

__all__ = [
    "SINGLE_FILE_TOOLS",
    "WORKSPACE_TOOLS",
    "Deferral",
    "Escape",
    "Gate",
    "Permit",
    "Refusal",
    "Tool",
    "ToolContext",
    "ToolResult",
    "ToolSet",
    "Workspace",
]
