"""A tree's sub-agents on a Ray cluster (`--ray ADDRESS`; docs/scaling.md).

Nothing here imports Ray at import time: `connect` does, when `--ray` is given. Without the
`ray` extra it says which extra to install (a `ConfigError`: exit status 2).

- `wire`: what crosses the network between a child and the root (requests and replies).
- `link`: the child's side: its store, bus, approver and tree are calls to the root.
- `worker`: the Ray actor that drives one child with the loop (`loop.drive`).
- `server`: the root's side: the mailbox actor, and the pump that serves it from the real parts.
- `placement`: the `Fleet` the tree is given: starts each child on an actor, restarts a dead one.
"""
