"""view_image through whole runs: a loopback model server receives the image in each provider's
format, a text-only model gets the observation instead, a large image arrives scaled, and a
resumed run sends the same image from the store after the file changed."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image as Pil

from ioh_tui.engine import TaskContract, resume, run
from ioh_tui.providers import Anthropic, OpenAI, OpenRouter
from ioh_tui.providers.testing.fake_server import FakeModelServer
from ioh_tui.sandbox import select
from ioh_tui.store import Store
from tests.fakes.provider_server import scenario, serving

LOOK = {"text": "", "tool_calls": [{"name": "view_image", "arguments": {"path": "chart.png"}}]}
DONE = {"text": "a rising line"}


def png(size: tuple[int, int]) -> bytes:
    out = io.BytesIO()
    Pil.linear_gradient("L").resize(size).convert("RGB").save(out, "PNG")
    return out.getvalue()


def provider(kind: str, server: FakeModelServer, model: str) -> Any:
    cls = {"openai": OpenAI, "openrouter": OpenRouter, "anthropic": Anthropic}[kind]
    return cls(base_url=server.base_url, api_key="k", model=model, max_retries=0)


async def drive(
    project: Path, kind: str, model: str, store: Store, *, steps: int = 12
) -> tuple[Any, list[Any]]:
    wire = "anthropic" if kind == "anthropic" else "openai"
    contract = TaskContract.workspace("describe chart.png", project).with_max_steps(steps)
    async with serving(scenario(LOOK, DONE, model=model), wire) as server:
        model_provider = provider(kind, server, model)
        try:
            result = await run(contract, model_provider, store=store, sandbox=select("floor"))
        finally:
            await model_provider.aclose()
        return result, [r.body for r in server.requests]


async def bodies_and_calls(
    project: Path, tmp_path: Path, kind: str, model: str
) -> tuple[list[Any], list[Any]]:
    """A finished run's request bodies and its tool calls as stored."""
    async with Store.open(tmp_path / "s.db") as store:
        result, bodies = await drive(project, kind, model, store)
        calls = await store.tool_calls(result.run_id)
    assert result.outcome == "finished", result.detail
    return bodies, calls


def image_parts(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Every image part anywhere in a request body, in order."""
    found: list[dict[str, Any]] = []

    def walk(x: Any) -> None:
        if isinstance(x, dict):
            if x.get("type") in ("image", "image_url"):
                found.append(x)
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(body)
    return found


@pytest.mark.parametrize(
    ("kind", "model"),
    [
        ("openai", "gpt-4o"),
        ("openrouter", "anthropic/claude-sonnet-4"),
        ("anthropic", "claude-sonnet-4"),
    ],
)
async def test_the_model_server_receives_the_image_in_its_provider_s_format(
    project: Path, tmp_path: Path, kind: str, model: str
) -> None:
    data = png((120, 80))
    (project / "chart.png").write_bytes(data)
    encoded = base64.b64encode(data).decode()
    bodies, calls = await bodies_and_calls(project, tmp_path, kind, model)
    assert not image_parts(bodies[0])
    assert "view_image" in json.dumps(bodies[0]["tools"])
    assert calls[0].output == (
        f"[view_image chart.png] shown to you as chart.png (image/png, {len(data):,} bytes, 120x80)"
    )
    messages = bodies[1]["messages"]
    if kind == "anthropic":
        (result_block,) = messages[-1]["content"]
        assert result_block["type"] == "tool_result"
        assert result_block["content"][1] == {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": encoded},
        }
    else:
        assert [m["role"] for m in messages[-2:]] == ["tool", "user"]
        assert messages[-2]["content"] == calls[0].output
        assert messages[-1]["content"][1] == {
            "type": "image_url",
            "image_url": {"url": f"data:image/png;base64,{encoded}"},
        }


async def test_a_text_only_model_gets_the_observation_and_no_image(
    project: Path, tmp_path: Path
) -> None:
    (project / "chart.png").write_bytes(png((20, 20)))
    bodies, calls = await bodies_and_calls(project, tmp_path, "openai", "gpt-3.5-turbo")
    # Offered (the task names an image), and answered that this model cannot see it.
    assert "view_image" in json.dumps(bodies[0]["tools"])
    assert calls[0].refused
    assert "the model gpt-3.5-turbo is not known to accept images" in calls[0].output
    assert not any(image_parts(body) for body in bodies)


async def test_a_large_image_arrives_scaled_with_its_dimensions_shown(
    project: Path, tmp_path: Path
) -> None:
    (project / "chart.png").write_bytes(png((4000, 1000)))
    bodies, calls = await bodies_and_calls(project, tmp_path, "anthropic", "claude-opus-4")
    assert "(image/jpeg" in calls[0].output
    assert "1568x392); scaled from 4000x1000" in calls[0].output
    (part,) = image_parts(bodies[1])
    sent = base64.b64decode(part["source"]["data"])
    assert len(sent) <= 3_750_000
    with Pil.open(io.BytesIO(sent)) as image:
        assert image.size == (1568, 392)


async def test_a_resumed_run_sends_the_same_image_though_the_file_changed(
    project: Path, tmp_path: Path
) -> None:
    first = png((64, 64))
    (project / "chart.png").write_bytes(first)
    async with Store.open(tmp_path / "s.db") as store:
        capped, bodies = await drive(project, "openai", "gpt-4o", store, steps=1)
        assert capped.outcome == "step_cap_reached"
        (project / "chart.png").write_bytes(png((32, 32)))  # changed since it was shown
        async with serving(scenario(LOOK, DONE, model="gpt-4o")) as server:
            again = provider("openai", server, "gpt-4o")
            try:
                resumed = await resume(
                    capped.run_id,
                    again,
                    store=store,
                    sandbox=select("floor"),
                    overrides={"max_steps": 5},
                )
            finally:
                await again.aclose()
            body = server.requests[0].body
    assert resumed.outcome == "finished", resumed.detail
    (part,) = image_parts(body)
    assert part["image_url"]["url"] == f"data:image/png;base64,{base64.b64encode(first).decode()}"
    assert len(bodies) == 1  # the first drive stopped before showing it
