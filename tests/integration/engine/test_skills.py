"""Skills through the real loop: named in every request, loaded only by the `skill` tool.

The model is the fake server on 127.0.0.1, so the tests read exactly what it was sent.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ioh_tui.config.locations import user_dir
from ioh_tui.core.acts import Act, Effect
from ioh_tui.engine import RunResult, TaskContract, run
from ioh_tui.policy import Policy
from ioh_tui.providers import Compatible
from ioh_tui.providers.testing.fake_server import FakeModelServer
from ioh_tui.providers.testing.scenario import parse_scenario
from ioh_tui.sandbox import select
from ioh_tui.skills import find_skills
from ioh_tui.store import Store, ToolCallRow
from tests.integration.engine.helpers import Recorder

BODY = "Step 1: run `python check_calc.py`. Step 2: never edit vendored code."
USER_BODY = "Write release notes as a bulleted list, newest first."


def skill(folder: Path, name: str, description: str, body: str, **files: str) -> Path:
    here = folder / name
    here.mkdir(parents=True)
    (here / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}\n")
    for rel, text in files.items():
        (here / rel).write_text(text)
    return here


async def drive(
    root: Path, *turns: dict[str, Any], policy: Policy | None = None
) -> tuple[RunResult, list[str], list[ToolCallRow], Recorder]:
    scenario = parse_scenario({"model": "m", "turns": list(turns)})
    seen = Recorder()
    async with FakeModelServer(scenario) as server, Store.memory() as store:
        provider = Compatible(base_url=server.base_url, model="m")
        result = await run(
            TaskContract.workspace("work", root),
            provider,
            store=store,
            policy=policy or Policy.default(),
            sandbox=select("auto"),
            observers=[seen],
        )
        await provider.aclose()
        bodies = [json.dumps(r.body) for r in server.requests if r.body is not None]
        return result, bodies, await store.tool_calls(result.run_id), seen


def load(name: str, file: str | None = None) -> dict[str, Any]:
    arguments = {"name": name} | ({"file": file} if file else {})
    return {"tool_calls": [{"name": "skill", "arguments": arguments}]}


async def test_the_description_is_in_every_request_and_the_body_only_after_the_call(
    project: Path,
) -> None:
    skill(project / ".ioh-tui" / "skills", "calc-checks", "How to check the calculator", BODY)
    skill(user_dir() / "skills", "release-notes", "How release notes are written", USER_BODY)
    result, bodies, calls, seen = await drive(project, load("calc-checks"), {"text": "done"})
    assert result.outcome == "finished", result.detail
    first, second = bodies
    for body in bodies:
        assert "calc-checks: How to check the calculator" in body
        assert "release-notes: How release notes are written" in body
    assert json.dumps(BODY)[1:-1] not in first
    assert json.dumps(BODY)[1:-1] in second
    assert USER_BODY not in second
    (call,) = calls
    assert call.ok and call.output.startswith("[skill calc-checks] from ")
    (loaded,) = seen.of("skill_loaded")
    assert loaded.name == "calc-checks" and loaded.path.endswith("calc-checks/SKILL.md")
    (started,) = seen.of("run_started")
    assert started.skills == ["calc-checks", "release-notes"] and started.warnings == []


async def test_a_skills_file_is_read_through_the_read_policy(project: Path) -> None:
    folder = skill(
        user_dir() / "skills",
        "style",
        "The house style",
        "See guide.md and private.md.",
        **{"guide.md": "Short sentences.", "private.md": "not for the model"},
    )
    policy = Policy.default().layer("user").rule(Act.READ, Effect.DENY, str(folder / "private.md"))
    result, bodies, calls, _ = await drive(
        project,
        {
            "tool_calls": [
                {"name": "skill", "arguments": {"name": "style"}},
                {"name": "skill", "arguments": {"name": "style", "file": "guide.md"}},
                {"name": "skill", "arguments": {"name": "style", "file": "private.md"}},
                {"name": "skill", "arguments": {"name": "style", "file": "../../config.toml"}},
            ]
        },
        {"text": "done"},
        policy=policy,
    )
    assert result.outcome == "finished", result.detail
    listing, guide, private, escape = calls
    assert "Files of this skill" in listing.output and "guide.md, private.md" in listing.output
    assert guide.ok and guide.output.endswith("Short sentences.")
    assert private.refused and "not for the model" not in bodies[1]
    assert not escape.ok and "has no file" in escape.output


async def test_a_bad_skill_is_skipped_with_a_warning_and_the_run_goes_on(project: Path) -> None:
    skills = project / ".ioh-tui" / "skills"
    (skills / "no-front").mkdir(parents=True)
    (skills / "no-front" / "SKILL.md").write_text("Just instructions, no front matter.\n")
    (skills / "no-name").mkdir()
    (skills / "no-name" / "SKILL.md").write_text("---\ndescription: nameless\n---\nbody\n")
    skill(skills, "good", "A good one", "Do good things.")
    result, bodies, _, seen = await drive(project, {"text": "done"})
    assert result.outcome == "finished"
    (started,) = seen.of("run_started")
    assert started.skills == ["good"]
    assert len(started.warnings) == 2
    assert any("no front matter" in w for w in started.warnings)
    assert any("has no name" in w for w in started.warnings)
    assert "good: A good one" in bodies[0] and "nameless" not in bodies[0]


def test_links_are_not_followed_and_the_users_skill_wins_a_name(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "SKILL.md").write_text("---\nname: sneaky\ndescription: x\n---\nhost file\n")
    project, user = tmp_path / "project", tmp_path / "user"
    project.mkdir()
    os.symlink(outside, project / "sneaky")
    linked = skill(project, "linked", "has a linked SKILL.md", "x")
    (linked / "SKILL.md").unlink()
    (linked / "SKILL.md").symlink_to(outside / "SKILL.md")
    skill(project, "twice", "the project's", "p")
    skill(user, "twice", "the user's", "u")
    found = find_skills([("user", user), ("project", project)])
    assert [(s.name, s.scope) for s in found.skills] == [("twice", "user")]
    assert any("linked" in w and "no readable SKILL.md" in w for w in found.warnings)
    assert any("a skill named 'twice' was found first" in w for w in found.warnings)
