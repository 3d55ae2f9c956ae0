"""The store's DDL and its ordered, additive migrations (keyed on `PRAGMA user_version`).

Rules: a migration only adds (tables, columns, indexes); nothing is altered or dropped, so a store
written by any earlier version opens, migrates in place and keeps working.
"""

from __future__ import annotations

V1 = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    goal TEXT NOT NULL,
    mode TEXT NOT NULL,
    root TEXT NOT NULL,
    subject TEXT,
    contract TEXT NOT NULL,
    provider TEXT NOT NULL DEFAULT '',
    model TEXT,
    sandbox TEXT NOT NULL DEFAULT '',
    parent_run_id INTEGER REFERENCES runs(id),
    root_run_id INTEGER REFERENCES runs(id),
    depth INTEGER NOT NULL DEFAULT 0,
    agent_label TEXT NOT NULL DEFAULT 'root',
    status TEXT NOT NULL DEFAULT 'running',
    outcome TEXT,
    detail TEXT NOT NULL DEFAULT '',
    started_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
    finished_at TEXT
);
CREATE INDEX IF NOT EXISTS runs_parent ON runs(parent_run_id);
CREATE INDEX IF NOT EXISTS runs_status ON runs(status);

CREATE TABLE IF NOT EXISTS steps (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    step INTEGER NOT NULL,
    decision TEXT NOT NULL DEFAULT '',
    tool_call TEXT NOT NULL DEFAULT '',
    tokens INTEGER NOT NULL DEFAULT 0,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd REAL,
    committed_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
    UNIQUE(run_id, step)
);

CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    step INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    tool_calls TEXT NOT NULL DEFAULT '[]',
    tool_call_id TEXT,
    UNIQUE(run_id, step, seq)
);

CREATE TABLE IF NOT EXISTS staged_turns (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    step INTEGER NOT NULL,
    completion TEXT NOT NULL,
    at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
    PRIMARY KEY (run_id, step)
);

CREATE TABLE IF NOT EXISTS tool_calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    step INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    call_id TEXT NOT NULL,
    name TEXT NOT NULL,
    arguments TEXT NOT NULL,
    ok INTEGER NOT NULL,
    refused INTEGER NOT NULL,
    summary TEXT NOT NULL,
    output TEXT NOT NULL,
    UNIQUE(run_id, step, seq)
);

CREATE TABLE IF NOT EXISTS tool_attempts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    step INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    call_id TEXT NOT NULL,
    name TEXT NOT NULL,
    arguments TEXT NOT NULL,
    intent TEXT,
    result TEXT,
    started_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
    completed_at TEXT,
    resolution TEXT
);
CREATE INDEX IF NOT EXISTS tool_attempts_open ON tool_attempts(run_id) WHERE completed_at IS NULL;

CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL,
    agent_id INTEGER,
    step INTEGER,
    kind TEXT NOT NULL,
    json TEXT NOT NULL,
    at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
);
CREATE INDEX IF NOT EXISTS events_run ON events(run_id, id);

CREATE TABLE IF NOT EXISTS provider_calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    step INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    provider TEXT NOT NULL,
    model TEXT,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd REAL,
    latency_ms REAL,
    ttft_ms REAL,
    stop_reason TEXT,
    failure TEXT,
    at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
);
CREATE INDEX IF NOT EXISTS provider_calls_run ON provider_calls(run_id);

CREATE TABLE IF NOT EXISTS gate_attempts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    step INTEGER NOT NULL,
    criterion TEXT NOT NULL,
    status TEXT NOT NULL,
    detail TEXT NOT NULL DEFAULT '',
    at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
);

CREATE TABLE IF NOT EXISTS approvals (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    step INTEGER NOT NULL,
    call_id TEXT NOT NULL DEFAULT '',
    tool TEXT NOT NULL DEFAULT '',
    act TEXT NOT NULL,
    target TEXT NOT NULL,
    content TEXT,
    preview TEXT,
    rule TEXT,
    layer TEXT,
    agent_label TEXT NOT NULL DEFAULT 'root',
    status TEXT NOT NULL DEFAULT 'pending',
    decided_by TEXT,
    reason TEXT,
    performed_target TEXT,
    performed_content TEXT,
    remembered TEXT NOT NULL DEFAULT '[]',
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
    resolved_at TEXT
);
CREATE INDEX IF NOT EXISTS approvals_pending ON approvals(status) WHERE status = 'pending';

