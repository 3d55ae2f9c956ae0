"""Project instructions (`AGENTS.md`, else `CLAUDE.md`) reach every request over the real wire."""

from __future__ import annotations

import json
from pathlib import Path

from ioh_tui.engine import TaskContract, run
from ioh_tui.engine.instructions import MAX_CHARS, find_instructions
from ioh_tui.policy import Policy
from ioh_tui.providers import Compatible
from ioh_tui.providers.testing.fake_server import FakeModelServer
from ioh_tui.providers.testing.scenario import parse_scenario
from ioh_tui.sandbox import select
from ioh_tui.store import Store
from tests.integration.engine.helpers import Recorder

RULE = "Always run the tests with `make check`; never touch vendor/."


async def test_agents_md_is_in_every_request_even_after_compaction(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "AGENTS.md").write_text(f"# How to work here\n\n{RULE}\n")
    (root / "CLAUDE.md").write_text("not this one: AGENTS.md comes first\n")
    for i in range(8):
        (root / f"data{i}.txt").write_text((f"line {i}: " + "x" * 60 + "\n") * 30)
    reads = [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": f"data{i}.txt"}}]}
        for i in range(8)
    ]
    scenario = parse_scenario({"model": "m", "context_window": 3000, "turns": reads})
    seen = Recorder()
    async with FakeModelServer(scenario) as server, Store.memory() as store:
        provider = Compatible(base_url=server.base_url, model="m")
        result = await run(
            TaskContract.workspace("read everything", root).with_context_window(3000),
            provider,
            store=store,
            policy=Policy.permissive(),
            sandbox=select("floor"),
            observers=[seen],
        )
        await provider.aclose()
        bodies = [json.dumps(r.body) for r in server.requests if r.body is not None]
    assert result.outcome == "finished", result.detail
    assert any(e.kind == "context_compacted" for e in seen.events)
    steps = [b for b in bodies if "You compact an agent" not in b]
    assert len(steps) == 9
    assert all(RULE in b and "from AGENTS.md at the workspace root" in b for b in steps)
    assert not any("not this one" in b for b in bodies)
    started = [e for e in seen.events if e.kind == "run_started"]
    assert [getattr(e, "instructions", None) for e in started] == ["AGENTS.md"]


def test_claude_md_when_there_is_no_agents_md_and_a_long_file_is_cut(tmp_path: Path) -> None:
    assert find_instructions(tmp_path) is None
    (tmp_path / "CLAUDE.md").write_text("y" * (MAX_CHARS + 500))
    found = find_instructions(tmp_path)
    assert found is not None and (found.name, found.cut) == ("CLAUDE.md", 500)
    assert found.block().endswith("[500 more characters of CLAUDE.md are not shown]")


def test_a_linked_or_empty_instructions_file_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("host secret")
    root = tmp_path / "ws"
    root.mkdir()
    (root / "AGENTS.md").symlink_to(outside)
    (root / "CLAUDE.md").write_text("  \n")
    assert find_instructions(root) is None
