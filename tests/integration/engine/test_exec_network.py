"""`net` governs commands: an exec runs with the network only where a `net` rule grants it."""

from __future__ import annotations

import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ioh_tui.core.acts import Act
from ioh_tui.engine import RunResult, TaskContract, run
from ioh_tui.policy import ApprovalRequest, Decision, Policy
from ioh_tui.sandbox import probe, select
from ioh_tui.store import Store
from tests.integration.engine.helpers import scripted

pytestmark = pytest.mark.skipif("bwrap" not in probe(), reason="needs bubblewrap")

CONNECT = """
import socket, sys
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2).close()
    print("connected")
except OSError as exc:
    print("blocked", exc.errno)
"""


@pytest.fixture
def port() -> Iterator[int]:
    """A listener on the host's loopback (the kernel completes the handshake from the backlog)."""
    with socket.create_server(("127.0.0.1", 0), backlog=16) as server:
        yield server.getsockname()[1]


class Answer:
    """An approver giving one answer to a `net` ask (and approving every other ask)."""

    def __init__(self, net: Decision) -> None:
        self.net = net
        self.seen: list[ApprovalRequest] = []

    async def decide(self, request: ApprovalRequest) -> Decision:
        self.seen.append(request)
        return self.net if request.act is Act.NET else Decision.approve()


async def _connect(
    tmp_path: Path, port: int, policy: Policy, approver: Answer | None = None
) -> tuple[RunResult, str, list[tuple[str, str]]]:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "connect.py").write_text(CONNECT)
    call = {"name": "exec", "arguments": {"argv": [sys.executable, "connect.py", str(port)]}}
    async with Store.memory() as store:
        result = await run(
            TaskContract.workspace("connect", root).with_max_steps(1),
            scripted({"tool_calls": [call]}),
            store=store,
            policy=policy.allow_exec("*"),
            approver=approver or Answer(Decision.deny("no")),
            sandbox=select("bwrap"),
        )
        told = (await store.messages(result.run_id))[-1].message.content
        events = [(e.kind, e.detail) for e in await store.sandbox_events(result.run_id)]
    return result, told, events


async def test_a_command_runs_without_the_network_by_default(tmp_path: Path, port: int) -> None:
    _, told, events = await _connect(tmp_path, port, Policy.default())
    assert "blocked" in told and "network granted" not in told
    assert "network_granted" not in [kind for kind, _ in events]


async def test_a_net_rule_naming_the_command_gives_it_the_network(
    tmp_path: Path, port: int
) -> None:
    policy = Policy.default().allow_net("*connect.py*")
    _, told, events = await _connect(tmp_path, port, policy)
    assert "connected" in told
    assert "[network granted: net rule `*connect.py*`" in told
    (granted,) = [d for kind, d in events if kind == "network_granted"]
    assert granted.startswith("net rule `*connect.py*` (")


async def test_a_net_rule_for_another_command_grants_nothing(tmp_path: Path, port: int) -> None:
    _, told, _ = await _connect(tmp_path, port, Policy.default().allow_net("pip install *"))
    assert "blocked" in told


@pytest.mark.parametrize(("answer", "expected"), [("approve", "connected"), ("deny", "blocked")])
async def test_a_net_ask_asks_a_person_and_the_command_runs_either_way(
    tmp_path: Path, port: int, answer: str, expected: str
) -> None:
    decision = Decision.approve() if answer == "approve" else Decision.deny("offline please")
    approver = Answer(decision)
    policy = Policy.default().ask_net("*connect.py*").ask_exec("*connect.py*")
    _, told, _ = await _connect(tmp_path, port, policy, approver)
    assert expected in told
    exec_ask, net_ask = approver.seen
    assert (exec_ask.act, net_ask.act) == (Act.EXEC, Act.NET)
    assert net_ask.target == exec_ask.target and "connect.py" in net_ask.target
    # The command's own ask said what the network would be.
    assert exec_ask.preview is not None and exec_ask.preview.startswith("network: asked next")
