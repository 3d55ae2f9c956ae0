"""Scripted runs: the project line on every turn, and the checker's finding with the edit."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from ioh_tui.engine import TaskContract, run
from ioh_tui.policy import Policy
from ioh_tui.sandbox import select
from ioh_tui.store import Store
from ioh_tui.verification import NoGate
from tests.integration.engine.helpers import scripted

LIB = "pub fn add(a: u32, b: u32) -> u32 {\n    a + b\n}\n"


def _edit(path: str, old: str, new: str) -> dict[str, object]:
    return {"name": "edit_file", "arguments": {"path": path, "old_text": old, "new_text": new}}


@pytest.fixture
def crate(tmp_path: Path) -> Path:
    root = tmp_path / "crate"
    (root / "src").mkdir(parents=True)
    (root / "Cargo.toml").write_text(
        '[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n'
    )
    (root / "src" / "lib.rs").write_text(LIB)
    (root / "src" / "main.rs").write_text('fn main() {\n    println!("{}", demo::add(1, 2));\n}\n')
    return root


@pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo is not installed")
async def test_a_type_error_arrives_with_the_edit_that_made_it(crate: Path) -> None:
    provider = scripted(
        {"tool_calls": [_edit("src/lib.rs", "a: u32, b: u32", "a: u32, b: &str")]},
        {"tool_calls": [_edit("src/lib.rs", "a: u32, b: &str", "a: u32, b: u32")]},
        {"text": "Done."},
    )
    async with Store.memory() as store:
        result = await run(
            TaskContract.workspace("change add", crate, NoGate()),
            provider,
            store=store,
            policy=Policy.permissive(),
            sandbox=select("floor"),
        )
        calls = await store.tool_calls(result.run_id)
    assert result.outcome == "finished"
    broken, fixed = calls[0].output, calls[1].output
    assert broken.startswith("[edited src/lib.rs]") and calls[0].ok
    assert "\n[check] `cargo check --message-format=json`" in broken
    assert "error[E0277]" in broken or "error[E0308]" in broken
    assert "src/lib.rs" in broken and '"reason"' not in broken  # rendered text, not JSON
    assert fixed.endswith("[check clean] `cargo check --message-format=json` reported nothing.")
    # The project line is in front of the model on every turn, not only the first.
    for request in provider.requests:
        task = request.messages[1].content
        assert "Project: This looks like a cargo project (Cargo.toml in the workspace root" in task


async def test_a_missing_checker_leaves_the_edit_unchecked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "py"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "calc"\nversion = "0"\n')
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    # Whatever this machine has, the run's PATH holds no pyright.
    dirs = os.environ.get("PATH", "").split(os.pathsep)
    path = os.pathsep.join(d for d in dirs if not (Path(d) / "pyright").exists())
    monkeypatch.setenv("PATH", path)
    provider = scripted({"tool_calls": [_edit("calc.py", "a - b", "a + b")]}, {"text": "Done."})
    async with Store.memory() as store:
        result = await run(
            TaskContract.workspace("fix add", root, NoGate()),
            provider,
            store=store,
            policy=Policy.permissive(),
            sandbox=select("floor"),
        )
        calls = await store.tool_calls(result.run_id)
    output = calls[0].output
    assert calls[0].ok and "a + b" in (root / "calc.py").read_text()
    assert output.startswith("[edited calc.py]")
    assert "[edit unchecked] calc.py was written, but nothing checked it" in output
    assert "`pyright` is not installed here" in output
    assert "Project: This looks like a python project" in provider.requests[0].messages[1].content


async def test_no_marker_means_no_project_line_and_no_check(project: Path) -> None:
    provider = scripted({"tool_calls": [_edit("calc.py", "a - b", "a + b")]}, {"text": "Done."})
    async with Store.memory() as store:
        result = await run(
            TaskContract.workspace("fix add", project, NoGate()),
            provider,
            store=store,
            policy=Policy.permissive(),
            sandbox=select("floor"),
        )
        calls = await store.tool_calls(result.run_id)
    assert calls[0].output == "[edited calc.py] (32 characters, changed)"
    assert all("Project:" not in r.messages[1].content for r in provider.requests)
