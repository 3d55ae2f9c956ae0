"""A run's retries and fall-overs: the contract's `max_retries` reaches any provider, and the
engine says when another provider took a step."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ioh_tui.core.transcript import AttemptSink, Completion, Request, StreamSink
from ioh_tui.engine import TaskContract, run
from ioh_tui.providers import OpenAI
from ioh_tui.providers.fallback import Fallback
from ioh_tui.providers.retry import RetryPolicy
from ioh_tui.providers.testing.scripted import ScriptedProvider
from ioh_tui.sandbox import select
from ioh_tui.store import Store
from tests.fakes.provider_server import scenario, serving
from tests.integration.engine.helpers import Recorder

DOWN = scenario({"text": "never", "errors": [{"status": 503, "fail_for_s": 3600}]})


@pytest.mark.parametrize(("retries", "calls"), [(0, 1), (4, 5)])
async def test_the_contract_s_max_retries_overrides_the_provider_s_own(
    project: Path, tmp_path: Path, retries: int, calls: int
) -> None:
    contract = TaskContract.workspace("fix it", project).with_max_retries(retries)
    async with serving(DOWN) as server, Store.open(tmp_path / "s.db") as store:
        # The provider's own count is 2: the contract's must win, both ways.
        provider = OpenAI(
            base_url=server.base_url,
            api_key="x",
            model="m",
            max_retries=2,
            retry=RetryPolicy(base_s=0.01, max_s=0.02),
        )
        try:
            result = await run(contract, provider, store=store, sandbox=select("floor"))
        finally:
            await provider.aclose()
        rows = await store.provider_calls(result.run_id)
    assert result.outcome == "failed"
    assert "overloaded" in result.detail
    assert [r.served for r in server.requests] == ["http 503"] * calls
    assert [r.attempt for r in rows] == list(range(1, calls + 1))


def scripted(name: str, *errors: dict[str, Any]) -> ScriptedProvider:
    look = {"name": "list_dir", "arguments": {"path": "."}}
    first = {"text": f"{name} reads", "tool_calls": [look], "errors": list(errors)}
    return ScriptedProvider(scenario(first, {"text": f"{name} is done"}), name=name, max_retries=0)


async def drive(project: Path, tmp_path: Path, provider: Any) -> Recorder:
    seen = Recorder()
    contract = TaskContract.workspace("look around", project).with_max_retries(1)
    async with Store.open(tmp_path / "s.db") as store:
        result = await run(
            contract, provider, store=store, sandbox=select("floor"), observers=[seen]
        )
    assert result.outcome == "finished", result.detail
    return seen


async def test_a_fall_over_is_announced_once_before_the_new_provider_streams(
    project: Path, tmp_path: Path
) -> None:
    chain = Fallback([scripted("a", *[{"status": 503}] * 2), scripted("b")])
    seen = await drive(project, tmp_path, chain)
    fell = seen.of("fallback")
    assert [(e.step, e.from_provider, e.to_provider) for e in fell] == [(1, "a", "b")]
    step_1 = [e.kind for e in seen.events if getattr(e, "step", None) == 1]
    assert step_1.index("retry") < step_1.index("fallback") < step_1.index("text_delta")
    assert "".join(e.text for e in seen.of("text_delta") if e.step == 1) == "b reads"


class Unmarked:
    """A chain of its own making: asks `a`, then `b`, marking nothing."""

    def __init__(self) -> None:
        self.a, self.b = scripted("a", {"status": 503}, {"status": 503}), scripted("b")
        self.name, self.model = "a|b", "fake-model"

    async def complete(
        self,
        request: Request,
        *,
        on_piece: StreamSink | None = None,
        on_attempt: AttemptSink | None = None,
        deadline: float | None = None,
        max_retries: int | None = None,
    ) -> Completion:
        try:
            return await self.a.complete(
                request, on_piece=on_piece, on_attempt=on_attempt, max_retries=max_retries
            )
        except Exception:
            return await self.b.complete(
                request, on_piece=on_piece, on_attempt=on_attempt, max_retries=max_retries
            )

    async def aclose(self) -> None:
        return None


async def test_a_switch_is_seen_from_the_attempts_names_too(project: Path, tmp_path: Path) -> None:
    seen = await drive(project, tmp_path, Unmarked())
    assert [(e.step, e.from_provider, e.to_provider) for e in seen.of("fallback")] == [
        (1, "a", "b")
    ]
