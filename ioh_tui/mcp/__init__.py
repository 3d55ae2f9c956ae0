"""MCP servers on the official SDK (the `mcp` extra): configured, contained, under the policy.

`server_specs` reads `[mcp.servers.NAME]`; `McpServers` starts a run's servers (local ones in the
sandbox), offers their tools as `mcp__NAME__TOOL` and stops them with the run; `list_servers`
is `ioh-tui mcp list`. Nothing imported here loads the SDK.
"""

from ioh_tui.mcp.listing import Lister, list_servers
from ioh_tui.mcp.servers import McpServers, NetworkFor, ServerRow
from ioh_tui.mcp.spec import INSTALL_HINT, PREFIX, ServerSpec, sdk_available, server_specs

__all__ = [
    "INSTALL_HINT",
    "PREFIX",
    "Lister",
    "McpServers",
    "NetworkFor",
    "ServerRow",
    "ServerSpec",
    "list_servers",
    "sdk_available",
    "server_specs",
]
