"""A search in a real run never shows the lines of a file whose read would ask a person."""

from __future__ import annotations

from pathlib import Path

from ioh_tui.engine import TaskContract, run
from ioh_tui.policy import Policy
from ioh_tui.sandbox import select
from ioh_tui.store import Store
from ioh_tui.verification import NoGate
from tests.integration.engine.helpers import scripted

ASK_PRIVATE = """
[[policy.layers]]
name = "team"
rules = [{ act = "read", effect = "ask", pattern = "private/*" }]
"""


async def test_grep_in_a_run_shows_no_line_of_a_file_whose_read_asks(tmp_path: Path) -> None:
    (tmp_path / "private").mkdir()
    (tmp_path / "private" / "plan.txt").write_text("API_TOKEN=abc123-very-secret\n")
    (tmp_path / "app.py").write_text("TOKEN_NAME = 'API_TOKEN'\n")
    grep = {"name": "grep", "arguments": {"pattern": "API_TOKEN"}}
    provider = scripted({"tool_calls": [grep]}, {"text": "done"})
    async with Store.memory() as store:
        result = await run(
            TaskContract.workspace("find the token", tmp_path, NoGate()),
            provider,
            store=store,
            policy=Policy.default().merge(Policy.from_toml(ASK_PRIVATE)),
            sandbox=select("floor"),
        )
        [call] = await store.tool_calls(result.run_id)
    assert result.outcome == "finished"
    assert "app.py" in call.output and "abc123" not in call.output
