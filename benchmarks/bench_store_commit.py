"""The cost of one step's durable commit through `Store.commit_step` vs raw sqlite3 for the same rows.

Prints figures; asserts nothing. Both write to a file in WAL mode with synchronous=NORMAL, one
transaction a step: a steps row, two transcript messages and one tool-call row.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from ioh_tui.core.codec import message_from_json
from ioh_tui.store import CallRecord, StepCommit, Store
from ioh_tui.store.schema import MIGRATIONS

STEPS = 500
MESSAGES: list[dict[str, Any]] = [
    {
        "role": "assistant",
        "content": "Reading a.txt." * 4,
        "tool_calls": [{"id": "c", "name": "read_file", "arguments": {"path": "a.txt"}}],
        "tool_call_id": None,
    },
    {
        "role": "tool",
        "content": "[read a.txt]\n" + "hello\n" * 40,
        "tool_calls": [],
        "tool_call_id": "c",
    },
]
CALLS: list[dict[str, Any]] = [
    {
        "call_id": "c",
        "name": "read_file",
        "arguments": {"path": "a.txt"},
        "ok": True,
        "refused": False,
        "summary": "[read a.txt]",
        "output": "hello\n" * 40,
    }
]

# The same rows as the store takes them (typed; it encodes them itself, as the raw loop does).
TYPED_MESSAGES = [message_from_json(m) for m in MESSAGES]
TYPED_CALLS = [CallRecord(**c) for c in CALLS]


async def ours(db: Path) -> list[float]:
    async with Store.open(db) as store:
        run_id = await store.start_run(
            goal="g",
            mode="workspace",
            root="/",
            subject=None,
            contract={},
            provider="p",
            model=None,
            sandbox="s",
        )
        times = []
        for n in range(1, STEPS + 1):
            started = time.perf_counter()
            await store.commit_step(
                StepCommit(
                    run_id, n, "read", "read_file:{}", 10, 5, None, TYPED_MESSAGES, TYPED_CALLS
                )
            )
            times.append((time.perf_counter() - started) * 1e6)
    return times


def raw(db: Path) -> list[float]:
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    for statement in MIGRATIONS[0].split(";"):
        if statement.strip():
            conn.execute(statement)
    conn.execute(
        "INSERT INTO runs (goal, mode, root, contract) VALUES ('g', 'workspace', '/', '{}')"
    )
    times = []
    for n in range(1, STEPS + 1):
        started = time.perf_counter()
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(
            "INSERT INTO steps (run_id, step, decision, tool_call, tokens, input_tokens, output_tokens) VALUES (1,?,?,?,?,?,?)",
            (n, "read", "read_file:{}", 15, 10, 5),
        )
        conn.executemany(
            "INSERT INTO messages (run_id, step, seq, role, content, tool_calls, tool_call_id) VALUES (1,?,?,?,?,?,?)",
            [
                (n, i, m["role"], m["content"], json.dumps(m["tool_calls"]), m["tool_call_id"])
                for i, m in enumerate(MESSAGES)
            ],
        )
        conn.executemany(
            "INSERT INTO tool_calls (run_id, step, seq, call_id, name, arguments, ok, refused, summary, output) VALUES (1,?,?,?,?,?,?,?,?,?)",
            [
                (
                    n,
                    i,
                    c["call_id"],
                    c["name"],
                    json.dumps(c["arguments"]),
                    1,
                    0,
                    c["summary"],
                    c["output"],
                )
                for i, c in enumerate(CALLS)
            ],
        )
        conn.execute("COMMIT")
        times.append((time.perf_counter() - started) * 1e6)
    conn.close()
    return times


def main() -> None:
    """Print median and p99 microseconds per commit, and the ratio."""
    with tempfile.TemporaryDirectory() as tmp:
        a = asyncio.run(ours(Path(tmp) / "ours.db"))
        b = raw(Path(tmp) / "raw.db")
    for name, t in (("Store.commit_step", a), ("raw sqlite3", b)):
        p99 = sorted(t)[int(len(t) * 0.99)]
        print(
            f"store: {name:<18} median {statistics.median(t):7.0f} us  p99 {p99:7.0f} us  ({STEPS} commits)"
        )
    ratio = statistics.median(a) / statistics.median(b)
    print(f"store: commit_step / raw = {ratio:.2f}x (median)")
    print(
        f"table | one step's commit | {ratio:.2f}x ({statistics.median(a):.0f} us vs"
        f" {statistics.median(b):.0f} us) | raw sqlite3 for the same rows | ≤ 2x"
    )


if __name__ == "__main__":
    main()
