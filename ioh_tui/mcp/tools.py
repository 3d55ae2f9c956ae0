"""An MCP tool as a model-facing tool: `mcp__SERVER__TOOL`, decided by the policy, then called.

Every call goes through the decider as act `mcp` on `SERVER/TOOL` with the arguments as JSON
content, so refusals, asks, the five decisions and a deferred resume work as for every other act.
A rewrite edits that JSON. The server's hints are shown to the person asked and never change the
verdict.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import mcp_types

from ioh_tui.core.acts import Act
from ioh_tui.core.transcript import ToolSpec
from ioh_tui.mcp.connection import CallFailed, Connection, Output
from ioh_tui.mcp.offers import ToolInfo
from ioh_tui.mcp.spec import tool_name
from ioh_tui.tools.base import (
    Asked,
    Deferral,
    Permit,
    Refusal,
    Tool,
    ToolContext,
    ToolResult,
    cap,
)

_HINTS = (
    ("readOnlyHint", "read-only", "may change things"),
    ("destructiveHint", "destructive", "not destructive"),
    ("idempotentHint", "idempotent", "not idempotent"),
    ("openWorldHint", "reaches outside", "closed world"),
)

_EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


Caller = Callable[
    [str, Mapping[str, Any], float, Output | None], Awaitable[mcp_types.CallToolResult]
]
"""Makes one call of a server's tool: (tool, arguments, timeout in seconds, where its live
output goes) to its result."""


def mcp_tool(connection: Connection, info: ToolInfo) -> Tool | None:
    """The tool offering `info` of `connection`'s server, or None if no provider takes its name."""
    return offered_tool(connection.spec.name, info, connection.call)


def offered_tool(server: str, info: ToolInfo, caller: Caller) -> Tool | None:
    """The tool offering `info` of `server`, calling it through `caller` (None: no name fits).

    `caller` is the server's connection in the process that started it, or a line to that
    process (a child on a Ray node reaches the root's servers so).
    """
    exposed = tool_name(server, info.name)
    if exposed is None:
        return None
    schema = info.input_schema if info.input_schema.get("type") == "object" else _EMPTY_SCHEMA
    description = info.description or f"{info.name} (MCP server {server})"
    spec = ToolSpec(exposed, f"[MCP server {server}] {description}", schema)

    async def run(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        return await call_tool(server, caller, info, exposed, args, ctx)

    def asked(args: Mapping[str, Any]) -> Asked:
        return _asked(server, info, args)

    # An MCP call may change anything the server reaches: journalled, and a call a crash cut is
    # the operator's to make again (`cut_ask`), never silently repeated.
    return Tool(spec, run, mutating=True, cut_ask=asked)


def _asked(server: str, info: ToolInfo, args: Mapping[str, Any]) -> Asked:
    """The act a call decides: `mcp` on `SERVER/TOOL`, the arguments as JSON content."""
    return Asked(
        Act.MCP, f"{server}/{info.name}", json.dumps(dict(args), ensure_ascii=False, indent=2)
    )


async def call_tool(
    server: str,
    caller: Caller,
    info: ToolInfo,
    exposed: str,
    args: Mapping[str, Any],
    ctx: ToolContext,
) -> ToolResult:
    """Decide the call (`mcp` on `SERVER/TOOL`), then make it and render what came back."""
    asked = _asked(server, info, args)
    target, content = asked.target, asked.content
    answer = await decided(
        ctx,
        exposed,
        target,
        content,
        hints_line(info.hints),
        "an MCP call's server and tool cannot be rewritten",
    )
    if isinstance(answer, ToolResult):
        return answer
    arguments: Any = dict(args)
    if answer.content is not None and answer.content != content:
        try:
            arguments = json.loads(answer.content)
        except ValueError as exc:
            arguments = exc
        if not isinstance(arguments, dict):
            return ToolResult(
                f"[{exposed} refused] {target}: the rewritten arguments are not a JSON object "
                f"({arguments})"[:500],
                ok=False,
                refused=True,
            )
        if (misfit := schema_misfit(arguments, info.input_schema)) is not None:
            return ToolResult(
                f"[{exposed} refused] {target}: the rewritten arguments do not fit the tool's "
                f"schema: {misfit}"[:500],
                ok=False,
                refused=True,
            )
    wall = ctx.wall_s()
    if wall <= 0:
        return ToolResult(f"[{exposed} not run] the run's time budget is spent", ok=False)
    try:
        result = await caller(info.name, arguments, wall, ctx.on_output)
    except CallFailed as exc:
        return ToolResult(f"[{exposed} error] {target}: {exc}", ok=False, changed=True)
    from ioh_tui.mcp.render import render_shown

    rendered, images = render_shown(result, target, ctx.vision, ctx.model or "")
    text = cap(rendered, ctx.entry_cap)
    note = f"\n{answer.note}" if answer.note else ""
    if result.is_error:
        return ToolResult(f"[{exposed} error]\n{text}{note}", ok=False, changed=True, images=images)
    return ToolResult(f"{text}{note}", changed=True, meta={"server": server}, images=images)


async def decided(
    ctx: ToolContext,
    name: str,
    target: str,
    content: str | None,
    preview: str | None,
    why: str,
    rewritable: Callable[[str], bool] = lambda _: False,
) -> Permit | ToolResult:
    """The act `mcp` on `target` decided: permitted, or why not.

    A target rewritten by the person asked is refused (saying `why`) unless `rewritable`
    accepts it; the decider has already held a rewritten target against the deny rules.
    """
    answer = await ctx.decide(Act.MCP, target, content=content, preview=preview)
    if isinstance(answer, Refusal):
        return ToolResult(answer.observation, ok=False, refused=True)
    if isinstance(answer, Deferral):
        return ToolResult(f"[{name} deferred]", ok=False, deferred=answer.request_id)
    if answer.target != target and not rewritable(answer.target):
        return ToolResult(
            f"[{name} refused] {answer.target}: {why}",
            ok=False,
            refused=True,
        )
    return answer


def schema_misfit(arguments: Mapping[str, Any], schema: Mapping[str, Any]) -> str | None:
    """Why `arguments` do not fit the tool's input schema (None: they do).

    A rewrite is checked before the call, as the model's own arguments were when the server
    listed the schema for them. A schema that is itself broken is left to the server to apply.
    """
    import jsonschema

    try:
        validator = jsonschema.validators.validator_for(schema)
        validator.check_schema(schema)
    except jsonschema.SchemaError:
        return None
    error = jsonschema.exceptions.best_match(validator(schema).iter_errors(dict(arguments)))
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path)
    return f"{where}: {error.message}" if where else error.message


def hints_line(hints: Mapping[str, Any]) -> str | None:
    """The server's annotations in words, marked as its own claims (None: it made none)."""
    words = [yes if hints[key] else no for key, yes, no in _HINTS if key in hints]
    if not words:
        return None
    return f"server's hints (not checked; the policy decides): {', '.join(words)}"
