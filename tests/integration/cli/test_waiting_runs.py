"""`exec --on-approval wait`: the ask waits for an answer written by any process, or is deferred.

Every test drives a real `ioh-tui exec` process on a real SQLite file; the answers come from
another real process (`resume --decide`) or from the app (Pilot) opened on the same store.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from ioh_tui.store import Store
from ioh_tui.tui.factory import make_app
from tests.integration.cli.test_exec import FIX, ioh, write_scenario
from tests.tui.harness import FIXED, modal, until
from tests.tui.test_queue import queue_from_start


class WaitingExec:
    """An `ioh-tui exec --on-approval wait --json` process, read event by event."""

    def __init__(
        self,
        project: Path,
        tmp_path: Path,
        *extra: str,
        turns: list[dict[str, Any]] = FIX,
        verify: bool = True,
    ) -> None:
        self.store = tmp_path / "store.db"
        scenario = write_scenario(tmp_path / "s.json", *turns)
        check = ["--verify-cmd", f"{sys.executable} check_calc.py"] if verify else []
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "ioh_tui",
                "exec",
                "make add add",
                "--workspace",
                str(project),
                "--scenario",
                str(scenario),
                *check,
                "--sandbox",
                "floor",
                "--json",
                "--store",
                str(self.store),
                "--on-approval",
                "wait",
                *extra,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.events: list[dict[str, Any]] = []

    def _lines(self) -> Iterator[dict[str, Any]]:
        out: IO[str] | None = self.proc.stdout
        assert out is not None
        for line in out:
            event = json.loads(line)
            self.events.append(event)
            yield event

    def until(self, name: str) -> dict[str, Any]:
        """Read events until one named `name` (the process must still be writing)."""
        for event in self._lines():
            if event["event"] == name:
                return event
        raise AssertionError(f"no {name} event; stderr: {self.stderr()}")

    def finish(self) -> tuple[int, dict[str, Any]]:
        """Wait for the end; the exit status and the last event."""
        for _ in self._lines():
            pass
        status = self.proc.wait(timeout=30)
        return status, self.events[-1]

    def close(self) -> None:
        """Kill it if it still runs; close its pipes."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()

    def stderr(self) -> str:
        err = self.proc.stderr
        assert err is not None
        return err.read() if self.proc.poll() is not None else ""


@pytest.fixture
def waiting(project: Path, tmp_path: Path) -> Iterator[WaitingExec]:
    run = WaitingExec(project, tmp_path)
    yield run
    run.close()


def test_a_waiting_ask_is_answered_by_another_process_and_the_run_goes_on(
    project: Path, waiting: WaitingExec
) -> None:
    asked = waiting.until("approval_requested")
    assert (asked["act"], asked["target"]) == ("write", "calc.py")
    answer = ioh(
        "resume", str(asked["run_id"]), "--decide", "approve", "--headless",
        "--store", str(waiting.store),
    )  # fmt: skip
    assert answer.returncode == 0, answer.stderr
    assert "the live run continues" in answer.stderr
    resolved = waiting.until("approval_resolved")
    assert (resolved["request_id"], resolved["decision"]) == (asked["request_id"], "approve")
    status, last = waiting.finish()
    assert (status, last["outcome"]) == (0, "success")
    assert (project / "calc.py").read_text() == FIXED
    # The waiting run said where its answer can come from.
    assert f"ioh-tui resume {asked['run_id']} --decide approve|deny" in waiting.stderr()


async def test_a_waiting_ask_is_answered_from_the_apps_queue(
    project: Path, waiting: WaitingExec
) -> None:
    asked = waiting.until("approval_requested")
    app = make_app(waiting.store)
    app.animation_level = "none"
    async with app.run_test(size=(140, 40)) as pilot:
        queue = await queue_from_start(pilot)
        assert [(i.where, i.request.target) for i in queue.items] == [("elsewhere", "calc.py")]
        await pilot.press("enter")
        await modal(pilot)
        await pilot.press("y")
        await until(pilot, lambda: not queue.items)
    status, last = waiting.finish()
    assert (status, last["outcome"]) == (0, "success")
    async with Store.open(waiting.store) as store:
        row = await store.approval(asked["request_id"])
    assert row is not None and (row.status, row.decided_by) == ("approve", "attached")
    assert (project / "calc.py").read_text() == FIXED


def _deferred(store: Path, status: int, last: dict[str, Any], project: Path) -> None:
    assert (status, last["outcome"]) == (4, "awaiting_approval")
    assert "a - b" in (project / "calc.py").read_text()  # neither allowed nor denied
    (pending,) = [
        json.loads(x) for x in ioh("approvals", "--json", "--store", str(store)).stdout.splitlines()
    ]
    assert (pending["run_id"], pending["target"]) == (last["run_id"], "calc.py")


def test_nobody_answering_defers_the_ask_after_the_timeout(project: Path, tmp_path: Path) -> None:
    run = WaitingExec(project, tmp_path, "--approval-timeout", "0.3")
    status, last = run.finish()
    _deferred(run.store, status, last, project)
    decided = [e for e in run.events if e["event"] == "approval_resolved"]
    assert [e["decision"] for e in decided] == ["defer"]
    assert "deferred after 0.3 s" in run.stderr()


def test_sigterm_while_waiting_defers_cleanly(
    project: Path, tmp_path: Path, waiting: WaitingExec
) -> None:
    waiting.until("approval_requested")
    waiting.proc.send_signal(signal.SIGTERM)
    status, last = waiting.finish()
    _deferred(waiting.store, status, last, project)
    # The store was closed as usual: nothing but the store and its key is left beside it.
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("store")) == [
        "store.db",
        "store.db.key",
    ]


def test_a_timeout_without_waiting_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = ioh("exec", "x", "--approval-timeout", "5", "--store", str(tmp_path / "s.db"))
    assert done.returncode == 2
    assert done.stderr.strip() == "ioh-tui: --approval-timeout needs --on-approval wait"
