"""`ioh-tui acp`: an Agent Client Protocol agent on stdio (docs/acp.md).

Needs the `acp` extra (the official SDK, `agent-client-protocol`); `command.py` says so in one
line when it is missing and imports the SDK only after checking.
"""

INSTALL_HINT = "ioh-tui acp needs the acp extra: pip install 'ioh-tui[acp]'"
