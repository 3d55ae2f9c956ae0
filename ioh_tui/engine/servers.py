"""The run's MCP servers: started once the drive holds its run, stopped on every way out.

Local servers run in the run's sandbox with the policy's guard, and get the network only where a
`net` rule allows their command line (as `exec` does; no one is asked at start, so `ask` means
no network). Each server's start is kept in the run's trace as a sandbox event.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from ioh_tui.core.acts import Act, Effect
from ioh_tui.engine.guard import policy_guard
from ioh_tui.engine.state import Deps, RunState
from ioh_tui.mcp import McpServers, ServerSpec
from ioh_tui.sandbox import guarded


@contextlib.asynccontextmanager
async def mcp_servers(p: Deps, s: RunState, step: int) -> AsyncIterator[McpServers | None]:
    """Start the drive's servers and offer their tools for the length of the block."""
    if not p.mcp or s.contract.mode != "workspace":
        yield None
        return
    servers = McpServers(p.mcp)
    root = p.workspace.root
    sandbox = guarded(p.sandbox, lambda _cwd: policy_guard(s.rules.effective(), root))

    def network_for(spec: ServerSpec) -> bool:
        verdict = s.rules.effective().explain(Act.NET, spec.line)
        return spec.kind == "stdio" and verdict.effect is Effect.ALLOW

    try:
        await servers.start(sandbox, root, network_for)
        for row in servers.rows():
            if row.error is not None:
                detail = f"{row.name}: {row.error}"
            else:
                network = ", network granted" if row.network else ""
                how = f"{row.kind} " if row.kind != "stdio" else ""
                resources = f", {len(row.resources)} resources" if row.resources else ""
                detail = f"{row.name}: {len(row.tools)} tools{resources} ({how}{row.line}){network}"
            await p.store.add_sandbox_event(
                p.run_id, step, f"mcp_{row.state}", row.backend or p.sandbox.backend, detail
            )
        p.tools.attach(servers)
        yield servers
    finally:
        p.tools.detach(servers)
        await servers.stop()