CREATE TABLE IF NOT EXISTS policy_events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    step INTEGER NOT NULL,
    kind TEXT NOT NULL,
    act TEXT NOT NULL,
    target TEXT NOT NULL,
    rule TEXT,
    layer TEXT,
    decision TEXT,
    source TEXT,
    at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
);

CREATE TABLE IF NOT EXISTS sandbox_events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    step INTEGER NOT NULL,
    kind TEXT NOT NULL,
    backend TEXT NOT NULL,
    detail TEXT NOT NULL DEFAULT '',
    at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
);

CREATE TABLE IF NOT EXISTS run_policies (
    run_id INTEGER PRIMARY KEY REFERENCES runs(id),
    policy TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS run_leases (
    run_id INTEGER PRIMARY KEY REFERENCES runs(id),
    owner TEXT NOT NULL,
    generation INTEGER NOT NULL,
    acquired_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
    renewed_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
    ttl_s REAL NOT NULL
);
"""

V2 = """
CREATE TABLE IF NOT EXISTS spawns (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    parent_run_id INTEGER NOT NULL REFERENCES runs(id),
    step INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    child_run_id INTEGER NOT NULL REFERENCES runs(id),
    goal TEXT NOT NULL,
    detached INTEGER NOT NULL DEFAULT 0,
    UNIQUE(parent_run_id, step, seq)
);
CREATE INDEX IF NOT EXISTS spawns_child ON spawns(child_run_id);
"""
"""Version 2: sub-agent trees (which call of which parent step made which child)."""

V3 = """
CREATE TABLE IF NOT EXISTS summaries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    step INTEGER NOT NULL,
    turns INTEGER NOT NULL,
    text TEXT NOT NULL,
    tokens_before INTEGER NOT NULL,
    tokens_after INTEGER NOT NULL,
    at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
    UNIQUE(run_id, turns)
);
"""
"""Version 3: compactions (the model's summary of a run's oldest `turns` turns)."""

V4 = """
ALTER TABLE approvals ADD COLUMN answer_mac TEXT;
"""
"""Version 4: the seal on each answer (`seal.py`); a row answered without one is no answer."""

V5 = """
ALTER TABLE messages ADD COLUMN images TEXT;
"""
"""Version 5: the images a tool result showed the model (JSON, bytes in base64; NULL: none), so a
resumed run sends the same request whatever became of the file."""

V6 = """
CREATE TABLE IF NOT EXISTS texts (
    id INTEGER PRIMARY KEY,
    digest BLOB NOT NULL UNIQUE,
    text TEXT NOT NULL
);
ALTER TABLE messages ADD COLUMN content_text INTEGER REFERENCES texts(id);
ALTER TABLE tool_calls ADD COLUMN output_text INTEGER REFERENCES texts(id);
ALTER TABLE events ADD COLUMN texts TEXT;
"""
"""Version 6: long texts stored once (`texts.py`). A row with a reference holds '' in place of
the text: `messages.content_text`, `tool_calls.output_text`, and `events.texts` (a JSON object,
key to text id, for the keys of the event's JSON whose value is null in place of the text)."""

V7 = """
CREATE TABLE IF NOT EXISTS event_keys (
    id INTEGER PRIMARY KEY,
    keys TEXT NOT NULL
);
"""
"""Version 7: smaller rows. `texts.text` holds a long text deflated (a BLOB) when that is shorter
(`texts.py`); an event row keeps its values without their key names, which `event_keys` holds
once (a JSON list; `eventrows.py`). Code before it could read neither."""

V8 = """
ALTER TABLE messages ADD COLUMN thoughts TEXT;
"""
"""Version 8: an assistant turn's signed reasoning blocks (JSON, `codec.thoughts_to_json`; NULL:
none), which a wire with extended thinking must be sent back, so a resumed run can go on."""

MIGRATIONS: tuple[str, ...] = (V1, V2, V3, V4, V5, V6, V7, V8)
"""Migration `i` brings a store from `user_version` i to i + 1."""

SCHEMA_VERSION = len(MIGRATIONS)
