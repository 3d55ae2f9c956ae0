"""The store's file on disk: its schema, what is wrong with one, and the checks made before use.

Standard library and `ioh_tui.core` only, and outside `ioh_tui.store` (whose package loads the
asyncio store and aiosqlite): the command line refuses a bad store file before the app takes the
terminal without loading the store, so the app's first frame does not wait for it (issue 23).
`ioh_tui.store` re-exports all of it where it always was.
"""
