"""`ioh-tui web`: the app in a browser, served by textual-serve behind a secret token.

Needs the `web` extra (`pip install 'ioh-tui[web]'`); nothing here is imported until the command
runs. Each browser tab gets its own app process on the same store (textual-serve starts one per
websocket), so a tab is one more viewer of the store's runs and decisions, like another terminal.
"""
