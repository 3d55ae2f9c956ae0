"""A sub-agent's deferred decision pauses its tree, and `resume ROOT --decide` answers it.

Also: a detached spawn past a cap is refused in its own tool result, through the real CLI.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from ioh_tui.store import Store
from tests.integration.cli.test_exec import ioh

WRITER: dict[str, Any] = {
    "turns": [
        {
            "text": "Writing the notes.",
            "tool_calls": [
                {"name": "write_file", "arguments": {"path": "notes.txt", "content": "hi\n"}}
            ],
        },
        {"text": "Notes handled."},
    ]
}


def _scenario(path: Path, turns: list[dict[str, Any]], agents: dict[str, Any]) -> Path:
    path.write_text(json.dumps({"model": "m", "turns": turns, "agents": agents}))
    return path


def _exec_tree(project: Path, tmp_path: Path, *extra: str) -> tuple[Path, dict[str, Any]]:
    """A root whose one waited child writes a file; the child's write is deferred."""
    scenario = _scenario(
        tmp_path / "s.json",
        [
            {"tool_calls": [{"name": "spawn_agent", "arguments": {"goal": "write notes"}}]},
            {"text": "All done."},
        ],
        {"write notes": WRITER},
    )
    store = tmp_path / "store.db"
    done = _exec(project, scenario, store, "2", "--on-approval", "defer", *extra)
    assert done.returncode == 4, done.stderr
    return store, json.loads(done.stdout.splitlines()[-1])


def _exec(
    project: Path, scenario: Path, store: Path, agents: str, *extra: str
) -> subprocess.CompletedProcess[str]:
    """`exec` a tree of at most `agents` sub-agents in the floor sandbox, as JSON lines."""
    where = ("--workspace", str(project), "--store", str(store), "--sandbox", "floor")
    given = ("--scenario", str(scenario), "--max-agents", agents, "--json")
    return ioh("exec", "split the work", *where, *given, *extra)


def _pending(store: Path) -> list[dict[str, Any]]:
    listed = ioh("approvals", "--json", "--store", str(store)).stdout.splitlines()
    return [json.loads(line) for line in listed]


def _resume(store: Path, run_id: int, *extra: str) -> dict[str, Any]:
    done = ioh(
        "resume", str(run_id), *extra, "--headless", "--json", "--store", str(store), "--sandbox",
        "floor",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    last: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return last


async def test_a_childs_deferred_write_pauses_the_tree_and_resume_approves_it_once(
    project: Path, tmp_path: Path
) -> None:
    store, last = _exec_tree(project, tmp_path)
    root = last["run_id"]
    assert (last["event"], last["outcome"]) == ("run_finished", "awaiting_approval")
    assert not (project / "notes.txt").exists()
    (pending,) = _pending(store)
    child = pending["run_id"]
    assert child != root and pending["target"] == "notes.txt"
    # The root's detail names the agent and the request it waits on.
    assert f"agent-{child} (run {child})" in last["detail"]
    assert f"request {pending['request_id']}" in last["detail"]
    assert "write notes.txt" in last["detail"]

    done = _resume(store, root, "--decide", "approve")
    assert (done["run_id"], done["outcome"]) == (root, "finished")
    assert (project / "notes.txt").read_text() == "hi\n"
    assert _pending(store) == []
    again = _resume(store, root)
    assert again["outcome"] == "finished"
    async with Store.open(store) as db:
        writes = [c for c in await db.tool_calls(child) if c.name == "write_file"]
        (approval,) = await db.approvals(child)
        (kid,) = await db.children(root)
        spawns = [c for c in await db.tool_calls(root) if c.name == "spawn_agent"]
    assert len(writes) == 1 and writes[0].ok  # performed exactly once
    assert (approval.status, approval.decided_by) == ("approve", "resumed")
    assert (kid.status, kid.outcome) == ("completed", "finished")
    # The root's spawn call got the child's report, once.
    (spawn,) = spawns
    assert "-> finished" in spawn.output and "Notes handled." in spawn.output


async def test_a_childs_deferred_write_denied_on_resume_is_read_by_the_child(
    project: Path, tmp_path: Path
) -> None:
    store, last = _exec_tree(project, tmp_path)
    root = last["run_id"]
    done = _resume(store, root, "--decide", "deny", "--reason", "not in this repo")
    assert done["outcome"] == "finished"
    assert not (project / "notes.txt").exists()
    assert _pending(store) == []
    async with Store.open(store) as db:
        (kid,) = await db.children(root)
        told = [m.content for m in await db.messages(kid.id) if m.role == "tool"]
        (approval,) = await db.approvals(kid.id)
    assert any("not in this repo" in text for text in told)
    assert approval.status == "deny"
    assert (kid.status, kid.outcome) == ("completed", "finished")


async def test_a_detached_spawn_past_the_agent_cap_is_refused_in_its_result(
    project: Path, tmp_path: Path
) -> None:
    spawns = [
        {"name": "spawn_agent", "arguments": {"goal": f"job {i}", "wait": False}} for i in range(12)
    ]
    scenario = _scenario(
        tmp_path / "s.json",
        [{"tool_calls": spawns}, {"text": "All done."}],
        {"job": {"turns": [{"text": "Job done."}]}},
    )
    store = tmp_path / "store.db"
    done = _exec(project, scenario, store, "5")
    assert done.returncode == 0, done.stderr
    root = json.loads(done.stdout.splitlines()[-1])["run_id"]
    async with Store.open(store) as db:
        calls = [c for c in await db.tool_calls(root) if c.name == "spawn_agent"]
        tree = await db.tree(root)
    assert len(calls) == 12
    said = [c.output for c in calls]
    assert all(text.startswith("[spawned] 'job ") for text in said[:5])
    assert all(text.startswith("[spawn refused] agent cap") for text in said[5:])
    assert [c.refused for c in calls] == [False] * 5 + [True] * 7
    # The store's tree holds exactly the children that were told they were spawned.
    assert sorted(r.goal for r in tree[1:]) == [f"job {i}" for i in range(5)]
